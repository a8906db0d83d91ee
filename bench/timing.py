"""What the timing harnesses under bench/ share (bench/README.md): a call's wall time, a block's wall and CPU time,
the nearest-rank percentile, the scratch folder a run works in, its JSON figures, and loading a script beside this
one.

A script imports it after putting its own folder first on ``sys.path`` (``sys.path.insert(0, BENCH_DIR)``, as the
scripts already do for ``synth``): bench/ is a folder of scripts, not a package.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from git_memhtml.errors import MemhtmlError, UsageError

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
