"""The architecture rules as data and as pure functions over source text (issue 9 item 6, docs/architecture.md).

Shapes used throughout:

- a *source map* is ``{package-relative POSIX path: source text}``, e.g. ``{"sleep/engine/run.py": "..."}``; the
  package is ``git_memhtml`` and a path's module is ``git_memhtml.sleep.engine.run`` (``__init__.py`` names its
  package). A planted violation is therefore just a string put in a source map.
- a *room* is a package or top-level module of ``git_memhtml`` (``sleep``, ``output``; the package's own
  ``__init__.py`` is the room ``__init__``); inside ``sleep`` the rooms are its sub-packages (``engine`` …).
- every check returns a sorted list of offences ``"<path>:<line> <what>"``; an empty list means the rule holds.

What counts as a dependency: every ``import``/``from … import`` anywhere in a file — at module level, inside a
function, and under ``if TYPE_CHECKING:`` (a typing seam is still a dependency: the annotated module must keep its
shape, so it counts for layers and cycles alike) — plus ``importlib.import_module("…")`` and ``__import__("…")``
with a literal name, and attribute chains off the package itself (``import git_memhtml`` then
``git_memhtml.store.writer``) or ``sys.modules["git_memhtml.…"]``. Relative imports are resolved against the
importing module's package.

Names are resolved through each file's own import aliases (``import sys as s`` makes ``s.stdout`` read
``sys.stdout``; ``from os import environ as e`` makes ``e`` read ``os.environ``; ``from os import *`` makes an
unbound ``system`` read ``os.system``), plain assignments of a module or name (``out = sys``), ``getattr(x,
"name")``, ``vars(x)["name"]``/``x.__dict__["name"]``, ``sys.modules["name"]`` and ``importlib.import_module(
"name")``. An unbound name such as ``print`` is the builtin, unless the scope around it (a parameter, an
assignment, a definition — as Python scopes them, so a class body does not reach its methods) binds it.
"""

from __future__ import annotations

import ast
import builtins
import functools
import itertools
import re
from collections.abc import Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

PACKAGE = "git_memhtml"
ROOT_ROOM = "__init__"
"""The room of the package's own ``__init__.py`` (it holds ``__version__``)."""

# ---- the rules as data (mirrored by docs/architecture.md; tests/architecture/test_architecture_docs.py checks) ----

LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors", "pathnames", "cut", "progress", "secrets"),
    ("transport",),
    ("document", "domain", "output", "embed", "llm"),
    ("config",),
    ("gitrepo", "tree", "traces"),
    ("index",),
    ("artifacts",),
    ("store",),
    ("sleep", "eval"),
    ("doctor", "hooks", "service"),
    ("mcp",),
    ("cli",),
    ("__main__",),
)
"""The rooms of ``git_memhtml``, low to high: a room imports only rooms of strictly lower layers (or itself).

Source: the layer list of issue 9 (docs/architecture.md "Layers"), with three moves: ``transport`` (the one HTTP
client, issue 11) gets a layer of its own between ``errors`` and the embedders and model dialects that post through
it; ``config`` gets a layer of its own, above ``embed`` (the names of the embedders type its ``embed`` setting) and
below ``gitrepo`` (which reads the live environment through it); ``__main__`` sits one above ``cli`` because it
imports it. ``service`` (the verbs both doors call, issue 14) sits beside ``doctor`` and ``hooks`` and ``mcp`` (the MCP
server) between it and ``cli``, which starts the server. Two rooms of one layer may not import each other."""

ONLY: Mapping[str, frozenset[str]] = {
    "document": frozenset({"errors", "secrets"}),
    "domain": frozenset({"errors"}),
}
"""Pure rooms: besides themselves they import only these rooms, whatever their layer allows (docs/architecture.md
"Layers")."""

GATEWAYS: Mapping[tuple[str, str], tuple[str, ...]] = {
    ("hooks", "sleep"): ("git_memhtml.sleep.landing.reconcile",),
}
"""``(room, room it imports)`` → the only modules it may import there (a hook reconciles landed runs, nothing else)."""

SLEEP_LAYERS: tuple[tuple[str, ...], ...] = (
    ("engine",),
    ("probes",),
    ("presentation",),
    ("phases",),
    ("landing",),
    ("__init__",),
)
"""The sub-packages of ``git_memhtml.sleep``, low to high (same rule as :data:`LAYERS`); ``__init__`` is
``sleep/__init__.py``, above them all so it may import any of them (issue 9 layout note: engine < presentation <
phases < landing; issue 10 puts the run gate, ``probes``, between engine and presentation so a review can show
its verdict)."""

