"""Real sleep runs for the acceptance tests of issue 10 (the probe gate that sees the run).

Each builder makes a real memory repository in a folder (``git memhtml init`` / ``apply`` in-process), commits and
indexes ``main``, and leaves one run branch ``sleep/<date>-<suffix>`` that is a *finished* run: every commit a
phase commit of the run with its typed trailers, in canonical phase order, the last one the ``report`` phase, so
the landing rail (git_memhtml/sleep/landing/rail.py) lets it land. The builder returns a :class:`BuiltRun`
naming what a probe gate must find: the memories the run lost, and the ones it archived with a pointer.

- :func:`false_entity_merge_branch` crafts the branch by hand, the way the false merges of the outside review
  were made (issue 10 "Why"): one ``entity-resolution`` commit rewriting 31 of 50 ``service:svc-amber-<n>``
  entity metas into a sibling name, no journal, then a ``report`` commit.
- :func:`journaled_false_merge_branch`: the same branch with a journal claiming the renames.
- :func:`fault_hook_false_merge_run` makes the same false merges with a real ``sleep run``, the entity rule
  forced to the old behaviour (the phase then journals its false renames).
- :func:`archive_with_pointer_run`: a real run whose dedup-merge folds a near-duplicate into its keeper;
  :func:`forged_pointer_branch`: a hand-made "fold" whose pointer names an unrelated memory;
  :func:`retention_archive_run`: a real run whose retention-triage evicts two stale memories (no pointer).
- :func:`archive_everything_branches`: one content under three run ids (the sample's seed made visible).
- :func:`true_alias_run`: a real run whose entity-resolution merges a separator variant (a true alias).
- :func:`bookkeeping_only_branch`: a hand-made run that only stamps ``updated`` and ``confidence``: benign.
- :func:`demo_run`, :func:`conv26_run`: benign real runs of the shipped demo corpus and LoCoMo conv-26.

The caller provides the hermetic environment (tests/conftest.py pins HOME, identity, dates and MEMHTML_EMBED);
each builder pins ``MEMHTML_NOW`` itself for the span of its writes and run, and asks nothing of the network.
"""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import git_memhtml.domain.entities as entity_rule
from git_memhtml.cli.demo import DEMO_CORPUS
from git_memhtml.cli.main import main
from git_memhtml.document import editors
from git_memhtml.domain.entities import MERGE, PairVerdict, lcs_ratio
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.journal import EntityRenamed, render_entry
from git_memhtml.sleep.engine.runfiles import journal_file
from git_memhtml.store import edits
from git_memhtml.store.edits import archive_file
from tests.conftest import SHARED_DATA

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = SHARED_DATA / "locomo" / "locomo-dev.json"
"""LoCoMo beside the project (docs/locomo.md); read in place, never copied."""

DATE = "2026-12-01"
"""The run date of every built run (a ``sleep/<DATE>-<suffix>`` branch)."""

NOW = "2026-11-30T09:00:00Z"
"""``MEMHTML_NOW`` while a corpus is written and its run made: one day before :data:`DATE`."""

CRAFTED_RUN = f"sleep/{DATE}-a3b0e1"
"""The run id of the hand-made branch (any ``sleep/<date>-<6 hex>`` the resolver accepts)."""

AMBER = 50
"""Memories of the svc-amber corpus, one ``service:svc-amber-<n>`` each, n = 1 … 50 (issue 10 "Why")."""

FALSE_MERGES: dict[str, str] = {f"svc-amber-{n}": f"svc-amber-{n // 10}" for n in range(20, AMBER + 1)}
"""old name → sibling the false merge rewrote it to: svc-amber-20 … 29 → svc-amber-2, …, svc-amber-50 →
svc-amber-5. 31 of the 50 names, as in the outside review."""

