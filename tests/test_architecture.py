"""Architecture rules enforced on the source (docs/design.md §4, docs/style.md §1 and §3).

One choke point per external system: only the ``gitrepo`` package imports pygit2, only ``index/db.py`` imports apsw and
sqlite_vec, only ``embed/openai.py`` imports httpx, only ``cli/`` imports click, only ``output.py`` writes to the
terminal. ``domain`` and ``document`` import nothing of ours beyond themselves and ``errors``; the core never
imports the CLI.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "git_memhtml"

EDGES = {
    "pygit2": {"gitrepo/repo.py", "gitrepo/committing.py", "gitrepo/merging.py", "gitrepo/plumbing.py"},
    "apsw": {"index/db.py"},
    "sqlite_vec": {"index/db.py"},
    "httpx": {"embed/openai.py"},
}


def _modules() -> dict[str, ast.Module]:
    return {str(p.relative_to(PACKAGE)): ast.parse(p.read_text(encoding="utf-8")) for p in PACKAGE.rglob("*.py")}


def _imports(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_external_systems_have_one_choke_point_each() -> None:
    offenders = []
    for path, tree in _modules().items():
        for name in _imports(tree):
            top = name.split(".")[0]
            if top in EDGES and path not in EDGES[top]:
                offenders.append(f"{path} imports {name}")
            if top == "click" and not path.startswith("cli/"):
                offenders.append(f"{path} imports click")
    assert offenders == []


def test_only_output_writes_to_the_terminal() -> None:
    offenders = []
    for path, tree in _modules().items():
        if path == "output.py":
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "print":
                offenders.append(f"{path}:{node.lineno} print()")
            if isinstance(node, ast.Attribute) and node.attr in {"stdout", "stderr"}:
                if isinstance(node.value, ast.Name) and node.value.id == "sys":
                    offenders.append(f"{path}:{node.lineno} sys.{node.attr}")
    assert offenders == []


def test_pure_layers_import_nothing_of_ours_but_themselves() -> None:
    allowed = {
        "domain/": ("git_memhtml.domain", "git_memhtml.errors"),
        "document/": ("git_memhtml.document", "git_memhtml.errors"),
    }
    offenders = []
    for path, tree in _modules().items():
        for prefix, ok in allowed.items():
            if path.startswith(prefix):
                for name in _imports(tree):
                    if name.startswith("git_memhtml") and not name.startswith(ok):
                        offenders.append(f"{path} imports {name}")
    assert offenders == []


def test_the_core_never_imports_the_cli() -> None:
    offenders = [
        f"{path} imports {name}"
        for path, tree in _modules().items()
        if not path.startswith("cli/") and path != "__main__.py"
        for name in _imports(tree)
        if name.startswith("git_memhtml.cli")
    ]
    assert offenders == []
