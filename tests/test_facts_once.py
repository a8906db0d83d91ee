"""Each fact of the memory tree is declared once (issue 9 item 5): its literal appears in its home module only, and
every other module imports the name. Table-driven: a new fact joins by adding a row.

The scan reads every module's AST (docstrings left out, as prose may name a path); f-string pieces count as
literals, so ``f"areas/inbox"`` would be caught while ``f"{INBOX_DIR}/tasks"`` is not.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "git_memhtml"


@dataclass(frozen=True)
class Fact:
    """A literal (``exact`` equality, else containment in a string) and the one module allowed to spell it."""

    name: str
    literal: str
    home: str
    exact: bool = True


FACTS = [
    Fact("state folder", ".memhtml/state", "tree/layout.py"),
    Fact("sidecar file name", "access.jsonl", "tree/layout.py", exact=False),
    Fact("report folder", ".memhtml/sleep", "tree/layout.py"),
    Fact("inbox folder", "areas/inbox", "tree/layout.py"),
    Fact("arcs folder", "areas/arcs", "tree/layout.py"),
    Fact("people folder", "resources/people", "tree/layout.py"),
    Fact("listing name", "index.html", "tree/layout.py"),
    Fact("sitemap name", "sitemap.xml", "tree/layout.py"),
    Fact("archive mirror prefix", r"archive/\d{4,}/", "tree/layout.py", exact=False),
]

COLLECTIONS: list[tuple[str, set[str], str | None]] = [
    ("PARA buckets", {"projects", "areas", "resources", "archive"}, "document/model.py"),
    ("PARA prefixes", {"projects/", "areas/", "resources/", "archive/"}, None),
    ("reinforcement signals", {"positive", "negative", "neutral"}, "domain/reinforce.py"),
]
"""Sets of literals that together spell one fact: a tuple, list, set, dict or ``Literal[...]`` holding two or more
of them outside the home is a second declaration. ``None``: derived from another row, spelled nowhere."""


def _docstrings(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            ids.update(id(stmt.value) for stmt in body
                       if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant))
    return ids


def _literals() -> dict[str, tuple[ast.Module, list[str]]]:
    out: dict[str, tuple[ast.Module, list[str]]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstrings(tree)
        strings = [n.value for n in ast.walk(tree)
                   if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skip]
        out[str(path.relative_to(PACKAGE))] = (tree, strings)
    return out


MODULES = _literals()


@pytest.mark.parametrize("fact", FACTS, ids=[f.name for f in FACTS])
def test_a_path_fact_is_spelled_in_its_home_only(fact: Fact) -> None:
    spelled = sorted(path for path, (_, strings) in MODULES.items()
                     if any(s == fact.literal if fact.exact else fact.literal in s for s in strings))
    assert spelled == [fact.home]


@pytest.mark.parametrize(("name", "members", "home"), COLLECTIONS, ids=[c[0] for c in COLLECTIONS])
def test_a_set_of_names_is_declared_in_its_home_only(name: str, members: set[str], home: str | None) -> None:
    declared = set()
    for path, (tree, _) in MODULES.items():
        for node in ast.walk(tree):
            elts = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict)) and elts is not None:
                values = {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
                if len(values & members) >= 2:
                    declared.add(path)
    assert sorted(declared) == ([home] if home else []), name


RECORDS = [
    ("access row", {"access_count", "reinforcement_count", "outcome_score", "last_accessed_at"}, "domain/reinforce.py"),
    ("retention signals", {"recency", "pagerank", "bridge", "density", "contested"}, "domain/retention.py"),
]
"""Record types: a class annotating two or more of these fields outside the home declares the record again (a
subclass that adds fields, like the eval fixture's ``AccessSeed``, does not)."""


@pytest.mark.parametrize(("name", "fields", "home"), RECORDS, ids=[r[0] for r in RECORDS])
def test_a_record_type_is_declared_in_its_home_only(name: str, fields: set[str], home: str) -> None:
    declared = set()
    for path, (tree, _) in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                names = {s.target.id for s in node.body
                         if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
                if len(names & fields) >= 2:
                    declared.add(f"{path}:{node.name}")
    assert len(declared) == 1 and next(iter(declared)).startswith(home + ":"), (name, sorted(declared))
