"""Shared helpers of the bench tests: where the real data lives, the converter module, op rendering."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED_DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
"""Real inputs beside the project (docs/locomo.md); tests skip when absent."""
LOCOMO_JSON = SHARED_DATA / "locomo" / "locomo-dev.json"
DEMO_JSONL = PROJECT_ROOT / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
NOW = "2026-01-15T12:00:00Z"
"""The write instant the render tests stamp (matches ``tests/conftest.py``'s fixed date)."""


def load_locomo_module() -> ModuleType:
    """Import ``bench/locomo.py`` (a script, not a package) by path."""
    path = PROJECT_ROOT / "bench" / "locomo.py"
    spec = importlib.util.spec_from_file_location("bench_locomo", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    """Every non-blank line of ``path`` as a JSON object."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def render_op(op: dict[str, Any], now: str = NOW) -> str:
    """Render one apply ``write`` op through the apply door itself: the op model reads it into a draft
    (``store.ops.WriteOp.from_json``) and ``document.template.render_memory`` renders it (the render gate).

    Raises ``InvalidMemory`` when the op's article is invalid, ``pydantic.ValidationError`` when the op model
    refuses the op.
    """
    from git_memhtml.document.template import render_memory
    from git_memhtml.store.ops import WriteOp

    return render_memory(WriteOp.from_json(op).draft, now=now)
