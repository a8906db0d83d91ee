"""bench/validate_bench.py runs end to end on a small corpus and every generated file validates."""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType

import pytest

from git_memhtml.document.wellformed import check_memory_bytes
from tests.bench.bench_support import PROJECT_ROOT


def _module() -> ModuleType:
    path = PROJECT_ROOT / "bench" / "validate_bench.py"
    spec = importlib.util.spec_from_file_location("bench_validate", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_generated_files_are_valid_and_deterministic() -> None:
    bench = _module()
    files = bench.generate(30, seed=3)
    assert files == bench.generate(30, seed=3)
    assert len({path for path, _ in files}) == 30
    for _, data in files:
        result = check_memory_bytes(data)
        assert result.violations == () and result.warnings == ()


def test_main_prints_three_throughputs(capsys: pytest.CaptureFixture[str]) -> None:
    assert _module().main(["--files", "12", "--repeat", "1"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if "files/s" in line]
    assert len(lines) == 3 and all("MB/s" in line for line in lines)
