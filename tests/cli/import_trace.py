"""Which modules *our* code imports at start-up, told apart from what a library imports inside its own functions.

``-X importtime`` lists every module a process loads, whoever asked for it. Click 8.5 imports ``shutil`` (and with
it ``bz2`` and ``lzma``) inside ``HelpFormatter.__init__`` when it prints help; that is click's cost of printing,
not a module our start-up chose (docs/cli.md "What the start-up rule measures"). :func:`trace_imports` runs
``python -m git_memhtml ARGS`` with a ``sys.meta_path`` finder that records, for every module loaded for the first
time, the module whose code asked for it (the innermost frame outside importlib) and whether it asked from its
module body. :func:`ours` then keeps the imports made by a ``git_memhtml`` module, and, transitively, those made
by the module body of a module we imported: we pay for what our imports import when they load, not for what a
library imports later inside a function we call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

_TRACER = r"""
import sys
_out = open(sys.argv[1], "w", encoding="utf-8", buffering=1)
class _Trace:
    @staticmethod
    def find_spec(name, path=None, target=None):
        frame = sys._getframe(1)
        while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                     or str(frame.f_globals.get("__name__", "")).startswith("importlib")):
            frame = frame.f_back
        importer = "" if frame is None else str(frame.f_globals.get("__name__", ""))
        body = frame is not None and frame.f_code.co_name == "<module>"
        _out.write("\t".join((name, importer, "1" if body else "0")) + "\n")
        return None
sys.meta_path.insert(0, _Trace)
sys.argv = ["git_memhtml", *sys.argv[2:]]
import git_memhtml.__main__
"""
"""The traced process: only ``sys`` is imported before the finder is in place. Each record is written as it is
made, line-buffered, with the built-in ``open`` (writing imports nothing), because the CLI may leave through
``os._exit`` (docs/cli.md, fast exit) and skip any ``finally``."""


@dataclass(frozen=True)
class Load:
    """One module loaded for the first time: ``module``, the ``importer`` whose code asked for it (``"__main__"``
    for the tracer itself) and whether it asked from its module ``body`` (at import) or from inside a function."""

    module: str
    importer: str
    body: bool


@dataclass(frozen=True)
class Trace:
    """A traced run: the finished process and its :class:`Load` rows in load order."""

    proc: subprocess.CompletedProcess[str]
    loads: tuple[Load, ...]

    @property
    def modules(self) -> set[str]:
        """Every module loaded after the tracer was in place, whoever asked for it."""
        return {load.module for load in self.loads}


def ours(loads: Iterable[Load]) -> list[str]:
    """The modules our start-up imports, in load order: asked for by a ``git_memhtml`` module, or by the module body
    of a module already counted as ours."""
    counted: list[str] = []
    seen: set[str] = set()
    for load in loads:
        mine = "git_memhtml" in (load.module.split(".")[0], load.importer.split(".")[0])
        if (mine or (load.body and load.importer in seen)) and load.module not in seen:
            seen.add(load.module)
            counted.append(load.module)
    return counted


def trace_imports(args: Sequence[str], cwd: Path) -> Trace:
    """Run ``python -m git_memhtml ARGS`` under the tracer in ``cwd``; the records go to a file beside it."""
    out = cwd / "import-trace.tsv"
    proc = subprocess.run([sys.executable, "-c", _TRACER, str(out), *args], capture_output=True, text=True,
                          cwd=cwd, check=False)
    rows = out.read_text(encoding="utf-8").splitlines() if out.exists() else []
    loads = tuple(Load(name, importer, body == "1") for name, importer, body in (row.split("\t") for row in rows))
    return Trace(proc, loads)


def describe(loads: Iterable[Load], names: Iterable[str]) -> str:
    """Who asked for each of ``names``: a failure message that names the importer, as JSON."""
    wanted = set(names)
    return json.dumps([[load.module, load.importer, load.body] for load in loads if load.module in wanted])
