"""The one resolver every sleep verb names its run through (issue 8 item 3; docs/sleep.md "Which names a verb
accepts").

A name is a run only when

1. it has a run id's shape (:data:`RUN_ID`: ``sleep/<YYYY-MM-DD>`` optionally followed by ``-<suffix>`` of
   lower-case letters and digits), so ``main``, a tag, a feature branch or ``sleep/../main`` never reach git; and
2. the state plane (a non-dry ``state.sleep_runs`` row) or the branch's own trailers know it, and the branch
   agrees: every commit on ``base..branch`` carries ``Memhtml-Run: <name>`` (a run only appends phase commits,
   so a commit without it means the branch holds something else). Without a row, the base is the merge base with
   the trunk and the branch must hold at least one such commit (or, already merged, its tip must be one), or be an
   **abandoned start**: a branch still at its base whose run worktree exists under
   ``<common dir>/memhtml/worktrees/`` (a run killed while starting), which is ``interrupted``.

A name a live process holds the sleep lock for is ``running`` from the lock's first instant, before its row or
branch exist.

Then the run's **state** is judged (:data:`STATES`): ``running`` (a live process owns it: the sleep lock, which
every run, resume and rebase holds throughout, names it and its process lives), ``interrupted`` (a
``running``/``interrupted`` row without such a process; without a row, a branch with no ``report`` commit), ``failed``,
``review``, ``merged`` (or the tip is on the trunk), ``abandoned``. Each verb accepts only the states in
:data:`VERB_STATES`; ``failed`` is accepted by the verbs that lead to a merge only with ``allow_failed``
(``--allow-failed``).

Refusals raise :class:`RunNotFound` (``no-run``: nothing of that name) or :class:`RunVerbRefused` (with a
``refusal`` code), both exit 1, and both name the branch. Nothing is written while resolving.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from git_memhtml.errors import GitError, RunNotFound, RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.runs import RunRow, get_run, latest_run, run_owner
from git_memhtml.sleep.engine.commit import TRAILER_COUNTS, TRAILER_PHASE, TRAILER_RUN
from git_memhtml.sleep.engine.lock import live_holder
from git_memhtml.sleep.engine.runfiles import run_file_stem
from git_memhtml.sleep.engine.runs import RunState, phase_rows, run_state
from git_memhtml.sleep.engine.trunk import trunk_name

RUN_ID = re.compile(r"^sleep/\d{4}-\d{2}-\d{2}(?:-[0-9a-z]{1,32})?$")
"""A run id: ``sleep/<date>`` (runs made before unique ids), ``sleep/<date>-<n>`` or ``sleep/<date>-<suffix>``."""

VERB_STATES: dict[str, frozenset[RunState]] = {
    "merge": frozenset({"review", "failed", "merged"}),
    "rebase": frozenset({"review", "failed"}),
    "pr": frozenset({"review", "failed"}),
    "review": frozenset({"review", "failed", "merged", "abandoned"}),
    "resume": frozenset({"interrupted", "failed", "review", "abandoned"}),
    "abort": frozenset({"interrupted", "failed", "review", "merged", "abandoned"}),
}
"""verb → states it accepts. ``merged`` reaches ``merge`` so it can say "already merged" as before."""

FAILED_NEEDS_FLAG: frozenset[str] = frozenset({"merge", "rebase", "pr"})
"""Verbs that lead to a merge accept a run with failed phases only with ``allow_failed``."""

VERBS_NEEDING_BRANCH: frozenset[str] = frozenset({"merge", "rebase", "pr", "resume"})
"""Verbs that act on the branch itself (review reads a gone branch's recorded head; abort drops its row)."""


class RunVerbRefused(RunRefused):
    """A verb refused the run it was given; ``refusal`` is the code (``not-a-run``, ``running``, …)."""

    code = "ERR_RUN_REFUSED"

    def __init__(self, message: str, *, refusal: str, hint: str | None = None, path: str | None = None) -> None:
        super().__init__(message, hint=hint, path=path)
        self.refusal = refusal
        self.failed_phases: tuple[str, ...] = ()


@dataclass(frozen=True)
class SleepRun:
    """A resolved run: its id (= branch), row (``None`` in a clone that did not make it), base and tip commits,
    whether the branch exists, its state, failed phases, and the commits of ``base..tip`` (oldest first)."""

    run_id: str
    row: RunRow | None
    base_sha: str
    tip_sha: str
    branch_exists: bool
    state: RunState
    failed_phases: tuple[str, ...]
    commits: tuple[str, ...]
    owner: str | None

    def as_json(self) -> dict[str, Any]:
        """JSON shape."""
        return {"runId": self.run_id, "state": self.state, "baseSha": self.base_sha, "headSha": self.tip_sha,
                "branchExists": self.branch_exists, "failedPhases": list(self.failed_phases),
                "commits": len(self.commits)}


def _refuse(name: str, refusal: str, why: str, hint: str) -> RunVerbRefused:
    return RunVerbRefused(f"{name!r}: {why}", refusal=refusal, hint=hint)


def _tip_trailer(repo: GitRepo, sha: str) -> list[str]:
    out = repo.run_git(["log", "-1", f"--format=%(trailers:key={TRAILER_RUN},valueonly,separator=%x1f)", sha])
    return [v.strip() for v in out.strip("\n").split("\x1f") if v.strip()]


def report_at_tip(repo: GitRepo, tip: str) -> int | None:
    """The ``failed`` count of the ``report`` commit at ``tip``, or ``None`` when ``tip`` is no report commit.

    The report is a pass's last phase, so a branch whose tip is a report commit holds a finished pass, whatever
    the run row says: a kill after that commit (while the row is marked, the index is kept, the worktree is
    removed) interrupts only the teardown (docs/sleep.md §2.5). ``None`` too when the counts trailer is not an
    object with an integer ``failed`` (a forged or damaged commit is not read as finished).
    """
    fmt = f"%(trailers:key={TRAILER_PHASE},valueonly,separator=%x1f)%x00%(trailers:key={TRAILER_COUNTS},valueonly)"
    phases, _, counts = repo.run_git(["log", "-1", f"--format={fmt}", tip]).strip("\n").partition("\x00")
    if "report" not in [v.strip() for v in phases.split("\x1f")]:
        return None
    try:
        parsed = json.loads(counts.strip().splitlines()[-1]) if counts.strip() else None
    except (json.JSONDecodeError, RecursionError):
        return None
    failed = parsed.get("failed") if isinstance(parsed, dict) else None
    return failed if isinstance(failed, int) and not isinstance(failed, bool) and failed >= 0 else None


def _own_worktree(repo: GitRepo, name: str) -> bool:
    """Whether run ``name``'s linked worktree exists where ``sleep run`` makes it
    (``<common dir>/memhtml/worktrees/<stem>``): with a branch still at its base and no row, that is a run killed
    while starting (before row-first ordering), which ``abort`` may remove."""
    stem = run_file_stem(name)
    folder = repo.worktree_path(stem)
    return folder is not None and folder.resolve() == (repo.common_dir / "memhtml" / "worktrees" / stem).resolve()


def _trunk_tip(repo: GitRepo) -> str | None:
    try:
        return repo.branch_sha(trunk_name(repo))
    except RunRefused:
        return None


def _state(repo: GitRepo, db: IndexDB, name: str, row: RunRow | None, base: str, tip: str,
           commits: tuple[str, ...], trunk: str | None,
           abandoned_start: bool = False) -> tuple[RunState, tuple[str, ...]]:
    holder = live_holder(repo)
    if holder is not None and holder.run_id == name and not holder.is_this_process():
        return "running", ()
    if row is not None:
        finished = report_at_tip(repo, tip) if row.status in ("running", "interrupted") and commits else None
        return _state_of_row(db, name, row, finished)
    if abandoned_start:
        return "interrupted", ()
    if trunk is not None and repo.is_ancestor(tip, trunk):
        return "merged", ()
    phases = {v for _sha, values in repo.log_trailers(base, tip, TRAILER_PHASE) for v in values} if commits else set()
    return ("review" if "report" in phases else "interrupted"), ()


def _state_of_row(db: IndexDB, name: str, row: RunRow,
                  finished: int | None = None) -> tuple[RunState, tuple[str, ...]]:
    """The state a row records; a ``running`` row is ``interrupted`` here, since a live run always holds the sleep
    lock (checked first by the caller) and a row's owner pid may have been reused since. ``finished`` is
    :func:`report_at_tip` of the branch: a ``running`` or ``interrupted`` row whose branch ends in a report commit
    is a pass killed during its teardown, so it is ``review`` (or ``failed`` when the report counted failures)."""
    status = row.status
    if status in ("running", "interrupted"):
        if finished is None:
            return "interrupted", ()
        status = "failed" if finished > 0 else "review"
    if status == "failed":
        return "failed", tuple(p.phase for p in phase_rows(db, name) if p.status == "failed")
    if status == "review":
        return "review", ()
    return run_state(row.status) or "review", ()


def resolve_sleep_run(repo: GitRepo, db: IndexDB, name: str | None, verb: str, *,
                      allow_failed: bool = False) -> SleepRun:
    """Resolve ``name`` for ``verb`` (one of :data:`VERB_STATES`), or refuse (module docstring).

    ``name=None`` (only ``review``) names the latest run of the state plane.

    Raises:
        RunNotFound: ``no-run`` — no branch and no row of that name (or no run at all).
        RunVerbRefused: ``not-a-run`` (not a run id, or a branch that holds other commits), or a state the verb
            does not accept (``running``, ``interrupted``, ``failed``, ``merged``, ``abandoned``); the hint names
            the verb that helps (``resume`` for an interrupted run, ``--allow-failed`` for failed phases).
    """
    if name is None:
        latest = latest_run(db)
        if latest is None:
            raise RunNotFound("no-run: no sleep run yet", hint="git memhtml sleep run")
        name = latest.run_id
    if not RUN_ID.fullmatch(name):
        raise _refuse(name, "not-a-run", "is not a sleep run id (runs are named sleep/<YYYY-MM-DD>-<suffix>)",
                      "git memhtml sleep status lists the runs")
    holder = live_holder(repo)
    if holder is not None and holder.run_id == name and not holder.is_this_process():
        # a live run owns it, even in the instants before its row or branch exist
        _check_verb(SleepRun(name, None, "", "", False, "running", (), (), None), verb, allow_failed)
    found = get_run(db, name)
    row = found if found is not None and not found.dry_run else None
    tip = repo.branch_sha(name)
    branch_exists = tip is not None
    if tip is None:
        if row is None:
            raise RunNotFound(f"no-run: no sleep run {name!r} (no branch, no run row)",
                              hint="git memhtml sleep status lists the runs")
        if verb in VERBS_NEEDING_BRANCH:
            raise RunNotFound(f"no-run: the branch {name} is gone", hint="git memhtml sleep status lists the runs")
        tip = row.head_sha or row.base_sha
    trunk = _trunk_tip(repo)
    if not branch_exists:  # only review and abort get here: the row is all that is left of the run
        assert row is not None
        holder = live_holder(repo)
        live = holder is not None and holder.run_id == name and not holder.is_this_process()
        state, failed = ("running", ()) if live else _state_of_row(db, name, row)
        run = SleepRun(name, row, row.base_sha, tip, False, state, failed, (), run_owner(db, name))
        _check_verb(run, verb, allow_failed)
        return run
    try:
        if row is not None:
            base = row.base_sha
            if not repo.is_ancestor(base, tip):
                raise _refuse(name, "not-a-run", f"does not descend from its run's base {base[:12]}",
                              "the branch was replaced by hand; git memhtml sleep abort drops it")
        else:
            if trunk is None:
                raise _refuse(name, "not-a-run", "has no trunk to measure it against", "git branch main <commit>")
            base = repo.merge_base(trunk, tip)
        commits = tuple(repo.commits_between(base, tip)) if base != tip else ()
        trailers = repo.log_trailers(base, tip, TRAILER_RUN) if commits else []
    except GitError as exc:
        raise _refuse(name, "not-a-run", f"cannot be read as a run: {exc.message}",
                      "git memhtml sleep status lists the runs") from exc
    foreign = [sha for sha, values in trailers if values != [name]]
    if foreign:
        raise _refuse(name, "not-a-run", f"commit {foreign[0][:12]} on it carries no '{TRAILER_RUN}: {name}' "
                      f"trailer ({len(foreign)} such commit(s)): the branch is not (only) a sleep run",
                      "merge it with plain git if you mean it; a sleep verb only acts on a run's own commits")
    abandoned_start = row is None and not commits and _own_worktree(repo, name)
    if row is None and not commits and not abandoned_start and name not in _tip_trailer(repo, tip):
        raise _refuse(name, "not-a-run", f"no commit carries '{TRAILER_RUN}: {name}' and no run row names it",
                      "git memhtml sleep status lists the runs")
    state, failed = _state(repo, db, name, row, base, tip, commits, trunk, abandoned_start)
    run = SleepRun(name, row, base, tip, branch_exists, state, failed, commits, run_owner(db, name) if row else None)
    _check_verb(run, verb, allow_failed)
    return run


_STATE_HINTS = {
    "running": "wait for it to finish (git memhtml sleep status)",
    "interrupted": "finish it first: git memhtml sleep resume {name} (or drop it: git memhtml sleep abort {name})",
    "merged": "start a new cycle: git memhtml sleep run",
    "abandoned": "start a new cycle: git memhtml sleep run",
    "review": "it is complete: git memhtml sleep review {name}, then git memhtml sleep merge {name}",
}


def _check_verb(run: SleepRun, verb: str, allow_failed: bool) -> None:
    accepted = VERB_STATES[verb]
    name = run.run_id
    if run.state == "failed" and verb in FAILED_NEEDS_FLAG and not allow_failed:
        phases = ", ".join(run.failed_phases) or "unknown phases"
        refused = RunVerbRefused(
            f"{name!r} has failed phases: {phases}; sleep {verb} refuses a run with failures",
            refusal="failed-phases",
            hint=f"git memhtml sleep resume {name} re-runs them; or pass --allow-failed to {verb} it as it is",
        )
        refused.failed_phases = run.failed_phases
        raise refused
    if run.state not in accepted:
        what = {"running": "is running (a live process owns it)", "interrupted": "was interrupted and is unfinished",
                "merged": "is already merged", "abandoned": "was abandoned", "review": "is complete"}[run.state]
        raise RunVerbRefused(f"{name!r} {what}; sleep {verb} refuses it", refusal=run.state,
                             hint=_STATE_HINTS[run.state].format(name=name))
