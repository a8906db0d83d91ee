"""``git memhtml doctor``: find what is inconsistent around the memory tree and repair what is safe.

Checks (issue 4 item 6; docs/index.md §3.4, docs/doctor.md; docs/sleep.md §2.4 stale runs): index drift
(:mod:`index.verify`), unparseable files, duplicate live content, dangling authored links, stale sleep runs (``running``
for more than :data:`STALE_RUN_HOURS` or whose branch is gone), leftover sleep worktrees under
``<common-dir>/memhtml/worktrees/``, and a ``.gitattributes`` lacking the generated-file merge lines.

It also reports **leftovers**: files under the PARA folders that differ from ``HEAD`` (untracked, modified,
deleted), which no acknowledged write leaves (a write commits before it touches the work tree) but an editor, a
killed older version or a hand copy can.

``fix`` repairs only caches and bookkeeping: catches the index up and re-projects drifted rows, marks stale runs
``abandoned``, removes leftover worktrees, finishes the work tree of a commit a killed writer landed. It never
writes a memory file or ``.gitattributes`` (tracked content: ``git memhtml init`` adds the lines), except on
request: :func:`fix_leftovers` commits or removes the leftovers (``--fix-leftovers commit|remove``).

:func:`check_model` (``doctor --model``) makes one tiny structured call to the configured model and reports its
latency and usage, or the exact error (docs/doctor.md "The model").
"""

from __future__ import annotations

import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from git_memhtml.document.model import PARA_PREFIXES
from git_memhtml.domain.instants import hours_between
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import ModelUnavailable
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.runs import running_runs
from git_memhtml.index.source import Parser
from git_memhtml.index.verify import IndexDrift, TreeFacts, compare, repair, reproject, tree_facts
from git_memhtml.llm.client import HttpModelClient
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.contract import STALE_RUN_HOURS
from git_memhtml.sleep.engine.runplace import worktree_name
from git_memhtml.sleep.engine.runs import reap_stale
from git_memhtml.store.repo_init import GITATTRIBUTES_LINES
from git_memhtml.tree.leftovers import LEFTOVER_MODES

WORKTREES_DIR = ("memhtml", "worktrees")
"""Where sleep runs keep their linked worktrees, under the common git dir (docs/design.md §3.2)."""


@dataclass(frozen=True)
class StaleRun:
    """A ``running`` row that no process will finish: ``reason`` is ``branch gone`` or ``started Nh ago``."""

    run_id: str
    reason: str


@dataclass(frozen=True)
class Leftover:
    """A file under the PARA folders that is not as ``HEAD`` has it: ``state`` is ``untracked`` (not in HEAD),
    ``modified`` or ``deleted`` (in HEAD, different or missing on disk)."""

    path: str
    state: str


@dataclass(frozen=True)
class DoctorReport:
    """Every finding; ``problems`` counts them (``exit 1`` when non-zero); ``fixed`` lists what ``--fix`` did."""

    index: IndexDrift
    tree: TreeFacts
    stale_runs: tuple[StaleRun, ...]
    leftover_worktrees: tuple[str, ...]
    gitattributes_missing: tuple[str, ...]
    leftovers: tuple[Leftover, ...] = field(default=())
    fixed: tuple[str, ...] = field(default=())

    @property
    def problems(self) -> int:
        """Number of findings (index drift counts once per drifted path, plus staleness, FTS and vectors)."""
        if self.index.not_built:
            drift = 1  # a fresh clone: one finding, "index not built"
        else:
            drift = len(self.index.drifted_paths) + int(self.index.stale) + int(not self.index.fts_ok)
            drift += int(self.index.missing_vectors > 0) + int(self.index.matrix_damage is not None)
        tree = len(self.tree.unparseable) + len(self.tree.duplicates) + len(self.tree.dangling)
        runs = len(self.stale_runs) + len(self.leftover_worktrees)
        return drift + tree + runs + len(self.gitattributes_missing) + len(self.leftovers)


def leftovers(repo: GitRepo) -> tuple[Leftover, ...]:
    """Every path under ``projects/``, ``areas/``, ``resources/``, ``archive/`` whose work-tree bytes are not
    HEAD's (staged or not; ignored files excluded), sorted. Reads only."""
    head = repo.head_sha()
    tracked = repo.tree_blobs(head, prefixes=PARA_PREFIXES) if head else {}
    out: list[Leftover] = []
    for entry in repo.dirty():
        if not entry.path.startswith(PARA_PREFIXES):
            continue
        on_disk = (repo.root / entry.path).is_file()
        if entry.path not in tracked:
            if on_disk:
                out.append(Leftover(entry.path, "untracked"))
        elif not on_disk:
            out.append(Leftover(entry.path, "deleted"))
        else:
            out.append(Leftover(entry.path, "modified"))
    return tuple(out)


