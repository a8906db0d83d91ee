"""Trust rule: an acknowledged write is in ``HEAD`` (issue 8 item 2; docs/store.md "The write lock").

Table-driven over the writing commands: eight real ``git-memhtml`` writer processes race on one repository (the
hooks installed, a ``sleep run`` alongside). Every exit-0 write must be in ``HEAD`` (its paths and bytes), one
commit per acknowledged write; every other exit must leave nothing behind (``git status`` is empty at the end).
Then ``apply`` is SIGKILLed at each stage of its commit (fault points) and at a random instant of a big batch: it
leaves nothing or a full commit, and a retry commits what was not committed (never "deduplicated" from a ghost).
A new writing command joins by adding a row to :data:`RACES`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.gitrepo.packwrite import PACK_MIN_BLOBS

ROOT = Path(__file__).resolve().parents[2]
WRITERS = 8
PER_WRITER = int(os.environ.get("MEMHTML_TRUST_PER_WRITER", "4"))
"""Operations per writer process (the issue asks for 50; 2 shared cores make 4 the default: 32 per race)."""
NOW = "2026-11-30T10:00:00Z"
_BIN = Path(sys.executable).with_name("git-memhtml")
EXE = [str(_BIN)] if _BIN.is_file() else [shutil.which("git-memhtml") or "git-memhtml"]


def run(root: Path, *args: str, stdin: str | None = None, extra: dict[str, str] | None = None,
        timeout: float = 300) -> subprocess.CompletedProcess[str]:
    """One real ``git-memhtml`` process in ``root``, running this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_HOOK_DETACH": "0", **(extra or {})}
    return subprocess.run([*EXE, *args], cwd=root, input=stdin, capture_output=True, text=True, env=env,
                          timeout=timeout, check=False)


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=True).stdout


def head_tree(root: Path) -> dict[str, str]:
    """``{path: blob sha}`` of HEAD."""
    out = git(root, "ls-tree", "-r", "-z", "HEAD")
    entries = [e for e in out.split("\0") if e]
    return {e.split("\t", 1)[1]: e.split()[2] for e in entries}


def head_bytes(root: Path, path: str) -> bytes:
    return subprocess.run(["git", "-C", str(root), "show", f"HEAD:{path}"], capture_output=True, check=True).stdout


def status(root: Path) -> str:
    """Everything uncommitted: staged, modified, deleted, untracked (ignored files excepted)."""
    return git(root, "status", "--porcelain", "--untracked-files=all")


