"""The night's cap on detected tasks holds across a resume (issue 27 item 3, "caps stated in a prompt are enforced in
code"; docs/tasks.md §7).

The task-detection prompt tells the model that at most ten tasks are opened a night for the whole store. A run
killed after one detector spent the ten and then resumed used to start a fresh budget, so the resumed pass opened
ten more. The model answers over the real HTTP wire.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.scripted import Answer, Reply, Script, ScriptedRequest, blocks
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.contract import DETECTED_TASK_CAP
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import TASKS_DIR, ModelBinding, resume_sleep, run_sleep
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
}
"""Twelve pairs the numeric veto refuses to fold (each a dedup-merge review task: more than the night's ten), and
three memories holding open work for task-detection."""


class Stop(Exception):
    """The kill, right after dedup-merge."""


def _findings(req: ScriptedRequest) -> Reply:
    return Answer({"findings": [
        {"memberKey": key, "sentence": text[text.index("Ines will"):].split("\n")[0], "kind": "commitment",
         "confidence": 0.95} for key, text in blocks(req.prompt).items() if "Ines will" in text]})


def _tasks(repo: GitRepo, branch: str) -> list[str]:
    out = subprocess.run(["git", "-C", str(repo.root), "diff", "--name-only", "--diff-filter=A", f"main..{branch}",
                          "--", TASKS_DIR], check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p.rsplit("/", 1)[-1].startswith("det-")]  # not the folder's listing


def test_a_resumed_run_opens_no_more_detected_tasks_than_the_night_s_cap(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, FILES)
    db = IndexDB.for_repo(repo)
    script: Script = {"MergePartition": [Answer({"groups": []})], "TaskDetection": _findings}

    def stop(done: PhaseReport) -> None:
        if done.phase == "dedup-merge":
            raise Stop

    with ScriptedModelServer(script) as server:
        binding = ModelBinding(server.client("openai", max_attempts=1))
        with pytest.raises(Stop):
            run_sleep(repo, db, date=DATE, phases=("preflight", "dedup-merge", "task-detection", "report"),
                      embedder=EMBEDDER, clock=lambda: f"{DATE}T09:00:00Z", model=binding, after_phase=stop)
        [branch] = subprocess.run(["git", "-C", str(repo.root), "branch", "--list", "--format=%(refname:short)",
                                   "sleep/*"], check=True, capture_output=True, text=True).stdout.split()
        assert len(_tasks(repo, branch)) == DETECTED_TASK_CAP  # the veto's review tasks spent the night's ten
        resumed = resume_sleep(repo, db, branch, embedder=EMBEDDER, clock=lambda: f"{DATE}T10:00:00Z", model=binding)
    db.close()
    detection = next(p for p in resumed.phases if p.phase == "task-detection")
    assert detection.status == "ok" and detection.counts["findings"] == 3, detection
    assert (detection.counts["minted"], detection.counts["capped"]) == (0, 3)
    assert len(_tasks(repo, branch)) == DETECTED_TASK_CAP
