"""entity-resolution, no-model stages: normalisation, LCS auto-merge, alias oracle, review band, dry run."""

from __future__ import annotations

from pathlib import Path

from git_memhtml.document.editors import get_meta, get_metas
from git_memhtml.domain.entities import MERGE, REVIEW, name_key, pair_verdicts
from git_memhtml.sleep.phases import entity_resolution
from git_memhtml.sleep.phases.entity_resolution import alias_groups, resolve_type
from git_memhtml.sleep.phases.tasks import open_detections
from tests.sleep.sleep_corpus_helpers import AT, commit_and_reindex, make_env, make_repo, memory, tree_files


def _metas(env_root: Path, path: str) -> list[str]:
    return get_metas((env_root / path).read_text(), "entity")


def test_pair_verdicts_split_auto_and_review_band() -> None:
    names = ["checkout-api", "checkout api", "payments-api", "grafana-prod", "grafana-dev"]
    verdicts = pair_verdicts({name_key(n) for n in names})
    auto = [(v.a, v.b, v.ratio) for v in verdicts if v.verdict == MERGE]
    band = [(v.a, v.b, v.ratio) for v in verdicts if v.verdict == REVIEW]
    assert [(a, b) for a, b, _ in auto] == [("checkout api", "checkout-api")]  # payments-api at 0.67 stays apart
    assert [(a, b) for a, b, _ in band] == [("grafana-dev", "grafana-prod")]
    assert all(0.75 <= r < 0.85 for _, _, r in band)


def test_resolve_type_survivor_is_most_claimed_name() -> None:
    res = resolve_type("service", {"Checkout API": 1, "checkout-api": 3, "checkout api": 1})
    assert res.final == {"Checkout API": "checkout-api", "checkout api": "checkout-api", "checkout-api": "checkout-api"}


def test_normalisation_and_lcs_merge_rewrite_meta_lines(tmp_path: Path) -> None:
    files = {
        "areas/inbox/a.html": memory("Checkout deploys happen on tuesday.", entities=["service:Checkout API"]),
        "areas/inbox/b.html": memory("Checkout latency budget is tight.", entities=["service:checkout-api"]),
        "areas/inbox/c.html": memory(
            "Checkout owns the cart.", entities=["service:checkout-api", "service:checkout api"]
        ),
        "areas/inbox/d.html": memory("Payments settle nightly.", entities=["service:payments-api"]),
        "areas/inbox/e.html": memory("Checkout retries twice.", entities=["service:checkout-api"]),
    }
    env = make_env(make_repo(tmp_path, files))
    outcome = entity_resolution.run(env)
    counts = outcome.counts.wire()
    root = env.repo.root
    assert _metas(root, "areas/inbox/a.html") == ["service:checkout-api"]
    assert _metas(root, "areas/inbox/c.html") == ["service:checkout-api"]  # duplicate collapsed, not doubled
    assert _metas(root, "areas/inbox/b.html") == ["service:checkout-api"]
    assert _metas(root, "areas/inbox/d.html") == ["service:payments-api"]
    assert get_meta((root / "areas/inbox/a.html").read_text(), "updated") == AT
    assert get_meta((root / "areas/inbox/b.html").read_text(), "updated") != AT  # untouched file not stamped
    assert counts["namesNormalized"] == 1 and counts["fuzzyMerges"] == 2 and counts["filesRewritten"] == 2
    assert outcome.subject == "normalize 1 entity names, merge 2 aliases"
    # idempotent: a second run over the committed result changes nothing
    commit_and_reindex(env)
    before = tree_files(env.repo)
    again = entity_resolution.run(env).counts.wire()
    assert again["filesRewritten"] == 0 and tree_files(env.repo) == before


def test_alias_oracle_merges_short_name_into_person_file_name(tmp_path: Path) -> None:
    files = {
        "resources/people/priya-raman.html": memory(
            "Priya Raman leads the payments team.", title="Priya Raman", entities=["person:Priya Raman"],
            aliases=["Priya"], created="2026-01-01T00:00:00Z",
        ),
        "areas/inbox/x.html": memory("Priya approved the rollout.", entities=["person:Priya Raman"]),
        "areas/inbox/y.html": memory("Priya asked for a runbook.", entities=["person:Priya"]),
    }
    env = make_env(make_repo(tmp_path, files))
    counts = entity_resolution.run(env).counts.wire()
    assert counts["aliasMerges"] == 1
    root = env.repo.root
    assert _metas(root, "areas/inbox/y.html") == ["person:Priya Raman"]  # display case kept
    assert _metas(root, "areas/inbox/x.html") == ["person:Priya Raman"]


