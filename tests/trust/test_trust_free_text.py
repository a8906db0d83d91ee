"""Trust rule: free text never becomes structure in a commit message (issue 8 item 6; docs/store.md).

Every committing command × every free-text field that reaches its commit message × hostile values (line breaks
with forged ``Memhtml-Run:``/``Memhtml-Phase:``/``Signed-off-by:`` trailers, CR, CRLF, U+2028, U+0085, ESC, very
long strings). A provenance id with a control character is refused (exit 2, nothing committed); any other value is
folded, and the commit then carries exactly the trailers we put there, as both ``git interpret-trailers --parse``
and ``git log --format=%(trailers)`` read it. A new command or field joins by adding a row to :data:`FIELDS`.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_memhtml.cli.main import main

NOW = "2026-11-30T10:00:00Z"
HOSTILE = {
    "newline-run": "x\n\nMemhtml-Run: sleep/2099-01-01",
    "newline-phase": "x\nMemhtml-Phase: merge",
    "signed-off-by": "x\n\nSigned-off-by: Mallory <m@example.invalid>",
    "cr": "x\rMemhtml-Run: forged",
    "crlf": "x\r\n\r\nMemhtml-Run: forged",
    "u2028": "x\u2028\u2028Memhtml-Run: forged",
    "u0085": "x\u0085Memhtml-Phase: forged",
    "esc": "x\x1b[31m\n\nMemhtml-Run: red",
    "tab-continuation": "x\n\nMemhtml-Session: a\n\tMemhtml-Run: forged",
    "long": "L" * 6000 + "\n\nMemhtml-Run: forged",
    "one-line-trailer-text": "Memhtml-Run: forged",
    "nbsp-one-line": "x\u00a0Memhtml-Run:\u00a0forged",
}
SESSION = "s-benign"


def git(root: Path, *args: str, stdin: str | None = None) -> str:
    return subprocess.run(["git", "-C", str(root), *args], input=stdin, capture_output=True, text=True,
                          check=True).stdout


def cli(root: Path, *args: str, stdin: str | None = None, monkeypatch: pytest.MonkeyPatch) -> int:
    if stdin is not None:
        import io

        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    return main(["-C", str(root), *args])


@dataclass(frozen=True)
class Field:
    """One free-text input of one committing command.

    ``argv(value, root)`` builds the invocation (``(args, stdin)``); ``trailers(value)`` are the trailers the
    commit must carry, exactly; ``is_id``: a provenance id, refused when it holds a control character.
    """

    command: str
    field: str
    argv: Callable[[str, Path], tuple[list[str], str | None]]
    trailers: Callable[[str], list[tuple[str, str]]]
    is_id: bool = False
    may_refuse: bool = False
    in_file: bool = False
    """Text that also becomes memory content: a code point HTML cannot carry is refused (exit 1, nothing committed)
    by the render gate, the same check ``validate`` runs, instead of committing a file it would refuse."""
    """A path: refused by the one path resolver (exit 2, nothing committed) when its text is no memory path."""


def jsonl(**op: str) -> str:
    return json.dumps({"type": "semantic", "title": "T", "body": "A body sentence holds.", **op}) + "\n"


def leftover(value: str, root: Path) -> tuple[list[str], str | None]:
    name = value.replace("/", "_")[:200]
    memory = (root / TARGET).read_text(encoding="utf-8").replace("The target holds.", "A leftover holds.")
    (root / "areas" / "inbox" / f"{name}.html").write_text(memory, encoding="utf-8")
    return ["doctor", "--fix-leftovers", "commit", "--json"], None


def link_to(value: str, root: Path) -> tuple[list[str], str | None]:
    """``link`` to an existing memory whose file name carries ``value`` (committed first when git can hold it)."""
    name = f"areas/inbox/{value.replace('/', '_')[:200]}.html"
    memory = (root / TARGET).read_text(encoding="utf-8").replace("The target holds.", "A link target holds.")
    try:
        (root / name).write_text(memory, encoding="utf-8")
        git(root, "add", "--", name)
        git(root, "commit", "-q", "-m", "a link target")
    except (OSError, ValueError, subprocess.CalledProcessError):
        pass  # a name the file system refuses: the resolver must refuse it too
    return ["link", TARGET, "relates-to", name], None


TARGET = "areas/inbox/target.html"
FIELDS = [
    Field("write", "--title", lambda v, _: (["write", "--type", "semantic", "--title", v, "--claim", "C holds.",
                                             "--session-id", SESSION], None),
          lambda _: [("Memhtml-Session", SESSION)], in_file=True),
    Field("write", "--session-id", lambda v, _: (["write", "--type", "semantic", "--title", "T", "--claim",
                                                  "C holds.", "--session-id", v], None),
          lambda v: [("Memhtml-Session", v)], is_id=True),
    Field("apply", "title", lambda v, _: (["apply"], jsonl(title=v, session_id=SESSION)),
          lambda _: [("Memhtml-Session", SESSION)], in_file=True),
    Field("apply", "session_id", lambda v, _: (["apply"], jsonl(session_id=v)), lambda v: [("Memhtml-Session", v)],
          is_id=True),
    Field("apply", "prompt_id", lambda v, _: (["apply"], jsonl(prompt_id=v)), lambda v: [("Memhtml-Prompt", v)],
          is_id=True),
    Field("correct", "--title", lambda v, _: (["correct", TARGET, "--title", v, "--claim", "New claim holds.",
                                               "--reason", "r"], None), lambda _: [], in_file=True),
    Field("correct", "--reason", lambda v, _: (["correct", TARGET, "--title", "T2", "--claim", "New claim holds.",
                                                "--reason", v], None), lambda _: []),
    Field("correct", "--session-id", lambda v, _: (["correct", TARGET, "--title", "T2", "--claim",
                                                    "New claim holds.", "--session-id", v], None),
          lambda v: [("Memhtml-Session", v)], is_id=True),
    Field("archive", "--reason", lambda v, _: (["archive", TARGET, "--reason", v], None), lambda _: []),
    Field("link", "DST", link_to, lambda _: [], may_refuse=True),
    Field("doctor --fix-leftovers commit", "file name", leftover, lambda _: []),
]


def parse_trailers(text: str) -> list[tuple[str, str]]:
    out = []
    for line in text.splitlines():
        if line.strip():
            key, _, value = line.partition(": ")
            out.append((key, value))
    return out


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A memory repository holding ``TARGET``, built once for the module; each test works on its own copy."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMHTML_NOW", NOW)
        root = tmp_path_factory.mktemp("free-text") / "mem"
        assert main(["init", str(root)]) == 0
        assert cli(root, "write", "--type", "semantic", "--title", "Target", "--claim", "The target holds.",
                   "--path", TARGET, monkeypatch=patch) == 0
    return root


@pytest.fixture
def mem(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the template (git dir and index included)."""
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    root = tmp_path / "mem"
    shutil.copytree(template, root, symlinks=True)
    return root


