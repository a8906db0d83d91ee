"""Tests side by side under ``pytest -n`` (tests/conftest.py): a private temp folder per test, and the tests sharing
a wider-than-test fixture grouped onto one xdist worker."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

SEEN: dict[str, str] = {}
"""test name → the temp folder it saw (the two ``private`` rows compare theirs)."""


@pytest.fixture(scope="module")
def shared_value() -> str:
    return "built once"


@pytest.mark.parametrize("row", ["first", "second"])
def test_each_test_has_its_own_temp_folder_in_process_and_in_subprocesses(
    row: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    here = tempfile.gettempdir()
    assert os.environ["TMPDIR"] == here
    assert Path(here).is_relative_to(tmp_path_factory.getbasetemp())  # never the machine's /tmp
    assert list(Path(here).iterdir()) == []
    child = subprocess.run([sys.executable, "-c", "import tempfile; print(tempfile.gettempdir())"], check=True,
                           capture_output=True, text=True).stdout.strip()
    assert child == here
    SEEN[row] = here
    if len(SEEN) == 2:  # both rows ran in this process: their folders differ
        assert SEEN["first"] != SEEN["second"]


def test_a_test_using_a_module_fixture_is_grouped_by_its_file(shared_value: str,
                                                               request: pytest.FixtureRequest) -> None:
    mark = request.node.get_closest_marker("xdist_group")
    assert shared_value == "built once"
    assert mark is not None and mark.args == ("tests/test_parallel_safety.py",)


def test_a_test_using_only_function_fixtures_is_not_grouped(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    assert tmp_path.is_dir()
    assert request.node.get_closest_marker("xdist_group") is None


def test_slow_single_tests_are_handed_out_before_the_quick_ones(request: pytest.FixtureRequest) -> None:
    """Every ``slow`` test in no xdist group comes before every quick one in no group, in the session's order."""
    single = [item for item in request.session.items if item.get_closest_marker("xdist_group") is None]
    slow = [i for i, item in enumerate(single) if item.get_closest_marker("slow") is not None]
    quick = [i for i, item in enumerate(single) if item.get_closest_marker("slow") is None]
    assert quick  # this test itself
    assert not slow or max(slow) < min(quick)