def test_a_person_file_is_what_it_says_not_where_it_is_filed(tmp_path: Path) -> None:
    """A person file outside ``resources/people/`` (an explicit path) declares its aliases; a fact filed under
    ``resources/people/`` naming two people declares nothing, and a fact titled by its claim is nobody's file."""
    files = {
        "areas/team/priya-raman.html": memory(
            "Priya Raman leads the payments team.", title="Priya Raman", entities=["person:Priya Raman"],
            aliases=["Priya"], created="2026-01-01T00:00:00Z",
        ),
        "resources/people/bo-and-anna-planned-the-offsite.html": memory(
            "Bo Lind and Anna Berg planned the offsite.", entities=["person:Bo Lind", "person:Anna Berg"],
            aliases=["Anna"],
        ),
        "areas/inbox/x.html": memory("Priya Raman approved the rollout.", entities=["person:Priya Raman"]),
        "areas/inbox/y.html": memory("Priya asked for a runbook.", entities=["person:Priya"]),
        "areas/inbox/z.html": memory("Anna sets the agenda.", entities=["person:Anna"]),
    }
    env = make_env(make_repo(tmp_path, files))
    assert alias_groups(env.repo) == [("priya", "priya raman")]
    counts = entity_resolution.run(env).counts.wire()
    assert counts["aliasMerges"] == 1
    root = env.repo.root
    assert _metas(root, "areas/inbox/y.html") == ["person:Priya Raman"]
    assert _metas(root, "areas/inbox/z.html") == ["person:Anna"]  # "Anna" is no alias of anyone: Bo is named too


def test_archived_person_file_still_declares_aliases(tmp_path: Path) -> None:
    files = {
        "archive/2025/resources/people/laith.html": memory(
            "Laith Al-Saadoon runs infra.", entities=["person:Laith Al-Saadoon"], aliases=["laith"],
        ).replace('content="active"', 'content="archived"'),
        "areas/inbox/x.html": memory("Laith fixed the pager.", entities=["person:Laith"]),
        "areas/inbox/y.html": memory("Laith wrote the runbook.", entities=["person:laith al-saadoon"]),
        "areas/inbox/z.html": memory("Laith reviews infra.", entities=["person:laith al-saadoon"]),
    }
    env = make_env(make_repo(tmp_path, files))
    assert entity_resolution.run(env).counts.wire()["aliasMerges"] == 1
    assert _metas(env.repo.root, "areas/inbox/x.html") == ["person:laith al-saadoon"]


def test_review_band_pair_opens_one_task_and_is_not_merged(tmp_path: Path) -> None:
    # "grafana-prod" vs "grafana-dev": LCS 9 → 2*9/(12+11) ≈ 0.78, inside [0.75, 0.85)
    files = {
        "areas/inbox/a.html": memory("Dashboards live in grafana.", entities=["tool:grafana-prod"]),
        "areas/inbox/b.html": memory("Test dashboards live elsewhere.", entities=["tool:grafana-dev"]),
    }
    env = make_env(make_repo(tmp_path, files))
    counts = entity_resolution.run(env).counts.wire()
    assert counts["reviewCandidates"] == 1 and counts["tasksMinted"] == 1 and counts["fuzzyMerges"] == 0
    assert _metas(env.repo.root, "areas/inbox/b.html") == ["tool:grafana-dev"]
    tasks = open_detections(env.repo, "entity-resolution")
    assert len(tasks) == 1 and '"grafana-dev" and "grafana-prod"' in tasks[0].gist


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    files = {
        "areas/inbox/a.html": memory("Checkout deploys on tuesday.", entities=["service:Checkout API"]),
        "areas/inbox/b.html": memory("Checkout owns the cart.", entities=["service:checkout api"]),
        "areas/inbox/c.html": memory("Checkout retries twice.", entities=["service:checkout api"]),
    }
    env = make_env(make_repo(tmp_path, files), dry_run=True)
    before = tree_files(env.repo)
    counts = entity_resolution.run(env).counts.wire()
    assert counts["namesNormalized"] == 1 and counts["filesRewritten"] == 1
    assert tree_files(env.repo) == before
