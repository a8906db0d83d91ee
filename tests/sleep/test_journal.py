"""The run journal (docs/ledger.md §2): what a run says it did, recorded by the phase that did it, in that phase's
own commit, read back from git alone; and a parser that hostile bytes never make raise."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import PathRefused, RunRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.journal import (
    EntityRenamed,
    Folded,
    JournalEntry,
    MergeVetoed,
    parse_journal,
    read_journal,
    record_journal,
    render_entry,
)
from git_memhtml.sleep.engine.run import run_sleep
from git_memhtml.sleep.engine.runfiles import journal_file
from git_memhtml.sleep.landing.rail import check_sleep_output
from git_memhtml.sleep.landing.rebase import rebase_run
from git_memhtml.sleep.phases import dedup_merge, entity_resolution
from git_memhtml.sleep.presentation.review import classify
from tests.sleep.sleep_corpus_helpers import DATE, git, make_env, make_repo, memory, write

BASE = "the checkout api deploy window opens after the nightly batch finishes and needs release manager approval"
SAFE = "the deploy step for the payments ledger service is safe to run during business hours with canary traffic"
UNSAFE = "the deploy step for the payments ledger service is not safe to run during business hours with canary traffic"

ENTITY_FILES = {
    "areas/inbox/c1.html": memory("Checkout API takes the orders.", entities=["service:Checkout API"]),
    "areas/inbox/c2.html": memory("Checkout API scales out at noon.", entities=["service:Checkout API"]),
    "areas/inbox/c3.html": memory("checkout-api deploys on Fridays.", entities=["service:checkout-api"]),
    "areas/inbox/s1.html": memory("Service one answers on port 8001.", entities=["service:svc-1"]),
    "areas/inbox/s10.html": memory("Service ten answers on port 8010.", entities=["service:svc-10"]),
    "areas/inbox/d1.html": memory("DGIA audits the books.", entities=["org:DGIA"]),
    "areas/inbox/d2.html": memory("DGIA signs off the audit.", entities=["Org:DGIA"]),
}
"""Separator variants that merge (``checkout-api`` → ``Checkout API``), numbered names kept apart (``svc-1`` /
``svc-10``), and a type-prefix-only rewrite (``Org:DGIA`` → ``org:DGIA``) that renames no name."""

ENTITY_JOURNAL: list[JournalEntry] = [
    EntityRenamed("service", "checkout-api", "Checkout API"),
]
"""Only the rename: ``svc-1``/``svc-10`` are counted in ``namesKeptApart`` and never journaled (a line per kept-apart
pair would grow with the square of the numbered names, every night)."""

DEDUP_FILES = {
    "areas/inbox/window-old.html": memory(BASE + ".", created="2026-01-01T00:00:00Z"),
    "areas/inbox/window-new.html": memory(BASE + " today.", created="2026-02-01T00:00:00Z"),
    "areas/inbox/safe.html": memory(SAFE + ".", created="2026-01-03T00:00:00Z"),
    "areas/inbox/unsafe.html": memory(UNSAFE + ".", created="2026-02-03T00:00:00Z"),
    "areas/inbox/other.html": memory("Coffee beans are stored in the left cupboard.", created="2026-01-02T00:00:00Z"),
}
"""The corpus of tests/sleep/test_dedup_merge.py: one fold, one pair the negation veto refuses."""

DEDUP_JOURNAL: list[JournalEntry] = [
    Folded("areas/inbox/window-old.html", "areas/inbox/window-new.html", "archive/2026/areas/inbox/window-new.html"),
    MergeVetoed("areas/inbox/safe.html", "areas/inbox/unsafe.html", ("negation",)),
]


def _journal(repo: GitRepo, run_id: str) -> list[JournalEntry] | None:
    target = repo.root / journal_file(run_id)
    return parse_journal(target.read_bytes()) if target.is_file() else None


# --- the format ---------------------------------------------------------------------------------------------------

ROUND_TRIP: list[JournalEntry] = [
    EntityRenamed("service", "svc_amber", "svc-amber"),
    EntityRenamed("person", "Zoë  Ström", "Zoë Ström"),
    EntityRenamed("tool", "line\u2028sep\u0085arator", "quote \" and \\ back"),
    MergeVetoed("areas/inbox/a.html", "projects/x/b.html", ("negation", "numeric")),
    Folded("areas/inbox/a.html", "areas/inbox/b.html", "archive/2026/areas/inbox/b-2.html"),
]


def test_every_kind_renders_one_sorted_line_and_parses_back() -> None:
    lines = [render_entry(e) for e in ROUND_TRIP]
    assert all("\n" not in line and "Zoë" in lines[1] for line in lines)  # non-ASCII kept, one line each
    assert lines[0] == '{"entityType":"service","kind":"entity-renamed","new":"svc-amber","old":"svc_amber"}'
    data = ("\n".join(lines) + "\n\n  \n").encode("utf-8")
    assert parse_journal(data) == ROUND_TRIP
    assert parse_journal(b"") == [] and parse_journal(b"\n \n") == []
    assert parse_journal(("\r\n".join(lines) + "\r\n").encode("utf-8")) == ROUND_TRIP


GOOD = '{"kind":"folded","keep":"areas/a.html","drop":"areas/b.html","archived":"archive/2026/areas/b.html"}'
HOSTILE: list[tuple[str, bytes]] = [
    ("not-utf-8", b'{"kind":"folded"}\xff\xfe\n'),
    ("utf-8-bom-line", b"\xef\xbb\xbf" + GOOD.encode()),
    ("not-json", b"folded areas/a.html\n"),
    ("a-good-line-then-a-bad-one", (GOOD + "\n{\n").encode()),
    ("json-array", b'["folded", "areas/a.html"]\n'),
    ("json-string", b'"folded"\n'),
    ("json-null", b"null\n"),
    ("unknown-kind", b'{"kind":"entity-promoted","entityType":"x","alias":"a","canonical":"b"}\n'),
    ("kind-not-a-string", b'{"kind":["folded"],"keep":"areas/a.html","drop":"areas/b.html","archived":"x"}\n'),
    ("missing-field", b'{"kind":"entity-renamed","entityType":"service","old":"a"}\n'),
    ("extra-field", b'{"kind":"entity-renamed","entityType":"service","old":"a","new":"b","why":"c"}\n'),
    ("number-for-a-name", b'{"kind":"entity-renamed","entityType":"service","old":1,"new":"b"}\n'),
    ("null-for-a-name", b'{"kind":"entity-renamed","entityType":null,"old":"a","new":"b"}\n'),
    ("blank-name", b'{"kind":"entity-renamed","entityType":"service","old":"  ","new":"b"}\n'),
    ("reasons-a-string", b'{"kind":"merge-vetoed","keep":"areas/a.html","drop":"areas/b.html","reasons":"numeric"}\n'),
    ("kind-no-longer-written", b'{"kind":"names-kept-apart","entityType":"host","a":"n1","b":"n10","reasons":[]}\n'),
    ("reasons-with-a-number", b'{"kind":"merge-vetoed","keep":"areas/a.html","drop":"areas/b.html","reasons":[1]}\n'),
    ("reasons-nested", b'{"kind":"merge-vetoed","keep":"areas/a.html","drop":"areas/b.html","reasons":[["x"]]}\n'),
    ("nan-for-a-name", b'{"kind":"entity-renamed","entityType":"service","old":NaN,"new":"b"}\n'),
    ("infinity-anywhere", b'{"kind":"entity-renamed","entityType":"service","old":"a","new":"b","x":-Infinity}\n'),
    ("duplicate-key", b'{"kind":"entity-renamed","entityType":"s","old":"a","new":"b","new":"c"}\n'),
    ("leading-slash-path", b'{"kind":"merge-vetoed","keep":"/areas/a.html","drop":"areas/b.html","reasons":[]}\n'),
    ("path-outside-buckets", b'{"kind":"merge-vetoed","keep":"docs/a.html","drop":"areas/b.html","reasons":[]}\n'),
    ("path-climbing-out", b'{"kind":"folded","keep":"areas/../../etc.html","drop":"areas/b.html",'
                          b'"archived":"archive/2026/areas/b.html"}\n'),
    ("archived-not-in-archive", b'{"kind":"folded","keep":"areas/a.html","drop":"areas/b.html",'
                                b'"archived":"areas/b-2.html"}\n'),
    ("deep-nesting", b'{"kind":"folded","keep":' + b"[" * 200_000 + b"]" * 200_000 + b"}\n"),
    ("deep-nesting-unclosed", b"[" * 500_000 + b"\n"),
    ("huge-garbage-line", b"{" + b"x" * 5_000_000 + b"\n"),
    ("huge-integer", b'{"kind":"folded","keep":' + b"9" * 100_000 + b"}\n"),
]
"""(label, bytes) that are not a journal: each gives ``None``, none raises."""


@pytest.mark.parametrize(("label", "data"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_hostile_bytes_are_not_a_journal_and_never_raise(label: str, data: bytes) -> None:
    assert parse_journal(data) is None, label


def test_a_huge_valid_line_is_still_a_journal() -> None:
    long = "x" * 2_000_000
    assert parse_journal(render_entry(EntityRenamed("tool", long, "y")).encode()) == [EntityRenamed("tool", long, "y")]


# --- the phases record what they did ------------------------------------------------------------------------------

def test_entity_resolution_records_the_renames_it_made_and_not_the_names_it_kept_apart(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, ENTITY_FILES))
    counts = entity_resolution.run(env).counts.wire()
    assert counts["fuzzyMerges"] == 1 and counts["namesKeptApart"] == 1 and counts["filesRewritten"] == 2
    assert _journal(env.repo, env.run_id) == ENTITY_JOURNAL
    staged = git(env.repo.root, "diff", "--cached", "--name-only").split()
    assert journal_file(env.run_id) in staged


def test_dedup_merge_records_the_fold_it_made_and_every_vetoed_pair_even_uncapped(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, DEDUP_FILES))
    env.services.budget.remaining["review"] = 0  # no review task can be minted: the vetoed pair is still recorded
    counts = dedup_merge.run(env).counts.wire()
    assert counts["merged"] == 1 and counts["vetoed"] == 1 and counts["tasksCapped"] == 1
    assert counts["tasksMinted"] == 0
    assert _journal(env.repo, env.run_id) == DEDUP_JOURNAL


def test_a_dry_run_records_nothing(tmp_path: Path) -> None:
    files = {**ENTITY_FILES, **DEDUP_FILES}
    env = make_env(make_repo(tmp_path, files), dry_run=True)
    assert entity_resolution.run(env).counts.wire()["fuzzyMerges"] == 1
    assert dedup_merge.run(env).counts.wire()["merged"] == 1
    assert not (env.repo.root / journal_file(env.run_id)).exists()
    assert git(env.repo.root, "status", "--porcelain") == ""


def test_a_line_is_recorded_once_and_existing_bytes_are_kept(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    target = env.repo.root / journal_file(env.run_id)
    first = EntityRenamed("service", "a_b", "a-b")
    assert record_journal(env, [first, first]) == 1
    assert record_journal(env, [first]) == 0
    target.write_bytes(target.read_bytes().rstrip(b"\n"))  # a last line without its newline
    second = MergeVetoed("areas/inbox/a.html", "areas/inbox/b.html", ("numeric",))
    assert record_journal(env, [first, second]) == 1
    assert parse_journal(target.read_bytes()) == [first, second]
    assert record_journal(env, []) == 0


def test_the_journal_is_never_written_through_a_symlink(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    outside = tmp_path / "outside"
    outside.mkdir()
    (env.repo.root / ".memhtml").mkdir()
    (env.repo.root / ".memhtml" / "sleep").symlink_to(outside)
    with pytest.raises(PathRefused) as refused:
        record_journal(env, [EntityRenamed("service", "a_b", "a-b")])
    assert refused.value.path == journal_file(env.run_id)
    assert list(outside.iterdir()) == []


# --- a real run: the phase's own commit, the rail, review, rebase -------------------------------------------------

def _trailer_sha(repo: GitRepo, run_id: str, phase: str) -> str:
    log = git(repo.root, "log", "--format=%H %(trailers:key=Memhtml-Phase,valueonly,separator=)", f"main..{run_id}")
    shas = [line.split()[0] for line in log.splitlines() if line.split()[1:] == [phase]]
    assert len(shas) == 1, log
    return shas[0]


@pytest.mark.slow
def test_a_run_commits_each_phase_s_lines_in_that_phase_s_own_commit(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {**ENTITY_FILES, **DEDUP_FILES})
    db = IndexDB.for_repo(repo)
    try:
        report = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=lambda: f"{DATE}T09:00:00Z")
        assert report.failed_phases == []
        run_id, path = report.run_id, journal_file(report.run_id)
        entity_sha = _trailer_sha(repo, run_id, "entity-resolution")
        dedup_sha = _trailer_sha(repo, run_id, "dedup-merge")
        assert path in git(repo.root, "show", "--stat=200", "--format=", entity_sha)
        assert path in git(repo.root, "show", "--stat=200", "--format=", dedup_sha)
        assert read_journal(repo, f"{dedup_sha}~1", run_id) == []  # dedup-merge (phase 2) runs first
        assert read_journal(repo, dedup_sha, run_id) == DEDUP_JOURNAL
        assert read_journal(repo, entity_sha, run_id) == DEDUP_JOURNAL + ENTITY_JOURNAL
        tip = report.head_sha
        assert read_journal(repo, tip, run_id) == DEDUP_JOURNAL + ENTITY_JOURNAL
        check_sleep_output(repo, run_id, report.base_sha, tip)  # the rail lets the run's own journal land
        kinds = {f.path: f.kind for f in classify(repo, report.base_sha, tip)}
        assert kinds[path] == "artifact"
        # the trunk moves on; a rebase replays the journal byte for byte
        write(repo.root, {"areas/inbox/late.html": memory("A fact written while the run waited.")})
        git(repo.root, "add", "-A")
        git(repo.root, "commit", "-q", "-m", "late write")
        before = repo.read_path_at(tip, path)
        rebased = rebase_run(repo, db, run_id, gate=None, clock=lambda: f"{DATE}T10:00:00Z")
        assert rebased.rebased and rebased.new_head != tip
        assert repo.read_path_at(rebased.new_head, path) == before
        assert repo.read_path_at("main", path) is None
    finally:
        db.close()


@pytest.mark.slow
def test_a_failed_phase_s_lines_are_undone_and_a_resume_appends_to_the_committed_journal(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A phase that records and then fails leaves no line for a later phase's commit to carry; the resume that
    re-runs it appends its lines after the committed ones, in its own commit, and the rail lets the run land. A
    ``*.jsonl`` ignore rule (here the repository's own) does not keep the journal out of the phase commits."""
    from dataclasses import replace

    from git_memhtml.sleep.engine.contract import REGISTRY, phase_specs
    from git_memhtml.sleep.engine.env import PhaseEnv, PhaseOutcome
    from git_memhtml.sleep.engine.run import resume_sleep

    forged = Folded("areas/inbox/c1.html", "areas/inbox/c2.html", "archive/2026/areas/inbox/c2.html")
    real = phase_specs()["dedup-merge"]

    def failing(env: PhaseEnv) -> PhaseOutcome:
        record_journal(env, [forged])
        raise RuntimeError("the model timed out")

    repo = make_repo(tmp_path, {**ENTITY_FILES, **DEDUP_FILES, ".gitignore": "*.jsonl\n"})

    def clock() -> str:
        return f"{DATE}T09:00:00Z"

    db = IndexDB.for_repo(repo)
    try:
        monkeypatch.setitem(REGISTRY, "dedup-merge", replace(real, body=failing))
        first = run_sleep(repo, db, date=DATE, embedder=FakeEmbedder(dim=256), clock=clock)
        assert first.failed_phases == ["dedup-merge"]
        entity_sha = _trailer_sha(repo, first.run_id, "entity-resolution")
        assert read_journal(repo, entity_sha, first.run_id) == ENTITY_JOURNAL
        assert read_journal(repo, first.head_sha, first.run_id) == ENTITY_JOURNAL
        monkeypatch.setitem(REGISTRY, "dedup-merge", real)
        resumed = resume_sleep(repo, db, first.run_id, embedder=FakeEmbedder(dim=256), clock=clock)
    finally:
        db.close()
    assert resumed.failed_phases == []
    dedup_sha = _trailer_sha(repo, first.run_id, "dedup-merge")
    assert read_journal(repo, dedup_sha, first.run_id) == ENTITY_JOURNAL + DEDUP_JOURNAL
    assert read_journal(repo, resumed.head_sha, first.run_id) == ENTITY_JOURNAL + DEDUP_JOURNAL
    check_sleep_output(repo, first.run_id, first.base_sha, resumed.head_sha)


