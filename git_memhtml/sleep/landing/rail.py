"""The landing rail: a run's diff may hold only what sleep produces (issue 8 item 3; docs/sleep.md "The landing
rail").

The resolver (:mod:`sleep.runref`) proves a branch *claims* to be a run (its trailers); anyone can type trailers.
:func:`check_sleep_output` proves the branch's content is of the shape only sleep makes, before ``sleep merge``
or ``sleep rebase`` moves anything (forge CI and ``eval`` may call it too). Over ``base..tip``:

a. **no deletion** of a memory, except its move into the archive mirror: a memory ``P`` may vanish only where
   ``archive/<YYYY>/P`` (or the ordinal form ``archive/<YYYY>/<stem>-<n>.html`` of
   :func:`store.edits.free_archive_path`) appears, or, for an inbox memory ``areas/inbox/N``, where a topic folder
   gained ``N`` with the same article (placement-triage's re-filing, :func:`sleep.engine.refile.refiled_moves`);
   an archived memory never vanishes; no other file vanishes;
b. **only sleep's paths** are added or changed: memory files under the PARA buckets (no dot segment, no generated
   name), the generated listings (``index.html`` at the root or in a bucket folder) and the root ``sitemap.xml``,
   this run's own record ``.memhtml/sleep/<stem>.html``, ``.pending.jsonl`` and ``.journal.jsonl``
   (:func:`sleep.engine.runfiles.run_record_files`), and ``.memhtml/state/access.jsonl``;
   each a regular file (never a symlink or submodule). ``README.html``, ``.gitattributes``, hooks config or any
   other dotfile are refused;
c. **every added or changed memory passes validate's own check** (:func:`document.wellformed.check_memory_bytes`)
   and carries no detected secret (:func:`document.secret_gate.secret_kinds`, docs/secrets.md),
   read from the tip's blobs — only the changed blobs are read; every changed listing and the sitemap are exactly
   sleep's rendering of their entries (:mod:`hooks.artifact_entries`), the sidecar one JSON object per line, the
   run journal entries :func:`sleep.engine.journal.parse_journal` reads (docs/ledger.md §2);
d. **every commit is a phase commit of this run**: exactly one ``Memhtml-Run`` equal to the run, exactly one
   ``Memhtml-Phase`` naming a phase of :data:`sleep.contract.SLEEP_PHASES`, phases in canonical order (no phase
   twice, except consecutive commits of a :data:`sleep.contract.MULTI_COMMIT_PHASES` phase) within each pass — a
   pass ends with a ``report`` commit; ``sleep resume`` of a run that has one appends a second pass
   (:data:`sleep.run.RESWEEP_PHASES`) — and the last commit is the ``report`` phase.

A violation raises :class:`NotSleepOutput` (refusal ``not-sleep-output``, exit 1) naming the first offending
paths or commits and their count.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from git_memhtml.artifacts.entries import parse_access, parse_listing, parse_sitemap
from git_memhtml.cut import clip_join
from git_memhtml.document.secret_gate import secret_kinds
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.values import TreeChange
from git_memhtml.sleep.engine.commit import TRAILER_PHASE, TRAILER_RUN
from git_memhtml.sleep.engine.contract import MULTI_COMMIT_PHASES, SLEEP_PHASES, phase_ordinal
from git_memhtml.sleep.engine.journal import parse_journal
from git_memhtml.sleep.engine.refile import refiled_moves
from git_memhtml.sleep.engine.runfiles import journal_file, run_record_files
from git_memhtml.sleep.engine.runref import RunVerbRefused
from git_memhtml.tree.layout import ACCESS_SIDECAR, INDEX_NAME, SITEMAP_PATH, archive_sources, is_valid_memory_path

REFUSAL = "not-sleep-output"
"""The refusal code of every rail violation."""

LISTED = 5
"""Offending paths or commits named in a refusal before the rest are counted."""

REGULAR_MODES: frozenset[int] = frozenset({0o100644, 0o100755})
"""Git file modes of a regular file; a symlink (``120000``) or submodule (``160000``) is never sleep output."""

_HINT = ("a sleep run only edits, archives and lists memories; this branch holds other changes (made by hand or "
         "by another tool). Inspect it with git log -p {base}..{name}; merge it with plain git if you mean it, or "
         "drop it: git memhtml sleep abort {name}")


class NotSleepOutput(RunVerbRefused):
    """The branch's diff or commits hold something a sleep run never produces."""

    def __init__(self, message: str, *, hint: str | None = None, path: str | None = None) -> None:
        super().__init__(message, refusal=REFUSAL, hint=hint, path=path)
        self.details = {"refusal": REFUSAL}


def _is_memory(path: str) -> bool:
    return is_valid_memory_path(path) and not any(part.startswith(".") for part in path.split("/"))


def _is_listing(path: str) -> bool:
    parts = path.split("/")
    if parts[-1] == SITEMAP_PATH:
        return len(parts) == 1
    if parts[-1] != INDEX_NAME:
        return False
    return len(parts) == 1 or _is_memory("/".join([*parts[:-1], "x.html"]))


def _named(items: Sequence[str]) -> str:
    return clip_join(list(items), LISTED, "; ") + f" ({len(items)} in all)"


