"""Start-up imports no command module (issue 12 item 4): ``--version`` and the group's ``-h`` load none of the heavy
libraries, and the lazy table says exactly what the commands say."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import click
import pytest

from git_memhtml.cli import lazy
from git_memhtml.cli.index_cmds import index_group
from git_memhtml.cli.main import COMMAND_TABLE, cli
from tests.cli import import_trace
from tests.cli.import_trace import trace_imports

HEAVY = ("numpy", "pygit2", "apsw", "html5lib", "selectolax", "wordllama", "httpx", "pydantic", "sqlite_vec")
"""Top-level packages start-up must not import (the issue's list, plus the vector extension)."""


CRASH_ONLY = ("tempfile", "shutil", "bz2", "lzma", "importlib.metadata", "pkg_resources", "git_memhtml.config")
"""Stdlib modules only a crash report needs (``cli.main._crash_report``), the distribution metadata a console
script may reach for, and the settings: start-up loads none of them (issue 12, ``--version`` ≤ 150 ms from a wheel)."""


def _top_level_crash_only_imports(module: str) -> list[str]:
    """The :data:`CRASH_ONLY` modules that ``module`` imports at module level (not inside a function)."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name in CRASH_ONLY]
        elif isinstance(node, ast.ImportFrom) and node.module in CRASH_ONLY:
            found.append(node.module)
    return found


@pytest.mark.parametrize("args", [["--version"], ["-h"], ["--help"], ["-q", "--version"]])
def test_start_up_imports_no_heavy_library_and_no_command(args: list[str], tmp_path: Path) -> None:
    trace = trace_imports(args, tmp_path)
    assert trace.proc.returncode == 0, trace.proc.stderr[-2000:]
    ours = import_trace.ours(trace.loads)
    assert "git_memhtml.cli.main" in ours  # the measurement sees our own imports
    heavy = sorted(m for m in trace.modules if m.split(".")[0] in HEAVY)  # whoever asked: none at all
    assert heavy == [], import_trace.describe(trace.loads, heavy)
    commands = sorted(m for m in trace.modules if m.endswith(("_cmds", "_cmd")) or m == "git_memhtml.cli.demo")
    assert commands == []
    crash_only = sorted(m for m in ours if m in CRASH_ONLY)  # what we import; click's help printing is its own
    assert crash_only == [], import_trace.describe(trace.loads, crash_only)
    # ``site`` may have loaded some of them already (a .pth file), which hides a later import from the trace:
    # so also read the module-level imports of every module of ours that start-up loaded.
    offenders = {m: _top_level_crash_only_imports(m) for m in ours if m.startswith("git_memhtml")}
    assert {m: found for m, found in offenders.items() if found} == {}
    if args[-1] in ("-h", "--help"):
        for name, row in COMMAND_TABLE.items():
            assert (f"  {name} " in trace.proc.stdout) is not row.hidden, name


def test_help_lists_every_visible_command_with_its_own_summary(tmp_path: Path) -> None:
    """The lazy listing of ``-h`` is byte-for-byte the listing click makes from the imported commands."""
    lazy_help = subprocess.run([sys.executable, "-m", "git_memhtml", "-h"], capture_output=True, text=True,
                               cwd=tmp_path, check=True).stdout
    eager = click.Context(cli, info_name="git memhtml")
    formatter = eager.make_formatter()
    click.Group.format_commands(cli, eager, formatter)  # click's own listing: imports every command
    assert formatter.getvalue() in lazy_help


GROUPS: list[tuple[str, lazy.LazyGroup]] = [("git memhtml", cli), ("git memhtml index", index_group)]


@pytest.mark.parametrize(("where", "group"), GROUPS, ids=[g[0] for g in GROUPS])
def test_the_table_matches_the_commands(where: str, group: lazy.LazyGroup) -> None:
    """Each row imports the command of its name, with the same hidden flag and the same summary at every width."""
    assert isinstance(group, lazy.LazyGroup) and group.lazy, where
    for name, row in group.lazy.items():
        real = lazy.load_command(name, row)
        stand_in = click.Command(name, help=row.summary, hidden=row.hidden)
        assert real.hidden is row.hidden, name
        for limit in range(10, 240):
            assert stand_in.get_short_help_str(limit) == real.get_short_help_str(limit), (name, limit)


def test_every_command_is_reachable() -> None:
    """A command defined in a command module but in no table and no group would be unreachable: refuse it."""
    import importlib
    import pkgutil

    import git_memhtml.cli

    rows = [*COMMAND_TABLE.items(), *index_group.lazy.items()]
    modules = [importlib.import_module(f"git_memhtml.cli.{info.name}")
               for info in pkgutil.iter_modules(git_memhtml.cli.__path__)]
    assert len(modules) > 10
    defined = {id(v): f"{m.__name__}.{k}" for m in modules for k, v in vars(m).items() if isinstance(v, click.Command)}
    reachable = {id(cli), *(id(lazy.load_command(name, row)) for name, row in rows)}
    for m in modules:
        for v in vars(m).values():
            if isinstance(v, click.Group):
                reachable |= {id(c) for c in v.commands.values()}
    assert sorted(name for key, name in defined.items() if key not in reachable) == []


def test_a_bad_row_is_refused() -> None:
    with pytest.raises(TypeError, match="is not the click command 'nope'"):
        lazy.load_command("nope", lazy.LazyCommand("git_memhtml.cli.man_cmds:man_cmd", "x"))
    with pytest.raises(TypeError, match="is not the click command"):
        lazy.load_command("x", lazy.LazyCommand("git_memhtml.cli.lazy:LazyCommand", "x"))
    with pytest.raises(TypeError, match=r"is outside git_memhtml\.cli\."):
        lazy.load_command("x", lazy.LazyCommand("os:system", "x"))


def test_unknown_command_is_still_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "git_memhtml", "serach"], capture_output=True, text=True,
                          cwd=tmp_path, check=False)
    assert proc.returncode == 2 and "serach" in proc.stderr


ATTRIBUTION: list[tuple[str, list[import_trace.Load], list[str]]] = [
    ("our module imports it", [import_trace.Load("git_memhtml", "__main__", True),
                               import_trace.Load("shutil", "git_memhtml.cli.main", False)], ["git_memhtml", "shutil"]),
    ("a library we import imports it when it loads", [import_trace.Load("click", "git_memhtml.cli.main", True),
                                                      import_trace.Load("shutil", "click", True)],
     ["click", "shutil"]),
    ("a library imports it inside a function we call", [import_trace.Load("click", "git_memhtml.cli.main", True),
                                                        import_trace.Load("shutil", "click.formatting", False)],
     ["click"]),
    ("the tracer's own import is nobody's", [import_trace.Load("git_memhtml", "__main__", True),
                                             import_trace.Load("json", "__main__", True)], ["git_memhtml"]),
]
"""``(case, loads, what counts as ours)``: the rule of docs/cli.md "What the start-up rule measures"."""


@pytest.mark.parametrize(("case", "loads", "expected"), ATTRIBUTION, ids=[row[0] for row in ATTRIBUTION])
def test_start_up_counts_what_our_code_imports(case: str, loads: list[import_trace.Load], expected: list[str]) -> None:
    assert import_trace.ours(loads) == expected, case


def test_the_trace_sees_an_import_our_start_up_makes_and_leaves_click_s_help_to_click(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A real traced run: a ``sitecustomize`` planted on ``PYTHONPATH`` makes click's help formatter import a
    module it never loaded before, as click 8.5 does with ``shutil``; the trace names click as its importer, so
    the rule does not count it, while every module of ours is still counted."""
    plant = tmp_path / "plant"
    plant.mkdir()
    (plant / "memhtml_probe_mod.py").write_text("VALUE = 1\n", encoding="utf-8")
    (plant / "sitecustomize.py").write_text(
        "import click.formatting\n"
        "_init = click.formatting.HelpFormatter.__init__\n"
        "def _patched(self, *args, **kwargs):\n"
        "    import memhtml_probe_mod\n"
        "    _init(self, *args, **kwargs)\n"
        "click.formatting.HelpFormatter.__init__ = _patched\n", encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(plant))
    trace = trace_imports(["-h"], tmp_path)
    assert trace.proc.returncode == 0, trace.proc.stderr[-2000:]
    [load] = [load for load in trace.loads if load.module == "memhtml_probe_mod"]
    assert load.importer == "sitecustomize" and not load.body  # asked for inside click's formatter, not by us
    assert "memhtml_probe_mod" not in import_trace.ours(trace.loads)
    assert "git_memhtml.cli.lazy" in import_trace.ours(trace.loads)
