"""The check against the newest releases (issue 26): ``bash .ci/run --latest``.

The default CI run installs through ``constraints.txt``, the exact releases the suite passes with. This check
installs the project and its test extra into a new virtualenv *without* the constraints and with an empty pip
cache, so the resolver takes the newest release every range in ``pyproject.toml`` admits, as a fresh machine does.
It then runs CI's checks (mypy, ruff, the README's test command) in that venv.

When a check fails, it names the package whose new release broke it: in a second venv holding the pinned set, it
upgrades one changed package at a time to its newest release (with whatever that release itself requires), runs
again only what failed, and puts the pins back. A package whose upgrade alone reproduces a failure is named with
the failures it reproduces. Exit 0: every check passed on the newest releases; 1: something failed (the report
says what, and which release); 2: the check could not run (a venv or an install failed).

Standard library only: it runs before anything is installed.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CONSTRAINTS = ROOT / "constraints.txt"
_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;#]+)")


def canonical(name: str) -> str:
    """A distribution name as PEP 503 compares it: lower case, runs of ``-_.`` as one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def read_pins(text: str) -> dict[str, str]:
    """``name==version`` lines of a constraints file or of ``pip freeze`` → ``{canonical name: version}``;
    comments, blank lines and editable or URL lines are skipped."""
    pins: dict[str, str] = {}
    for line in text.splitlines():
        match = _PIN.match(line.strip())
        if match:
            pins[canonical(match.group(1))] = match.group(2)
    return pins


@dataclass(frozen=True)
class Change:
    """A package whose resolved release differs from its pin (``pinned`` is None for one the pins lack)."""

    name: str
    pinned: str | None
    newest: str


def changes(pins: Mapping[str, str], resolved: Mapping[str, str]) -> list[Change]:
    """The packages the unconstrained install resolved differently from the pins, sorted by name."""
    return [Change(name, pins.get(name), version) for name, version in sorted(resolved.items())
            if pins.get(name) != version]


def failed_tests(junit_xml: str) -> list[str]:
    """The node ids of the failed and errored tests in a ``-o junit_family=xunit1`` report (it carries ``file``)."""
    failed: list[str] = []
    for case in ET.fromstring(junit_xml).iter("testcase"):
        if case.find("failure") is None and case.find("error") is None:
            continue
        file, classname, name = case.get("file", ""), case.get("classname", ""), case.get("name", "")
        module = file.removesuffix(".py").replace("/", ".")
        inner = classname[len(module) + 1:] if classname.startswith(module + ".") else ""
        failed.append("::".join(part for part in (file, *inner.split("."), name) if part))
    return failed


@dataclass(frozen=True)
class Outcome:
    """What one run of the checks found: the checks that failed (``mypy``, ``ruff``, ``pytest``) and the failing
    test node ids."""

    failed_checks: tuple[str, ...]
    failed_tests: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.failed_checks


class Venv:
    """A throw-away virtualenv under ``folder``; its ``bin`` goes first on ``PATH`` for every command it runs."""

    def __init__(self, folder: Path, *, no_cache: bool) -> None:
        self.root = folder
        subprocess.run([sys.executable, "-m", "venv", str(folder)], check=True)
        self.env = {**os.environ, "PATH": f"{folder / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}",
                    "VIRTUAL_ENV": str(folder)}
        self.env.pop("PYTHONPATH", None)
        if no_cache:
            self.env["PIP_NO_CACHE_DIR"] = "1"

    @property
    def python(self) -> str:
        return str(self.root / "bin" / "python")

    def run(self, *argv: str, log: Path | None = None) -> int:
        """Run ``argv`` in the checkout with this venv's environment; output to ``log`` (appended) or through."""
        if log is None:
            return subprocess.run(argv, cwd=ROOT, env=self.env, check=False).returncode
        with log.open("a", encoding="utf-8") as out:
            return subprocess.run(argv, cwd=ROOT, env=self.env, stdout=out, stderr=subprocess.STDOUT,
                                  check=False).returncode

    def pip(self, *args: str, log: Path | None = None) -> int:
        """``pip install --quiet ARGS`` in this venv."""
        return self.run(self.python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *args, log=log)

    def freeze(self) -> dict[str, str]:
        done = subprocess.run([self.python, "-m", "pip", "freeze", "--exclude-editable"], cwd=ROOT, env=self.env,
                              capture_output=True, text=True, check=True)
        return read_pins(done.stdout)