def data_of(proc: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    return json.loads(proc.stdout)["data"]  # type: ignore[no-any-return]


def op_line(title: str, claim: str) -> str:
    return json.dumps({"title": title, "type": "semantic", "body": claim})


@pytest.fixture
def mem(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    assert run(tmp_path, "init", str(root)).returncode == 0
    proc = run(root, "install")
    assert proc.returncode == 0, proc.stderr
    return root


# -- the race ------------------------------------------------------------------------------------------------
Seeds = dict[tuple[int, int], str]
Args = Callable[[int, int, Seeds], tuple[list[str], str | None]]
Check = Callable[[Path, dict[str, str], int, int, dict[str, Any], Seeds], None]


@dataclass(frozen=True)
class Race:
    """One writing command: the argv of writer ``w``'s ``i``-th operation and what HEAD must then hold."""

    name: str
    args: Args
    check: Check
    needs_seeds: bool = False


def claim(w: int, i: int) -> str:
    return f"Writer {w} recorded fact number {i} about cache {w * 100 + i}."


def assert_stored(root: Path, tree: dict[str, str], path: str, text: str) -> None:
    assert path in tree, f"{path} was acknowledged but is not in HEAD"
    blob = head_bytes(root, path)
    assert text.encode() in blob and (root / path).read_bytes() == blob, path


def _write_check(root: Path, tree: dict[str, str], w: int, i: int, data: dict[str, Any], _: Seeds) -> None:
    assert data["created"] and data["commitSha"]
    assert_stored(root, tree, data["path"], claim(w, i))


def _apply_check(root: Path, tree: dict[str, str], w: int, i: int, data: dict[str, Any], _: Seeds) -> None:
    assert data["summary"]["written"] == 2 and data["commitSha"]
    for k, result in enumerate(data["results"]):
        assert_stored(root, tree, result["path"], claim(w, 10 * i + k))


def _correct_check(root: Path, tree: dict[str, str], w: int, i: int, data: dict[str, Any], seeds: Seeds) -> None:
    assert_stored(root, tree, data["path"], claim(w, i) + " Corrected")
    assert data["archived_path"] in tree and seeds[(w, i)] not in tree


def _archive_check(root: Path, tree: dict[str, str], w: int, i: int, data: dict[str, Any], seeds: Seeds) -> None:
    assert_stored(root, tree, data["archive_path"], claim(w, i))
    assert seeds[(w, i)] not in tree


def _link_check(root: Path, tree: dict[str, str], w: int, i: int, data: dict[str, Any], seeds: Seeds) -> None:
    assert data["commitSha"]
    assert_stored(root, tree, seeds[(w, i)], f'href="/{seeds[(w, (i + 1) % PER_WRITER)]}"')


RACES = [
    Race("write", lambda w, i, _: (["write", "--type", "semantic", "--title", f"w{w} n{i}", "--claim", claim(w, i),
                                    "--session-id", f"s-{w}"], None), _write_check),
    Race("apply", lambda w, i, _: (["apply"], "\n".join(op_line(f"w{w} n{i} k{k}", claim(w, 10 * i + k))
                                                         for k in range(2)) + "\n"), _apply_check),
    Race("correct", lambda w, i, s: (["correct", s[(w, i)], "--title", f"fix w{w} n{i}", "--claim",
                                      claim(w, i) + " Corrected", "--reason", "measured again"], None),
         _correct_check, needs_seeds=True),
    Race("archive", lambda w, i, s: (["archive", s[(w, i)], "--reason", "stale"], None), _archive_check,
         needs_seeds=True),
    Race("link", lambda w, i, s: (["link", s[(w, i)], "relates-to", s[(w, (i + 1) % PER_WRITER)]], None),
         _link_check, needs_seeds=True),
]


def seed(root: Path) -> Seeds:
    """One committed memory per (writer, operation), written by one ``apply`` before the race."""
    keys = [(w, i) for w in range(WRITERS) for i in range(PER_WRITER)]
    proc = run(root, "apply", "--json", stdin="\n".join(op_line(f"seed w{w} n{i}", claim(w, i)) for w, i in keys))
    assert proc.returncode == 0, proc.stderr
    return {key: r["path"] for key, r in zip(keys, data_of(proc)["results"], strict=True)}


@pytest.mark.parametrize("race", RACES, ids=[r.name for r in RACES])
def test_every_acknowledged_write_is_in_head_and_every_refusal_leaves_nothing(mem: Path, race: Race) -> None:
    _race(mem, race, PER_WRITER)


FULL_SIZE = int(os.environ.get("MEMHTML_TRUST_FULL_SIZE", "50"))
"""The issue's acceptance size: 8 writers × 50 writes, plus the hooks and a sleep run (about 2–3 minutes here)."""


@pytest.mark.slow
def test_eight_writers_times_fifty_writes_with_hooks_and_a_sleep_run(mem: Path) -> None:
    _race(mem, RACES[0], FULL_SIZE)


def _race(mem: Path, race: Race, per_writer: int) -> None:
    """Race :data:`WRITERS` processes doing ``per_writer`` operations each, alongside a sleep run; then check."""
    assert race.name == "write" or per_writer == PER_WRITER, "seeded races are sized by PER_WRITER"
    seeds = seed(mem) if race.needs_seeds else {}
    base = git(mem, "rev-parse", "HEAD").strip()

    def writer(w: int) -> list[tuple[int, subprocess.CompletedProcess[str]]]:
        out = []
        for i in range(per_writer):
            argv, stdin = race.args(w, i, seeds)
            out.append((i, run(mem, *argv, "--json", stdin=stdin)))
        return out

    with ThreadPoolExecutor(WRITERS + 1) as pool:
        sleeper = pool.submit(run, mem, "sleep", "run", "--date", "2026-12-14", "--json")
        writers = [pool.submit(writer, w) for w in range(WRITERS)]
        results = {w: f.result() for w, f in enumerate(writers)}
        sleep_proc = sleeper.result()
    assert sleep_proc.returncode == 0, sleep_proc.stderr[-2000:]
    tree = head_tree(mem)
    acknowledged = 0
    for w, outcomes in results.items():
        for i, proc in outcomes:
            assert proc.returncode in (0, 1), f"writer {w} op {i}: exit {proc.returncode}: {proc.stderr[-1500:]}"
            if proc.returncode == 0:
                acknowledged += 1
                race.check(mem, tree, w, i, data_of(proc), seeds)
    assert status(mem) == "", "something was left behind"
    commits = git(mem, "rev-list", f"{base}..HEAD").split()
    assert len(commits) == acknowledged, "one commit per acknowledged write, none lost"
    assert acknowledged >= WRITERS * per_writer // 2, "most writers must get through the lock"


# -- kill -9 of apply ----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Kill:
    """``apply`` SIGKILLed at a fault point of its commit; ``lands``: whether the commit must be in HEAD."""

    fault_point: str
    lands: bool
    size: int = 5
    """Ops in the batch: :data:`PACK_MIN_BLOBS` or more write the blobs as one pack (docs/store.md)."""


PACKED = PACK_MIN_BLOBS + 8
KILLS = [Kill("before-ref", False), Kill("after-ref", True), Kill("mid-files", True),
         Kill("before-ref", False, PACKED), Kill("mid-files", True, PACKED)]
BATCH = [op_line(f"batch {k}", f"Batch fact {k} says the queue holds {k} jobs.") for k in range(5)]


@pytest.mark.parametrize("kill", KILLS, ids=[f"{k.fault_point}-{k.size}" for k in KILLS])
def test_a_killed_apply_leaves_nothing_or_a_full_commit_and_the_retry_commits(mem: Path, kill: Kill) -> None:
    base = git(mem, "rev-parse", "HEAD").strip()
    batch = [op_line(f"batch {k}", f"Batch fact {k} says the queue holds {k} jobs.") for k in range(kill.size)]
    stream = "\n".join(batch) + "\n"
    proc = run(mem, "apply", "--json", stdin=stream, extra={"MEMHTML_FAULT_POINT": kill.fault_point})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    head = git(mem, "rev-parse", "HEAD").strip()
    if not kill.lands:
        assert head == base and status(mem) == "", "a write killed before its ref update leaves nothing"
    else:
        assert git(mem, "rev-parse", "HEAD~1").strip() == base
        landed = [p for p in head_tree(mem) if p not in head_tree_at(mem, base)]
        assert len(landed) == len(batch), "the commit holds the whole batch"
    retry = run(mem, "apply", "--json", stdin=stream)
    assert retry.returncode == 0, retry.stderr
    summary = data_of(retry)["summary"]
    tree = head_tree(mem)
    if kill.lands:  # committed before the kill: the retry truthfully finds every op stored
        assert summary["deduped"] == len(batch) and data_of(retry)["commitSha"] is None
    else:
        assert summary["written"] == len(batch) and summary["deduped"] == 0
    for result in data_of(retry)["results"]:
        assert result["path"] in tree and (mem / result["path"]).read_bytes() == head_bytes(mem, result["path"])
    assert status(mem) == "", "the retry finished the killed write's work tree"


def head_tree_at(root: Path, sha: str) -> set[str]:
    return set(git(root, "ls-tree", "-r", "--name-only", sha).split("\n")) - {""}


@pytest.mark.parametrize("delay", [0.8, 1.6, 2.4])
def test_a_big_apply_killed_at_any_instant_leaves_nothing_or_everything(mem: Path, delay: float) -> None:
    base = git(mem, "rev-parse", "HEAD").strip()
    stream = "\n".join(op_line(f"big {k}", f"Big fact {k} counts {k} widgets.") for k in range(150)) + "\n"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW}
    child = subprocess.Popen([*EXE, "apply", "--json"], cwd=mem, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL, env=env, text=True)
    assert child.stdin is not None
    child.stdin.write(stream)
    child.stdin.close()
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait()
    added = head_tree_at(mem, "HEAD") - head_tree_at(mem, base)
    assert len(added) in (0, 150), "one commit holds the whole batch or nothing"
    if not added:
        assert status(mem) == ""
    retry = run(mem, "apply", "--json", stdin=stream)
    assert retry.returncode == 0, retry.stderr
    summary = data_of(retry)["summary"]
    assert summary["written"] + summary["deduped"] == 150
    assert summary["deduped"] == (150 if added else 0), "only committed content is ever 'already stored'"
    assert len(head_tree_at(mem, "HEAD") - head_tree_at(mem, base)) == 150 and status(mem) == ""


def test_a_leftover_file_in_the_index_is_not_already_stored(mem: Path) -> None:
    """The original ghost: an uncommitted file with the memory's bytes, indexed by a catch-up, used to make the
    retry report "deduplicated" and commit nothing."""
    first = run(mem, "write", "--type", "semantic", "--title", "Ghost", "--claim", "Ghosts are indexed.", "--json")
    assert first.returncode == 0
    path = data_of(first)["path"]
    text = (mem / path).read_bytes()
    git(mem, "reset", "-q", "--hard", "HEAD~1")
    (mem / path).write_bytes(text)  # the leftover, as a killed pre-commit writer left it
    assert run(mem, "index", "update").returncode == 0  # the index now holds it (it indexes the work tree)
    retry = run(mem, "write", "--type", "semantic", "--title", "Ghost", "--claim", "Ghosts are indexed.", "--json")
    assert retry.returncode == 0, retry.stderr
    data = data_of(retry)
    assert data["created"] and not data["deduped"] and data["path"] == path, "committed in place, not deduplicated"
    assert path in head_tree(mem) and status(mem) == ""


def test_racing_writers_of_one_fact_commit_it_once(mem: Path) -> None:
    """Every writer catches its index up before it takes the lock; a fact another writer committed meanwhile is
    still found (HEAD's changes since the index's commit are hashed), so it is stored once."""
    base = git(mem, "rev-parse", "HEAD").strip()
    argv = ["write", "--type", "semantic", "--title", "Shared", "--claim", "Everyone saw the same outage.", "--json"]
    with ThreadPoolExecutor(WRITERS) as pool:
        procs = list(pool.map(lambda _: run(mem, *argv), range(WRITERS)))
    assert all(p.returncode == 0 for p in procs), [p.stderr[-500:] for p in procs if p.returncode]
    created = [data_of(p) for p in procs if data_of(p)["created"]]
    deduped = [data_of(p) for p in procs if data_of(p)["deduped"]]
    assert len(created) == 1 and len(deduped) == WRITERS - 1
    assert {d["existingPath"] for d in deduped} == {created[0]["path"]}
    assert git(mem, "rev-list", "--count", f"{base}..HEAD").strip() == "1" and status(mem) == ""


# -- Ctrl-C / SIGTERM of apply -------------------------------------------------------------------------------
@dataclass(frozen=True)
class Interrupt:
    """``apply`` sent ``signal`` at a fault point of its commit; ``lands``: whether the commit must be in HEAD."""

    fault_point: str
    lands: bool
    exit_code: int


INTERRUPTS = [
    Interrupt("interrupt:before-ref", False, 130),
    Interrupt("interrupt:after-ref", True, 0),  # landed: exit 0 says it is in HEAD, with a warning
    Interrupt("interrupt:mid-files", True, 0),
    Interrupt("term:after-ref", True, -signal.SIGTERM),  # the polite kill still ends the process, after the files
    Interrupt("term:mid-files", True, -signal.SIGTERM),
]


@pytest.mark.parametrize("stop", INTERRUPTS, ids=[i.fault_point for i in INTERRUPTS])
def test_an_interrupted_apply_leaves_nothing_or_a_finished_commit(mem: Path, stop: Interrupt) -> None:
    """A signal that can be caught never leaves HEAD ahead of git's index and the work tree: once the ref moved,
    the files are written before the signal takes effect, so ``git status`` is clean at once (no staged deletion
    of the batch for a plain ``git commit`` to make)."""
    base = git(mem, "rev-parse", "HEAD").strip()
    stream = "\n".join(BATCH) + "\n"
    proc = run(mem, "apply", "--json", stdin=stream, extra={"MEMHTML_FAULT_POINT": stop.fault_point})
    assert proc.returncode == stop.exit_code, proc.stderr
    head = git(mem, "rev-parse", "HEAD").strip()
    if stop.lands:
        assert git(mem, "rev-parse", "HEAD~1").strip() == base
        landed = [p for p in head_tree(mem) if p not in head_tree_at(mem, base)]
        assert len(landed) == len(BATCH)
        for path in landed:
            assert (mem / path).read_bytes() == head_bytes(mem, path)
    else:
        assert head == base
    assert status(mem) == "", "nothing staged, nothing missing: plain git sees no half-applied commit"


# -- a plain `git commit` after a killed apply (the pre-commit guard) ----------------------------------------
@dataclass(frozen=True)
class PlainCommit:
    """A git porcelain commit the user runs after ``apply`` was SIGKILLed at ``fault_point`` (its commit landed,
    git's index did not follow); ``argv`` may name ``{batch0}``, the batch's first path. ``commits_notes``:
    whether that command commits the user's unstaged edit of ``notes.txt`` (``-a`` does)."""

    name: str
    fault_point: str
    argv: tuple[str, ...]
    commits_notes: bool = False
    amends: bool = False


PLAIN_COMMITS = [
    PlainCommit("commit", "after-ref", ("commit", "-q", "-m", "x")),
    PlainCommit("commit-a", "after-ref", ("commit", "-q", "-a", "-m", "x"), commits_notes=True),
    PlainCommit("commit-paths", "after-ref", ("commit", "-q", "-m", "x", "--", "other.txt")),
    PlainCommit("commit-batch-path", "after-ref", ("commit", "-q", "-m", "x", "--", "other.txt", "{batch0}")),
    PlainCommit("commit-amend", "after-ref", ("commit", "-q", "--amend", "-m", "x"), amends=True),
    PlainCommit("commit-mid-files", "mid-files", ("commit", "-q", "-m", "x")),
]


@pytest.mark.parametrize("case", PLAIN_COMMITS, ids=[c.name for c in PLAIN_COMMITS])
def test_a_plain_git_commit_after_a_killed_apply_keeps_every_memory_of_the_batch(mem: Path, case: PlainCommit
                                                                                  ) -> None:
    """The batch is acknowledged by HEAD once the ref moved; the installed pre-commit shim finishes the journal in
    the index git commits (``GIT_INDEX_FILE``), so no porcelain commit deletes it, and it touches nothing but the
    journal's paths: the user's staged file is committed and their unstaged edit stays as git would leave it."""
    (mem / "notes.txt").write_text("notes v1\n")
    git(mem, "add", "notes.txt")
    git(mem, "commit", "-q", "-m", "notes")
    base = git(mem, "rev-parse", "HEAD").strip()
    proc = run(mem, "apply", "--json", stdin="\n".join(BATCH) + "\n", extra={"MEMHTML_FAULT_POINT": case.fault_point})
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    batch = {p: sha for p, sha in head_tree(mem).items() if p not in head_tree_at(mem, base)}
    assert len(batch) == len(BATCH)
    (mem / "notes.txt").write_text("notes v2, not staged\n")
    (mem / "other.txt").write_text("staged by the user\n")
    git(mem, "add", "other.txt")
    argv = [a.replace("{batch0}", sorted(batch)[0]) for a in case.argv]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MEMHTML_NOW": NOW, "MEMHTML_HOOK_DETACH": "0"}
    done = subprocess.run(["git", "-C", str(mem), *argv], capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    tree = head_tree(mem)
    for path, sha in batch.items():
        assert tree.get(path) == sha, f"{path} of the acknowledged batch was lost by `git {' '.join(argv)}`"
        assert (mem / path).read_bytes() == head_bytes(mem, path)
    assert head_bytes(mem, "other.txt") == b"staged by the user\n"
    assert head_bytes(mem, "notes.txt") == (b"notes v2, not staged\n" if case.commits_notes else b"notes v1\n")
    assert (mem / "notes.txt").read_text() == "notes v2, not staged\n"
    assert status(mem) == ("" if case.commits_notes else " M notes.txt\n")
    assert not (mem / ".git" / "memhtml" / "write-journal.json").exists(), "the journal is finished"
    assert git(mem, "rev-parse", "HEAD~1" if case.amends else "HEAD~2").strip() == base, "one new commit on top"