def path_violations(run_id: str, changes: Sequence[TreeChange], refiled: Collection[str] = ()) -> list[str]:
    """``path: reason`` for every change of rules (a) and (b) (module docstring), in path order; ``refiled`` are the
    inbox paths a re-filing moved (:func:`sleep.engine.refile.refiled_moves`), whose deletion is a move."""
    own = {*run_record_files(run_id), ACCESS_SIDECAR}
    added = [c.path for c in changes if c.old_sha is None and c.new_sha is not None]
    archived_from: dict[str, int] = {}
    for path in added:
        for source in archive_sources(path):
            archived_from[source] = archived_from.get(source, 0) + 1
    out: list[str] = []
    for change in sorted(changes, key=lambda c: c.path):
        path = change.path
        if change.new_sha is None:
            if _is_memory(path) and not path.startswith("archive/") and archived_from.get(path, 0) > 0:
                archived_from[path] -= 1
                continue
            if path in refiled:
                continue
            out.append(f"{path}: deleted (sleep never deletes; it only moves a memory into archive/<YYYY>/)")
            continue
        if not (_is_memory(path) or _is_listing(path) or path in own):
            out.append(f"{path}: not a memory, a generated listing or this run's record")
        elif change.new_mode not in REGULAR_MODES:
            out.append(f"{path}: committed with mode {change.new_mode:o}, not as a regular file")
    return out


def _artifact_problem(path: str, data: bytes) -> str | None:
    """Why a generated artifact's bytes are not what sleep renders, or ``None`` (listings and the sitemap must be
    exactly our rendering of their entries; the sidecar one JSON object per line)."""
    if path == ACCESS_SIDECAR:
        return None if parse_access(data) is not None else "is not an access sidecar (one JSON object per line)"
    if path == SITEMAP_PATH:
        return None if parse_sitemap(data) is not None else "is not a sitemap as sleep renders it"
    folder = path.rsplit("/", 1)[0] if "/" in path else ""
    return None if parse_listing(data, folder) is not None else "is not a listing as sleep renders it"


def content_violations(repo: GitRepo, changes: Sequence[TreeChange], run_id: str) -> list[str]:
    """``path: first violation`` for every added or changed memory whose tip blob fails validate's check (c), every
    changed listing, sitemap or access sidecar that is not sleep's rendering, and ``run_id``'s journal when a line
    of it is not a journal entry."""
    out: list[str] = []
    journal = journal_file(run_id)
    for change in sorted(changes, key=lambda c: c.path):
        if change.new_sha is None or change.new_mode not in REGULAR_MODES:
            continue
        if change.path == journal:
            if parse_journal(repo.read_blob(change.new_sha)) is None:
                out.append(f"{change.path}: is not a run journal (one known entry as a JSON object per line)")
            continue
        if _is_listing(change.path) or change.path == ACCESS_SIDECAR:
            problem = _artifact_problem(change.path, repo.read_blob(change.new_sha))
            if problem:
                out.append(f"{change.path}: {problem}")
            continue
        if not _is_memory(change.path):
            continue
        data = repo.read_blob(change.new_sha)
        found = check_memory_bytes(data).violations
        if not found:
            kinds = secret_kinds(data.decode("utf-8", errors="replace"))
            found = (f"carries a detected secret ({', '.join(kinds)})",) if kinds else ()
        if found:
            out.append(f"{change.path}: {found[0]}" + (f" (+{len(found) - 1} more)" if len(found) > 1 else ""))
    return out


def commit_violations(repo: GitRepo, run_id: str, base: str, tip: str) -> list[str]:
    """``sha: reason`` for every commit of ``base..tip`` that is not this run's next phase commit (rule d)."""
    runs = dict(repo.log_trailers(base, tip, TRAILER_RUN))
    phases = repo.log_trailers(base, tip, TRAILER_PHASE)
    out: list[str] = []
    last = 0
    for sha, values in phases:
        if runs.get(sha, []) != [run_id]:
            out.append(f"{sha[:12]}: carries {runs.get(sha, [])!r}, not exactly one {TRAILER_RUN}: {run_id}")
        elif len(values) != 1 or values[0] not in SLEEP_PHASES:
            out.append(f"{sha[:12]}: {TRAILER_PHASE} {values!r} is not exactly one known phase")
        elif phase_ordinal(values[0]) < last or (phase_ordinal(values[0]) == last
                                                   and values[0] not in MULTI_COMMIT_PHASES):
            out.append(f"{sha[:12]}: phase {values[0]} out of canonical order (after {SLEEP_PHASES[last - 1]})")
        else:  # a report ends a pass; a resume appends a second one
            last = 0 if values[0] == "report" else phase_ordinal(values[0])
    if not phases:
        out.append(f"{base[:12]}..{tip[:12]}: no phase commit at all")
    elif not out and phases[-1][1] != ["report"]:
        out.append(f"{phases[-1][0][:12]}: the run's last commit is {phases[-1][1]!r}, not the report phase")
    return out


def check_sleep_output(repo: GitRepo, run_id: str, base: str, tip: str) -> None:
    """Refuse unless ``base..tip`` is the shape of a sleep run's output (module docstring, rules a–d).

    Cost: two ``git log`` reads of the trailers, one tree diff, one parse per added or changed memory blob, and two
    blob reads per re-filing candidate.

    Raises:
        NotSleepOutput: naming the first :data:`LISTED` offending commits or paths and their count.
    """
    hint = _HINT.format(base=base[:12], name=run_id)
    bad_commits = commit_violations(repo, run_id, base, tip)
    if bad_commits:
        raise NotSleepOutput(f"{run_id!r} is not sleep output: {len(bad_commits)} commit(s) are not its phase "
                             f"commits in order: {_named(bad_commits)}", hint=hint)
    changes = repo.tree_changes(base, tip)
    bad = path_violations(run_id, changes, refiled_moves(repo, changes)) or content_violations(repo, changes, run_id)
    if bad:
        raise NotSleepOutput(f"{run_id!r} is not sleep output: {_named(bad)}", hint=hint,
                             path=bad[0].split(": ", 1)[0])


__all__ = ["REFUSAL", "NotSleepOutput", "check_sleep_output"]
