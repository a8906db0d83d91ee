"""bench/basic_memory.py's own logic (the comparison itself is opt-in and never runs here): the notes it gives
basic-memory carry the same text as the ops git-memhtml applies."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.bench.bench_support import PROJECT_ROOT


def _load() -> ModuleType:
    sys.path.insert(0, str(PROJECT_ROOT / "bench"))
    spec = importlib.util.spec_from_file_location("bench_basic_memory", PROJECT_ROOT / "bench" / "basic_memory.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


bm = _load()

OP = {"op": "write", "title": "Melanie, D1:2", "type": "episodic", "workspace": "conv-26",
      "tags": ["locomo", "conv-26"], "entities": ["person:Melanie"],
      "article_html": "<p><mark>I&#x27;m swamped with the kids &amp; work.</mark></p><p>Melanie said this in "
                      "session 1, <time datetime=\"2023-05-08T13:56:00Z\">1:56 pm on 8 May, 2023</time>.</p>"
                      "<aside><p>Earlier, Caroline said: Hey Mel!</p></aside><dl><dt>dia_id</dt><dd>D1:2</dd></dl>"}


def test_article_text_keeps_every_paragraph_and_decodes_entities() -> None:
    assert bm.article_text(OP["article_html"]).split("\n\n") == [
        "I'm swamped with the kids & work.",
        "Melanie said this in session 1, 1:56 pm on 8 May, 2023 .",
        "Earlier, Caroline said: Hey Mel!",
        "dia_id",
        "D1:2",
    ]


def test_one_note_per_op_with_title_tags_and_text(tmp_path: Path) -> None:
    paths = bm.write_notes([OP, {**OP, "title": "Melanie, D1:3"}], tmp_path)
    assert sorted(p.relative_to(tmp_path).as_posix() for p in paths.values()) == [
        "conv-26/Melanie D1-2.md", "conv-26/Melanie D1-3.md"]
    text = paths["Melanie, D1:2"].read_text(encoding="utf-8")
    assert text.startswith('---\ntitle: "Melanie, D1:2"\ntags: [locomo, conv-26]\n---\n\n# Melanie, D1:2\n\n')
    assert "I'm swamped with the kids & work." in text and "<" not in text


def test_a_missing_basic_memory_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert bm.main(["--bm", str(tmp_path / "absent")]) == 2
    assert "hint:" in capsys.readouterr().err