CHOKE_POINTS: Mapping[str, tuple[str, ...]] = {
    "pygit2": ("gitrepo/",),
    "apsw": ("index/db.py", "index/connection.py"),
    "sqlite_vec": ("index/connection.py",),
    "httpx": ("transport.py",),
    "wordllama": ("embed/wordllama.py",),
    "html5lib": ("document/",),
    "detect_secrets": ("secrets/",),
    "selectolax": ("document/",),
    "click": ("cli/", "output.py"),  # output.py draws click.progressbar, the one terminal writer (issue 12 item 5)
    "sqlite3": ("index/db.py", "index/connection.py"),
    "mcp": ("mcp/",),
    "mcp_types": ("mcp/",),
    "anyio": ("mcp/",),
}
"""Third-party module → the only package-relative paths (a trailing ``/``: a whole package) that may import it."""

SUBPROCESS_ALLOWED: tuple[str, ...] = ("gitrepo/",)
"""Where a child process may start: the git choke point (``gitrepo/process.py`` starts ``git`` and ``gh``)."""

PROGRAM_RUNNER_NAMES: tuple[str, ...] = ("git_memhtml.gitrepo.process.run_program", "git_memhtml.gitrepo.run_program")
"""``run_program`` starts any program; only the forge client may call it (for ``gh``)."""

PROGRAM_RUNNER_ALLOWED: tuple[str, ...] = ("gitrepo/", "sleep/landing/forge.py")

