"""What the timing harnesses under bench/ share (bench/README.md): a call's wall time, a block's wall and CPU time,
the nearest-rank percentile, the scratch folder a run works in, its JSON figures and machine figures, loading a
script beside this one, and a LoCoMo conversation imported into a fresh indexed repository.

A script imports it after putting its own folder first on ``sys.path`` (``sys.path.insert(0, BENCH_DIR)``, as the
scripts already do for ``synth``): bench/ is a folder of scripts, not a package.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import platform
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from types import ModuleType
from typing import Any

from git_memhtml.cli.common import init_memory
from git_memhtml.embed.base import Embedder
from git_memhtml.embed.registry import get_embedder
from git_memhtml.errors import MemhtmlError, UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.index.indexer import update
from git_memhtml.index.memories import hash_holders
from git_memhtml.store.ops import parse_op_stream
from git_memhtml.store.writer import BatchResult, apply_batch

BENCH_DIR = Path(__file__).resolve().parent


def ms(fn: Callable[..., object], *args: object, **kwargs: object) -> float:
    """Wall milliseconds of one call ``fn(*args, **kwargs)`` (``time.perf_counter``)."""
    start = time.perf_counter()
    fn(*args, **kwargs)
    return (time.perf_counter() - start) * 1000


class Stopwatch:
    """Seconds since it was made: :meth:`wall` (``time.perf_counter``) and :meth:`cpu` (``time.process_time``, user
    + system CPU of this process, what a shared machine's load does not inflate)."""

    def __init__(self) -> None:
        self.wall_start = time.perf_counter()
        self.cpu_start = time.process_time()

    def wall(self) -> float:
        """Wall seconds since the start."""
        return time.perf_counter() - self.wall_start

    def cpu(self) -> float:
        """CPU seconds of this process since the start."""
        return time.process_time() - self.cpu_start


def loadavg() -> list[float]:
    """The 1/5/15-minute load averages, rounded to 0.01 (``[]`` where the system has none): a loaded machine
    inflates wall times, not CPU times, so every figure is reported with them."""
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def pct(values: Sequence[float], q: float) -> float:
    """The ``q``-quantile (0..1) of ``values`` by nearest rank (the ``⌈q·n⌉``-th smallest), in their unit.

    Raises:
        IndexError: ``values`` is empty.
    """
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


@contextmanager
def scratch(workdir: Path | None, prefix: str) -> Iterator[Path]:
    """The folder a run works in: ``workdir`` (created; kept afterwards), or a new temporary folder named
    ``prefix…`` that is removed when the block ends, however it ends.

    Raises:
        UsageError: ``workdir`` exists and is not empty (a run never mixes its files with others').
    """
    if workdir is not None:
        if workdir.exists() and any(workdir.iterdir()):
            raise UsageError(f"--workdir {workdir} is not empty", hint="give a new or empty folder")
        workdir.mkdir(parents=True, exist_ok=True)
        yield workdir
        return
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def failure(exc: MemhtmlError) -> str:
    """The ``error:`` line of ``exc`` and its ``hint:`` line when it has one (what a script prints on stderr)."""
    return f"error: {exc.message}" + (f"\nhint: {exc.hint}" if exc.hint else "")


def write_json(path: Path | None, result: object) -> None:
    """Write ``result`` as indented UTF-8 JSON with a final newline to ``path`` (nothing when ``None``)."""
    if path is not None:
        path.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load_script(name: str) -> ModuleType:
    """Import ``bench/<name>.py`` (a script beside this one, not a package) by path, once per process: the module
    is ``sys.modules["bench_<name>"]``.

    Raises:
        UsageError: the script is not there.
    """
    path = BENCH_DIR / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path) if path.is_file() else None
    if spec is None or spec.loader is None:
        raise UsageError(f"cannot load {path}", hint="run from a checkout of the project")
    module = sys.modules.get(spec.name)
    if module is None:
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[spec.name]  # a half-run script is never handed out
            raise
    return module


class RunFigures:
    """The machine figures of a whole run, started when made: :meth:`figures` gives ``nproc``, ``python``,
    ``loadavg_before`` / ``loadavg_after`` (:func:`loadavg`) and ``wall_s`` (wall seconds since the start, 0.001)."""

    def __init__(self) -> None:
        self.load_before = loadavg()
        self.watch = Stopwatch()

    def figures(self) -> dict[str, Any]:
        """The figures so far, for a result's ``config``."""
        return {"nproc": os.cpu_count(), "python": platform.python_version(), "loadavg_before": self.load_before,
                "loadavg_after": loadavg(), "wall_s": round(self.watch.wall(), 3)}


def conversation_ids(locomo: ModuleType, data: Sequence[Mapping[str, Any]], conversation: str) -> list[str]:
    """The ``sample_id`` of every item of ``data`` for ``all``, else of the one ``conversation`` names
    (``bench/locomo.py`` ``find_conversation``, which raises ``UsageError`` for an unknown one)."""
    if conversation == "all":
        return [str(item["sample_id"]) for item in data]
    return [str(locomo.find_conversation(data, conversation)["sample_id"])]


@dataclass(frozen=True)
class Imported:
    """A fresh memory repository holding one import, indexed: its repo, open index, embedder and the apply result."""

    repo: GitRepo
    db: IndexDB
    embedder: Embedder | None
    result: BatchResult


@contextmanager
def imported_memory(root: Path, ops_jsonl: str, *, sample_id: str, embed: str, now: str) -> Iterator[Imported]:
    """Make a memory repository at ``root``, index it, apply ``ops_jsonl`` (the op stream of LoCoMo conversation
    ``sample_id``) at ``now``, index again; the index is closed when the block ends, however it ends.

    Raises:
        UsageError: the import refused an op (or wrote nothing), or ``embed`` is unknown.
    """
    init_memory(root)
    repo = GitRepo.discover(root)
    embedder = get_embedder(embed)
    db = IndexDB.for_repo(repo)
    try:
        update(repo, db, embedder, now=now)
        result = apply_batch(repo, parse_op_stream(ops_jsonl, source=f"locomo {sample_id}"), now=now,
                             dedupe_view=partial(hash_holders, db))
        if not result.ok:
            bad = next((r for r in result.results if r.code), None)
            raise UsageError(f"import of {sample_id} refused: {bad.error if bad else 'nothing written'}",
                             hint="check bench/locomo.py output with `git memhtml apply`")
        update(repo, db, embedder, now=now)
        yield Imported(repo, db, embedder, result)
    finally:
        db.close()
