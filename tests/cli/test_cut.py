"""Cut lines end with ``…``: ``clip``/``clip_join`` and the display paths that use them (issue 8 item 11)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.cut import clip, clip_join

PACKAGE = Path(__file__).resolve().parents[2] / "git_memhtml"


@pytest.mark.parametrize(("text", "width", "expected"), [
    ("short", 10, "short"),
    ("exactly10!", 10, "exactly10!"),
    ("twelve chars", 11, "twelve cha…"),
    ("trailing space here", 10, "trailing…"),
])
def test_clip(text: str, width: int, expected: str) -> None:
    out = clip(text, width)
    assert len(out) <= width or text == out
    assert out == (text if len(text) <= width else expected)
    if len(text) > width:
        assert out.endswith("…")


def test_clip_join() -> None:
    assert clip_join(["a", "b"], 3) == "a, b"
    assert clip_join(["a", "b", "c", "d"], 2) == "a, b, … (+2 more)"
    assert clip_join(iter(["x", "y", "z"]), 1, "; ") == "x; … (+2 more)"


def _slices(path: Path) -> list[str]:
    """``expr[:N]`` with a literal N >= 20 whose expression is not a sha: a bare display cut."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            upper = node.slice.upper
            if node.slice.lower is None and isinstance(upper, ast.Constant) and isinstance(upper.value, int) \
                    and upper.value >= 20 and "sha" not in ast.unparse(node.value).lower():
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} {ast.unparse(node)}")
    return found


DISPLAY_MODULES = sorted([*(PACKAGE / "cli").glob("*.py"), PACKAGE / "gitrepo" / "repo.py",
                          PACKAGE / "sleep" / "landing" / "forge.py", PACKAGE / "sleep" / "engine" / "run.py"])


@pytest.mark.parametrize("module", DISPLAY_MODULES, ids=lambda p: p.name)
def test_display_code_cuts_text_only_through_clip(module: Path) -> None:
    assert _slices(module) == []


def test_list_cuts_a_long_title_with_an_ellipsis(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    title = "A very long title " * 8
    assert main(["-C", str(root), "write", "--type", "semantic", "--title", title, "--claim", "Long titles cut."]) == 0
    capsys.readouterr()
    assert main(["-C", str(root), "list"]) == 0
    row = next(line for line in capsys.readouterr().out.splitlines() if "A very long title" in line)
    assert row.rstrip().endswith("…") and title.strip() not in row
