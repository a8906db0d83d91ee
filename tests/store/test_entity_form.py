"""One ``type:name`` rule for entities at every door: write, apply, search's scope flag, validate (issue 8 item 3).

The rule is :func:`git_memhtml.document.model.entity_problem`: split at the first colon, a non-blank type before it
and a non-blank name after it; the name may hold further colons (``a:b:c`` is type ``a``, name ``b:c``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory

MALFORMED = ["nocolon", ":", "person:", ":Priya", "person:   ", " : ", "\u3000:x"]
"""Not ``type:name``: no colon, an empty side, a side of only (Unicode) whitespace."""


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, object] | None, str]:
    capsys.readouterr()
    code = main([*argv, "--json"])
    out, err = capsys.readouterr()
    return code, (json.loads(out) if out.strip() else None), err


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    capsys.readouterr()
    return root


def _write(root: Path, *extra: str) -> list[str]:
    return ["-C", str(root), "write", "--type", "semantic", "--title", "Entity form", "--claim",
            "The entity form is checked.", *extra]


def _tree(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.html") if ".git" not in p.parts)


@pytest.mark.parametrize("value", MALFORMED)
def test_write_refuses_a_malformed_entity_naming_the_field(repo: Path, value: str,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    before = _tree(repo)
    code, env, _ = _run(capsys, *_write(repo, "--entity", value))
    assert code == 2 and env is not None, env
    assert "entities" in str(env["error"]) and "type:name" in str(env["error"])
    assert _tree(repo) == before  # nothing filed (an empty person name once landed in resources/people/)


@pytest.mark.parametrize("field", ["entities", "entity"])
@pytest.mark.parametrize("value", MALFORMED)
def test_apply_refuses_a_malformed_entity_naming_the_field(repo: Path, value: str, field: str, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    line = {"op": "write", "title": "Apply entity", "type": "semantic", "claim": "Apply checks entities.",
            field: [value] if field == "entities" else value}
    source = tmp_path / "ops.jsonl"
    source.write_text(json.dumps(line) + "\n", encoding="utf-8")
    before = _tree(repo)
    code, _, err = _run(capsys, "-C", str(repo), "apply", "--file", str(source))
    assert code == 2 and f"{field}: " in err and "type:name" in err, err
    assert _tree(repo) == before


@pytest.mark.parametrize("argv", [["search", "entity"], ["recall", "entity"], ["list"]], ids=lambda a: a[0])
@pytest.mark.parametrize("value", MALFORMED)
def test_every_entity_scope_flag_refuses_the_same_values(repo: Path, value: str, argv: list[str],
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(capsys, "-C", str(repo), *argv, "--entity", value)
    assert code == 2 and "--entity" in err and "type:name" in err, err


def test_a_name_holding_colons_is_one_rule_for_write_and_search(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, env, err = _run(capsys, *_write(repo, "--entity", "url:https://example.com:8443/x"))
    assert code == 0, err
    assert env is not None
    code, found, err = _run(capsys, "-C", str(repo), "search", "entity form", "--entity",
                            "url:https://example.com:8443/x")
    assert code == 0 and found is not None, err
    assert [h["path"] for h in found["data"]["hits"]] == [env["data"]["path"]]  # type: ignore[index]


@pytest.mark.parametrize("value", ["nocolon", ":", "person:", ":Priya"])
def test_validate_refuses_a_memhtml_entity_meta_that_is_not_type_name(repo: Path, value: str,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    text = render_memory(MemoryDraft(title="Hand edited", memory_type="semantic",
                                     claim="The entity meta was edited by hand.", body=(),
                                     entities=("person:Priya", "placeholder:x")),
                         now="2026-01-01T00:00:00Z").replace('"placeholder:x"', f'"{value}"')
    target = repo / "areas" / "inbox" / "hand.html"
    target.write_text(text, encoding="utf-8")
    capsys.readouterr()
    assert main(["-C", str(repo), "validate", "areas/inbox/hand.html"]) == 1
    out, err = capsys.readouterr()
    assert "memhtml-entity" in out + err and "type:name" in out + err
    target.write_text(text.replace(f'content="{value}"', 'content=""'), encoding="utf-8")
    # an empty one is ignored (docs/format.md §1.2)
    assert main(["-C", str(repo), "validate", "areas/inbox/hand.html"]) == 0