def run_checks(venv: Venv, work: Path, tests: Sequence[str] = (), checks: Sequence[str] = ("mypy", "ruff",
                                                                                            "pytest")) -> Outcome:
    """CI's checks in ``venv``: mypy, ruff, then pytest (all of it, or only ``tests``)."""
    failed: list[str] = []
    if "mypy" in checks and venv.run(venv.python, "-m", "mypy", log=work / "mypy.log") != 0:
        failed.append("mypy")
    if "ruff" in checks and venv.run(venv.python, "-m", "ruff", "check", ".", log=work / "ruff.log") != 0:
        failed.append("ruff")
    failing: list[str] = []
    if "pytest" in checks:
        report = work / "junit.xml"
        report.unlink(missing_ok=True)
        args = ["-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1", f"--junitxml={report}"]
        if tests:
            args += ["-n", "0", *tests]
        if venv.run(venv.python, "-m", "pytest", *args, log=work / "pytest.log") != 0:
            failed.append("pytest")
            failing = failed_tests(report.read_text(encoding="utf-8")) if report.exists() else []
    return Outcome(tuple(failed), tuple(failing))


def blame(work: Path, pins: Mapping[str, str], moved: Sequence[Change], first: Outcome) -> dict[str, Outcome]:
    """For each changed package, the failures of ``first`` that its newest release reproduces on the pinned set."""
    venv = Venv(work / "bisect", no_cache=False)
    restore = ["-c", str(CONSTRAINTS), "-e", f"{ROOT}[test]"]
    if venv.pip(*restore) != 0:
        raise SystemExit("latest: the pinned set does not install; fix constraints.txt first")
    base = run_checks(venv, work, first.failed_tests, first.failed_checks)
    if not base.ok:
        print(f"latest: on the pinned set these fail too (not a new release): {base.failed_checks} "
              f"{list(base.failed_tests)[:20]}")
    found: dict[str, Outcome] = {}
    for change in moved:
        if change.pinned is None:
            continue  # a package the pins lack comes only with another package's upgrade
        log = work / f"upgrade-{change.name}.log"
        if venv.run(venv.python, "-m", "pip", "install", "--quiet", f"{change.name}=={change.newest}", log=log) != 0:
            print(f"latest: {change.name} {change.newest} does not install on the pinned set (see {log})")
            continue
        dragged = changes(pins, venv.freeze())
        outcome = run_checks(venv, work, first.failed_tests, first.failed_checks)
        new_checks = tuple(c for c in outcome.failed_checks if c not in base.failed_checks)
        new_tests = tuple(t for t in outcome.failed_tests if t not in base.failed_tests)
        if new_checks or new_tests:
            found[change.name] = Outcome(new_checks, new_tests)
            others = [f"{d.name} {d.newest}" for d in dragged if d.name != change.name]
            print(f"latest: {change.name} {change.pinned} → {change.newest} alone breaks {', '.join(new_checks)}"
                  + (f" (with {', '.join(others)})" if others else ""))
        venv.run(venv.python, "-m", "pip", "install", "--quiet", "-r", str(CONSTRAINTS), log=log)
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="bash .ci/run --latest", description=__doc__.splitlines()[0])
    parser.add_argument("pytest_args", nargs="*", help="run only these tests (default: the whole suite)")
    options = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="memhtml-latest-"))
    pins = read_pins(CONSTRAINTS.read_text(encoding="utf-8"))
    print(f"latest: a new venv, no constraints, no pip cache (logs in {work})")
    venv = Venv(work / "venv", no_cache=True)
    if venv.pip("-e", f"{ROOT}[test]", log=work / "install.log") != 0:
        print(f"latest: the unconstrained install failed: {work / 'install.log'}")
        return 2
    moved = changes(pins, venv.freeze())
    for change in moved:
        print(f"latest: {change.name}: {change.pinned or '(not pinned)'} → {change.newest}")
    if not moved:
        print("latest: the newest releases are the pinned ones")
    first = run_checks(venv, work, options.pytest_args)
    if first.ok:
        print(f"latest: PASS on the newest releases ({len(moved)} newer than the pins)")
        return 0
    print(f"latest: FAIL on the newest releases: {', '.join(first.failed_checks)}; "
          f"{len(first.failed_tests)} tests failed")
    for test in first.failed_tests[:50]:
        print(f"  {test}")
    found = blame(work, pins, moved, first)
    if not found:
        print("latest: no single new release reproduces the failures alone (a combination, or flaky: see the logs)")
    for name, outcome in found.items():
        print(f"latest: BROKEN BY {name}: {', '.join(outcome.failed_checks)} {' '.join(outcome.failed_tests[:10])}")
    print(f"latest: logs in {work}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
