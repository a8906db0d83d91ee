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


def test_the_showcase_search_finds_the_obvious_answer_first(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The demo's last step searches ``checkout timeout`` with the default embedder: the checkout-api timeout memory
    comes first, not a memory that only says "checkout" and sorts early by path (docs/retrieval.md §4.2 "Ties")."""
    monkeypatch.setenv("MEMHTML_EMBED", "wordllama")
    assert main(["demo", str(tmp_path / "demo")]) == 0
    out = capsys.readouterr().out
    table = out.split("7. search", 1)[1].splitlines()
    first = next(line for line in table if line.startswith("1 "))
    assert "checkout-to-payments-timeout" in first, out[-2000:]