def fix_leftovers(repo: GitRepo, mode: str) -> tuple[list[str], str | None]:
    """Commit (``mode="commit"``: the files as they are on disk, deletions included, one commit
    ``memhtml(doctor): commit N leftover file(s)`` listing them) or remove (``"remove"``: put each path back as
    HEAD has it) every leftover, under the write lock.

    Returns:
        ``(actions, commit sha or None)``.
    Raises:
        ValueError: ``mode`` is not one of :data:`LEFTOVER_MODES`. WriteLocked, HeadMoved, GitError.
    """
    if mode not in LEFTOVER_MODES:
        raise ValueError(f"unknown leftover mode {mode!r}")
    with repo.write_lock("doctor --fix-leftovers"):
        found = leftovers(repo)  # again, under the lock: a write in flight has finished by now
        if not found:
            return [], None
        paths = [f.path for f in found]
        if mode == "remove":
            repo.restore_paths(paths)
            return [f"leftover {f.path} ({f.state}): put back as HEAD has it" for f in found], None
        changes = {p: (repo.root / p).read_bytes() if (repo.root / p).is_file() else None for p in paths}
        body = "\n".join(f"{f.state}: {f.path}" for f in found)
        sha = repo.commit_files(changes, f"memhtml(doctor): commit {len(found)} leftover file(s)", body=body,
                                purpose="doctor --fix-leftovers")
        return [f"leftover {f.path} ({f.state}): committed in {str(sha)[:12]}" for f in found], sha


def stale_runs(repo: GitRepo, db: IndexDB, *, now: str) -> tuple[StaleRun, ...]:
    """``running`` rows whose branch is gone (not for dry runs, which have none) or that started more than
    :data:`STALE_RUN_HOURS` (20, docs/sleep.md §2.4) hours before ``now``. Reads only."""
    out: list[StaleRun] = []
    for run in running_runs(db):
        hours = hours_between(run.started_at, now)
        if not run.dry_run and repo.branch_sha(run.branch) is None:
            out.append(StaleRun(run.run_id, "branch gone"))
        elif hours > STALE_RUN_HOURS:
            out.append(StaleRun(run.run_id, f"started {int(hours)}h ago"))
    return tuple(out)


def _worktrees_folder(repo: GitRepo) -> Path:
    return repo.common_dir.joinpath(*WORKTREES_DIR)


def leftover_worktrees(repo: GitRepo, db: IndexDB, *, now: str) -> tuple[str, ...]:
    """Names of folders under ``<common-dir>/memhtml/worktrees/`` that no live (``running``, not stale) run
    owns: a run removes its worktree when it ends, so these are what a killed run left behind."""
    folder = _worktrees_folder(repo)
    if not folder.is_dir():
        return ()
    stale = {s.run_id for s in stale_runs(repo, db, now=now)}
    live: set[str] = set()
    for run in running_runs(db):
        if run.run_id not in stale:
            live |= {worktree_name(run.run_id), f"dry-{worktree_name(run.run_id)}"}
    return tuple(sorted(p.name for p in folder.iterdir() if p.is_dir() and p.name not in live))


def gitattributes_missing(repo: GitRepo) -> tuple[str, ...]:
    """The generated-file merge lines of ``GITATTRIBUTES_LINES`` (those with ``merge=``) that ``.gitattributes``
    lacks, compared token by token."""
    path = repo.root / ".gitattributes"
    present = {tuple(line.split()) for line in path.read_text(encoding="utf-8").splitlines()} if path.is_file() \
        else set()
    return tuple(line for line in GITATTRIBUTES_LINES if "merge=" in line and tuple(line.split()) not in present)


def _tree_paths(repo: GitRepo) -> set[str]:
    head = repo.head_sha()
    paths = set(repo.tree_blobs(head, prefixes=())) if head else set()
    for entry in repo.dirty():
        if entry.deleted:
            paths.discard(entry.path)
        else:
            paths.add(entry.path)
    return paths


def diagnose(repo: GitRepo, db: IndexDB, *, now: str, parse: Parser | None = None) -> DoctorReport:
    """Run every check; reads only (the FTS integrity check is a read despite its ``INSERT`` syntax).

    Raises:
        GitError: the repository cannot be read. StorageError: SQLite failed.
    """
    scratch, report = reproject(repo, now=now, parse=parse)
    try:
        drift = compare(db, scratch, head=repo.head_sha())
        facts = tree_facts(repo, scratch, report, lambda: _tree_paths(repo))
    finally:
        scratch.close()
    return DoctorReport(
        index=drift, tree=facts, stale_runs=stale_runs(repo, db, now=now),
        leftover_worktrees=leftover_worktrees(repo, db, now=now), gitattributes_missing=gitattributes_missing(repo),
        leftovers=leftovers(repo),
    )


