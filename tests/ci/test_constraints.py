"""The pinned set and the newest-releases check (issue 26, docs/architecture.md "Pinned and newest releases").

``constraints.txt`` pins every dependency ``pyproject.toml`` names, inside its range, and both README commands and
``.ci/run`` install through it. ``.ci/latest.py``'s pure parts (reading pins, the packages that moved, the failing
node ids of a JUnit report) are checked on planted inputs; its installs need the package index, so the check itself
runs only on request (``bash .ci/run --latest``), never in the default suite.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]


@functools.cache
def _latest() -> ModuleType:
    """``.ci/latest.py`` as a module (registered first: its dataclasses look their module up by name)."""
    spec = importlib.util.spec_from_file_location("ci_latest", ROOT / ".ci" / "latest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [Requirement(name) for name in names]


def test_every_declared_dependency_is_pinned_inside_its_range() -> None:
    pins = _latest().read_pins((ROOT / "constraints.txt").read_text(encoding="utf-8"))
    requirements = _requirements()
    assert len(requirements) > 15
    for requirement in requirements:
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        assert name in pins, f"constraints.txt does not pin {requirement.name}"
        assert requirement.specifier.contains(Version(pins[name]), prereleases=True), (requirement, pins[name])


def test_the_pins_are_exact_and_the_project_is_not_pinned() -> None:
    lines = [line for line in (ROOT / "constraints.txt").read_text(encoding="utf-8").splitlines()
             if line.strip() and not line.startswith("#")]
    assert all(re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*==[0-9][^\s]*", line) for line in lines), lines
    assert not any(line.lower().startswith(("git-memhtml", "git_memhtml")) for line in lines)


def test_ci_and_both_readme_commands_install_through_the_constraints() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("```sh\n", 1)[1].split("```", 1)[0].splitlines()
    assert block == ["python3 -m pip install -e . -c constraints.txt && git memhtml demo",
                     "python3 -m pip install -e '.[test]' -c constraints.txt && python3 -m pytest -q"]
    run = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "-e '.[test]' -c constraints.txt" in run
    assert 'exec python3 .ci/latest.py "$@"' in run


def test_read_pins_skips_what_is_not_a_pin() -> None:
    text = "# a comment\n\nClick==8.5.1\n-e git+file:///x#egg=git_memhtml\nPyYAML==6.0.4 ; python_version>'3'\n" \
           "zope.interface==7.0\nrequests>=2\n"
    assert _latest().read_pins(text) == {"click": "8.5.1", "pyyaml": "6.0.4", "zope-interface": "7.0"}


def test_changes_name_what_moved_and_what_is_new() -> None:
    latest = _latest()
    moved = latest.changes({"click": "8.4.0", "numpy": "2.4.6"}, {"click": "8.5.1", "numpy": "2.4.6", "new": "1"})
    assert [(c.name, c.pinned, c.newest) for c in moved] == [("click", "8.4.0", "8.5.1"), ("new", None, "1")]


JUNIT = """<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">
<testcase classname="tests.cli.test_lazy_cli" name="test_start_up[args1]" file="tests/cli/test_lazy_cli.py" line="3">
<failure message="x">boom</failure></testcase>
<testcase classname="tests.cli.test_lazy_cli" name="test_ok" file="tests/cli/test_lazy_cli.py" line="9"/>
<testcase classname="tests.a.test_b.TestThing" name="test_c[two words]" file="tests/a/test_b.py" line="1">
<error message="y">setup broke</error></testcase>
<testcase classname="tests.a.test_b" name="test_skipped" file="tests/a/test_b.py" line="5"><skipped/></testcase>
</testsuite></testsuites>"""


def test_failed_tests_become_node_ids_pytest_can_run_again() -> None:
    assert _latest().failed_tests(JUNIT) == ["tests/cli/test_lazy_cli.py::test_start_up[args1]",
                                             "tests/a/test_b.py::TestThing::test_c[two words]"]


@pytest.mark.parametrize("argv", [["--help"]])
def test_the_check_has_a_usage_line(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        _latest().main(argv)
    assert done.value.code == 0
    assert "newest releases" in capsys.readouterr().out
