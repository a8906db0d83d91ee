"""Trust rule: nothing outside a memory file is touched, for the commands that only look at a run (issue 10).

Each row is a command that reads a finished run (the run gate alone, the review in every format, status) against
a real run of the demo corpus. It must exit 0 and leave every ref, ``HEAD``, the worktree list, ``git status``,
every work-tree byte, the git config and the git index file as they were, and leave no temporary folder of its
own behind (the run gate builds indexes in ``<git dir>/memhtml/probe-scratch/`` and removes them).
``agent install`` joins them: it writes only the agent's own files (tests/agents checks which), never the
memory. A new read-only command joins by adding a row to :data:`ROWS`.
"""

from __future__ import annotations

import hashlib
import os
import socket
import tempfile
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.demo import DEMO_CORPUS
from git_memhtml.cli.main import main
from tests.trust.test_trust_run_branches import git, snapshot

ROWS: list[tuple[str, list[str]]] = [
    ("eval run", ["eval", "run", "{run}"]),
    ("eval run --json", ["eval", "run", "{run}", "--json"]),
    ("eval run small sample", ["eval", "run", "{run}", "--probes", "3", "--k", "1", "--max-lost", "1000"]),
    ("sleep review", ["sleep", "review", "{run}"]),
    ("sleep review --json", ["sleep", "review", "{run}", "--json"]),
    ("sleep review markdown", ["sleep", "review", "{run}", "--format", "markdown"]),
    ("sleep review no probes", ["sleep", "review", "{run}", "--no-probes"]),
    ("sleep status", ["sleep", "status"]),
    ("agent install", ["agent", "install", "claude-code"]),  # writes the agent's files under HOME, never the repo
    ("agent uninstall nothing installed", ["agent", "uninstall", "cursor"]),
]


@pytest.fixture(scope="module")
def finished(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("read-only") / "mem"
    assert main(["init", str(root)]) == 0
    assert main(["-C", str(root), "apply", "--file", str(DEMO_CORPUS)]) == 0
    assert main(["-C", str(root), "sleep", "run"]) == 0
    run = git(root, "for-each-ref", "--format=%(refname:short)", "refs/heads/sleep/").strip()
    return root, run


def _git_dir_state(root: Path) -> dict[str, Any]:
    git_dir = root / ".git"
    return {name: hashlib.sha256((git_dir / name).read_bytes()).hexdigest() for name in ("config", "index", "HEAD")}


def _own_temp() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("memhtml-probes-*")}


@pytest.mark.slow
@pytest.mark.parametrize(("label", "argv"), ROWS, ids=[r[0] for r in ROWS])
def test_a_read_only_command_touches_nothing(finished: tuple[Path, str], capsys: pytest.CaptureFixture[str],
                                             label: str, argv: list[str]) -> None:
    root, run = finished
    before, git_before, temp_before = snapshot(root), _git_dir_state(root), _own_temp()
    assert main(["-C", str(root), *[a.format(run=run) for a in argv]]) == 0, capsys.readouterr()
    assert snapshot(root) == before
    assert _git_dir_state(root) == git_before
    assert _own_temp() <= temp_before
    assert os.listdir(root / ".git" / "memhtml" / "runs") == [f"{run.replace('/', '-')}.index.db"]
    scratch = root / ".git" / "memhtml" / "probe-scratch"
    assert not scratch.exists() or os.listdir(scratch) == []  # the gate's built indexes are gone with it


@pytest.mark.slow
def test_a_killed_verdict_s_scratch_is_swept_by_the_next(finished: tuple[Path, str]) -> None:
    """A SIGKILL leaves the folder the gate built its indexes in; the next verdict removes it (its process is gone),
    and never the folder of a process that still runs."""
    root, run = finished
    scratch = root / ".git" / "memhtml" / "probe-scratch"
    scratch.mkdir(parents=True, exist_ok=True)
    dead = scratch / f"{socket.gethostname()}~999999999~~abc"
    (dead / "base").mkdir(parents=True)
    (dead / "base" / "index.db").write_bytes(b"x" * 1024)
    alive = scratch / f"{socket.gethostname()}~{os.getpid()}~~def"
    alive.mkdir()
    assert main(["-C", str(root), "eval", "run", run]) == 0
    assert not dead.exists() and alive.is_dir()
    alive.rmdir()


@pytest.mark.slow
@pytest.mark.parametrize("verb", ["recall", "trace"])
def test_a_session_hook_touches_nothing(finished: tuple[Path, str], capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch, verb: str) -> None:
    """The session hooks (docs/session.md) are reads of the memory: a prompt's recall and a trace with a transcript
    outside the roots leave the tree, the git dir and the run indexes as they were."""
    import io
    import json

    root, _ = finished
    event = json.dumps({"prompt": "what did we decide about the release?", "transcript_path": "/nowhere.jsonl"})
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(event.encode())))
    before, git_before = snapshot(root), _git_dir_state(root)
    assert main(["-C", str(root), "session", verb, "--agent", "claude-code"]) == 0
    out = capsys.readouterr()
    assert out.err == "" and (verb == "trace") == (out.out == "")
    assert snapshot(root) == before
    assert _git_dir_state(root) == git_before