_WORK = ("invoices", "refunds", "shipping labels", "coupons", "gift cards", "tax reports", "payouts", "chargebacks",
         "loyalty points", "price lists", "stock counts", "return slips", "delivery slots", "warranty claims",
         "supplier bills", "customs forms", "fraud alerts", "receipts", "subscriptions", "trial extensions",
         "seat licences", "usage meters", "audit trails", "consent records", "password resets", "login tokens",
         "avatar uploads", "search synonyms", "sitemap pings", "newsletter sends", "survey answers", "ticket tags",
         "chat transcripts", "call recordings", "translation strings", "currency rates", "map tiles",
         "weather feeds", "photo thumbnails", "video transcodes", "font bundles", "email bounces", "sms receipts",
         "push badges", "calendar invites", "room bookings", "parking permits", "badge scans", "fleet routes",
         "fuel cards")
_TEAMS = ("Lisbon", "Oslo", "Nairobi", "Quito", "Osaka", "Tallinn", "Perth", "Dakar", "Lima", "Hanoi")


@dataclass(frozen=True)
class BuiltRun:
    """A memory repository with one finished run branch, and what a probe gate must say about it.

    Attributes:
        root: the repository's work tree (checked out on ``main``, clean, indexed).
        run_id: the run branch, ``sleep/<date>-<suffix>``.
        base: ``main``'s sha when the run started (the run's base).
        tip: the run branch's sha.
        lost: tree paths of the memories the run made unfindable (sorted); empty for a benign run.
        explained: tree paths of the memories the run archived with a pointer to a keeper (sorted).
        renamed: old entity name → new one, for every entity meta the run rewrote (names without ``type:``).
        phase: the phase that made the loss (``""`` when nothing is lost).
    """

    root: Path
    run_id: str
    base: str
    tip: str
    lost: tuple[str, ...] = ()
    explained: tuple[str, ...] = ()
    renamed: dict[str, str] = field(default_factory=dict)
    phase: str = ""


def git(root: Path, *args: str) -> str:
    """The real git binary in ``root``; stdout."""
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def cli_json(*args: str) -> tuple[int, Any]:
    """``git memhtml <args> --json`` in-process, stdout captured here (builders run outside a test's capsys):
    (exit code, parsed envelope or ``None``)."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main([*args, "--json"])
    text = out.getvalue()
    return code, (json.loads(text) if text.strip() else None)


@contextlib.contextmanager
def pinned_clock(now: str = NOW) -> Iterator[pytest.MonkeyPatch]:
    """``MEMHTML_NOW`` pinned to ``now`` for the block (undone after it); yields the patch for more."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("MEMHTML_NOW", now)
        yield patch


def amber_path(n: int) -> str:
    """Tree path of the svc-amber memory ``n``."""
    return f"resources/services/svc-amber-{n}.html"


def amber_claim(n: int) -> str:
    """The distinct claim of the svc-amber memory ``n`` (1 … 50): its own work item, team and port."""
    return (f"The svc-amber-{n} service handles the {_WORK[n - 1]} of the {_TEAMS[n % len(_TEAMS)]} office "
            f"on port {8100 + n}.")


def amber_ops() -> list[dict[str, Any]]:
    """The svc-amber corpus as ``apply`` ops: 50 semantic memories, each about one ``service:svc-amber-<n>``."""
    return [{"op": "write", "title": f"What svc-amber-{n} does", "type": "semantic", "claim": amber_claim(n),
             "body": f"It was set up for the {_TEAMS[n % len(_TEAMS)]} office.", "path": amber_path(n),
             "entities": [f"service:svc-amber-{n}"], "tags": ["services"]}
            for n in range(1, AMBER + 1)]


def write_ops(folder: Path, ops: Sequence[dict[str, Any]]) -> Path:
    """``ops`` as a JSONL apply stream in ``folder`` (outside any repository)."""
    stream = folder / "ops.jsonl"
    stream.write_text("".join(json.dumps(op, ensure_ascii=False) + "\n" for op in ops), encoding="utf-8")
    return stream