def _remove_worktree(repo: GitRepo, name: str) -> None:
    folder = _worktrees_folder(repo) / name
    repo.remove_worktree(name)
    if folder.is_dir() and folder.parent == _worktrees_folder(repo):
        shutil.rmtree(folder)
    repo.run_git(["worktree", "prune"])


def fix(repo: GitRepo, db: IndexDB, embedder: Embedder | None, *, now: str,
        parse: Parser | None = None, leftover_mode: str | None = None) -> DoctorReport:
    """Repair what is safe, then diagnose again: catch the index up and re-project drifted rows, mark stale
    runs ``abandoned``, remove leftover worktrees, finish a killed writer's landed commit (its work tree), and,
    when ``leftover_mode`` is given, :func:`fix_leftovers`. Otherwise memory files and ``.gitattributes`` are
    never written.

    Returns:
        The report after the repairs, with ``fixed`` naming each action taken.
    Raises:
        EmbedModelMismatch: the index holds vectors of another space (hint ``git memhtml index rebuild``).
        GitError, StorageError: as :func:`diagnose`.
    """
    actions: list[str] = []
    matrix_at: int | None = None
    with repo.write_lock("doctor --fix"):  # entering it finishes a killed writer's landed commit
        pass
    actions += [f"commit {sha[:12]}: finished the work tree a killed writer left" for sha in repo.recovered]
    if leftover_mode is not None:
        actions.extend(fix_leftovers(repo, leftover_mode)[0])
    before = diagnose(repo, db, now=now, parse=parse)
    if not before.index.clean:
        repair(repo, db, embedder, now=now, parse=parse)
        if not replace(before.index, matrix_damage=None).clean:
            actions.append(f"index: caught up and re-projected {len(before.index.drifted_paths)} drifted path(s)")
        matrix_at = len(actions) if before.index.matrix_damage else None
    if before.stale_runs:
        for reaped in reap_stale(db, branch_exists=lambda b: repo.branch_sha(b) is not None, now=now):
            actions.append(f"run {reaped['runId']}: marked abandoned ({reaped['reason']})")
    for name in leftover_worktrees(repo, db, now=now):
        _remove_worktree(repo, name)
        actions.append(f"worktree {name}: removed")
    after = diagnose(repo, db, now=now, parse=parse)
    if matrix_at is not None and after.index.matrix_damage is None:  # claimed only when the new file checks out
        actions.insert(matrix_at, "index: rebuilt the vector matrix that failed its checks")
    return DoctorReport(after.index, after.tree, after.stale_runs, after.leftover_worktrees,
                        after.gitattributes_missing, after.leftovers, fixed=tuple(actions))


class DoctorPing(AnswerSchema):
    """The answer of ``doctor --model``'s one call: set ok to true."""

    ok: bool


PING_SYSTEM = "You check that a structured-output connection works. Answer with the required JSON object only."
"""System prompt of the ``doctor --model`` call."""
PING_PROMPT = 'Reply with {"ok": true}.'
"""User message of the ``doctor --model`` call."""
PING_MAX_TOKENS = 64
"""Answer tokens the ping asks for (the answer is ``{"ok": true}``; a reasoning model may need the margin)."""


@dataclass(frozen=True)
class ModelCheck:
    """What ``doctor --model`` found.

    Attributes:
        ok: the model answered the ping within the contract.
        describe: ``<dialect> <model> at <endpoint>``; dialect, model, url: the binding's parts (never the key).
        latency_ms: wall time of the call, retries included (ms, rounded).
        attempts: HTTP attempts it took.
        input_tokens / output_tokens: the usage the provider reported.
        error / code / hint: the exact error when not ``ok`` (its message, ``ERR_*`` code and hint).
    """

    ok: bool
    describe: str
    dialect: str
    model: str
    url: str
    latency_ms: int
    attempts: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    error: str | None = None
    code: str | None = None
    hint: str | None = None


def check_model(client: HttpModelClient, *, clock: Callable[[], float] = time.monotonic) -> ModelCheck:
    """Make one tiny structured call (:class:`DoctorPing`) and report latency and usage, or the error.

    Never raises a model error: :class:`ModelUnavailable` and its kinds (contract violation, refusal) become
    ``ok=False`` with the message, code and hint.
    """
    s = client.settings
    started = clock()
    try:
        answer = client.call(ModelRequest(DoctorPing, PING_SYSTEM, PING_PROMPT, max_tokens=PING_MAX_TOKENS,
                                          cache_system=False))
    except ModelUnavailable as exc:
        return ModelCheck(False, client.describe(), s.dialect, s.model, s.endpoint,
                          round((clock() - started) * 1000), error=exc.message, code=exc.code, hint=exc.hint)
    return ModelCheck(True, client.describe(), s.dialect, s.model, s.endpoint, round((clock() - started) * 1000),
                      attempts=answer.attempts, input_tokens=answer.usage.input_tokens,
                      output_tokens=answer.usage.output_tokens)