OS_SPAWN_ATTRIBUTES = frozenset({
    "system", "popen", "startfile", "fork", "forkpty", "posix_spawn", "posix_spawnp",
    *(f"spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    *(f"exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
})
"""Attributes that start a program when read off anything named ``os`` (``shutil.os.system`` reaches ``os``
through another module, which no alias table follows)."""

SUBPROCESS_NAMES: tuple[str, ...] = (
    "subprocess", "_posixsubprocess", "pty", "multiprocessing", "webbrowser", "concurrent.futures.ProcessPoolExecutor",
    "asyncio.subprocess", "asyncio.create_subprocess_exec", "asyncio.create_subprocess_shell",
    "os.system", "os.popen", "os.startfile", "os.fork", "os.forkpty", "os.posix_spawn", "os.posix_spawnp",
    *(f"os.spawn{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
    *(f"os.exec{s}" for s in ("l", "le", "lp", "lpe", "v", "ve", "vp", "vpe")),
)
"""Every spelling that starts another program (a name matches itself and anything dotted below it)."""

ENVIRON_ALLOWED: tuple[str, ...] = ("cli/", "config.py")
"""Where the process environment may be read: the CLI edge and the settings model."""

ENVIRON_NAMES: tuple[str, ...] = (
    "os.environ", "os.environb", "os.getenv", "os.getenvb", "os.putenv", "os.unsetenv", "os.get_exec_path",
    "posix.environ", "nt.environ",
    "os.path.expanduser", "os.path.expandvars", "posixpath.expanduser", "posixpath.expandvars",
    "pathlib.Path.home", "pathlib.PosixPath.home", "getpass.getuser",
)
"""Reads of the environment, direct (``os.environ``) or through ``HOME``/``USER`` (``Path.home()``)."""

ENVIRON_ATTRIBUTES = frozenset({"environ", "environb", "getenv", "getenvb", "putenv", "unsetenv"})
"""Attribute names that read the environment off any object (``shutil.os.environ``, ``posixpath.os.getenv``)."""

LIVE_ENV_NAMES: tuple[str, ...] = ("git_memhtml.config.live_env",)
"""``config.live_env()`` is a live view of the process environment: the default of the library entry points."""

LIVE_ENV_ALLOWED: tuple[str, ...] = (
    "cli/", "config.py", "gitrepo/repo.py", "hooks/install.py", "hooks/gitconfig.py", "hooks/merge_driver.py",
)
"""Where ``live_env`` may stand as the default of an ``env`` parameter for library callers (a ``GitRepo`` opened
without one, ``install()``, the merge driver); the CLI passes its own copy, so nothing else may read it."""

EXIT_ALLOWED: tuple[str, ...] = ("cli/", "__main__.py")

EXIT_NAMES: tuple[str, ...] = (
    "sys.exit", "builtins.exit", "builtins.quit", "builtins.SystemExit", "os._exit", "os.abort",
)
"""Ending the process (``sys.exit("message")`` also prints the message): only the CLI edge exits."""

TERMINAL_ALLOWED: tuple[str, ...] = ("output.py",)

TERMINAL_NAMES: tuple[str, ...] = (
    "builtins.print", "builtins.input", "builtins.help", "builtins.breakpoint",
    "sys.stdout", "sys.stderr", "sys.__stdout__", "sys.__stderr__", "sys.displayhook",
    "click.echo", "click.secho", "click.echo_via_pager", "click.get_text_stream", "click.get_binary_stream",
    "click.progressbar", "click.clear", "click.pause", "click.prompt", "click.confirm", "click.utils.echo",
    "click.termui",
    "pprint.pprint", "pprint.pp", "traceback.print_exc", "traceback.print_exception", "traceback.print_stack",
    "traceback.print_tb", "traceback.print_last", "warnings.warn", "warnings.warn_explicit", "warnings.showwarning",
    "logging", "faulthandler", "pdb", "code.interact", "tqdm", "rich",
)
"""Everything that writes to the terminal by itself (``logging``: a logger without handlers writes to stderr)."""

FD_OPENERS: tuple[str, ...] = (
    "builtins.open", "io.open", "io.FileIO", "os.fdopen", "os.write", "os.writev", "os.pwrite", "os.dup", "os.dup2",
    "os.sendfile",
)
"""Calls whose first argument may be a file descriptor: with ``1`` or ``2`` they write to the terminal."""

TERMINAL_DEVICES = frozenset({
    "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/fd/1", "/dev/fd/2", "/proc/self/fd/1", "/proc/self/fd/2",
    "CONOUT$",
})
"""File names of the terminal (a string literal equal to one of them is a terminal write waiting to happen)."""

SQL_ALLOWED: tuple[str, ...] = ("index/",)

_PROSE_WORDS = r"(?:the|a|an|each|every|this|that|these|those|your|its|their|one|all|any|some|my|our|it|them)\b"


def _sql_statement(target: str) -> str:
    """The statements the SQL rule looks for; ``target`` is the pattern of a table name after FROM/INTO/UPDATE."""
    return (
        rf"SELECT\s+(?:DISTINCT\s+)?[^;]*?\bFROM\s+{target}"
        rf"|INSERT\s+(?:OR\s+\w+\s+)?INTO\s+{target}"
        rf"|REPLACE\s+INTO\s+{target}"
        rf"|UPDATE\s+(?:OR\s+\w+\s+)?{target}\s+SET\s+[\w\"]+\s*="
        rf"|DELETE\s+FROM\s+{target}"
        r"|(?:CREATE|DROP)\s+(?:TEMP(?:ORARY)?\s+|UNIQUE\s+|VIRTUAL\s+)?(?:TABLE|INDEX|VIEW|TRIGGER)\b"
        rf"|ALTER\s+TABLE\s+{target}"
        r"|PRAGMA\s+[\w.]+"
        r"|WITH\s+(?:RECURSIVE\s+)?\w+\s*(?:\([^)]*\)\s*)?AS\s*(?:NOT\s+)?(?:MATERIALIZED\s+)?\(\s*(?:SELECT|VALUES)\b"
        r"|ATTACH\s+(?:DATABASE\s+)?\S+\s+AS\s+\w+"
    )


_TABLE = r'[\w.?"%{}]+'
"""A table name after FROM/INTO/UPDATE: a word, dotted (``state.access``), quoted, or a hole (``?``, ``%s``, ``{}``)."""
SQL_ANYWHERE = re.compile(r"\b(?:" + _sql_statement(_TABLE) + ")")
"""SQL in capitals anywhere in a string literal (the house spelling of SQL)."""
SQL_LEADING = re.compile(r"^\s*(?:--[^\n]*\n\s*)*\(?\s*(?:" + _sql_statement(f"(?!{_PROSE_WORDS}){_TABLE}") + ")",
                         re.IGNORECASE)
"""SQL in any case when the literal starts with the statement (``"select path from files"``). The tuning against
prose: a table name is never an article or pronoun (``"Select one memory from the list"`` is a sentence), keywords
in the middle of a literal count only in capitals, and a docstring is never checked."""

SQL_KEYWORD_START = re.compile(
    r"^\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*"
    r"(?:SELECT|INSERT|UPDATE|DELETE|REPLACE|CREATE|DROP|ALTER|PRAGMA|BEGIN|COMMIT|END|ROLLBACK|SAVEPOINT|RELEASE"
    r"|VACUUM|ATTACH|DETACH|ANALYZE|REINDEX|EXPLAIN|WITH)\b(?![-'])",
    re.DOTALL,
)
"""A literal that opens, after whitespace and SQL comments, with a statement keyword in capitals is a statement
(or its first half, when it is joined to another constant at run time: ``"SELECT count(*)"`` + ``" FROM files"``),
whatever follows."""


# ---- parsing ----


@functools.lru_cache(maxsize=1024)
def parse(source: str) -> ast.Module:
    """``ast.parse`` of ``source``, parsed once per text (every rule walks the same trees; none changes them)."""
    return ast.parse(source)


def module_name(path: str) -> str:
    """``"sleep/engine/run.py"`` → ``"git_memhtml.sleep.engine.run"``; ``"sleep/__init__.py"`` →
    ``"git_memhtml.sleep"``."""
    parts = path.removesuffix(".py").split("/")
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join([PACKAGE, *parts])


def read_package(root: Path) -> dict[str, str]:
    """The source map of the package folder ``root`` (every ``*.py`` under it, UTF-8)."""
    return {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in sorted(root.rglob("*.py"))}


def allowed(path: str, places: Iterable[str]) -> bool:
    """Whether ``path`` is one of ``places`` (an exact path, or a folder given with a trailing ``/``)."""
    return any(path.startswith(p) if p.endswith("/") else path == p for p in places)


@dataclass(frozen=True)
class ImportRef:
    """One dependency of ``path`` at ``line`` on the module ``target`` (dotted, absolute)."""

    path: str
    line: int
    target: str
    typing_only: bool


def _base_package(path: str) -> str:
    """The package a relative import in ``path`` starts from (level 1)."""
    name = module_name(path)
    return name if path.endswith("__init__.py") or path == "__init__.py" else name.rpartition(".")[0]


def _absolute(path: str, module: str | None, level: int) -> str:
    """The absolute module of ``from <level dots><module> import …`` written in ``path``."""
    if level == 0:
        return module or ""
    base = _base_package(path).split(".")
    base = base[: len(base) - (level - 1)] if level > 1 else base
    return ".".join([*base, module] if module else base)


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, typing_only: bool = False) -> Iterator[tuple[ast.AST, bool]]:
    """Every node under ``node`` with whether it sits in the body of an ``if TYPE_CHECKING:``."""
    yield node, typing_only
    if isinstance(node, ast.If) and _is_type_checking(node.test):
        yield from _walk(node.test, typing_only)
        for child in node.body:
            yield from _walk(child, True)
        for child in node.orelse:
            yield from _walk(child, typing_only)
        return
    for sub in ast.iter_child_nodes(node):
        yield from _walk(sub, typing_only)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
IMPORT_CALLS = frozenset({"importlib.import_module", "importlib.__import__", "builtins.__import__"})
"""Calls that import the module their literal first argument names."""


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of one scope: every descendant, a nested function or class included but not its inside."""
    for child in ast.iter_child_nodes(scope):
        yield child
        if not isinstance(child, _SCOPES):
            yield from _own_nodes(child)


def _binds(scope: ast.AST) -> frozenset[str]:
    """The names a scope binds itself: its parameters, assignment targets, nested definitions."""
    names: set[str] = set()
    for node in _own_nodes(scope):
        if isinstance(node, ast.arg):
            names.add(node.arg)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            names.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
    return frozenset(names)


def scoped_walk(tree: ast.Module) -> Iterator[tuple[ast.AST, frozenset[str]]]:
    """Every node of ``tree`` with the names bound around it (they shadow a builtin of the same name). A class
    body's names are not seen by the functions inside it, as in Python."""

    def visit(scope: ast.AST, inherited: frozenset[str]) -> Iterator[tuple[ast.AST, frozenset[str]]]:
        own = inherited | _binds(scope)
        for node in _own_nodes(scope):
            yield node, own
            if isinstance(node, _SCOPES):
                yield from visit(node, inherited if isinstance(scope, ast.ClassDef) else own)

    yield tree, _binds(tree)
    yield from visit(tree, frozenset())


class Names:
    """Resolve expressions of one file to dotted names through its import aliases (see the module docstring)."""

    def __init__(self, path: str, tree: ast.Module) -> None:
        self.bound: dict[str, str] = {}
        """Local name → the dotted name it was imported (or plainly assigned) as: ``sp`` → ``subprocess``."""
        self.star: list[str] = []
        """Modules imported with ``*``: an unbound name may be theirs."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        self.bound[alias.asname] = alias.name
                    else:
                        top = alias.name.partition(".")[0]
                        self.bound[top] = top
            elif isinstance(node, ast.ImportFrom):
                base = _absolute(path, node.module, node.level)
                for alias in node.names:
                    if alias.name == "*":
                        self.star.append(base)
                    else:
                        self.bound[alias.asname or alias.name] = f"{base}.{alias.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                name = self.qualify(node.value)
                if name and not name.startswith("builtins."):
                    for target in targets:
                        if isinstance(target, ast.Name):
                            self.bound.setdefault(target.id, name)

    def candidates(self, node: ast.AST, shadow: frozenset[str] = frozenset()) -> list[str]:
        """:meth:`qualify`, plus what an unbound name would be in each ``*``-imported module."""
        found = [name] if (name := self.qualify(node, shadow)) else []
        if isinstance(node, ast.Name) and node.id not in self.bound and node.id not in shadow:
            found.extend(f"{module}.{node.id}" for module in self.star)
        return found

    def qualify(self, node: ast.AST, shadow: frozenset[str] = frozenset()) -> str | None:
        """The dotted name ``node`` denotes (``"sys.stdout"``), or ``None`` when it is not a module-level name.
        ``shadow``: the names bound around ``node``, which hide a builtin of the same name."""
        if isinstance(node, ast.Name):
            if node.id in self.bound:
                return self.bound[node.id]
            if node.id in shadow:
                return None
            if node.id == "__builtins__":
                return "builtins"
            return f"builtins.{node.id}" if hasattr(builtins, node.id) else None
        if isinstance(node, ast.Attribute):
            base = self.qualify(node.value, shadow)
            return f"{base}.{node.attr}" if base else None
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = self.qualify(node.func, shadow)
            if func in IMPORT_CALLS:
                module = node.args[0].value
                return module if func == "importlib.import_module" else module.partition(".")[0]
        if isinstance(node, ast.Call) and self.qualify(node.func, shadow) == "builtins.getattr" and len(node.args) >= 2:
            attr = node.args[1]
            base = self.qualify(node.args[0], shadow)
            if base and isinstance(attr, ast.Constant) and isinstance(attr.value, str):
                return f"{base}.{attr.value}"
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) \
                and isinstance(node.slice.value, str):
            key = node.slice.value
            holder = node.value
            if isinstance(holder, ast.Call) and self.qualify(holder.func, shadow) == "builtins.vars" and holder.args:
                base = self.qualify(holder.args[0], shadow)
                return f"{base}.{key}" if base else None
            if isinstance(holder, ast.Attribute) and holder.attr == "__dict__":
                base = self.qualify(holder.value, shadow)
                return f"{base}.{key}" if base else None
            if self.qualify(holder, shadow) == "sys.modules":
                return key
        return None


def _matches(name: str, forbidden: Iterable[str]) -> str | None:
    """The entry of ``forbidden`` that ``name`` is or lies under (``"sys.stdout.write"`` lies under ``sys.stdout``)."""
    for entry in forbidden:
        if name == entry or name.startswith(entry + "."):
            return entry
    return None


def imports_of(path: str, source: str, known: Collection[str]) -> list[ImportRef]:
    """Every dependency of the file ``path`` (see the module docstring for what counts).

    ``known``: the module names of the source map, so ``from git_memhtml.sleep import phases`` resolves to the
    module ``git_memhtml.sleep.phases`` and ``from git_memhtml.output import emit`` to ``git_memhtml.output``.
    """
    tree = parse(source)
    names = Names(path, tree)
    found: list[ImportRef] = []
    for node, typing_only in _walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            found.extend(ImportRef(path, line, alias.name, typing_only) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(path, node.module, node.level)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                found.append(ImportRef(path, line, candidate if candidate in known else base, typing_only))
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str) \
                and names.qualify(node.func) in IMPORT_CALLS:
            found.append(ImportRef(path, line, node.args[0].value, typing_only))
        elif isinstance(node, ast.Attribute | ast.Subscript) and _root_is_package(node, names):
            # `import git_memhtml` then `git_memhtml.store.writer.write(…)`, or sys.modules["git_memhtml.store"]
            dotted = names.qualify(node)
            if dotted and dotted.startswith(PACKAGE + "."):
                found.append(ImportRef(path, line, _longest_module(dotted, known), typing_only))
    return found


def _root_is_package(node: ast.AST, names: Names) -> bool:
    """Whether an attribute chain starts at a name bound to the package itself, or reads ``sys.modules``."""
    while isinstance(node, ast.Attribute | ast.Subscript):
        if isinstance(node, ast.Subscript) and names.qualify(node.value) == "sys.modules":
            return True
        node = node.value
    return isinstance(node, ast.Name) and names.bound.get(node.id) == PACKAGE


def _longest_module(dotted: str, known: Collection[str]) -> str:
    """The longest prefix of ``dotted`` that is a module of the source map (else its first two parts)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 1, -1):
        if ".".join(parts[:cut]) in known:
            return ".".join(parts[:cut])
    return ".".join(parts[:2])


