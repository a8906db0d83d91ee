"""``git memhtml demo`` argument checks happen before anything is created (in-process; the full run is covered by
tests/install/test_wheel_install.py from a wheel)."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.cli.main import main


@pytest.mark.parametrize("corpus", [b"\xff\xfe not utf-8\n", b'{"op": "write"}\n', b"\n\n"])
def test_a_bad_corpus_creates_no_demo_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str], corpus: bytes) -> None:
    source = tmp_path / "corpus.jsonl"
    source.write_bytes(corpus)
    target = tmp_path / "demo"
    assert main(["demo", str(target), "--corpus", str(source)]) == 2
    assert not target.exists()
    assert "corpus.jsonl" in capsys.readouterr().err
