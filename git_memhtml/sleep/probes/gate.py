"""The run gate: the verdict of one run from its base and tip (docs/gate.md §9).

:func:`probe_commits` is the whole measurement over two open indexes; :func:`probe_run` resolves the run, opens or
builds the indexes (:mod:`git_memhtml.sleep.probes.indexes`) and times each step. ``sleep merge`` refuses when the
verdict does not pass (:func:`refusal`), ``sleep review`` shows it, ``git memhtml eval run`` prints it alone, and
the forge CI job of docs/forge-ci.md §4 runs that command on the checkout.
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
import time
from collections.abc import Iterable, Mapping
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from git_memhtml.cut import clip_join
from git_memhtml.domain.entities import centroid_cosine
from git_memhtml.embed.base import Embedder
from git_memhtml.errors import ProbesFailed
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.corpus import name_centroids
from git_memhtml.index.db import IndexDB
from git_memhtml.index.probe_rows import (
    claim_candidates,
    content_hashes,
    entity_keys_by_path,
    entity_reach,
    path_status,
    supersedes_pointers,
    texts_of,
)
from git_memhtml.sleep.engine.journal import read_journal
from git_memhtml.sleep.engine.lock import pid_alive, proc_start
from git_memhtml.sleep.engine.runref import RUN_ID, resolve_sleep_run
from git_memhtml.sleep.probes.attribution import Touches
from git_memhtml.sleep.probes.defaults import DEFAULT_K, DEFAULT_SAMPLE
from git_memhtml.sleep.probes.families import claim_family, control_family, entity_family
from git_memhtml.sleep.probes.indexes import base_index, tip_index
from git_memhtml.sleep.probes.pointers import (
    Cosine,
    alias_groups_at,
    no_centroids,
    read_pointers,
    renamed_keys,
    subjects_by_path,
    veto_replacements,
)
from git_memhtml.sleep.probes.ranker import Ranker, query_vectors
from git_memhtml.sleep.probes.sample import probe_sample
from git_memhtml.sleep.probes.verdict import LostMemory, Verdict, build_verdict

MAX_LOST_KEY = "memhtml.gatemaxlost"
"""Git config key of the memories with an unexplained loss a merge tolerates (issue 10: default 0)."""

DEFAULT_MAX_LOST = 0
"""Unexplained losses a merge tolerates when ``memhtml.gatemaxlost`` is unset (issue 10)."""

LISTED = 10
"""Lost memories named in a refusal's message before the rest are counted (all are in ``--json``)."""


@dataclass(frozen=True)
class ProbeSettings:
    """``sample_size`` claim probes (at most), a probe passes in the top ``k``, a merge tolerates ``max_lost``."""

    sample_size: int = DEFAULT_SAMPLE
    k: int = DEFAULT_K
    max_lost: int = DEFAULT_MAX_LOST


@dataclass
class ProbeReport:
    """A verdict and how long it took (``timing`` varies between machines; ``verdict`` never does)."""

    verdict: Verdict
    timing: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        """``{"verdict": …, "timing": …}``."""
        return {"verdict": self.verdict.as_json(), "timing": self.timing}


SCRATCH = "probe-scratch"
"""Folder under ``<common-dir>/memhtml/`` where the gate builds indexes: one ``<host>-<pid>-<start>-*`` folder per
process, removed when it ends, and swept by the next verdict once its process is gone (a SIGKILL or SIGTERM leaves
it behind; the system temp folder would keep it until reboot)."""


def _scratch(repo: GitRepo) -> Path:
    """The scratch root, created, with every folder of a process that no longer runs removed."""
    root = repo.common_dir / "memhtml" / SCRATCH
    root.mkdir(parents=True, exist_ok=True)
    for folder in root.iterdir():
        host, _, rest = folder.name.partition("~")
        pid, _, started = rest.partition("~")
        if pid.isdigit() and not pid_alive(host, int(pid), started.split("~", 1)[0] or None):
            shutil.rmtree(folder, ignore_errors=True)
    return root


