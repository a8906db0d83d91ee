"""Patterns match the whole value: no trailing newline slips through; a backslash cannot hide a dot segment."""

from __future__ import annotations

from git_memhtml.document.hash import is_content_hash
from git_memhtml.document.validate import LANG_TOKEN, is_root_relative_href


def test_language_tokens_refuse_a_trailing_newline() -> None:
    assert LANG_TOKEN.match("python") and not LANG_TOKEN.match("python\n")


def test_content_hashes_refuse_a_trailing_newline() -> None:
    digest = "sha256:" + "ab" * 32
    assert is_content_hash(digest) and not is_content_hash(digest + "\n")


def test_a_backslash_in_a_head_href_is_refused() -> None:
    assert is_root_relative_href("/areas/x.html")
    assert not is_root_relative_href("/areas\\..\\x.html")
    assert not is_root_relative_href("/areas/a\\b.html")