def init_and_apply(tmp: Path, streams: Sequence[tuple[Path, str]]) -> Path:
    """``git memhtml init tmp/memory`` then ``apply --file`` each ``(stream, now)`` with the clock at ``now``:
    the repository, on a clean and indexed ``main``."""
    root = tmp / "memory"
    with pinned_clock():
        code, out = cli_json("init", str(root))
        assert code == 0, out
    for stream, now in streams:
        with pinned_clock(now):
            code, out = cli_json("-C", str(root), "apply", "--file", str(stream))
            assert code == 0 and all(r["ok"] for r in out["data"]["results"]), out
    assert git(root, "status", "--porcelain") == ""
    return root


def amber_corpus(tmp: Path) -> Path:
    """A repository holding the 50 svc-amber memories on ``main``."""
    tmp.mkdir(parents=True, exist_ok=True)
    return init_and_apply(tmp, [(write_ops(tmp, amber_ops()), NOW)])


def sleep_run(root: Path, date: str = DATE) -> tuple[str, str, str]:
    """A real ``git memhtml sleep run --date <date>`` (no phase may fail): (run id, base sha, tip sha)."""
    with pinned_clock():
        code, ran = cli_json("-C", str(root), "sleep", "run", "--date", date)
    assert code == 0 and ran["data"]["failedPhases"] == [], ran
    data = ran["data"]
    run_id = str(data["runId"])
    return run_id, str(data["baseSha"]), git(root, "rev-parse", run_id).strip()


def phase_commit(root: Path, run_id: str, phase: str, subject: str, counts: dict[str, int]) -> None:
    """Commit everything in ``root`` as phase ``phase`` of ``run_id``, trailers as sleep writes them
    (git_memhtml/sleep/engine/commit.py)."""
    git(root, "add", "-A")
    message = (f"memhtml(sleep({phase})): {subject}\n\nMemhtml-Run: {run_id}\nMemhtml-Phase: {phase}\n"
               f"Memhtml-Counts: {json.dumps(counts, separators=(',', ':'))}")
    git(root, "commit", "-q", "--allow-empty", "-m", message)


def rename_entity(html: str, old: str, new: str, at: str) -> str:
    """``html`` with its entity meta ``old`` replaced by ``new`` and ``updated`` stamped: head splices only
    (git_memhtml/document/editors.py), so the article and its content hash stay as they were."""
    assert old in editors.get_metas(html, "entity"), old
    html = editors.remove_meta(html, "entity", old)
    html = editors.add_meta(html, "entity", new)
    return editors.set_meta(html, "updated", at)


Phase = tuple[str, str, Callable[[GitRepo], dict[str, int]]]
"""One hand-made phase commit: (phase, subject, edit); the edit changes the crafting worktree and returns the
commit's counts."""


def craft_branch(root: Path, folder: Path, run_id: str, phases: Sequence[Phase]) -> str:
    """Make run branch ``run_id`` from ``main`` by hand, the way a forger (or a buggy phase) would: in a linked
    worktree at ``folder`` (removed afterwards, so the user's checkout never leaves ``main``), one commit per
    ``phases`` row with sleep's trailers, then a ``report`` commit. Returns the tip."""
    git(root, "worktree", "add", "-q", "-b", run_id, str(folder), "main")
    repo = GitRepo.discover(folder)
    for phase, subject, edit in phases:
        phase_commit(folder, run_id, phase, subject, edit(repo))
    phase_commit(folder, run_id, "report", f"record run {run_id}", {"phases": 17, "committed": len(phases) + 1})
    tip = git(folder, "rev-parse", "HEAD").strip()
    git(root, "worktree", "remove", str(folder))
    return tip


