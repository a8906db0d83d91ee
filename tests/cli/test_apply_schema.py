"""``apply -h`` and docs/apply.md list every OpLine field; ``--continue-on-error`` commits the ops that pass."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.store.ops import OpLine, op_schema_markdown

DOC = Path(__file__).resolve().parents[2] / "docs" / "apply.md"
FIELDS = list(OpLine.model_fields)


def test_the_model_has_the_fields_the_spec_names() -> None:
    assert {"op", "title", "type", "body", "article_html", "path", "workspace", "importance", "confidence",
            "session_id", "prompt_id", "turn_uuid", "status", "due", "tag", "tags", "entity", "entities"} <= set(FIELDS)


def test_apply_help_lists_every_field(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["apply", "-h"]) == 0
    out = capsys.readouterr().out
    for name in FIELDS:
        assert f"  {name} (" in out, name
    assert "required; " in out


def test_docs_table_is_the_generated_one_and_lists_every_field() -> None:
    text = DOC.read_text(encoding="utf-8")
    start = text.index("<!-- generated: op schema -->\n") + len("<!-- generated: op schema -->\n")
    assert text[start:text.index("<!-- end generated -->")] == op_schema_markdown(), \
        "docs/apply.md is stale: paste store.ops.op_schema_markdown() between the markers"
    for name in FIELDS:
        assert f"| `{name}` |" in text, name


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    return root


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout.strip()


@pytest.mark.parametrize("bad", [
    {"op": "write", "title": "Escapes", "type": "semantic", "body": "Outside.", "path": "../x.html"},  # store refusal
    {"op": "write", "title": "Bogus", "type": "bogus", "body": "No such type."},  # model refusal
    "not json at all",  # not JSON
])
def test_continue_on_error_commits_the_others_and_lists_the_failure(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], bad: object) -> None:
    repo = _repo(tmp_path)
    head = _git(repo, "rev-parse", "HEAD")
    good = [{"op": "write", "title": f"Fact {i}", "type": "semantic", "body": f"Fact number {i} holds."}
            for i in (1, 2)]
    lines = [json.dumps(good[0]), bad if isinstance(bad, str) else json.dumps(bad), "", json.dumps(good[1])]
    stream = tmp_path / "batch.jsonl"
    stream.write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    code = main(["-C", str(repo), "apply", "--file", str(stream), "--continue-on-error", "--json"])
    captured = capsys.readouterr()
    assert code == 1, captured.err  # docs/apply.md: 1 when any op failed, the others committed
    env = json.loads(captured.out)
    results = env["data"]["results"]
    assert [r["ok"] for r in results] == [True, False, True]
    assert results[1]["code"] and results[1]["error"] and not results[1]["skipped"]
    assert env["data"]["summary"] == {"total": 3, "written": 2, "deduped": 0, "failed": 1, "skipped": 0}
    assert "warning: op #2 not written" in captured.err
    assert _git(repo, "rev-list", "--count", f"{head}..HEAD") == "1"  # one commit of the survivors
    files = _git(repo, "show", "--name-only", "--format=", "HEAD").split()
    assert sorted(files) == sorted(r["path"] for r in results if r["ok"])


def test_continue_on_error_with_no_op_passing_is_a_refusal(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    head = _git(repo, "rev-parse", "HEAD")
    stream = tmp_path / "batch.jsonl"
    stream.write_text('{"op": "write", "title": "x", "type": "bogus", "body": "y"}\n[1]\n')
    capsys.readouterr()
    code = main(["-C", str(repo), "apply", "--file", str(stream), "--continue-on-error", "--json"])
    captured = capsys.readouterr()
    assert code == 1
    env = json.loads(captured.out)
    assert set(env) >= {"apiVersion", "error", "code", "hint"} and "data" not in env
    assert env["summary"]["failed"] == 2 and "batch.jsonl:1" in env["error"]
    assert _git(repo, "rev-parse", "HEAD") == head


def test_atomic_batch_with_one_bad_op_refuses_with_the_error_envelope(tmp_path: Path,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    stream = tmp_path / "batch.jsonl"
    stream.write_text(json.dumps({"op": "write", "title": "Good", "type": "semantic", "body": "A good fact."}) + "\n"
                      + json.dumps({"op": "write", "title": "Bad", "type": "semantic",
                                    "article_html": "<p><mark>x</mark></p><script>alert(1)</script>"})
                      + "\n")
    capsys.readouterr()
    code = main(["-C", str(repo), "apply", "--file", str(stream), "--json"])
    captured = capsys.readouterr()
    assert code == 1
    env = json.loads(captured.out)
    assert env["apiVersion"] == "1" and env["code"] and "op #2" in env["error"] and "--continue-on-error" in env["hint"]
    assert [r["skipped"] for r in env["results"]] == [True, False]


def test_atomic_batch_with_a_path_naming_no_memory_is_refused_before_the_index_opens(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    repo = _repo(tmp_path)
    stream = tmp_path / "batch.jsonl"
    stream.write_text(json.dumps({"op": "write", "title": "Good", "type": "semantic", "body": "A good fact."}) + "\n"
                      + json.dumps({"op": "write", "title": "Bad", "type": "semantic", "body": "x",
                                    "path": "../y.html"})
                      + "\n")
    head = _git(repo, "rev-parse", "HEAD")
    capsys.readouterr()
    code = main(["-C", str(repo), "apply", "--file", str(stream), "--json"])
    env = json.loads(capsys.readouterr().out)
    assert code == 2
    assert env["apiVersion"] == "1" and "op #2 path" in env["error"] and env["hint"]
    assert _git(repo, "rev-parse", "HEAD") == head
