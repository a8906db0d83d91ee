"""Each architecture rule catches a planted violation, in every spelling listed, and passes a clean snippet.

The rules are the pure functions of ``archrules``; a planted violation is a one-file source map
``{package-relative path: source}``. One row per spelling, so a new spelling joins by adding a row.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.architecture import archrules as rules


def _one(path: str, source: str) -> dict[str, str]:
    return {path: textwrap.dedent(source)}


# ---- terminal writes ----

TERMINAL_PLANTED: list[tuple[str, str]] = [
    ("print", "print('x')\n"),
    ("print with file", "import sys\nprint('x', file=sys.stderr)\n"),
    ("builtins.print", "import builtins\nbuiltins.print('x')\n"),
    ("builtins alias", "import builtins as b\nb.print('x')\n"),
    ("from builtins import print", "from builtins import print as say\nsay('x')\n"),
    ("__builtins__", "__builtins__.print('x')\n"),
    ("sys.stdout.write", "import sys\nsys.stdout.write('x')\n"),
    ("sys.stderr alias", "import sys as system\nsystem.stderr.write('x')\n"),
    ("from sys import stdout", "from sys import stdout\nstdout.write('x')\n"),
    ("from sys import stderr", "from sys import stderr as err\n"),
    ("from sys import __stdout__", "from sys import __stdout__\n"),
    ("sys.__stdout__", "import sys\nsys.__stdout__.write('x')\n"),
    ("getattr(sys, 'stdout')", "import sys\ngetattr(sys, 'stdout').write('x')\n"),
    ("vars(sys)", "import sys\nvars(sys)['stderr'].write('x')\n"),
    ("sys.__dict__", "import sys\nsys.__dict__['stdout'].write('x')\n"),
    ("sys.modules", "import sys\nsys.modules['sys'].stdout.write('x')\n"),
    ("os.write(1)", "import os\nos.write(1, b'x')\n"),
    ("os.write(2) from-import", "from os import write\nwrite(2, b'x')\n"),
    ("open(1, 'w')", "open(1, 'w').write('x')\n"),
    ("open(file=2)", "open(file=2, mode='w')\n"),
    ("io.open(1)", "import io\nio.open(1, 'w')\n"),
    ("os.fdopen(1)", "import os\nos.fdopen(1, 'w')\n"),
    ("/dev/stdout", "with open('/dev/stdout', 'w') as fh:\n    fh.write('x')\n"),
    ("/dev/tty via pathlib", "from pathlib import Path\nPath('/dev/tty').write_text('x')\n"),
    ("click.echo", "import click\nclick.echo('x')\n"),
    ("from click import secho", "from click import secho\nsecho('x')\n"),
    ("pprint", "from pprint import pprint\npprint({})\n"),
    ("traceback.print_exc", "import traceback\ntraceback.print_exc()\n"),
    ("warnings.warn", "import warnings\nwarnings.warn('x')\n"),
    ("logging", "import logging\nlogging.getLogger(__name__).warning('x')\n"),
    ("input prompt", "answer = input('continue? ')\n"),
    ("inside a function", "def f() -> None:\n    import sys\n    sys.stdout.flush()\n"),
    ("importlib", "import importlib\nimportlib.import_module('pprint').pprint(1)\n"),
    ("device name joined at run time", "open('/dev/' + 'stdout', 'w')\n"),
    ("os.sendfile(1)", "import os\nos.sendfile(1, 3, 0, 10)\n"),
]


@pytest.mark.parametrize(("label", "source"), TERMINAL_PLANTED, ids=[r[0] for r in TERMINAL_PLANTED])
def test_terminal_rule_catches(label: str, source: str) -> None:
    assert rules.terminal_write_violations(_one("domain/planted.py", source)), label


def test_terminal_rule_passes_clean_code_and_output_py() -> None:
    clean = """
        import os
        import sys
        from git_memhtml.output import emit

        def show(text: str, input: str) -> None:
            emit(text + input)           # a parameter named like a builtin is not the builtin
            data = sys.stdin.read()      # reading is not writing
            os.write(fd_of(data), b"x")  # a descriptor that is not a literal 1 or 2
            self_print = "print"         # the word in a string

        def fd_of(data: str) -> int:
            return 3
    """
    assert rules.terminal_write_violations(_one("domain/clean.py", clean)) == []
    assert rules.terminal_write_violations(_one("output.py", "import sys\nsys.stdout.write('x')\n")) == []


# ---- subprocess ----

SUBPROCESS_PLANTED: list[tuple[str, str]] = [
    ("import subprocess", "import subprocess\nsubprocess.run(['git'])\n"),
    ("alias", "import subprocess as sp\nsp.check_output(['git'])\n"),
    ("from subprocess import run", "from subprocess import run\nrun(['git'])\n"),
    ("os.system", "import os\nos.system('git status')\n"),
    ("os.popen", "import os\nos.popen('git status')\n"),
    ("from os import execvp", "from os import execvp\nexecvp('git', ['git'])\n"),
    ("os.posix_spawn", "import os\nos.posix_spawn('/usr/bin/git', ['git'], {})\n"),
    ("asyncio", "import asyncio\nasyncio.create_subprocess_exec('git')\n"),
    ("importlib", "import importlib\nimportlib.import_module('subprocess')\n"),
    ("__import__", "__import__('subprocess').run(['git'])\n"),
    ("getattr(os, 'system')", "import os\ngetattr(os, 'system')('ls')\n"),
    ("inside a function", "def f() -> None:\n    import subprocess\n"),
    ("TYPE_CHECKING", "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import subprocess\n"),
    ("os reached through shutil", "import shutil\nshutil.os.system('ls')\n"),
    ("exec off os through posixpath", "import posixpath\nposixpath.os.execv('/bin/sh', ['sh'])\n"),
    ("run_program outside the forge", "from git_memhtml.gitrepo.process import run_program\nrun_program(['sh'])\n"),
    ("run_program via gitrepo", "import git_memhtml.gitrepo as g\ng.run_program(['sh'])\n"),
]


@pytest.mark.parametrize(("label", "source"), SUBPROCESS_PLANTED, ids=[r[0] for r in SUBPROCESS_PLANTED])
def test_subprocess_rule_catches(label: str, source: str) -> None:
    assert rules.subprocess_violations(_one("hooks/planted.py", source)), label


def test_subprocess_rule_passes_clean_code_and_its_places() -> None:
    clean = "import os\nfrom git_memhtml.gitrepo.repo import GitRepo\nos.path.join('a', 'b')\nsystem = 'posix'\n"
    assert rules.subprocess_violations(_one("hooks/clean.py", clean)) == []
    spawn = "import subprocess\nsubprocess.run(['gh'])\n"
    assert rules.subprocess_violations(_one("gitrepo/anything.py", spawn)) == []
    assert rules.subprocess_violations(_one("sleep/landing/forge.py", spawn)) != []  # it asks gitrepo to run gh
    runner = "from git_memhtml.gitrepo.process import run_program\nrun_program(['gh'])\n"
    assert rules.subprocess_violations(_one("sleep/landing/forge.py", runner)) == []
    assert rules.subprocess_violations(_one("sleep/landing/rail.py", runner)) != []


# ---- environment ----

ENVIRON_PLANTED: list[tuple[str, str]] = [
    ("os.environ", "import os\nos.environ['HOME']\n"),
    ("os.environ.get", "import os\nos.environ.get('HOME')\n"),
    ("from os import environ", "from os import environ\n"),
    ("alias", "from os import environ as env\nenv.get('X')\n"),
    ("os alias", "import os as o\no.environ.copy()\n"),
    ("os.getenv", "import os\nos.getenv('HOME')\n"),
    ("os.putenv", "import os\nos.putenv('A', 'b')\n"),
    ("os.environb", "import os\nos.environb\n"),
    ("Path.home", "from pathlib import Path\nPath.home()\n"),
    ("expanduser", "import os.path\nos.path.expanduser('~')\n"),
    ("getattr", "import os\ngetattr(os, 'environ')\n"),
    ("dict(os.environ)", "import os\ndef f() -> dict[str, str]:\n    return dict(os.environ)\n"),
    ("os reached through shutil", "import shutil\nshutil.os.environ['HOME']\n"),
    ("getenv off another module's os", "import posixpath\nposixpath.os.getenv('HOME')\n"),
    ("config.live_env laundering", "from git_memhtml.config import live_env\nlive_env()['HOME']\n"),
    ("config module live_env", "from git_memhtml import config\nconfig.live_env().get('HOME')\n"),
]


@pytest.mark.parametrize(("label", "source"), ENVIRON_PLANTED, ids=[r[0] for r in ENVIRON_PLANTED])
def test_environ_rule_catches(label: str, source: str) -> None:
    assert rules.environ_violations(_one("gitrepo/planted.py", source)), label


def test_environ_rule_passes_clean_code_and_its_places() -> None:
    clean = """
        from collections.abc import Mapping

        def home(env: Mapping[str, str]) -> str:
            return env.get("HOME", "")   # the environment handed in by the CLI
    """
    assert rules.environ_violations(_one("gitrepo/clean.py", clean)) == []
    reads = "import os\nos.environ.get('MEMHTML_NOW')\n"
    assert rules.environ_violations(_one("cli/app.py", reads)) == []
    assert rules.environ_violations(_one("config.py", reads)) == []
    assert rules.environ_violations(_one("configs.py", reads)) != []
    default = "from git_memhtml.config import live_env\nENV = live_env()\n"
    assert rules.environ_violations(_one("gitrepo/repo.py", default)) == []  # the library default of GitRepo
    assert rules.environ_violations(_one("gitrepo/lock.py", default)) != []
    assert rules.environ_violations(_one("store/x.py", "def f(repo: object) -> object:\n    return repo.env\n")) == []


# ---- SQL literals ----

SQL_PLANTED: list[tuple[str, str]] = [
    ("select", "db.query('SELECT path FROM files')\n"),
    ("lower-case select at the start", "db.query('select path from files where archived = 0')\n"),
    ("insert", "db.execute('INSERT INTO state.access (path) VALUES (?)', (p,))\n"),
    ("insert or replace", "db.execute('INSERT OR REPLACE INTO state.access VALUES (?)')\n"),
    ("update", "db.execute('UPDATE state.sleep_runs SET status = ? WHERE run_id = ?')\n"),
    ("delete", "db.execute('DELETE FROM edges WHERE derived = 1')\n"),
    ("create table", "db.execute('CREATE TABLE IF NOT EXISTS t (a)')\n"),
    ("create index", "SCHEMA = 'CREATE UNIQUE INDEX i ON t (a)'\n"),
    ("create trigger", "db.execute('CREATE TRIGGER t AFTER INSERT ON x BEGIN SELECT 1; END')\n"),
    ("pragma", "db.execute(f'PRAGMA busy_timeout = {ms}')\n"),
    ("with cte", "db.query('WITH recent AS (SELECT 1) SELECT * FROM recent')\n"),
    ("f-string", "db.query(f'SELECT {cols} FROM state.sleep_runs WHERE run_id = ?')\n"),
    ("concatenation", "db.query('SELECT ' + cols + ' FROM files')\n"),
    ("implicit concatenation", "db.query(\n    'SELECT path '\n    'FROM files'\n)\n"),
    ("percent format", "db.query('DELETE FROM %s' % table)\n"),
    ("str.format", "db.query('SELECT {} FROM files'.format(cols))\n"),
    ("in the middle", "MESSAGE = 'run: SELECT count(*) FROM files'\n"),
    ("in a function", "def f(db: object) -> None:\n    q = 'SELECT 1 FROM files'\n"),
    ("first half of a split statement", "HEAD = 'SELECT count(*)'\nTAIL = ' FROM files WHERE 1'\n"),
    ("select without from", "Q = 'SELECT count(*) AS n'\n"),
    ("begin immediate", "db.execute('BEGIN IMMEDIATE')\n"),
    ("vacuum", "db.execute('VACUUM')\n"),
    ("lower case after a comment", "Q = '-- how many\\nselect count(*) from files'\n"),
    ("capitals after a comment", "Q = '-- how many\\nSELECT 1'\n"),
]


@pytest.mark.parametrize(("label", "source"), SQL_PLANTED, ids=[r[0] for r in SQL_PLANTED])
def test_sql_rule_catches(label: str, source: str) -> None:
    assert rules.sql_literal_violations(_one("sleep/phases/planted.py", source)), label


def test_sql_rule_passes_prose_docstrings_and_index() -> None:
    prose = '''
        """Select the memories from the index that a person should update; set aside the rest.

        The phase reads rows SELECT-ed FROM the index by ``git_memhtml.index`` and deletes from the plan.
        """

        HELP = "Update the memory and set its confidence; delete from the list what is wrong."
        TITLE = "With care as (a rule) we select one memory from each frame"
        PRAGMA_NOTE = "busy timeout, see docs/index.md"

        def f() -> str:
            """SELECT path FROM files is how the index answers (a docstring is prose)."""
            return "select one memory from the list, then press enter."
    '''
    assert rules.sql_literal_violations(_one("sleep/phases/clean.py", prose)) == []
    assert rules.sql_literal_violations(_one("index/anything.py", "Q = 'SELECT 1 FROM files'\n")) == []


# ---- imports: edges, layers, pure rooms, gateways, cycles, choke points ----


def test_import_edges_see_every_spelling() -> None:
    sources = {
        "store/a.py": "from git_memhtml.sleep.engine import run\n",
        "store/b.py": "def f() -> None:\n    import git_memhtml.hooks.runner\n",
        "store/c.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from git_memhtml.cli.app import App\n",
        "store/d.py": "import importlib\nimportlib.import_module('git_memhtml.doctor')\n",
        "store/e.py": "from ..eval import corpus\n",
        "store/__init__.py": "from . import a\nfrom .. import output\n",
        "sleep/engine/run.py": "", "hooks/runner.py": "", "cli/app.py": "", "doctor.py": "",
        "eval/corpus.py": "", "output.py": "",
    }
    edges = rules.import_edges(sources)
    assert set(edges) == {("store", "sleep"), ("store", "hooks"), ("store", "cli"), ("store", "doctor"),
                          ("store", "eval"), ("store", "output")}
    assert "(TYPE_CHECKING)" in edges[("store", "cli")][0]
    assert edges[("store", "eval")] == ["store/e.py:1 imports git_memhtml.eval.corpus"]


def test_import_edges_clean_snippet_has_none() -> None:
    sources = {"store/a.py": "import os\nfrom . import b\nfrom .b import x\n", "store/b.py": "x = 1\n"}
    assert rules.import_edges(sources) == {}


LAYER_PLANTED: list[tuple[str, dict[str, str]]] = [
    ("store imports sleep", {"store/a.py": "from git_memhtml.sleep.engine.run import run_sleep\n"}),
    ("domain imports store (pure room)", {"domain/a.py": "import git_memhtml.store.writer\n"}),
    ("document imports pathnames (pure room)", {"document/a.py": "from git_memhtml import pathnames\n"}),
    ("same layer: gitrepo imports tree", {"gitrepo/a.py": "from git_memhtml.tree.layout import PARA\n"}),
    ("core imports the CLI lazily", {"index/a.py": "def f() -> None:\n    from git_memhtml.cli import main\n"}),
    ("TYPE_CHECKING up the table", {"tree/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                                                 "    from git_memhtml.index.db import IndexDB\n"}),
    ("relative import up", {"output.py": "from .sleep import engine\n"}),
    ("a room in no layer", {"newroom/a.py": "from git_memhtml import errors\n"}),
    ("attribute chain off the package", {"domain/a.py": "import git_memhtml.errors\n"
                                                        "git_memhtml.store.writer.apply_batch()\n",
                                         "store/writer.py": ""}),
    ("sys.modules lookup", {"document/a.py": "import sys\nsys.modules['git_memhtml.index.db'].open_index()\n"}),
]


@pytest.mark.parametrize(("label", "sources"), LAYER_PLANTED, ids=[r[0] for r in LAYER_PLANTED])
def test_layer_rule_catches(label: str, sources: dict[str, str]) -> None:
    found = rules.layer_violations(rules.import_edges(sources), rules.LAYERS, rules.ONLY)
    assert found, label
    assert all(f.split(":")[0] in sources for f in found)


def test_layer_rule_passes_downward_imports() -> None:
    sources = {
        "cli/a.py": "from git_memhtml.sleep.engine.run import run_sleep\nfrom git_memhtml import __version__\n",
        "sleep/a.py": "from git_memhtml.store.writer import write\nfrom git_memhtml.errors import MemhtmlError\n",
        "domain/a.py": "from git_memhtml.errors import MemhtmlError\nfrom git_memhtml.domain import rrf\n",
        "__main__.py": "from git_memhtml.cli.main import main\n",
    }
    assert rules.layer_violations(rules.import_edges(sources), rules.LAYERS, rules.ONLY) == []


def test_sleep_sub_layers_catch_engine_importing_phases() -> None:
    planted = {"sleep/engine/run.py": "from git_memhtml.sleep.phases import PHASE_BODIES\n",
               "sleep/phases/__init__.py": "from git_memhtml.sleep.engine.contract import SLEEP_PHASES\n"}
    edges = rules.import_edges(planted, "git_memhtml.sleep")
    assert rules.layer_violations(edges, rules.SLEEP_LAYERS) == [
        "sleep/engine/run.py:1 imports git_memhtml.sleep.phases: engine (layer 0) may not import phases (layer 3)"]
    assert rules.cycles(edges) == [("engine", "phases")]
    clean = {"sleep/__init__.py": "from git_memhtml.sleep import phases\n",
             "sleep/landing/a.py": "from git_memhtml.sleep.presentation import review\n",
             "sleep/presentation/b.py": "from git_memhtml.sleep.probes import verdict\n"}
    clean_edges = rules.import_edges(clean, "git_memhtml.sleep")
    assert rules.layer_violations(clean_edges, rules.SLEEP_LAYERS) == [] == rules.cycles(clean_edges)


def test_gateway_rule() -> None:
    bypass = {"hooks/a.py": "from git_memhtml.sleep.engine.run import run_sleep\n",
              "hooks/b.py": "def f() -> None:\n    import git_memhtml.sleep.landing.merge\n"}
    assert len(rules.gateway_violations(bypass, rules.GATEWAYS)) == 2
    through = {"hooks/a.py": "from git_memhtml.sleep.landing.reconcile import reconcile_landed_runs\n",
               "hooks/b.py": "from git_memhtml.sleep.landing import reconcile\n",
               "sleep/landing/reconcile.py": ""}
    assert rules.gateway_violations(through, rules.GATEWAYS) == []


CYCLES: list[tuple[str, list[tuple[str, str]], list[tuple[str, ...]]]] = [
    ("two rooms", [("a", "b"), ("b", "a")], [("a", "b")]),
    ("three rooms", [("a", "b"), ("b", "c"), ("c", "a"), ("c", "d")], [("a", "b", "c")]),
    ("two separate cycles", [("a", "b"), ("b", "a"), ("x", "y"), ("y", "x"), ("a", "x")], [("a", "b"), ("x", "y")]),
    ("a chain is no cycle", [("a", "b"), ("b", "c"), ("a", "c")], []),
    ("no edges", [], []),
]


@pytest.mark.parametrize(("label", "edges", "expected"), CYCLES, ids=[r[0] for r in CYCLES])
def test_cycles(label: str, edges: list[tuple[str, str]], expected: list[tuple[str, ...]]) -> None:
    assert rules.cycles(edges) == expected, label


def test_cycles_found_from_source() -> None:
    sources = {"store/a.py": "from git_memhtml.sleep import x\n", "sleep/x.py": "import git_memhtml.store.a\n"}
    assert rules.cycles(rules.import_edges(sources)) == [("sleep", "store")]


CHOKE_PLANTED: list[tuple[str, str, str]] = [
    ("pygit2 outside gitrepo", "store/a.py", "import pygit2\n"),
    ("pygit2 submodule", "sleep/a.py", "from pygit2.enums import MergeAnalysis\n"),
    ("apsw outside db.py", "index/write.py", "import apsw\n"),
    ("sqlite_vec lazily", "index/retrieval.py", "def f() -> None:\n    import sqlite_vec\n"),
    ("sqlite_vec beside the connection", "index/db.py", "import sqlite_vec\n"),
    ("httpx outside transport.py", "embed/registry.py", "import httpx\n"),
    ("httpx in a dialect", "llm/openai.py", "import httpx\n"),
    ("click in the core", "store/a.py", "import click\n"),
    ("click through importlib", "doctor.py", "import importlib\nimportlib.import_module('click')\n"),
    ("html5lib outside document", "index/a.py", "from html5lib import HTMLParser\n"),
    ("sqlite3 anywhere but db.py", "store/a.py", "import sqlite3\n"),
]


@pytest.mark.parametrize(("label", "path", "source"), CHOKE_PLANTED, ids=[r[0] for r in CHOKE_PLANTED])
def test_choke_point_rule_catches(label: str, path: str, source: str) -> None:
    assert rules.choke_point_violations({path: source}, rules.CHOKE_POINTS), label


def test_choke_point_rule_passes_the_choke_points() -> None:
    sources = {"gitrepo/new.py": "import pygit2\n", "index/db.py": "import apsw\n",
               "index/connection.py": "import apsw\nimport sqlite_vec\n",
               "transport.py": "import httpx\n", "cli/x.py": "import click\n", "document/p.py": "import html5lib\n"}
    assert rules.choke_point_violations(sources, rules.CHOKE_POINTS) == []


# ---- hostile spellings found while hardening ----

HOSTILE: list[tuple[str, str, str]] = [
    ("terminal", "a parameter elsewhere does not hide print",
     "def f(print: object) -> None:\n    pass\n\nprint('x')\n"),
    ("terminal", "a class attribute does not hide print in a method",
     "class A:\n    print = None\n\n    def f(self) -> None:\n        print('x')\n"),
    ("terminal", "module assigned to a name", "import sys\nout = sys\nout.stdout.write('x')\n"),
    ("terminal", "star import", "from sys import *\nstdout.write('x')\n"),
    ("terminal", "os.write(True, …)", "import os\nos.write(True, b'x')\n"),
    ("terminal", "os.dup(1)", "import os\nos.fdopen(os.dup(1), 'w')\n"),
    ("terminal", "builtins.__dict__", "import builtins\nbuiltins.__dict__['print']('x')\n"),
    ("terminal", "importlib.__import__", "import importlib\nimportlib.__import__('sys').stdout.write('x')\n"),
    ("environ", "star import", "from os import *\ngetenv('HOME')\n"),
    ("environ", "os module assigned", "import os\nsystem_module = os\nsystem_module.environ\n"),
    ("subprocess", "star import", "from os import *\nsystem('ls')\n"),
    ("subprocess", "sys.modules", "import sys\nsys.modules['subprocess'].run(['ls'])\n"),
    ("sql", "bytes literal", "db.execute(b'DELETE FROM edges')\n"),
    ("sql", "joined words", "db.query(' '.join(['SELECT', 'path', 'FROM', 'files']))\n"),
    ("sql", "in textwrap.dedent", "import textwrap\nQ = textwrap.dedent('''\n    SELECT path\n    FROM files\n''')\n"),
]

_CHECKS = {
    "terminal": rules.terminal_write_violations,
    "environ": rules.environ_violations,
    "subprocess": rules.subprocess_violations,
    "sql": rules.sql_literal_violations,
}


@pytest.mark.parametrize(("rule", "label", "source"), HOSTILE, ids=[f"{r[0]}: {r[1]}" for r in HOSTILE])
def test_hostile_spellings_are_caught(rule: str, label: str, source: str) -> None:
    assert _CHECKS[rule]({"store/planted.py": source}), label


def test_a_local_shadow_stays_local() -> None:
    source = """
        def show(print: object, open: object) -> None:
            print("not the builtin")
            open(1, "w")

        class A:
            def input(self) -> None:
                pass
    """
    assert rules.terminal_write_violations(_one("store/clean.py", source)) == []


def test_sql_files_outside_index_are_caught(tmp_path: Path) -> None:
    (tmp_path / "index" / "migrations").mkdir(parents=True)
    (tmp_path / "index" / "migrations" / "0001_files.sql").write_text("CREATE TABLE files (path TEXT);\n")
    assert rules.sql_files_outside_index(tmp_path) == []
    (tmp_path / "sleep").mkdir()
    (tmp_path / "sleep" / "rows.sql").write_text("SELECT 1;\n")
    (tmp_path / "resources").mkdir()
    (tmp_path / "resources" / "seed.sql").write_text("INSERT INTO files VALUES ('x');\n")
    assert rules.sql_files_outside_index(tmp_path) == ["resources/seed.sql", "sleep/rows.sql"]


MODULES: list[tuple[str, str, str | None, str | None]] = [
    ("__init__.py", "git_memhtml", "__init__", None),
    ("output.py", "git_memhtml.output", "output", None),
    ("sleep/__init__.py", "git_memhtml.sleep", "sleep", "__init__"),
    ("sleep/engine/run.py", "git_memhtml.sleep.engine.run", "sleep", "engine"),
    ("sleep/phases/__init__.py", "git_memhtml.sleep.phases", "sleep", "phases"),
]


@pytest.mark.parametrize(("path", "module", "room", "sleep_room"), MODULES, ids=[r[0] for r in MODULES])
def test_module_and_room_names(path: str, module: str, room: str | None, sleep_room: str | None) -> None:
    assert rules.module_name(path) == module
    assert rules.room_of(module) == room
    assert rules.room_of(module, "git_memhtml.sleep") == sleep_room


def test_relative_imports_resolve_from_their_package() -> None:
    sources = {
        "sleep/engine/run.py": "from ..phases import report\nfrom . import contract\nfrom ...store import writer\n",
        "sleep/phases/report.py": "", "sleep/engine/contract.py": "", "store/writer.py": "",
    }
    targets = {ref.target for ref in rules.all_imports(sources)}
    assert targets == {"git_memhtml.sleep.phases.report", "git_memhtml.sleep.engine.contract",
                       "git_memhtml.store.writer"}


DYNAMIC_PLANTED: list[tuple[str, str]] = [
    ("exec", "exec('import subprocess')\n"),
    ("eval", "eval('__import__(\"os\").system(\"ls\")')\n"),
    ("compile", "code = compile('print(1)', 'x', 'exec')\n"),
    ("builtins.exec", "import builtins\nbuiltins.exec('x = 1')\n"),
    ("runpy", "import runpy\nrunpy.run_path('x.py')\n"),
    ("__builtins__ by key", "__builtins__['print']('x')\n"),
    ("import_module of a joined name", "import importlib\nimportlib.import_module('git_memhtml.' + 'sleep')\n"),
    ("import_module of an f-string",
     "import importlib\nname = 'sleep'\nimportlib.import_module(f'git_memhtml.{name}')\n"),
    ("relative import_module with a package",
     "import importlib\nimportlib.import_module('.engine', 'git_memhtml.sleep')\n"),
    ("__import__ with a fromlist", "__import__('git_memhtml', fromlist=['sleep'])\n"),
    ("pkgutil.resolve_name of a name", "import pkgutil\nname = 'git_memhtml.sleep'\npkgutil.resolve_name(name)\n"),
]


@pytest.mark.parametrize(("label", "source"), DYNAMIC_PLANTED, ids=[r[0] for r in DYNAMIC_PLANTED])
def test_dynamic_code_rule_catches(label: str, source: str) -> None:
    assert rules.dynamic_code_violations(_one("store/planted.py", source)), label


EXIT_PLANTED: list[tuple[str, str]] = [
    ("sys.exit with a message", "import sys\nsys.exit('bye')\n"),
    ("raise SystemExit", "raise SystemExit('bye')\n"),
    ("exit()", "exit(1)\n"),
    ("os._exit", "import os\nos._exit(1)\n"),
    ("from sys import exit", "from sys import exit as leave\nleave(2)\n"),
]


@pytest.mark.parametrize(("label", "source"), EXIT_PLANTED, ids=[r[0] for r in EXIT_PLANTED])
def test_exit_rule_catches(label: str, source: str) -> None:
    assert rules.exit_violations(_one("store/planted.py", source)), label


def test_exit_rule_passes_the_cli_edge() -> None:
    assert rules.exit_violations(_one("cli/main.py", "import sys\nsys.exit(1)\n")) == []
    assert rules.exit_violations(_one("__main__.py", "raise SystemExit(0)\n")) == []
    assert rules.exit_violations(_one("store/clean.py", "def exit_code() -> int:\n    return 0\n")) == []


def test_dynamic_code_rule_passes_regex_compile_and_methods() -> None:
    clean = "import re\nPATTERN = re.compile('x')\n\nclass A:\n    def eval(self) -> None:\n        self.eval()\n"
    assert rules.dynamic_code_violations(_one("store/clean.py", clean)) == []
    literal = "import importlib\nimportlib.import_module('git_memhtml.sleep.phases')\n"
    assert rules.dynamic_code_violations(_one("store/clean.py", literal)) == []
    computed = "import importlib\nfor m in ('a',):\n    importlib.import_module(f'{__name__}.{m}')\n"
    assert rules.dynamic_code_violations(_one("sleep/phases/__init__.py", computed)) == []
    assert rules.dynamic_code_violations(_one("sleep/engine/run.py", computed)) != []
