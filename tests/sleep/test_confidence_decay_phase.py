"""confidence-decay: file value decayed one step, 3 decimals, reinforced/task skipped, delta gate, dry run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.editors import get_meta
from git_memhtml.document.template import render_memory
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.phases import confidence_decay
from git_memhtml.sleep.phases.confidence_decay import file_confidence
from tests.sleep.sleep_corpus_helpers import AT, commit_and_reindex, make_env, make_repo, memory, tree_files

OLD = "2026-01-01T00:00:00Z"
WEEK_AGO = "2026-03-03T00:00:00Z"  # exactly one decay period before AT (2026-03-10)


def _files() -> dict[str, str]:
    return {
        "areas/inbox/plain.html": memory("The build cache lives on the second disk.", created=WEEK_AGO),
        "areas/inbox/reinforced.html": memory("The staging database restarts every Sunday.", created=WEEK_AGO),
        "areas/inbox/fresh.html": memory("The cache was moved yesterday.", created="2026-03-09T12:00:00Z"),
        "areas/inbox/floor.html": render_memory(MemoryDraft(
            title="floor", memory_type="semantic", claim="The old printer jams on A3.", confidence=0.2
        ), now=OLD),
        "areas/inbox/tasks/todo.html": render_memory(MemoryDraft(
            title="todo", memory_type="task", claim="Renew the TLS certificate."
        ), now=OLD),
    }


def _reinforce(env: PhaseEnv, path: str) -> None:
    env.db.execute(
        "INSERT INTO state.access(path, access_count, reinforcement_count, outcome_score, updated_at) "
        "VALUES (?, 3, 1, 0.3, ?)",
        (path, OLD),
    )


def test_absent_confidence_decays_to_0_92_with_three_decimals(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()))
    _reinforce(env, "areas/inbox/reinforced.html")
    reinforced_before = (env.repo.root / "areas/inbox/reinforced.html").read_bytes()
    outcome = confidence_decay.run(env)
    assert outcome.counts.wire() == {
        "active": 5, "reinforced": 1, "skippedType": 1, "notDue": 1, "eligible": 2, "belowGate": 1, "decayed": 1,
    }
    assert outcome.subject == "decay confidence on 1 un-reinforced memories"
    plain = (env.repo.root / "areas/inbox/plain.html").read_text()
    assert get_meta(plain, "confidence") == "0.920"
    assert get_meta(plain, "updated") == AT
    # reinforced file, task and the at-floor file keep their bytes
    assert (env.repo.root / "areas/inbox/reinforced.html").read_bytes() == reinforced_before
    assert get_meta((env.repo.root / "areas/inbox/floor.html").read_text(), "confidence") == "0.20"
    assert get_meta((env.repo.root / "areas/inbox/tasks/todo.html").read_text(), "updated") == OLD
    # staged for the runner's commit
    assert commit_and_reindex(env) is not None


def test_a_week_later_decays_from_the_file_value(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {
        "areas/inbox/a.html": memory("The build cache lives on disk two.", created=WEEK_AGO),
    }))
    confidence_decay.run(env)
    commit_and_reindex(env)
    assert get_meta((env.repo.root / "areas/inbox/a.html").read_text(), "confidence") == "0.920"
    env = replace(env, at="2026-03-17T00:00:00Z", base_sha=env.repo.head_sha() or "")  # the next run, a week later
    confidence_decay.run(env)
    assert get_meta((env.repo.root / "areas/inbox/a.html").read_text(), "confidence") == "0.848"


def test_a_second_run_the_same_day_decays_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {
        "areas/inbox/a.html": memory("The build cache lives on disk two.", created=WEEK_AGO),
    }))
    confidence_decay.run(env)
    commit_and_reindex(env)
    before = (env.repo.root / "areas/inbox/a.html").read_bytes()
    env = replace(env, base_sha=env.repo.head_sha() or "")  # a second run cut from the first one's result
    outcome = confidence_decay.run(env)
    assert outcome.counts.wire()["notDue"] == 1 and outcome.counts.wire()["decayed"] == 0
    assert (env.repo.root / "areas/inbox/a.html").read_bytes() == before


def test_steps_follow_elapsed_weeks_not_runs() -> None:
    assert confidence_decay.due_steps("2026-03-09T00:00:00Z", AT) == 0
    assert confidence_decay.due_steps("2026-03-03T00:00:00Z", AT) == 1
    assert confidence_decay.due_steps("2026-02-24T00:00:00Z", AT) == 2
    assert confidence_decay.due_steps("2026-04-01T00:00:00Z", AT) == 0
    assert confidence_decay.due_steps("garbage", AT) == 1


def test_dry_run_counts_and_writes_nothing(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, _files()), dry_run=True)
    before = tree_files(env.repo)
    outcome = confidence_decay.run(env)
    assert outcome.counts.wire()["decayed"] == 2  # nothing is reinforced in this corpus; fresh.html is not due
    assert tree_files(env.repo) == before
    assert env.repo.commit("nothing") is None


def test_file_confidence_reads_absent_and_invalid_as_one() -> None:
    html = memory("A claim.")
    assert file_confidence(html) == 1.0
    assert file_confidence(html.replace('<meta name="memhtml-type"',
                                        '<meta name="memhtml-confidence" content="x">\n'
                                        '<meta name="memhtml-type"')) == 1.0
    assert file_confidence(render_memory(MemoryDraft(title="t", memory_type="semantic", claim="c.", confidence=0.5),
                                         now=OLD)) == 0.5


def test_a_stamp_earlier_the_same_night_does_not_reset_the_decay_clock(tmp_path: Path) -> None:
    env = make_env(make_repo(tmp_path, {
        "areas/inbox/a.html": memory("The build cache lives on disk two.", created=WEEK_AGO),
    }))
    path = env.repo.root / "areas/inbox/a.html"
    path.write_text(path.read_text().replace(f'content="{WEEK_AGO}">\n<meta name="memhtml-content-hash"',
                                             f'content="{AT}">\n<meta name="memhtml-content-hash"'))
    assert get_meta(path.read_text(), "updated") == AT  # as an entity rewrite earlier tonight would leave it
    outcome = confidence_decay.run(env)
    assert outcome.counts.wire()["decayed"] == 1
