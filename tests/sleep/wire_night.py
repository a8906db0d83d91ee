"""One sleep night through the real HTTP client against the scripted model server (docs/models.md §1.6).

The rail tests of issue 27 drive the real runner: a real git repo, a real index, ``run_sleep`` over the phases a
test names, and a model that answers over loopback HTTP in either dialect. What a night wrote is then read from the
run branch, and its refusals from the run's rails log.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.contract import Dialect
from git_memhtml.llm.scripted import Script, ScriptedRequest
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import ModelBinding, RunReport, run_sleep
from git_memhtml.sleep.engine.runfiles import run_file_stem
from tests.sleep.sleep_corpus_helpers import EMBEDDER

NIGHT_DATE = "2026-03-11"
"""The date of every wire night."""


@dataclass(frozen=True)
class WireNight:
    """What one night did: its report, the requests the server saw and the run's rails log lines."""

    repo: GitRepo
    report: RunReport
    requests: tuple[ScriptedRequest, ...]
    rails: tuple[dict[str, object], ...]

    def line(self, phase: str) -> PhaseReport:
        """The report line of ``phase``."""
        (found,) = [p for p in self.report.phases if p.phase == phase]
        return found

    def refused(self, rail: str) -> list[dict[str, object]]:
        """The payloads the rails log holds for ``rail``."""
        return [r["payload"] for r in self.rails if r["rail"] == rail]  # type: ignore[misc]

    def file(self, path: str) -> str | None:
        """``path`` as the run's tip holds it, or ``None``."""
        blob = self.repo.read_path_at(self.report.head_sha, path)
        return None if blob is None else blob.decode("utf-8")

    def changed(self) -> list[str]:
        """The paths the run changed, sorted."""
        return sorted(self.repo.changed_paths(self.report.base_sha, self.report.head_sha))

    def sent(self, schema: str) -> list[ScriptedRequest]:
        """The requests of ``schema`` the server answered."""
        return [r for r in self.requests if r.schema_name == schema]


def wire_night(repo: GitRepo, phases: Sequence[str], script: Script, *, dialect: Dialect = "openai",
               date: str = NIGHT_DATE, db: IndexDB | None = None) -> WireNight:
    """Run one night of ``phases`` on ``repo`` with the scripted server playing ``script`` over ``dialect``.

    ``db`` is the checkout's index to run with (a test that indexed transcripts into it first); by default one is
    opened for the night and closed after it."""
    own = db is None
    index = IndexDB.for_repo(repo) if db is None else db
    server = ScriptedModelServer(script).start()
    try:
        report = run_sleep(repo, index, date=date, phases=tuple(phases), embedder=EMBEDDER,
                           clock=lambda: f"{date}T09:00:00Z",
                           model=ModelBinding(server.client(dialect, timeout=10.0)))
    finally:
        if own:
            index.close()
        server.close()
    log = Path(repo.common_dir) / "memhtml" / "runs" / f"{run_file_stem(report.run_id)}.rails.jsonl"
    rails = tuple(json.loads(x) for x in log.read_text().splitlines()) if log.exists() else ()
    return WireNight(repo, report, tuple(server.requests), rails)
