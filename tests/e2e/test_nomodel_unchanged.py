"""With ``memhtml.llm = off`` the walking skeleton's results are unchanged (issue 11 acceptance).

A golden record of what a sleep run did on conv-26's observations and on the shipped demo corpus, taken with the
code before the model layer existed (commit ``ecc07e6``; the demo record retaken for issue 27, whose union keeps a
folded member's entity spelling, so entity-resolution normalizes and merges one name more; regenerate with
``python tests/e2e/test_nomodel_unchanged.py --write``): every run commit's subject and
``Memhtml-Phase``/``Memhtml-Counts`` trailers, and the run's file changes (``git diff --name-status -M``: the same
folds, archives, links and tasks). The run must reproduce it byte for byte:
the same folds and the same counts.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
DEMO = ROOT / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
GOLDEN = Path(__file__).resolve().parent / "golden"
DATE = "2026-12-14"
NOW = "2026-11-30T09:00:00Z"
CASES = ("conv-26", "demo")


def _env(home: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(home),
        "MEMHTML_NOW": NOW,
        "MEMHTML_EMBED": "fake",
        "MEMHTML_HOOKS": "0",
        "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "test@example.com",
        "GIT_AUTHOR_DATE": "2026-11-30T09:00:00Z", "GIT_COMMITTER_DATE": "2026-11-30T09:00:00Z",
        "GIT_CONFIG_NOSYSTEM": "1", "PYTHONPATH": str(ROOT),
    }


def _cli(env: dict[str, str], *args: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "git_memhtml", *args, "--json"], env=env, capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, (args, done.stdout, done.stderr)
    parsed: dict[str, Any] = json.loads(done.stdout)
    return parsed


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def record(case: str, work: Path) -> dict[str, Any]:
    """Import ``case``, run one sleep cycle (no model), and return what the run did."""
    home = work / "home"
    home.mkdir()
    env = _env(home)
    stream = DEMO
    if case != "demo":
        stream = work / f"{case}.jsonl"
        subprocess.run([sys.executable, str(ROOT / "bench" / "locomo.py"), "convert", "--conversation", case,
                        "--units", "observations", "--out", str(stream)], check=True, env=env)
    repo = work / "memory"
    _cli(env, "init", str(repo))
    _cli(env, "-C", str(repo), "apply", "--file", str(stream))
    run = _cli(env, "-C", str(repo), "sleep", "run", "--date", DATE)["data"]
    run_id, base = run["runId"], run["baseSha"]
    log = _git(repo, "log", "--reverse", "--format=%x00%s%x1f%(trailers:only,unfold)", f"{base}..{run_id}")
    commits = []
    for item in log.split("\x00")[1:]:
        subject, _, trailers = item.partition("\x1f")
        fields = dict(line.split(": ", 1) for line in trailers.strip().splitlines() if ": " in line)
        commits.append({"subject": subject, "phase": fields.get("Memhtml-Phase"),
                        "counts": json.loads(fields.get("Memhtml-Counts", "{}"))})
    changes = _git(repo, "diff", "--name-status", "-M", f"{base}..{run_id}").splitlines()
    phases = {p["phase"]: {"status": p["status"], "counts": p["counts"], "detail": p["detail"]} for p in run["phases"]}
    result = {"case": case, "commits": commits, "changes": changes, "phases": phases}
    # the run id carries a per-clone suffix (docs/sleep.md §2.1): name it, not its value
    text = json.dumps(result).replace(run_id, "sleep/<run>").replace(run_id.replace("/", "-"), "sleep-<run>")
    named: dict[str, Any] = json.loads(text)
    return named


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_no_model_run_matches_the_golden_record(case: str, tmp_path: Path) -> None:
    if case != "demo" and not LOCOMO.is_file():
        pytest.skip(f"LoCoMo data absent: {LOCOMO} (../shared/data)")
    golden = json.loads((GOLDEN / f"nomodel-{case}.json").read_text(encoding="utf-8"))
    assert record(case, tmp_path) == golden


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/e2e/test_nomodel_unchanged.py --write")
    for name in CASES:
        with tempfile.TemporaryDirectory() as folder:
            result = record(name, Path(folder))
        (GOLDEN / f"nomodel-{name}.json").write_text(json.dumps(result, indent=1, sort_keys=True) + "\n",
                                                     encoding="utf-8")
        print(name, len(result["commits"]), "commits", len(result["changes"]), "changes")
