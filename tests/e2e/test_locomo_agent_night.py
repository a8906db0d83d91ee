"""A night over real memory shaped as an agent writes it lands through the run gate (issue 27).

LoCoMo conv-26's observations, imported the way an agent writes memories (``bench/locomo.py``
``agent_observation_ops``: title = the observation, one ``person:`` subject, the session date, nothing else), indexed
with the product's default embedder (wordllama: the fake embedder's bag of hashed words does not put the two
speakers' restatements above 0.92). One no-model ``sleep run``, then ``sleep merge`` through both gates.

Before issue 27 dedup-merge folded "Melanie values friendship with Caroline and expresses appreciation for it."
into "Caroline expresses appreciation for her friendship with Melanie." (cosine above 0.92, two speakers), the
keeper lost ``person:Melanie`` and the run gate refused the night.
"""

from __future__ import annotations

from html import escape
from pathlib import Path

import pytest

from git_memhtml.document import editors
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.journal import Folded, MergeVetoed, read_journal
from tests.bench.bench_support import LOCOMO_JSON, load_locomo_module
from tests.probes.runs import cli_json, init_and_apply, pinned_clock, sleep_run, write_ops

locomo = load_locomo_module()

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not LOCOMO_JSON.exists(), reason=f"LoCoMo data absent: {LOCOMO_JSON} (see docs/locomo.md)"),
]


def _people(repo: GitRepo, commit: str, path: str) -> set[str]:
    data = repo.read_path_at(commit, path)
    assert data is not None, path
    return {e for e in editors.get_metas(data.decode("utf-8"), "entity") if e.startswith("person:")}


def test_an_agent_shaped_conversation_night_folds_no_speaker_into_another_and_lands(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_EMBED", "wordllama")
    item = locomo.find_conversation(locomo.load_data(LOCOMO_JSON), "conv-26")
    ops = locomo.agent_observation_ops(item)
    assert ops and all(len(op["entities"]) == 1 and escape(op["title"], quote=False) in op["article_html"]
                       for op in ops)
    root = init_and_apply(tmp_path, [(write_ops(tmp_path, ops), "2026-11-30T09:00:00Z")])
    run_id, base, tip = sleep_run(root, "2026-12-14")
    repo = GitRepo.discover(root)
    journal = read_journal(repo, tip, run_id)
    for fold in (e for e in journal if isinstance(e, Folded)):
        assert _people(repo, base, fold.keep) & _people(repo, base, fold.drop), fold  # a fold never crosses speakers
    refused = [e for e in journal if isinstance(e, MergeVetoed) and "subject" in e.reasons]
    assert refused, "the two speakers' restatements reach the floor and the subject predicate refuses them"
    for pair in refused:
        assert _people(repo, base, pair.keep) != _people(repo, base, pair.drop)
    with pinned_clock("2026-12-14T09:00:00Z"):
        code, merged = cli_json("-C", str(root), "sleep", "merge", run_id)
    assert code == 0 and merged["data"]["merged"] is True, merged