def all_imports(sources: Mapping[str, str]) -> list[ImportRef]:
    """:func:`imports_of` over a whole source map."""
    known = {module_name(p) for p in sources}
    return [ref for path, text in sorted(sources.items()) for ref in imports_of(path, text, known)]


# ---- the import graph ----


def room_of(module: str, within: str = PACKAGE) -> str | None:
    """The room of ``module`` among the children of ``within``: ``"git_memhtml.sleep.run"`` → ``"sleep"``;
    ``within`` itself → ``"__init__"``; a module outside ``within`` → ``None``."""
    if module == within:
        return ROOT_ROOM
    if module.startswith(within + "."):
        return module[len(within) + 1:].partition(".")[0]
    return None


def import_edges(sources: Mapping[str, str], within: str = PACKAGE) -> dict[tuple[str, str], list[str]]:
    """``{(room, room it imports): [witness "path:line imports module", …]}`` between the rooms of ``within``
    (``"git_memhtml"``: the top-level packages; ``"git_memhtml.sleep"``: its sub-packages). Self-edges are left out."""
    edges: dict[tuple[str, str], list[str]] = {}
    for ref in all_imports(sources):
        src = room_of(module_name(ref.path), within)
        dst = room_of(ref.target, within)
        if src is None or dst is None or src == dst:
            continue
        note = " (TYPE_CHECKING)" if ref.typing_only else ""
        witness = f"{ref.path}:{ref.line} imports {ref.target}{note}"
        seen = edges.setdefault((src, dst), [])
        if witness not in seen:  # `from m import a, b` is one witness
            seen.append(witness)
    return edges