def false_entity_merge_branch(tmp: Path) -> BuiltRun:
    """The svc-amber corpus and a hand-made run branch :data:`CRAFTED_RUN` (issue 10 acceptance 1, "build the
    branch in the test"): an ``entity-resolution`` commit rewriting the entity metas of the 31 memories of
    :data:`FALSE_MERGES` (``service:svc-amber-20`` → ``service:svc-amber-2``, …), no journal, then a ``report``
    commit."""
    root = amber_corpus(tmp)
    base = git(root, "rev-parse", "main").strip()
    lost = sorted(amber_path(int(old.rsplit("-", 1)[1])) for old in FALSE_MERGES)

    def merge_falsely(repo: GitRepo) -> dict[str, int]:
        for old, new in FALSE_MERGES.items():
            file = repo.root / amber_path(int(old.rsplit("-", 1)[1]))
            file.write_text(rename_entity(file.read_text(encoding="utf-8"), f"service:{old}", f"service:{new}",
                                          f"{DATE}T00:00:00Z"), encoding="utf-8")
        return {"fuzzyMerges": len(lost), "filesRewritten": len(lost)}

    tip = craft_branch(root, tmp / "crafting", CRAFTED_RUN, [
        ("entity-resolution", f"normalize 0 entity names, merge {len(lost)} aliases", merge_falsely)])
    return BuiltRun(root, CRAFTED_RUN, base, tip, lost=tuple(lost), renamed=dict(FALSE_MERGES),
                    phase="entity-resolution")


JOURNALED_RUN = f"sleep/{DATE}-a3b0e2"
"""The run id of :func:`journaled_false_merge_branch`."""


def journaled_false_merge_branch(tmp: Path) -> BuiltRun:
    """:func:`false_entity_merge_branch` with the excuse written in: the ``entity-resolution`` commit also carries
    the run journal (git_memhtml/sleep/engine/journal.py) with one ``entity-renamed`` line per false merge, as a
    buggy phase or a forger would write it. The gate re-judges each journaled rename with the current identity
    veto (docs/gate.md §9.2), so the journal explains none of the 31 losses."""
    root = amber_corpus(tmp)
    base = git(root, "rev-parse", "main").strip()
    lost = sorted(amber_path(int(old.rsplit("-", 1)[1])) for old in FALSE_MERGES)

    def merge_and_journal(repo: GitRepo) -> dict[str, int]:
        for old, new in FALSE_MERGES.items():
            file = repo.root / amber_path(int(old.rsplit("-", 1)[1]))
            file.write_text(rename_entity(file.read_text(encoding="utf-8"), f"service:{old}", f"service:{new}",
                                          f"{DATE}T00:00:00Z"), encoding="utf-8")
        journal = repo.root / journal_file(JOURNALED_RUN)
        journal.parent.mkdir(parents=True, exist_ok=True)
        journal.write_text("".join(render_entry(EntityRenamed("service", old, new)) + "\n"
                                   for old, new in FALSE_MERGES.items()), encoding="utf-8")
        return {"fuzzyMerges": len(lost), "filesRewritten": len(lost)}

    tip = craft_branch(root, tmp / "crafting", JOURNALED_RUN, [
        ("entity-resolution", f"normalize 0 entity names, merge {len(lost)} aliases", merge_and_journal)])
    return BuiltRun(root, JOURNALED_RUN, base, tip, lost=tuple(lost), renamed=dict(FALSE_MERGES),
                    phase="entity-resolution")


def _stem(key: str) -> str | None:
    """``svc-amber-<first digit>`` of a svc-amber key whose number starts with 2 … 5, else ``None``."""
    prefix = "svc-amber-"
    if not key.startswith(prefix) or not key[len(prefix):].isdigit():
        return None
    first = key[len(prefix)]
    return prefix + first if first in "2345" else None


def old_pair_verdict(real: Callable[..., PairVerdict | None]) -> Callable[..., PairVerdict | None]:
    """The fault hook: ``pair_verdict`` as it was before the entity fixes, for the svc-amber siblings only — two
    svc-amber keys whose numbers share their first digit (2 … 5) merge, the numeric veto not consulted (so
    svc-amber-20 and svc-amber-2 become one); every other pair gets ``real``'s verdict."""
    def verdict(a: str, b: str, entity_type: str = "") -> PairVerdict | None:
        if a != b and _stem(a) is not None and _stem(a) == _stem(b):
            x, y = sorted((a, b))
            return PairVerdict(x, y, lcs_ratio(x, y), MERGE, "old-rule")
        return real(a, b, entity_type)
    return verdict


