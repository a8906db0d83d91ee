"""Edge inputs found by new-user reviews: each is a clear error with a hint, never a crash."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.cli.main import main


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    init_repo(tmp_path / "m")
    return tmp_path / "m"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


@pytest.mark.parametrize("instant", ["9999-12-31T23:59:59-01:00", "0001-01-01T00:00:00+01:00", "２０２６-01-01"])
def test_as_of_out_of_range_or_non_ascii_is_a_usage_error(repo: Path, capsys: pytest.CaptureFixture[str],
                                                          instant: str) -> None:
    code, _, err = run(capsys, "-C", str(repo), "search", "x", "--as-of", instant)
    assert code == 2 and "--as-of" in err and "hint:" in err


@pytest.mark.parametrize("flag", [["--entity", "person:"], ["--entity", ":x"], ["--workspace", ""], ["--tag", " "]])
def test_empty_scope_values_are_usage_errors(repo: Path, capsys: pytest.CaptureFixture[str], flag: list[str]) -> None:
    code, _, err = run(capsys, "-C", str(repo), "search", "x", *flag)
    assert code == 2 and "hint:" in err


def test_an_infinite_weight_is_refused_with_the_sources_fix(repo: Path, capsys: pytest.CaptureFixture[str],
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_WEIGHT_FTS", "inf")
    code, _, err = run(capsys, "-C", str(repo), "search", "x")
    assert code == 2 and "finite" in err and "unset MEMHTML_WEIGHT_FTS" in err


def test_all_weights_zero_is_refused(repo: Path, capsys: pytest.CaptureFixture[str],
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    for arm in ("FTS", "VECTOR", "RECENCY", "SALIENCE"):
        monkeypatch.setenv(f"MEMHTML_WEIGHT_{arm}", "0")
    code, _, err = run(capsys, "-C", str(repo), "search", "x")
    assert code == 2 and "weight 0" in err


def test_doctor_reports_a_missing_merge_driver(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import subprocess

    subprocess.run(["git", "-C", str(repo), "config", "--local", "--unset-all", "include.path"], check=True)
    code, out, _ = run(capsys, "-C", str(repo), "doctor", "--json")
    data = json.loads(out)["data"]
    driver = next(c for c in data["git"] if c["name"] == "merge-driver")
    assert code == 1 and not driver["ok"] and driver["hint"]