def layer_violations(edges: Mapping[tuple[str, str], Sequence[str]], layers: Sequence[Sequence[str]],
                     only: Mapping[str, Collection[str]] | None = None) -> list[str]:
    """Edges that go sideways or up the layer table, reach a room the table does not list, or leave a pure room
    (``only``: room → the rooms it may import) — one offence per witness."""
    rank = {room: i for i, layer in enumerate(layers) for room in layer}
    out: list[str] = []
    for (src, dst), witnesses in sorted(edges.items()):
        if src not in rank or dst not in rank:
            missing = src if src not in rank else dst
            why = f"room {missing!r} is in no layer"
        elif only is not None and src in only and dst not in only[src]:
            why = f"{src} may import only {sorted(only[src])}, not {dst}"
        elif rank[dst] >= rank[src]:
            why = f"{src} (layer {rank[src]}) may not import {dst} (layer {rank[dst]})"
        else:
            continue
        out.extend(f"{w}: {why}" for w in witnesses)
    return sorted(out)


def gateway_violations(sources: Mapping[str, str], gateways: Mapping[tuple[str, str], Sequence[str]]) -> list[str]:
    """Imports from one room into another that bypass the only modules :data:`GATEWAYS` lets it reach there."""
    out = []
    for ref in all_imports(sources):
        src, dst = room_of(module_name(ref.path)), room_of(ref.target)
        if src is None or dst is None:
            continue
        key = (src, dst)
        if key in gateways and _matches(ref.target, gateways[key]) is None:
            out.append(f"{ref.path}:{ref.line} imports {ref.target}: {key[0]} reaches {key[1]} only through "
                       f"{', '.join(gateways[key])}")
    return sorted(out)