def fault_hook_false_merge_run(tmp: Path, monkeypatch: pytest.MonkeyPatch) -> BuiltRun:
    """The svc-amber corpus and a REAL ``sleep run`` with entity-resolution forced to the old behaviour through
    :func:`old_pair_verdict` (issue 10 acceptance 1, "force the old behaviour through a fault hook"). The phase
    rewrites (and journals) the same 31 false merges as :data:`FALSE_MERGES`: each sibling group has one file per
    name, so the survivor is the lexicographically smaller key, svc-amber-2 … 5. The hook is set on
    ``monkeypatch`` for the run only and undone before the builder returns, so a gate judged afterwards sees the
    current entity rule."""
    root = amber_corpus(tmp)
    with monkeypatch.context() as patch:
        patch.setattr(entity_rule, "pair_verdict", old_pair_verdict(entity_rule.pair_verdict))
        run_id, base, tip = sleep_run(root)
    changed = set(git(root, "diff", "--name-only", f"{base}..{tip}").split())
    lost = sorted(amber_path(int(old.rsplit("-", 1)[1])) for old in FALSE_MERGES)
    assert set(lost) <= changed, sorted(set(lost) - changed)
    return BuiltRun(root, run_id, base, tip, lost=tuple(lost), renamed=dict(FALSE_MERGES),
                    phase="entity-resolution")


FOLD_TEXT = "the checkout api deploy window opens after the nightly batch finishes and needs release manager approval"
"""A claim whose copy with one more word folds under the fake embedder (tests/sleep/test_dedup_merge.py)."""
KEEPER = "areas/inbox/deploy-window.html"
DROPPED = "areas/inbox/deploy-window-again.html"
DROPPED_ARCHIVE = f"archive/2026/{DROPPED}"


def archive_with_pointer_run(tmp: Path) -> BuiltRun:
    """A real run whose dedup-merge folds a near-duplicate: the younger copy :data:`DROPPED` is archived to
    :data:`DROPPED_ARCHIVE` with ``superseded-by`` → the older :data:`KEEPER` (issue 10 acceptance 3). The rest of
    the corpus is the 50 svc-amber memories, which the run leaves alone."""
    tmp.mkdir(parents=True, exist_ok=True)
    older = tmp / "older"
    older.mkdir()
    younger = tmp / "younger"
    younger.mkdir()
    first = [*amber_ops(), {"op": "write", "title": "Deploy window", "type": "semantic", "claim": FOLD_TEXT + ".",
                            "path": KEEPER}]
    second = [{"op": "write", "title": "Deploy window again", "type": "semantic", "claim": FOLD_TEXT + " today.",
               "path": DROPPED}]
    root = init_and_apply(tmp, [(write_ops(older, first), "2026-01-01T00:00:00Z"),
                                (write_ops(younger, second), "2026-02-01T00:00:00Z")])
    run_id, base, tip = sleep_run(root)
    tree = set(git(root, "ls-tree", "-r", "--name-only", tip).split())
    assert DROPPED not in tree and DROPPED_ARCHIVE in tree and KEEPER in tree, "dedup-merge did not fold"
    archived = git(root, "show", f"{tip}:{DROPPED_ARCHIVE}")
    assert editors.get_meta(archived, "superseded-by") == "/" + KEEPER
    return BuiltRun(root, run_id, base, tip, explained=(DROPPED,))


STALE = ("areas/inbox/late-lunch.html", "areas/inbox/kitchen.html")
"""The two memories :func:`retention_archive_run` makes stale enough for retention-triage to evict."""


