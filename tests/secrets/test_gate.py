"""A memory that would carry a detected secret is refused, and no refusal, envelope, crash report or log line
echoes the secret (docs/secrets.md "The gate").

Tables: every corpus format through the render gate (``document.template.render_checked``, the door of write,
apply, correct, the demo and every sleep phase that renders), every draft field that reaches the file, and the
committing commands run in-process for people and with ``--json``. The landing rail's refusal of a forged run
carrying a secret is a row of tests/trust/test_trust_forged_runs.py.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import _crash_report, main
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_checked
from git_memhtml.errors import SecretInMemory
from git_memhtml.secrets import redact
from tests.secrets.corpus import CORPUS, Sample
from tests.secrets.test_redact import keeps_a_run

NOW = "2026-01-15T12:00:00Z"
TOKEN = next(s for s in CORPUS if s.name == "github-classic")
AWS = next(s for s in CORPUS if s.name == "aws-access-key-id")


def _leaks(shown: str, *samples: Sample) -> bool:
    return any(keeps_a_run(shown, s.secret) for s in samples)


def _shown(exc: SecretInMemory) -> str:
    return " ".join([exc.message, exc.hint or "", *exc.violations, json.dumps(exc.details), repr(exc), str(exc)])


@pytest.mark.parametrize("sample", CORPUS, ids=[s.name for s in CORPUS])
def test_the_render_gate_refuses_every_format_naming_field_and_kind_only(sample: Sample) -> None:
    draft = MemoryDraft(title="Deploy notes", memory_type="semantic", claim="The deploy needs a credential.",
                        body=(f"From the session: {sample.line}",))
    with pytest.raises(SecretInMemory) as caught:
        render_checked(draft, now=NOW)
    exc = caught.value
    assert exc.exit_code == 2 and exc.code == "ERR_SECRET_DETECTED"
    assert "field body" in exc.message and sample.kind in exc.message and exc.kinds == (sample.kind,)
    assert exc.hint and "reference" in exc.hint
    assert not _leaks(_shown(exc), sample)


FIELDS: list[tuple[str, dict[str, Any]]] = [
    ("title", {"title": f"Token {TOKEN.secret}"}),
    ("claim", {"claim": f"The CI token is {TOKEN.secret}."}),
    ("body", {"body": ("First paragraph.", f"Second: {TOKEN.secret}")}),
    ("aliases", {"aliases": (TOKEN.secret,)}),
    ("author", {"author": f"bot {TOKEN.secret}"}),
]


@pytest.mark.parametrize(("field", "values"), FIELDS, ids=[f[0] for f in FIELDS])
def test_every_field_that_reaches_the_file_is_gated(field: str, values: dict[str, Any]) -> None:
    draft = MemoryDraft(**{"title": "Notes", "memory_type": "semantic", "claim": "A plain fact.", **values})
    with pytest.raises(SecretInMemory) as caught:
        render_checked(draft, now=NOW)
    assert f"field {field}" in caught.value.message and "github-token" in caught.value.message
    assert not _leaks(_shown(caught.value), TOKEN)


def test_a_memory_about_secrets_without_one_is_written() -> None:
    draft = MemoryDraft(title="Where the deploy key lives", memory_type="semantic",
                        claim="The deploy key is in the team vault under deploy/prod, rotated monthly.",
                        body=("Ask Priya for access; never paste the key into a chat.",))
    assert "team vault" in render_checked(draft, now=NOW).text


@pytest.fixture
def repo(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), "write", "--type", "semantic", "--title", "Seed", "--claim", "A seed memory.",
                 "--path", "areas/inbox/seed.html"]) == 0
    capsys.readouterr()
    return root


def _head(root: Path) -> str:
    return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], check=True, capture_output=True,
                          text=True).stdout


def _commands(root: Path, tmp: Path) -> list[tuple[str, list[str], int]]:
    ops = tmp / "ops.jsonl"
    ops.write_text(json.dumps({"op": "write", "title": "ok", "type": "semantic", "body": "A fine fact."}) + "\n"
                   + json.dumps({"op": "write", "title": "leak", "type": "semantic",
                                 "body": f"The key is {AWS.secret} for s3."}) + "\n")
    return [
        ("write", ["write", "--type", "semantic", "--title", "t", "--claim", f"Use {TOKEN.secret} to push."], 2),
        ("write body", ["write", "--type", "semantic", "--title", "t", "--claim", "c.", "--body", TOKEN.line], 2),
        ("apply", ["apply", "--file", str(ops)], 1),
        ("apply continue-on-error", ["apply", "--file", str(ops), "--continue-on-error"], 1),
        ("correct", ["correct", "areas/inbox/seed.html", "--title", "Seed", "--claim", f"Now {TOKEN.secret}.",
                     "--reason", "update"], 2),
        # the fields that reach a path or a commit message rather than the file's text
        ("write path", ["write", "--type", "semantic", "--title", "t", "--claim", "A fine fact.",
                        "--path", f"resources/ci/{TOKEN.secret}.html"], 2),
        ("write path folder", ["write", "--type", "semantic", "--title", "t", "--claim", "A fine fact.",
                               "--path", f"resources/{AWS.secret}/t.html"], 2),
        ("write workspace", ["write", "--type", "semantic", "--title", "t", "--claim", "A fine fact.",
                             "--workspace", TOKEN.secret], 2),
        ("apply path", ["apply", "--file", str(_ops_file(tmp, "path", f"resources/ci/{TOKEN.secret}.html"))], 1),
        ("apply workspace", ["apply", "--file", str(_ops_file(tmp, "workspace", TOKEN.secret))], 1),
        ("correct reason", ["correct", "areas/inbox/seed.html", "--title", "Seed", "--claim", "Now a vault ref.",
                            "--reason", f"the old one was {TOKEN.secret}"], 2),
        ("archive reason", ["archive", "areas/inbox/seed.html", "--reason", f"rotated {TOKEN.secret}"], 2),
    ]


def _ops_file(tmp: Path, key: str, value: str) -> Path:
    """One apply line whose ``key`` (a path or a workspace) carries ``value``; its text is clean."""
    ops = tmp / f"ops-{key}.jsonl"
    ops.write_text(json.dumps({"op": "write", "title": "Fine", "type": "semantic", "body": "A clean fact.",
                               key: value}) + "\n")
    return ops


COMMAND_IDS = ["write", "write body", "apply", "apply continue-on-error", "correct", "write path",
               "write path folder", "write workspace", "apply path", "apply workspace", "correct reason",
               "archive reason"]


@pytest.mark.parametrize("as_json", [False, True], ids=["people", "json"])
@pytest.mark.parametrize("label", COMMAND_IDS)
def test_a_command_carrying_a_secret_is_refused_and_never_echoes_it(
    repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], label: str, as_json: bool
) -> None:
    _, argv, code = next(c for c in _commands(repo, tmp_path) if c[0] == label)
    before = _head(repo)
    assert main(["-C", str(repo), *argv, *(["--json"] if as_json else [])]) == code
    out, err = capsys.readouterr()
    assert not _leaks(out + err, TOKEN, AWS)
    assert "detected secret" in out + err and ("github-token" in out + err or "aws-access-key" in out + err)
    if as_json:
        envelope = json.loads(out)
        codes = [envelope.get("code"), *(r["code"] for r in envelope.get("data", envelope).get("results", []))]
        assert "ERR_SECRET_DETECTED" in codes
    if label == "apply continue-on-error":  # the other op lands; the leaking one does not
        assert _head(repo) != before
        log = subprocess.run(["git", "-C", str(repo), "log", "-p", "-1"], check=True, capture_output=True,
                             text=True).stdout
        assert not _leaks(log, AWS)
    else:
        assert _head(repo) == before
    tree = subprocess.run(["git", "-C", str(repo), "grep", "-I", "-l", "-e", TOKEN.secret[:12], "-e", AWS.secret[:12],
                           "HEAD"], capture_output=True, text=True, check=False)
    assert tree.returncode == 1 and tree.stdout == ""
    history = subprocess.run(["git", "-C", str(repo), "log", "--all", "--format=%B", "--name-only"],
                             check=True, capture_output=True, text=True).stdout  # messages and every path
    assert not any(keeps_a_run(history.lower(), s.secret.lower()) for s in (TOKEN, AWS))  # slugs lower-case


def test_a_crash_report_and_the_internal_error_line_carry_no_secret(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    monkeypatch.setattr(sys, "argv", ["git-memhtml", "write", "--claim", f"the token {TOKEN.secret}"])
    try:
        raise RuntimeError(f"boom while writing {AWS.line}")
    except RuntimeError as exc:
        report = _crash_report(exc).read_text()
    assert "boom while writing" in report and "[redacted:aws-access-key]" in report
    assert "[redacted:github-token]" in report and not _leaks(report, TOKEN, AWS)


def test_no_log_record_carries_a_secret_even_at_debug(caplog: pytest.LogCaptureFixture) -> None:
    detect_log = logging.getLogger("detect-secrets")
    level = detect_log.level
    detect_log.setLevel(logging.DEBUG)
    try:
        with caplog.at_level(logging.DEBUG):
            for sample in CORPUS:
                redact(sample.line)
                redact(json.dumps({"t": sample.line}))
            redact('password = "abcdefghijkl"')  # the sequential-string filter skips it, and says so in a log line
    finally:
        detect_log.setLevel(level)
    assert any(r.name == "detect-secrets" for r in caplog.records), "the detector's own logging ran"
    shown = "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in caplog.records)
    assert not _leaks(shown, *CORPUS)