def _scratch_prefix() -> str:
    pid = os.getpid()
    return f"{socket.gethostname()}~{pid}~{proc_start(pid) or ''}~"


def _workspace(repo: GitRepo, workdir: Path | None) -> tempfile.TemporaryDirectory[str]:
    """This verdict's folder: in ``workdir`` when given, else under :data:`SCRATCH`, else (a read-only git dir) in the
    system temp folder."""
    if workdir is not None:
        return tempfile.TemporaryDirectory(prefix="memhtml-probes-", dir=workdir)
    try:
        return tempfile.TemporaryDirectory(prefix=_scratch_prefix(), dir=_scratch(repo))
    except OSError:
        return tempfile.TemporaryDirectory(prefix="memhtml-probes-")


def run_instant(run_id: str, fallback: str) -> str:
    """The run's own instant: midnight UTC of the date in its id (the instant its phases stamp), else ``fallback``."""
    return f"{run_id[6:16]}T00:00:00Z" if RUN_ID.match(run_id) else fallback


def base_cosine(base: IndexDB, reach: Mapping[str, tuple[str, frozenset[str]]], keys: Iterable[str],
                embedder: Embedder | None) -> Cosine:
    """The :data:`~git_memhtml.sleep.probes.pointers.Cosine` of the journal's renamed entity ``keys``: their
    centroids over the *base* index (the claimants of each key on the base, ``reach``; vectors the run did not
    write), read through :func:`git_memhtml.index.corpus.name_centroids` as the model stage reads them. With no
    embedder, no centroid is known.

    Raises:
        StorageError: SQLite failed.
    """
    if embedder is None:
        return no_centroids
    claimants = {key: sorted(reach[key][1]) for key in sorted(keys) if key in reach}
    return partial(centroid_cosine, name_centroids(base, claimants, embedder.space))


def probe_commits(repo: GitRepo, run_id: str, base_sha: str, tip_sha: str, *, base: IndexDB, tip: IndexDB,
                  embedder: Embedder | None, settings: ProbeSettings) -> Verdict:
    """The verdict of ``base_sha..tip_sha`` over an index of each commit (module docstring, docs/gate.md §9).

    Raises:
        StorageError: SQLite failed. GitError: a commit cannot be read. ValueError: ``settings.sample_size`` < 1.
    """
    now = run_instant(run_id, "1970-01-01T00:00:00Z")
    candidates = claim_candidates(base)
    before_hashes, after_hashes = content_hashes(base), content_hashes(tip)
    touched = {c.path for c in candidates if after_hashes.get(c.path) != before_hashes.get(c.path)}
    sample = probe_sample(candidates, touched, run_id, settings.sample_size)
    journal = read_journal(repo, tip_sha, run_id)
    reach = entity_reach(base)
    groups = alias_groups_at(repo, base_sha)
    pointers = read_pointers(repo, base_sha, tip_sha, status=path_status(tip), supersedes=supersedes_pointers(tip),
                             journal=journal, groups=groups,
                             cosine=base_cosine(base, reach, renamed_keys(journal), embedder))
    replaced = sorted(set(pointers.archived_at) | {p for p in pointers.keepers if pointers.live(p)})
    replacing = sorted({t.path for p in replaced for t in pointers.replacements(p)})
    tip_keys = entity_keys_by_path(tip)
    pointers.vetoed_replacements = veto_replacements(
        pointers, texts_of(base, replaced), texts_of(tip, replacing),
        base_subjects=subjects_by_path(entity_keys_by_path(base), groups, pointers),
        tip_subjects=subjects_by_path(tip_keys, groups))
    control_paths = sorted({p for pair in pointers.vetoed for p in pair})
    claims = {path: claim for path, (claim, _) in texts_of(base, control_paths).items()}
    vectors, degraded = query_vectors(embedder, [c.gist for c in sample] + [claims[p] for p in sorted(claims)])
    before = Ranker.open(base, embedder, now=now, k=settings.k)
    after = Ranker.open(tip, embedder, now=now, k=settings.k)
    results = [
        *claim_family(sample, vectors, base=before, tip=after, pointers=pointers),
        *entity_family(reach, tip_keys, pointers),
        *control_family(claims, vectors, base=before, tip=after, pointers=pointers),
    ]
    lost_results = [r for r in results if r.status == "lost"]
    lost: list[LostMemory] = []
    if lost_results:
        touches = Touches(repo, base_sha, tip_sha)
        for r in lost_results:
            phases, commits = touches.of([r.path, pointers.archived_at.get(r.path), r.via])
            lost.append(LostMemory(r, phases, commits))
    return build_verdict(run_id=run_id, base_sha=base_sha, head_sha=tip_sha,
                         space=embedder.space if embedder is not None else None, k=settings.k,
                         sample_size=len(sample), max_lost=settings.max_lost, results=results, lost=lost,
                         degraded=degraded)