def retention_archive_run(tmp: Path) -> BuiltRun:
    """A real run whose retention-triage evicts the two :data:`STALE` memories (archived with no pointer: an
    eviction names no keeper). Written on 2025-01-01, one of them unconfident; the store observes reads from
    2025-06-01 (a ``read``), so their disuse is observed for well over the 30 days triage waits; the 50 svc-amber
    memories, written a year later, stay."""
    tmp.mkdir(parents=True, exist_ok=True)
    old, new = tmp / "old", tmp / "new"
    old.mkdir()
    new.mkdir()
    stale: list[dict[str, Any]] = [
        {"op": "write", "title": "Late lunch", "type": "episodic", "claim": "Lunch was late on the first Monday.",
         "confidence": 0.1, "path": STALE[0]},
        {"op": "write", "title": "Kitchen", "type": "semantic",
         "claim": "The office kitchen is on the third floor next to the lifts.", "path": STALE[1]},
    ]
    root = init_and_apply(tmp, [(write_ops(old, stale), "2025-01-01T00:00:00Z"), (write_ops(new, amber_ops()), NOW)])
    with pinned_clock("2025-06-01T00:00:00Z"):
        code, out = cli_json("-C", str(root), "read", STALE[1])
        assert code == 0, out
    run_id, base, tip = sleep_run(root)
    tree = set(git(root, "ls-tree", "-r", "--name-only", tip).split())
    for path in STALE:
        assert path not in tree and f"archive/2026/{path}" in tree, f"retention-triage did not evict {path}"
        assert editors.get_meta(git(root, "show", f"{tip}:archive/2026/{path}"), "superseded-by") is None
    assert "retention-triage" in git(root, "log", "--format=%(trailers:key=Memhtml-Phase,valueonly)",
                                     f"{base}..{tip}").split()
    return BuiltRun(root, run_id, base, tip, phase="retention-triage")


SAMPLED_RUNS = tuple(f"sleep/{DATE}-{suffix}" for suffix in ("5a0001", "5a0002", "5a0003"))
"""Run ids of :func:`archive_everything_branches`: one content, three ids."""


EPISODES = 10
"""Episodic memories of :func:`archive_everything_branches` beside the 50 semantic svc-amber ones: a second
(bucket, type) stratum, one sixth of the corpus."""


def episode_path(n: int) -> str:
    """Tree path of the episodic memory ``n`` (1 … :data:`EPISODES`)."""
    return f"areas/inbox/outage-{n}.html"


def episode_ops() -> list[dict[str, Any]]:
    """:data:`EPISODES` episodic memories in ``areas/inbox``, each with its own vocabulary."""
    return [{"op": "write", "title": f"Outage {n}", "type": "episodic", "path": episode_path(n),
             "claim": f"During outage {n} the {_WORK[-n]} backlog in {_TEAMS[n - 1]} was cleared by hand."}
            for n in range(1, EPISODES + 1)]


def archive_everything_branches(tmp: Path, run_ids: Sequence[str] = SAMPLED_RUNS) -> list[BuiltRun]:
    """The svc-amber corpus (50 semantic memories in ``resources``) plus :data:`EPISODES` episodic ones in
    ``areas`` and, for each of ``run_ids``, a hand-made run branch whose ``retention-triage`` commit archives all
    60 (no pointer), then a ``report`` commit: the same trees, different run ids. No claim probe of such a run
    finds its memory as itself on the tip (each is lost, or explained by its archived copy), so the claim rows of
    its verdict are exactly the probes the gate drew that were found on the base — the sample made visible."""
    tmp.mkdir(parents=True, exist_ok=True)
    root = init_and_apply(tmp, [(write_ops(tmp, [*amber_ops(), *episode_ops()]), NOW)])
    base = git(root, "rev-parse", "main").strip()
    paths = tuple(sorted([amber_path(n) for n in range(1, AMBER + 1)]
                         + [episode_path(n) for n in range(1, EPISODES + 1)]))

    def evict_all(repo: GitRepo) -> dict[str, int]:
        for path in paths:
            assert archive_file(repo, path, at=f"{DATE}T00:00:00Z") is not None
        return {"evicted": len(paths)}

    return [BuiltRun(root, run_id, base, craft_branch(root, tmp / f"crafting-{index}", run_id, [
                ("retention-triage", f"evict {len(paths)} memories below the retention floor", evict_all)]),
                     lost=paths, phase="retention-triage")
            for index, run_id in enumerate(run_ids)]


