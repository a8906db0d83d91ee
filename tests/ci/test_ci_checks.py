"""`.ci/run` fails on a mypy error and on a ruff finding (issue 9 item 7), before any test runs.

The check lines are read from `.ci/run` itself and run verbatim, under the script's own `set -euo pipefail`, in a
small tree that holds the project's `pyproject.toml` and the four folders its `[tool.mypy] files` names. Each row
plants one file; the script's pytest step is stood in for by an `echo` that must not be reached when a check fails.
mypy's cache is shared by the rows (MYPY_CACHE_DIR) so only the first run pays for typeshed.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CI_RUN = ROOT / ".ci" / "run"
REACHED = "tests-would-run-now"
"""What the stand-in for the pytest step prints."""
MYPY = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]


def _script_lines() -> list[str]:
    return [line.strip() for line in CI_RUN.read_text(encoding="utf-8").splitlines()]


def _check_lines() -> list[str]:
    """The mypy and ruff commands of `.ci/run`, in order."""
    return [line for line in _script_lines() if re.match(r"python3 -m (mypy|ruff)\b", line)]


def test_ci_run_checks_types_and_lint_before_the_tests_and_stops_on_failure() -> None:
    lines = _script_lines()
    assert "set -euo pipefail" in lines
    checks = _check_lines()
    assert [line.split()[2] for line in checks] == ["mypy", "ruff"]
    tests = lines.index("python3 -m pytest -q")
    assert all(lines.index(line) < tests for line in checks)
    assert lines.index("set -euo pipefail") < lines.index(checks[0])


@dataclass(frozen=True)
class Plant:
    """One planted file: where, what, and which check must fail on it (None: both pass)."""

    path: str
    text: str
    fails: str | None
    needle: str
    """Text the failing check prints (its error code), or REACHED for a clean tree."""


ROWS: list[tuple[str, Plant]] = [
    ("clean tree passes", Plant("git_memhtml/fine.py", 'def half(n: int) -> float:\n    return n / 2\n', None,
                                REACHED)),
    ("mypy type error in the package", Plant("git_memhtml/planted.py", 'def half(n: int) -> int:\n    return n / 2\n',
                                             "mypy", "[return-value]")),
    ("mypy --strict: untyped test", Plant("tests/test_planted.py", "def test_untyped(x):\n    assert x\n", "mypy",
                                          "[no-untyped-def]")),
    ("pydantic plugin: unknown field", Plant(
        "git_memhtml/model.py",
        "from pydantic import BaseModel\n\n\nclass Point(BaseModel):\n    x: int\n\n\nPOINT = Point(x=1, y=2)\n",
        "mypy", "[call-arg]")),
    ("mypy in bench", Plant("bench/planted.py", 'COUNT: int = "many"\n', "mypy", "[assignment]")),
    ("ruff: unused import in the package", Plant("git_memhtml/planted.py", "import os\n", "ruff", "F401")),
    ("ruff: subprocess.run without check in tests", Plant(
        "tests/test_planted.py",
        'import subprocess\n\n\ndef test_run() -> None:\n    subprocess.run(["true"])\n', "ruff", "PLW1510")),
    ("ruff: loop variable in a closure in bench", Plant(
        "bench/planted.py",
        "from collections.abc import Callable\n\nACTIONS: list[Callable[[], int]] = []\nfor i in range(3):\n"
        "    ACTIONS.append(lambda: i)\n", "ruff", "B023")),
]


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("mypy-cache")


def _tree(tmp: Path, plant: Plant) -> Path:
    """The project's pyproject.toml, the folders mypy is configured to check, and the planted file."""
    root = tmp / "project"
    for folder in MYPY["files"]:
        (root / folder).mkdir(parents=True)
        (root / folder / "__init__.py").write_text('"""Planted."""\n')
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    (root / plant.path).write_text(plant.text)
    return root


@pytest.mark.parametrize("plant", [row for _, row in ROWS], ids=[name for name, _ in ROWS])
def test_a_planted_finding_fails_the_run_before_the_tests(tmp_path: Path, mypy_cache: Path, plant: Plant) -> None:
    root = _tree(tmp_path, plant)
    script = "\n".join(["set -euo pipefail", *_check_lines(), f"echo {REACHED}"])
    env = {**os.environ, "MYPY_CACHE_DIR": str(mypy_cache)}
    env.pop("PYTHONPATH", None)  # the planted tree's own git_memhtml, not the checkout's
    done = subprocess.run(["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=600,
                          check=False)
    output = done.stdout + done.stderr
    if plant.fails is None:
        assert done.returncode == 0, output
        assert REACHED in done.stdout and "Success: no issues found" in done.stdout
        return
    assert done.returncode != 0, output
    assert REACHED not in done.stdout
    assert plant.needle in output, output
    if plant.fails == "mypy":
        assert "All checks passed" not in output  # ruff never ran: the run stopped at mypy
    else:
        assert "Success: no issues found" in output  # mypy passed, ruff stopped the run


def test_mypy_checks_the_package_the_tests_and_the_scripts_strictly_with_the_pydantic_plugin() -> None:
    assert set(MYPY["files"]) == {"git_memhtml", "tests", "bench", "build_backend", ".ci/latest.py"}
    assert MYPY["strict"] is True and MYPY["plugins"] == ["pydantic.mypy"]
    assert "ignore_missing_imports" not in MYPY  # only per module, below


IGNORED = sorted(module for override in MYPY["overrides"] if override.get("ignore_missing_imports")
                 for module in override["module"] if not module.endswith(".*"))
"""The top-level modules pyproject exempts from missing-import errors (their ``.*`` sub-modules go with them)."""


@pytest.mark.parametrize("module", IGNORED)
def test_missing_imports_are_ignored_only_for_modules_without_type_information(module: str) -> None:
    """A module whose install carries ``py.typed`` or inline stubs needs no override (PEP 561)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, f"{module} is not installed"
    folder = Path(spec.origin).parent
    assert not (folder / "py.typed").exists(), f"{module} ships py.typed: drop its override"
    assert not list(folder.glob("*.pyi")), f"{module} ships stubs: drop its override"


def test_every_test_folder_is_a_package() -> None:
    """Without an ``__init__.py`` a folder's tests import under their bare names (pytest's rootdir rule)."""
    tests = ROOT / "tests"
    folders = {path.parent for path in tests.rglob("*.py") if "__pycache__" not in path.parts}
    assert sorted(str(f.relative_to(ROOT)) for f in folders if not (f / "__init__.py").exists()) == []


def test_ci_run_installs_the_inspector_release_the_test_pins() -> None:
    from tests.mcp import test_inspector

    line = next(line for line in _script_lines() if line.startswith("inspector_version="))
    read = subprocess.run(["bash", "-c", f"{line}; printf %s \"$inspector_version\""], cwd=ROOT, capture_output=True,
                          text=True, check=True)
    assert read.stdout == test_inspector.INSPECTOR_VERSION
    assert "@modelcontextprotocol/inspector@$inspector_version" in CI_RUN.read_text(encoding="utf-8")
