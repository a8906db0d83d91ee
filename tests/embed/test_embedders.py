"""Embedders: fake feature hashing per docs/gate.md §8.3, registry, and one real wordllama load."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from git_memhtml.embed.base import Embedder, l2_normalise
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.embed.registry import get_embedder
from git_memhtml.errors import ConfigError


def test_fake_hashes_each_token_into_two_buckets() -> None:
    digest = hashlib.sha256(b"deploy").digest()
    i, j = int.from_bytes(digest[:4], "big") % 1024, int.from_bytes(digest[4:8], "big") % 1024
    vec = FakeEmbedder().embed(["DEPLOY!"])[0]
    expected = np.zeros(1024)
    expected[i] += 1.0
    expected[j] += 0.5
    expected /= np.linalg.norm(expected)
    assert vec.dtype == np.float32
    np.testing.assert_allclose(vec, expected, atol=1e-6)


def test_fake_is_deterministic_normalised_and_zero_stays_zero() -> None:
    emb = FakeEmbedder(dim=64)
    a = emb.embed(["the deploy window is 10 minutes", "…", "été"])
    b = emb.embed(["the deploy window is 10 minutes", "…", "été"])
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 64)
    assert abs(float(np.linalg.norm(a[0])) - 1.0) < 1e-6
    assert not np.any(a[1])
    assert emb.space == "fake:hash@64"
    assert isinstance(emb, Embedder)


def test_l2_normalise_keeps_zero_rows() -> None:
    out = l2_normalise([[3.0, 4.0], [0.0, 0.0]])
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]])


def test_registry_names() -> None:
    assert get_embedder("off") is None
    assert get_embedder(" OFF ") is None
    fake = get_embedder("fake")
    assert fake is not None and fake.dim == 1024
    wl = get_embedder("wordllama")
    assert wl is not None and wl.space == "wordllama:l2_supercat@256"
    with pytest.raises(ConfigError) as err:
        get_embedder("bert")
    assert "wordllama" in err.value.message and "off" in (err.value.hint or "")


def test_wordllama_loads_offline_and_survives_long_text() -> None:
    wl = get_embedder("wordllama")
    assert wl is not None
    vecs = wl.embed(["the deploy step is safe", "", "deploy " * 4000, "the deploy step is dangerous"])
    assert vecs.shape == (4, 256) and vecs.dtype == np.float32
    norms = np.linalg.norm(vecs, axis=1)
    np.testing.assert_allclose(norms[[0, 2, 3]], 1.0, atol=1e-5)
    assert norms[1] == 0.0
    assert float(vecs[0] @ vecs[3]) > 0.5