FORGED_RUN = f"sleep/{DATE}-f0f0f0"
"""The run id of :func:`forged_pointer_branch`."""
UNRELATED = "areas/inbox/coffee.html"
"""The keeper a forged fold points at: a memory that shares no subject with the one it claims to replace."""
FORGED_DROP = "areas/inbox/db-snapshot.html"
"""The memory the forged fold drops: its own vocabulary and entity, so its claim finds it first on the base."""


def forged_pointer_branch(tmp: Path) -> BuiltRun:
    """A corpus where the staging snapshot memory :data:`FORGED_DROP` has a dozen neighbours that share its words
    (staging database replicas), the coffee memory :data:`UNRELATED` (written a year earlier) and the 50 svc-amber
    memories; and a hand-made run whose ``dedup-merge`` commit "folds" the snapshot memory into the coffee memory:
    archived with ``superseded-by`` → :data:`UNRELATED`, the coffee memory given the ``supersedes`` link back,
    exactly the shape of a real fold. The pointer is there, but the memory it
    names neither answers the dropped memory's claim (its neighbours fill the top 10) nor carries its entity: the
    loss is not explained."""
    tmp.mkdir(parents=True, exist_ok=True)
    older, newer = tmp / "older", tmp / "newer"
    older.mkdir()
    newer.mkdir()
    coffee = {"op": "write", "title": "Coffee", "type": "semantic", "path": UNRELATED,
              "claim": "Coffee beans are stored in the left cupboard above the sink."}
    snapshot = {"op": "write", "title": "Staging snapshot", "type": "semantic", "path": FORGED_DROP,
                "claim": "The staging database snapshot is taken nightly at two o'clock and kept for nine days.",
                "entities": ["service:staging-db"]}
    replicas = [{"op": "write", "title": f"Staging replica {i}", "type": "semantic",
                 "path": f"areas/inbox/staging-replica-{i}.html",
                 "claim": f"The staging database replica {i} serves the {_WORK[i]} reports of the "
                          f"{_TEAMS[i % len(_TEAMS)]} office."} for i in range(1, 13)]
    root = init_and_apply(tmp, [(write_ops(older, [coffee]), "2025-11-30T09:00:00Z"),
                                (write_ops(newer, [*amber_ops(), snapshot, *replicas]), NOW)])
    base = git(root, "rev-parse", "main").strip()

    def fold_into_coffee(repo: GitRepo) -> dict[str, int]:
        archived = archive_file(repo, FORGED_DROP, at=f"{DATE}T00:00:00Z",
                                extra=[edits.set_meta("superseded-by", "/" + UNRELATED)])
        assert archived is not None
        assert edits.stamp_file(repo, UNRELATED, [edits.link("supersedes", "/" + archived)])
        return {"merged": 1}

    tip = craft_branch(root, tmp / "crafting", FORGED_RUN, [
        ("dedup-merge", "fold 1 near-duplicates into canonicals", fold_into_coffee)])
    return BuiltRun(root, FORGED_RUN, base, tip, lost=(FORGED_DROP,), phase="dedup-merge")


ALIAS_HOLDER = "resources/services/checkout-retries.html"
"""The one memory that spells the checkout service ``checkout_api``; two others spell it ``checkout-api``."""


