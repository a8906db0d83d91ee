"""The lean WordLlama loader (issue 12: a cold ``search`` must not pay ``import wordllama``) gives the package's
own vectors bit for bit, finds the files the package's resolver finds, and a search process never imports the
``wordllama`` package."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.embed.wordllama import (
    BATCH_SIZE,
    WORDLLAMA_CONFIG,
    WORDLLAMA_DIM,
    LeanWordLlama,
    WordLlamaEmbedder,
    lean_files,
    wordllama_folder,
)

TEXTS = [
    "The team deploys on Mondays.",
    "",
    "   ",
    "Ünïcödé façade — naïve café 東京 🚀",
    "word " * 700,
    "x",
    "Checkout upstream timeout is 30 s; retries thrice.",
    "\n\tTabs\tand\nnewlines\n",
    "a" * 3000,
    "Zebras graze quietly near the river bank at dawn.",
]
"""Short, empty, blank, non-ASCII, long (padding across a batch), one character, punctuation, control characters."""


@pytest.fixture(scope="module")
def package_model() -> object:
    import wordllama

    return wordllama.WordLlama.load(config=WORDLLAMA_CONFIG, cache_dir=Path(wordllama.__file__).parent,
                                    dim=WORDLLAMA_DIM, disable_download=True)


def test_the_files_are_those_the_package_resolves() -> None:
    import wordllama

    files = lean_files(WORDLLAMA_CONFIG, WORDLLAMA_DIM)
    assert files is not None
    folder = Path(wordllama.__file__).parent
    assert wordllama_folder() == folder
    uri = getattr(wordllama.WordLlama._wordllama, WORDLLAMA_CONFIG)  # how WordLlama.load names the model
    want_weights = wordllama.WordLlama.resolve_file(config_name=WORDLLAMA_CONFIG, model_uri=uri, dim=WORDLLAMA_DIM,
                                                    binary=False, file_type="weights", cache_dir=folder,
                                                    disable_download=True)
    want_tokenizer = wordllama.WordLlama.resolve_file(config_name=WORDLLAMA_CONFIG, model_uri=uri, dim=WORDLLAMA_DIM,
                                                      binary=False, file_type="tokenizer", cache_dir=folder,
                                                      disable_download=True)
    assert files == (Path(want_weights), Path(want_tokenizer))


@pytest.mark.parametrize("norm", [True, False])
@pytest.mark.parametrize("batch", [1, 3, BATCH_SIZE])
def test_lean_vectors_equal_the_packages_bit_for_bit(package_model: object, norm: bool, batch: int) -> None:
    files = lean_files(WORDLLAMA_CONFIG, WORDLLAMA_DIM)
    assert files is not None
    lean = LeanWordLlama(*files)
    texts = [t for t in TEXTS if t.strip()] if norm else TEXTS  # the package divides 0 by 0 for a blank text
    want = package_model.embed(texts, norm=norm, return_np=True, batch_size=batch)  # type: ignore[attr-defined]
    got = lean.embed(texts, norm=norm, batch_size=batch)
    assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def test_the_embedder_uses_the_lean_loader_and_keeps_its_vectors() -> None:
    embedder = WordLlamaEmbedder()
    vectors = embedder.embed(TEXTS)
    assert isinstance(embedder.load(), LeanWordLlama)
    assert vectors.shape == (len(TEXTS), WORDLLAMA_DIM)
    assert not vectors[1].any() and not vectors[2].any()  # blank texts stay zero rows
    norms = np.linalg.norm(vectors[[0, 3, 4, 5]], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)


def test_embedding_in_a_new_process_imports_no_wordllama_package(tmp_path: Path) -> None:
    code = ("import sys; from git_memhtml.embed.wordllama import WordLlamaEmbedder; "
            "v = WordLlamaEmbedder().embed(['the team fact']); "
            "import logging; root = logging.getLogger(); "
            "print(v.shape, 'wordllama' in sys.modules, root.level, len(root.handlers))")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert proc.stdout.split() == ["(1,", "256)", "False", "30", "0"]  # no package; root logger untouched
