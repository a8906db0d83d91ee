"""Every ``git memhtml <command>`` that a message or hint of the package names exists (issue 8 item 11).

Table-driven over every string literal of ``git_memhtml/`` (f-string parts included, docstrings excluded) that
contains ``git memhtml ``: one row per (module, line, named command). The command path is read word by word
against the click group: the first word must be a command, and after a group the next word must be one of its
sub-commands. A new hint joins the table by being written.
"""

from __future__ import annotations

import ast
import re
from itertools import pairwise
from pathlib import Path

import click
import pytest

from git_memhtml.cli.main import cli

PACKAGE = Path(__file__).resolve().parents[2] / "git_memhtml"
_NAMED = re.compile(r"git memhtml ((?:[a-z][a-z0-9-]*)(?: [a-z][a-z0-9-]*)*)")


def _docstring_nodes(tree: ast.AST) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                ids.add(id(first.value))
    return ids


def _attribute_docstrings(tree: ast.AST) -> set[int]:
    """String expressions right after an assignment (``X = 1`` then ``\"\"\"doc\"\"\"``) are documentation too."""
    ids: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            for before, after in pairwise(body):
                if isinstance(before, (ast.Assign, ast.AnnAssign)) and isinstance(after, ast.Expr) and \
                        isinstance(after.value, ast.Constant):
                    ids.add(id(after.value))
    return ids


def _rows() -> list[tuple[str, int, str]]:
    rows = []
    for path in sorted(PACKAGE.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _docstring_nodes(tree) | _attribute_docstrings(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip:
                for match in _NAMED.finditer(node.value):
                    rows.append((str(path.relative_to(PACKAGE.parent)), node.lineno, match.group(1)))
    return rows


ROWS = _rows()


def test_the_table_is_not_empty() -> None:
    assert len(ROWS) >= 20, ROWS  # the package's hints name many commands; a broken scan would find none


@pytest.mark.parametrize(("module", "line", "words"), ROWS, ids=[f"{m}:{l}:{w}" for m, l, w in ROWS])
def test_named_command_exists(module: str, line: int, words: str) -> None:
    command: click.Command = cli
    path = ["git memhtml"]
    for word in words.split():
        if not isinstance(command, click.Group):
            break  # an argument of a leaf command
        ctx = click.Context(command)
        sub = command.get_command(ctx, word)
        assert sub is not None, f"{module}:{line}: `{' '.join(path)} {word}` is not a command ({words!r})"
        command, path = sub, [*path, word]
    assert not isinstance(command, click.Group) or command is cli or len(path) > 1