def true_alias_run(tmp: Path) -> BuiltRun:
    """The svc-amber corpus plus three checkout memories, one naming ``service:checkout_api`` and two
    ``service:checkout-api``, and a real run: entity-resolution merges the separator variant (the same letters
    and digits, docs/entities.md §6), rewrites :data:`ALIAS_HOLDER`'s entity to ``service:checkout-api`` and
    journals the rename. The rename passes the identity veto, so the entity probe ``service:checkout_api`` is
    explained by it; ``renamed`` holds it."""
    tmp.mkdir(parents=True, exist_ok=True)
    checkout = [
        {"op": "write", "title": "Checkout retries", "type": "semantic", "path": ALIAS_HOLDER,
         "claim": "The checkout service retries a declined card twice before it gives up.",
         "entities": ["service:checkout_api"]},
        {"op": "write", "title": "Checkout replicas", "type": "semantic",
         "path": "resources/services/checkout-replicas.html",
         "claim": "The checkout service runs six replicas in every region.", "entities": ["service:checkout-api"]},
        {"op": "write", "title": "Checkout owner", "type": "semantic", "path": "resources/services/checkout-owner.html",
         "claim": "Tomas owns the checkout service codebase and reviews its pull requests.",
         "entities": ["service:checkout-api"]},
    ]
    root = init_and_apply(tmp, [(write_ops(tmp, [*amber_ops(), *checkout]), NOW)])
    run_id, base, tip = sleep_run(root)
    after = editors.get_metas(git(root, "show", f"{tip}:{ALIAS_HOLDER}"), "entity")
    assert after == ["service:checkout-api"], after
    return BuiltRun(root, run_id, base, tip, renamed={"checkout_api": "checkout-api"})


BOOKKEEPING_RUN = f"sleep/{DATE}-b00c0e"
"""The run id of :func:`bookkeeping_only_branch`."""
STAMPED = tuple(amber_path(n) for n in range(11, AMBER + 1))
"""The 40 svc-amber memories the bookkeeping run stamps; svc-amber-1 … 10 it leaves alone."""


def bookkeeping_only_branch(tmp: Path) -> BuiltRun:
    """The svc-amber corpus and a hand-made run whose one ``confidence-decay`` commit does what that phase does to
    a memory it decays: stamps ``updated`` (the run's instant) and a lower ``confidence`` in the head of 40 of the
    50 memories (:data:`STAMPED`). No claim, entity, link or file changes: a benign run that loses nothing."""
    root = amber_corpus(tmp)
    base = git(root, "rev-parse", "main").strip()

    def decay(repo: GitRepo) -> dict[str, int]:
        for path in STAMPED:
            assert edits.stamp_file(repo, path, [edits.set_meta("updated", f"{DATE}T00:00:00Z"),
                                                 edits.set_meta("confidence", "0.9")])
        return {"decayed": len(STAMPED)}

    tip = craft_branch(root, tmp / "crafting", BOOKKEEPING_RUN, [
        ("confidence-decay", f"decay confidence on {len(STAMPED)} un-reinforced memories", decay)])
    return BuiltRun(root, BOOKKEEPING_RUN, base, tip)


def demo_run(tmp: Path) -> BuiltRun:
    """The shipped demo corpus (git_memhtml/cli/demo.py ``DEMO_CORPUS``) applied and a full real run: benign."""
    tmp.mkdir(parents=True, exist_ok=True)
    root = init_and_apply(tmp, [(DEMO_CORPUS, NOW)])
    run_id, base, tip = sleep_run(root)
    return BuiltRun(root, run_id, base, tip)


def conv26_run(tmp: Path) -> BuiltRun:
    """LoCoMo conv-26's 184 observations (``bench/locomo.py convert --conversation conv-26 --units
    observations``, read from ../shared/data) applied and a full real run: benign."""
    tmp.mkdir(parents=True, exist_ok=True)
    stream = tmp / "conv-26.jsonl"
    subprocess.run([sys.executable, str(ROOT / "bench" / "locomo.py"), "convert", "--conversation", "conv-26",
                    "--units", "observations", "--data", str(LOCOMO), "--out", str(stream)],
                   check=True, capture_output=True)
    assert len(stream.read_text(encoding="utf-8").splitlines()) == 184
    root = init_and_apply(tmp, [(stream, NOW)])
    run_id, base, tip = sleep_run(root, "2026-12-14")
    return BuiltRun(root, run_id, base, tip)


__all__ = [
    "BuiltRun",
    "archive_everything_branches",
    "archive_with_pointer_run",
    "bookkeeping_only_branch",
    "conv26_run",
    "demo_run",
    "false_entity_merge_branch",
    "fault_hook_false_merge_run",
    "forged_pointer_branch",
    "journaled_false_merge_branch",
    "retention_archive_run",
    "true_alias_run",
]
