"""The night's caps on detected tasks hold across a resume, one per class of task (issue 27 item 3, "caps stated in
a prompt are enforced in code"; docs/tasks.md §7 "Two budgets").

The task-detection prompt tells the model that at most ten tasks of open work are opened a night for the whole
store, and that review tasks have ten of their own. A run killed after dedup-merge spent the review ten and then
resumed used to start a fresh budget, so the resumed pass opened ten more; and when the budget was one for every
detector, the review tasks left nothing for the commitments. The model answers over the real HTTP wire.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.scripted import Answer, Reply, Script, ScriptedRequest, blocks
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.contract import DETECTED_TASK_CAP, REVIEW_SHARE
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import TASKS_DIR, ModelBinding, resume_sleep, run_sleep, tasks_added
from tests.sleep.sleep_corpus_helpers import EMBEDDER, make_repo, memory

DATE = "2026-03-11"
WORDS = ("amber", "birch", "cedar", "delta", "ember", "fjord", "grove", "heron", "ivory", "juniper", "kestrel",
         "lagoon", "maple", "nectar", "orchid", "pepper", "quartz", "raven", "sable", "tundra", "umber", "violet",
         "willow", "yarrow", "acorn", "bramble", "clover", "dahlia", "elm", "fern", "garnet", "hazel", "iris",
         "jade", "kelp", "lilac", "mango", "nutmeg", "olive", "pine", "quince", "rose", "saffron", "thyme", "ulmus",
         "vanilla", "walnut", "yew", "apricot", "basil", "cumin", "dill", "endive", "fig", "ginger", "hops",
         "indigo", "jasmine", "kale", "lemon", "mint", "nettle", "onion", "parsley", "radish", "sage", "tansy",
         "turnip", "vetch", "wasabi", "yam", "zinnia")
FILES = {
    **{f"areas/ops/window-{i}-{minutes}.html": memory(
        f"The {' '.join(WORDS[(6 * i + k) % len(WORDS)] for k in range(10))} deploy window is {minutes} minutes.")
       for i in range(12) for minutes in (10, 30)},
    **{f"areas/inbox/plan-{i}.html": memory(f"Launch plan part {word}.", body=[f"Ines will draft part {word} of the "
                                                                                 "launch plan by Monday."])
       for i, word in enumerate(("one", "two", "three"))},
    **{f"areas/tools/{tool}-{stage}.html": memory(f"Dashboards of the {stage} stage live in {tool}.",
                                                 entities=[f"tool:{tool}-{stage}"])
       for tool in ("grafana", "kibana", "jaeger") for stage in ("prod", "dev")},
}
"""Twelve pairs the numeric veto refuses to fold (each a dedup-merge review task: more than its share of five),
three tool names in entity-resolution's review band (three review tasks), and three memories holding open work for
task-detection."""


class Stop(Exception):
    """The kill, right after dedup-merge."""


def _findings(req: ScriptedRequest) -> Reply:
    return Answer({"findings": [
        {"memberKey": key, "sentence": text[text.index("Ines will"):].split("\n")[0], "kind": "commitment",
         "confidence": 0.95} for key, text in blocks(req.prompt).items() if "Ines will" in text]})


def _contradicts(req: ScriptedRequest) -> Reply:
    return Answer({"verdicts": [{"pairKey": key, "rel": "contradicts", "direction": "src_to_dst", "confidence": 0.95}
                                for key in blocks(req.prompt)]})


def _tasks(repo: GitRepo, branch: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo.root), "diff", "--name-only", "--diff-filter=A", f"main..{branch}",
                          "--", TASKS_DIR], check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p.rsplit("/", 1)[-1].startswith("det-")]  # not the folder's listing


def test_a_resumed_run_keeps_each_class_s_cap_and_review_tasks_leave_open_work_its_own(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    script: Script = {"MergePartition": [Answer({"groups": []})], "TaskDetection": _findings,
                      "EntityClustering": lambda _req: Answer({"clusters": []}), "EdgeVerdicts": _contradicts}

    def stop(done: PhaseReport) -> None:
        if done.phase == "entity-resolution":
            raise Stop

    with ScriptedModelServer(script) as server:
        binding = ModelBinding(server.client("openai", max_attempts=1))
        with pytest.raises(Stop):
            run_sleep(repo, db, date=DATE, phases=("preflight", "dedup-merge", "entity-resolution", "task-detection",
                                                   "report"),
                      embedder=EMBEDDER, clock=lambda: f"{DATE}T09:00:00Z", model=binding, after_phase=stop)
        [branch] = subprocess.run(["git", "-C", str(repo.root), "branch", "--list", "--format=%(refname:short)",
                                   "sleep/*"], check=True, capture_output=True, text=True).stdout.split()
        before = tasks_added(repo, "main", branch)
        assert before == {"dedup-merge": REVIEW_SHARE, "entity-resolution": 3}, before  # eight of the review ten
        resumed = resume_sleep(repo, db, branch, embedder=EMBEDDER, clock=lambda: f"{DATE}T10:00:00Z", model=binding)
    db.close()
    edges = next(p for p in resumed.phases if p.phase == "edge-typing")
    assert edges.status == "ok" and edges.counts["contradictions"] > REVIEW_SHARE, edges
    # the resumed pass starts from the eight: two review tasks are left, not a fresh ten (nor a fresh share of five)
    assert (edges.counts["tasksMinted"], edges.counts["tasksCapped"]) == (2, edges.counts["contradictions"] - 2)
    detection = next(p for p in resumed.phases if p.phase == "task-detection")
    assert detection.status == "ok" and detection.counts["findings"] == 3, detection
    assert (detection.counts["minted"], detection.counts["capped"]) == (3, 0)  # open work has its own ten
    after = tasks_added(repo, "main", branch)
    assert after == {"dedup-merge": REVIEW_SHARE, "entity-resolution": 3, "edge-typing": 2, "task-detection": 3}
    assert len(_tasks(repo, branch)) == DETECTED_TASK_CAP + 3