def cycles(edges: Iterable[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The import cycles of a graph: each strongly connected component of two or more rooms, sorted (Tarjan)."""
    graph: dict[str, set[str]] = {}
    for src, dst in edges:
        graph.setdefault(src, set()).add(dst)
        graph.setdefault(dst, set())
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[tuple[str, ...]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph[node]):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(tuple(sorted(component)))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


def choke_point_violations(sources: Mapping[str, str], choke: Mapping[str, Sequence[str]]) -> list[str]:
    """Imports of a third-party module outside the paths :data:`CHOKE_POINTS` gives it."""
    out = []
    for ref in all_imports(sources):
        top = ref.target.partition(".")[0]
        if top in choke and not allowed(ref.path, choke[top]):
            out.append(f"{ref.path}:{ref.line} imports {ref.target} (only {', '.join(choke[top])})")
    return sorted(out)


# ---- name rules (subprocess, environment, terminal) ----


@functools.lru_cache(maxsize=1024)
def _named(path: str, source: str) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """Every node of ``source`` that may name something, as ``(line, the dotted names it may denote)``, in walk
    order. The rule-independent half of :func:`name_uses`, computed once per file: the name rules (subprocess,
    environment, terminal) differ only in the list they match these names against."""
    tree = parse(source)
    names = Names(path, tree)
    out: list[tuple[int, tuple[str, ...]]] = []
    for node, shadow in scoped_walk(tree):
        candidates: list[str] = []
        if isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(path, node.module, node.level)
            candidates = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        elif isinstance(node, ast.Name | ast.Attribute | ast.Call | ast.Subscript):
            candidates = names.candidates(node, shadow)
        if candidates:
            out.append((getattr(node, "lineno", 0), tuple(candidates)))
    return tuple(out)


def name_uses(path: str, source: str, forbidden: Sequence[str]) -> list[str]:
    """Every place ``source`` names one of ``forbidden`` (through any alias, import, ``getattr`` … spelling),
    one offence per line and entry: ``"path:line sys.stdout"``."""
    seen: set[tuple[int, str]] = set()
    for line, candidates in _named(path, source):
        for name in candidates:
            entry = _matches(name, forbidden)
            if entry is not None:
                seen.add((line, entry))
    return sorted(f"{path}:{line} {entry}" for line, entry in seen)


def _rule(sources: Mapping[str, str], places: Sequence[str], forbidden: Sequence[str]) -> list[str]:
    return sorted(v for path, text in sources.items() if not allowed(path, places)
                  for v in name_uses(path, text, forbidden))


def _last_name(node: ast.expr) -> str | None:
    """The last identifier of a name or attribute chain (``shutil.os`` → ``"os"``)."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _attribute_uses(sources: Mapping[str, str], places: Sequence[str], attributes: Collection[str],
                    owner: str | None) -> list[str]:
    """Attribute reads named in ``attributes`` off any object (off an object last named ``owner`` when given),
    outside ``places``: ``"path:line .environ"``."""
    out = set()
    for path, text in sources.items():
        if allowed(path, places):
            continue
        for node in ast.walk(parse(text)):
            if isinstance(node, ast.Attribute) and node.attr in attributes \
                    and (owner is None or _last_name(node.value) == owner):
                out.add(f"{path}:{node.lineno} .{node.attr}")
    return sorted(out)


def subprocess_violations(sources: Mapping[str, str]) -> list[str]:
    """Child processes started outside :data:`SUBPROCESS_ALLOWED` (``gitrepo/``), in any spelling, ``os`` reached
    through another module included; and ``run_program`` called outside the forge client."""
    return sorted(_rule(sources, SUBPROCESS_ALLOWED, SUBPROCESS_NAMES)
                  + _attribute_uses(sources, SUBPROCESS_ALLOWED, OS_SPAWN_ATTRIBUTES, "os")
                  + _rule(sources, PROGRAM_RUNNER_ALLOWED, PROGRAM_RUNNER_NAMES))


def environ_violations(sources: Mapping[str, str]) -> list[str]:
    """Environment reads outside :data:`ENVIRON_ALLOWED` (``cli/`` and ``config.py``): the names of
    :data:`ENVIRON_NAMES`, an ``environ``/``getenv`` attribute off any object, and ``config.live_env`` outside the
    library defaults of :data:`LIVE_ENV_ALLOWED`."""
    return sorted(_rule(sources, ENVIRON_ALLOWED, ENVIRON_NAMES)
                  + _attribute_uses(sources, ENVIRON_ALLOWED, ENVIRON_ATTRIBUTES, None)
                  + _rule(sources, LIVE_ENV_ALLOWED, LIVE_ENV_NAMES))


def exit_violations(sources: Mapping[str, str]) -> list[str]:
    """Ending the process outside the CLI edge (:data:`EXIT_NAMES`)."""
    return _rule(sources, EXIT_ALLOWED, EXIT_NAMES)


def _fd_writes(path: str, source: str) -> list[str]:
    """``open(1, "w")``, ``os.write(2, …)``, ``io.open(1)`` … and literals naming the terminal (``"/dev/stdout"``)."""
    tree = parse(source)
    names = Names(path, tree)
    out = []
    for node, shadow in scoped_walk(tree):
        if isinstance(node, ast.Call) and set(names.candidates(node.func, shadow)) & set(FD_OPENERS):
            first = node.args[0] if node.args else next(
                (k.value for k in node.keywords if k.arg in {"file", "fd"}), None)
            # a bool is an int: os.write(True, …) writes to descriptor 1
            if isinstance(first, ast.Constant) and isinstance(first.value, int) and first.value in {1, 2}:
                out.append(f"{path}:{node.lineno} {ast.unparse(node.func)}({first.value!r})")
        elif isinstance(node, ast.Constant | ast.BinOp | ast.JoinedStr) and _text(node) in TERMINAL_DEVICES:
            out.append(f"{path}:{node.lineno} {_text(node)!r}")
    return out


def terminal_write_violations(sources: Mapping[str, str]) -> list[str]:
    """Terminal writes outside ``output.py``, in any spelling (see :data:`TERMINAL_NAMES`, :data:`FD_OPENERS`)."""
    return sorted(_rule(sources, TERMINAL_ALLOWED, TERMINAL_NAMES) + [
        v for path, text in sources.items() if not allowed(path, TERMINAL_ALLOWED) for v in _fd_writes(path, text)])


DYNAMIC_CODE_NAMES: tuple[str, ...] = (
    "builtins.exec", "builtins.eval", "builtins.compile", "runpy", "code.InteractiveInterpreter",
)
"""Code run from a string: it would hide any import, spawn or write from every rule above, so no module runs any."""


COMPUTED_IMPORT_ALLOWED: tuple[str, ...] = ("sleep/phases/__init__.py", "cli/lazy.py")
"""The computed imports: the phases package imports each module it holds (``pkgutil.iter_modules`` of its own
folder), so a new phase is its module and nothing else; the CLI's lazy command table imports a command's module
on first use (issue 12 item 4), only modules of ``git_memhtml.cli``, whose own imports every rule still sees."""

COMPUTED_IMPORT_CALLS = frozenset({*IMPORT_CALLS, "pkgutil.resolve_name"})


def dynamic_code_violations(sources: Mapping[str, str]) -> list[str]:
    """``exec``/``eval``/``compile`` of a string (and ``runpy``) anywhere in the package; ``__builtins__`` (a way
    to every builtin by a string key); an import of a computed name (its target no rule can see) outside
    :data:`COMPUTED_IMPORT_ALLOWED`."""
    out = _rule(sources, (), DYNAMIC_CODE_NAMES)
    for path, text in sources.items():
        tree = parse(text)
        names = Names(path, tree)
        for node, shadow in scoped_walk(tree):
            if isinstance(node, ast.Name) and node.id == "__builtins__":
                out.append(f"{path}:{node.lineno} __builtins__")
            elif isinstance(node, ast.Call) and not allowed(path, COMPUTED_IMPORT_ALLOWED) \
                    and set(names.candidates(node.func, shadow)) & COMPUTED_IMPORT_CALLS:
                first = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "name"), None)
                if not (isinstance(first, ast.Constant) and isinstance(first.value, str)) or any(
                        k.arg in {"package", "fromlist"} for k in node.keywords) or len(node.args) > 1:
                    out.append(f"{path}:{node.lineno} import of a computed name: {ast.unparse(node)[:60]}")
    return sorted(set(out))