UNREADABLE: list[tuple[str, JournalEntry]] = [
    ("blank-type", EntityRenamed(" ", "a_b", "a-b")),
    ("blank-new-name", EntityRenamed("service", "a_b", "\t")),
    ("lone-surrogate", EntityRenamed("service", "a\udcffb", "a-b")),
    ("reason-blank", MergeVetoed("areas/inbox/a.html", "areas/inbox/b.html", ("",))),
    ("path-not-a-memory", MergeVetoed("README.html", "areas/inbox/b.html", ("negation",))),
    ("archived-outside-archive", Folded("areas/inbox/a.html", "areas/inbox/b.html", "areas/inbox/b-2.html")),
]
"""(label, entry) no journal line can carry: recording refuses them all, before writing any line."""


@pytest.mark.parametrize(("label", "entry"), UNREADABLE, ids=[u[0] for u in UNREADABLE])
def test_an_entry_that_would_not_read_back_is_refused_and_nothing_is_written(
    tmp_path: Path, label: str, entry: JournalEntry
) -> None:
    env = make_env(make_repo(tmp_path, {"areas/inbox/a.html": memory("A fact.")}))
    good = EntityRenamed("service", "a_b", "a-b")
    with pytest.raises(RunRefused) as refused:
        record_journal(env, [good, entry])
    assert refused.value.path == journal_file(env.run_id) and refused.value.hint, label
    assert not (env.repo.root / journal_file(env.run_id)).exists()
