"""docs/architecture.md names only things that exist, and its layer tables are the data of ``archrules``.

The page's name forms (its top says so): a package file relative to ``git_memhtml/`` (``sleep/engine/run.py``,
a folder with a trailing ``/``), a file outside the package starting with ``tests/``, ``docs/``, ``bench/``,
``.ci/`` (or ``pyproject.toml``), ``file.py:name`` for a name defined in a file, and dotted ``git_memhtml.x.y``.
Every code-font token of those shapes must resolve; other code-font text (commands, placeholders with ``<…>``) is
not a name.
"""

from __future__ import annotations

import importlib
import re
from pathlib import Path

import pytest

from tests.architecture import archrules as rules

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "architecture.md"

_TOKEN = re.compile(r"`([^`\n]+)`")
_FILE_NAME = re.compile(r"^(?P<file>[\w./-]+\.py):(?P<name>[A-Za-z_]\w*)$")
_PATH = re.compile(r"^(?:[\w.-]+/)*[\w.-]*[\w-](?:\.(?:py|md|sql|toml|1)|/)$")
_DOTTED = re.compile(r"^git_memhtml(?:\.\w+)+$")
_OUTSIDE = ("tests/", "docs/", "bench/", "git_memhtml/", "build_backend/", ".ci/")


def names_in(text: str) -> list[str]:
    """The code-font tokens of ``text`` that are names in one of the page's forms, in order."""
    return [t for t in _TOKEN.findall(text) if _FILE_NAME.match(t) or _PATH.match(t) or _DOTTED.match(t)]


def _where(token: str, repo: Path) -> Path:
    """The file or folder a path token names (see the module docstring for the forms)."""
    if token.startswith(_OUTSIDE) or token == "pyproject.toml":
        return repo / token
    return repo / "git_memhtml" / token


def _has_module_attr(module: str, attrs: list[str]) -> bool:
    try:
        obj: object = importlib.import_module(module)
    except ImportError:
        return False
    for attr in attrs:
        if not hasattr(obj, attr):
            return False
        obj = getattr(obj, attr)
    return True


def _dotted_resolves(token: str) -> bool:
    """Whether ``git_memhtml.a.b.c`` imports: the longest importable module prefix, then attributes."""
    parts = token.split(".")
    for cut in range(len(parts), 0, -1):
        module = ".".join(parts[:cut])
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name is not None and module.startswith(exc.name):
                continue
            raise
        return _has_module_attr(module, parts[cut:])
    return False


def unresolved(text: str, repo: Path = REPO) -> list[str]:
    """The names of ``text`` that do not exist: a missing file or folder, a name its file does not define, or a
    dotted name that does not import."""
    bad = []
    for token in names_in(text):
        file_name = _FILE_NAME.match(token)
        if file_name:
            path = _where(file_name["file"], repo)
            module = rules.module_name(path.relative_to(repo / "git_memhtml").as_posix()) \
                if path.is_relative_to(repo / "git_memhtml") else None
            if not path.is_file() or module is None or not _has_module_attr(module, [file_name["name"]]):
                bad.append(token)
        elif _DOTTED.match(token):
            if not _dotted_resolves(token):
                bad.append(token)
        else:
            where = _where(token, repo)
            if not (where.is_dir() if token.endswith("/") else where.is_file()):
                bad.append(token)
    return bad


def layer_table(text: str, heading: str, prefix: str = "") -> tuple[tuple[str, ...], ...]:
    """The layer table under the first heading starting with ``heading``: rows ``| <n> | `room`, … |`` in order,
    rooms read from their tokens (``errors.py`` → ``errors``, ``document/`` → ``document``) after ``prefix``."""
    section = text[text.index(heading):]
    rows: list[tuple[str, ...]] = []
    for line in section.splitlines()[1:]:
        if line.startswith("#"):
            break
        match = re.match(r"^\|\s*(\d+)\s*\|(.*)\|\s*$", line)
        if match:
            assert int(match[1]) == len(rows), f"layer rows out of order at {line!r}"
            rooms = [t.removeprefix(prefix).removesuffix("/").removesuffix(".py") for t in _TOKEN.findall(match[2])]
            rows.append(tuple(rooms))
        elif rows and not line.startswith("|"):
            break
    return tuple(rows)


def _same(a: tuple[tuple[str, ...], ...], b: tuple[tuple[str, ...], ...]) -> bool:
    return [sorted(layer) for layer in a] == [sorted(layer) for layer in b]


def test_every_name_on_the_page_exists() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert len(names_in(text)) > 50, "the page should name its files and entry points"
    assert unresolved(text) == []


def test_the_page_layer_tables_are_the_test_data() -> None:
    text = PAGE.read_text(encoding="utf-8")
    assert _same(layer_table(text, "## Layers"), rules.LAYERS)
    assert _same(layer_table(text, "### Inside `sleep/`", "sleep/"), rules.SLEEP_LAYERS)


PLANTED: list[tuple[str, str]] = [
    ("missing package file", "see `sleep/engine/nowhere.py` first"),
    ("missing folder", "the `sleep/dreams/` sub-package"),
    ("missing docs page", f"as `docs/{'nowhere'}.md` says"),  # spelt so no citation checker reads it as one
    ("missing test file", "`tests/architecture/test_nothing.py`"),
    ("name the file lacks", "`embed/registry.py:get_dreamer`"),
    ("file:name on a missing file", "`embed/dream.py:get_embedder`"),
    ("dotted module missing", "`git_memhtml.sleep.dreams`"),
    ("dotted attribute missing", "`git_memhtml.sleep.engine.contract.NO_SUCH_PHASES`"),
    ("an old path that moved", "`store/layout.py`"),
    ("an old dotted name that moved", "`git_memhtml.hooks.artifact_merge`"),
]


@pytest.mark.parametrize(("label", "text"), PLANTED, ids=[r[0] for r in PLANTED])
def test_a_bad_name_is_caught(label: str, text: str) -> None:
    assert unresolved(text) != [], label


def test_good_names_and_non_names_pass() -> None:
    text = ("`sleep/engine/run.py`, `sleep/phases/`, `output.py`, `docs/format.md`, `pyproject.toml`, "
            "`tests/cli/test_cut.py`, `embed/registry.py:get_embedder`, `git_memhtml.sleep.landing.reconcile`, "
            "`git_memhtml.sleep.engine.contract.SLEEP_PHASES`, `index/migrations/`, `docs/git-memhtml.1`; "
            "not names: `git memhtml sleep run`, `sleep/phases/<phase>.py`, `memhtml-valid-until`, `(n, dim)`")
    assert names_in(text)[:3] == ["sleep/engine/run.py", "sleep/phases/", "output.py"]
    assert len(names_in(text)) == 11
    assert unresolved(text) == []


def test_a_layer_table_that_disagrees_is_caught() -> None:
    text = "## Layers\n\n| layer | rooms |\n| --- | --- |\n| 0 | `errors.py` |\n| 1 | `store/`, `sleep/` |\n\nAfter.\n"
    table = layer_table(text, "## Layers")
    assert table == (("errors",), ("store", "sleep"))
    assert not _same(table, rules.LAYERS)
