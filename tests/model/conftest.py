"""Fixtures of the model acceptance matrix: one template repository per corpus (built once per module), copied per
row, and one real sleep night over it through the real HTTP client against the scripted model server."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.llm.contract import Dialect
from git_memhtml.llm.scripted import Script, ScriptedRequest
from git_memhtml.llm.scripted_server import ScriptedModelServer
from git_memhtml.sleep.engine.commit import TRAILER_PHASE
from git_memhtml.sleep.engine.env import PhaseReport
from git_memhtml.sleep.engine.run import ModelBinding, RunReport, run_sleep
from git_memhtml.sleep.engine.runfiles import run_file_stem
from tests.model.phase_cases import ROW_DATE, Builder
from tests.sleep.sleep_corpus_helpers import EMBEDDER

RUN = "<run>"
"""What the run id (and its file stem) reads as in :attr:`Night.changes`: two runs of one night differ only there."""


@dataclass(frozen=True)
class Night:
    """One sleep night of a matrix row.

    Attributes:
        report: the run's report; ``line`` the phase's line in it, ``counts`` its counts.
        changes: path → bytes (``None``: deleted) of what the phase's commits changed, the run id written ``<run>``
            in paths and contents; empty when the phase committed nothing.
        requests: the requests the server saw, in order (empty with no model).
        rails: the run's rails log lines (docs/models.md §3).
    """

    report: RunReport
    line: PhaseReport
    changes: Mapping[str, bytes | None]
    requests: tuple[ScriptedRequest, ...]
    rails: tuple[Mapping[str, object], ...]

    @property
    def counts(self) -> Mapping[str, object]:
        return self.line.counts

    def sent(self, schema: str) -> int:
        """How many requests of ``schema`` reached the server."""
        return sum(1 for r in self.requests if r.schema_name == schema)


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True).stdout.decode()


def phase_changes(repo: GitRepo, report: RunReport, phase: str) -> dict[str, bytes | None]:
    """What ``phase``'s commits of ``report`` changed (they are consecutive on the run branch), run id normalised."""
    shas = [sha for sha, values in repo.log_trailers(report.base_sha, report.head_sha, TRAILER_PHASE)
            if phase in values]
    if not shas:
        return {}
    first, last = shas[0], shas[-1]
    names = _git(repo.root, "diff", "--no-renames", "--name-status", "-z", f"{first}^", last).split("\0")
    out: dict[str, bytes | None] = {}
    for status, path in zip(names[0::2], names[1::2], strict=False):
        blob = None if status == "D" else repo.read_path_at(last, path)
        out[_normal(path, report.run_id)] = None if blob is None else _normal(blob.decode(), report.run_id).encode()
    return out


def _normal(text: str, run_id: str) -> str:
    return text.replace(run_id, RUN).replace(run_file_stem(run_id), RUN)


def run_night(template: Path, dest: Path, phase: str, phases: tuple[str, ...], script: Script | None, *,
              dialect: Dialect = "openai", timeout: float = 10.0, max_attempts: int = 4,
              max_calls: int | None = None) -> Night:
    """Copy ``template`` to ``dest`` and run one sleep night of ``phases`` on it; with ``script`` the model is the
    scripted server reached by a real :class:`HttpModelClient` of ``dialect``, else no model is bound."""
    shutil.copytree(template, dest, symlinks=True)
    repo = GitRepo.discover(dest)
    db = IndexDB.for_repo(repo)
    server = ScriptedModelServer(script) if script is not None else None
    try:
        if server is not None:
            server.start()
            binding = ModelBinding(server.client(dialect, timeout=timeout, max_attempts=max_attempts), max_calls)
        else:
            binding = ModelBinding()
        report = run_sleep(repo, db, date=ROW_DATE, phases=phases, embedder=EMBEDDER,
                           clock=lambda: f"{ROW_DATE}T09:00:00Z", model=binding)
    finally:
        db.close()
        if server is not None:
            server.close()
    (line,) = [p for p in report.phases if p.phase == phase]
    rails_path = Path(repo.common_dir) / "memhtml" / "runs" / f"{run_file_stem(report.run_id)}.rails.jsonl"
    rails = tuple(json.loads(x) for x in rails_path.read_text().splitlines()) if rails_path.exists() else ()
    return Night(report, line, phase_changes(repo, report, phase),
                 tuple(server.requests) if server is not None else (), rails)


@pytest.fixture(scope="module")
def templates(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[[Builder], Path]]:
    """``templates(build)`` → the template repo ``build`` makes, built once per module and corpus."""
    made: dict[Builder, Path] = {}

    def get(build: Builder) -> Path:
        if build not in made:
            folder = tmp_path_factory.mktemp("template")
            build(folder)
            made[build] = folder / "mem"
        return made[build]

    yield get