# ---- SQL ----


def _docstrings(tree: ast.Module) -> set[int]:
    """``id()`` of every docstring constant (module, class, function) of ``tree``."""
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
        # an attribute docstring: a bare string right after an assignment
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for before, after in itertools.pairwise(body):
                if isinstance(before, ast.Assign | ast.AnnAssign) and isinstance(after, ast.Expr) \
                        and isinstance(after.value, ast.Constant):
                    ids.add(id(after.value))
    return ids


def _text(node: ast.expr) -> str | None:
    """The text of a string expression with every hole as ``?``: str and bytes literals, f-strings, ``+`` and ``%``
    chains, ``"…".format(…)`` and ``" ".join([...])`` of literals; ``None`` when ``node`` is no string expression."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bytes):
            return node.value.decode("latin-1")
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "?"
                       for v in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _text(node.left), _text(node.right)
        if left is None and right is None:
            return None
        return (left if left is not None else "?") + (right if right is not None else "?")
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return _text(node.left)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr == "format":
            return _text(node.func.value)
        separator = _text(node.func.value)
        if node.func.attr == "join" and separator is not None and node.args \
                and isinstance(node.args[0], ast.List | ast.Tuple):
            parts = [_text(item) for item in node.args[0].elts]
            return separator.join(part if part is not None else "?" for part in parts)
    return None


def sql_literal_violations(sources: Mapping[str, str]) -> list[str]:
    """String literals holding an SQL statement outside ``index/`` (see :data:`SQL_ANYWHERE`, :data:`SQL_LEADING`).

    A literal is read whole (adjacent literals are one constant; f-strings, ``+`` and ``%``/``.format`` chains with
    their holes as ``?``); docstrings are prose and never checked. One offence per line."""
    out: set[str] = set()
    for path, source in sources.items():
        if allowed(path, SQL_ALLOWED):
            continue
        tree = parse(source)
        skip = _docstrings(tree)
        inner: set[int] = set()
        for node in ast.walk(tree):
            if id(node) in skip or id(node) in inner or not isinstance(node, ast.expr):
                continue
            text = _text(node)
            if text is None:
                continue
            inner.update(id(child) for child in ast.walk(node) if child is not node)
            match = SQL_ANYWHERE.search(text) or SQL_LEADING.search(text) or SQL_KEYWORD_START.search(text)
            if match:
                out.add(f"{path}:{node.lineno} SQL {' '.join(match.group(0).split())[:40]!r}")
    return sorted(out)


def sql_files_outside_index(root: Path) -> list[str]:
    """``*.sql`` files of the package folder ``root`` that are not under ``index/`` (migrations live there)."""
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*.sql")
                  if not allowed(p.relative_to(root).as_posix(), SQL_ALLOWED))