CASES = [(f, name) for f in FIELDS for name in HOSTILE]


@pytest.mark.parametrize(("field", "hostile"), CASES, ids=[f"{f.command}:{f.field}:{n}" for f, n in CASES])
def test_a_commit_carries_only_the_trailers_we_put_there(
        mem: Path, field: Field, hostile: str, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    value = HOSTILE[hostile]
    args, stdin = field.argv(value, mem)
    before = git(mem, "rev-parse", "HEAD").strip()
    capsys.readouterr()
    code = cli(mem, *args, stdin=stdin, monkeypatch=monkeypatch)
    err = capsys.readouterr().err
    if field.is_id and re.search(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]", value):
        assert code == 2, err
        assert field.field.lstrip("-").replace("-", "_") in err.replace("-", "_"), "the refusal names the field"
        assert git(mem, "rev-parse", "HEAD").strip() == before
        assert git(mem, "status", "--porcelain", "--untracked-files=all") == ""
        return
    if field.in_file and re.search(r"[\x00-\x08\x0b\x0e-\x1f\x7f-\x9f]", value):
        assert code == 1 and "cannot carry" in err, err
        assert git(mem, "rev-parse", "HEAD").strip() == before
        assert git(mem, "status", "--porcelain", "--untracked-files=all") == ""
        return
    if field.may_refuse and code == 2:
        assert "hint:" in err and field.field in err, err
        assert git(mem, "rev-parse", "HEAD").strip() == before
        return
    assert code == 0, err
    head = git(mem, "rev-parse", "HEAD").strip()
    assert head != before and git(mem, "rev-parse", "HEAD~1").strip() == before
    message = git(mem, "log", "-1", "--format=%B", head)
    expected = field.trailers(value)
    assert parse_trailers(git(mem, "log", "-1", "--format=%(trailers:only,unfold)", head)) == expected
    assert parse_trailers(git(mem, "interpret-trailers", "--parse", stdin=message)) == expected
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029]", message), "no control or separator char"
    subject, _, rest = message.partition("\n")
    assert subject == git(mem, "log", "-1", "--format=%s", head).rstrip("\n")
    body = rest.strip("\n").split("\n\n") if rest.strip() else []
    prose = body[:-1] if expected else body  # the last paragraph is our trailers
    for paragraph in prose:
        for line in paragraph.splitlines():
            assert line[:1] in (" ", "\t"), f"body line not indented: {line[:80]!r}"


def test_a_sleep_run_over_a_hostile_title_commits_only_its_own_trailers(
        mem: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sleep phase bodies carry memory text; every phase commit must carry Run, Phase and Counts only."""
    for name in ("newline-run", "u2028", "signed-off-by"):
        assert cli(mem, "write", "--type", "semantic", "--title", HOSTILE[name], "--claim",
                   f"Hostile {name} memory holds.", "--entity", "person:Mallory", monkeypatch=monkeypatch) == 0
    assert cli(mem, "sleep", "run", "--date", "2026-12-14", monkeypatch=monkeypatch) == 0
    base = git(mem, "rev-parse", "main").strip()
    run_id = git(mem, "branch", "--list", "sleep/2026-12-14-*", "--format=%(refname:short)").strip()
    assert run_id.startswith("sleep/2026-12-14-"), run_id
    shas = git(mem, "rev-list", f"{base}..{run_id}").split()
    assert shas, "the run committed"
    for sha in shas:
        keys = [k for k, _ in parse_trailers(git(mem, "log", "-1", "--format=%(trailers:only,unfold)", sha))]
        assert keys == ["Memhtml-Run", "Memhtml-Phase", "Memhtml-Counts"], (sha, keys)
        values = dict(parse_trailers(git(mem, "log", "-1", "--format=%(trailers:only,unfold)", sha)))
        assert values["Memhtml-Run"] == run_id