def probe_run(repo: GitRepo, main_db: IndexDB | None, run_id: str, *, embedder: Embedder | None,
              settings: ProbeSettings, base_sha: str | None = None, tip_sha: str | None = None,
              workdir: Path | None = None, clock_now: str = "1970-01-01T00:00:00Z") -> ProbeReport:
    """Resolve ``run_id`` (unless ``base_sha``/``tip_sha`` are given: ``sleep merge`` resolved it already), open or
    build both indexes, and return the verdict with its timing.

    ``main_db`` is the user's index (reused for the base when it describes it; ``None`` in forge CI). Built
    indexes live in ``workdir`` (when ``None``, a folder of this process under :data:`SCRATCH`), removed
    afterwards.

    Raises:
        RunNotFound / RunVerbRefused: the name is not a finished run (the ``review`` verb's policy).
        StorageError / GitError: an index cannot be read or built.
    """
    if base_sha is None or tip_sha is None:
        if main_db is None:
            raise ValueError("probe_run needs main_db to resolve a run, or base_sha and tip_sha")
        run = resolve_sleep_run(repo, main_db, run_id, "review", allow_failed=True)
        run_id, base_sha, tip_sha = run.run_id, run.base_sha, run.tip_sha
    with _workspace(repo, workdir) as folder, ExitStack() as stack:
        now = run_instant(run_id, clock_now)
        base = base_index(repo, main_db, base_sha, embedder, Path(folder) / "base", now=now, stack=stack)
        stack.callback(base.close)
        tip = tip_index(repo, run_id, tip_sha, embedder, Path(folder) / "tip", now=now)
        stack.callback(tip.close)
        started = time.perf_counter()
        verdict = probe_commits(repo, run_id, base_sha, tip_sha, base=base.db, tip=tip.db, embedder=embedder,
                                settings=settings)
        seconds = time.perf_counter() - started
    return ProbeReport(verdict, {"baseIndex": base.timing(), "tipIndex": tip.timing(),
                                 "probeSeconds": round(seconds, 3)})


def refusal(verdict: Verdict) -> ProbesFailed | None:
    """The refusal of a verdict that does not pass (naming the first :data:`LISTED` lost memories and the phases that
    changed them), else ``None``."""
    if verdict.passed:
        return None
    lines = [m.line() for m in verdict.lost]
    error = ProbesFailed(
        f"the run makes your memory harder to find: {verdict.lost_count} memory(ies) lost ({verdict.lost_probes} "
        f"probe(s)), at most {verdict.max_lost} allowed ({MAX_LOST_KEY}): " + clip_join(lines, LISTED, "; "),
        hint=f"git memhtml eval run {verdict.run_id} --json lists every lost probe; fix the phase named, or abort the "
             f"run: git memhtml sleep abort {verdict.run_id}",
    )
    error.details = {"probes": verdict.as_json()}
    return error
