"""Prompts as configuration (sleep/engine/prompts.py; docs/models.md §3): shipped text, repository overrides,
literal single-pass substitution, and the overrides refused."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from git_memhtml.errors import ConfigError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.prompts import MAX_PROMPT_BYTES, fill, load_prompt, override_path, shipped_prompt
from tests.sleep.sleep_corpus_helpers import make_repo, memory

NAME = "doctor"
"""The prompt the tests read: ``resources/prompts/doctor.md`` (the health check's system prompt)."""


@pytest.fixture()
def repo(tmp_path: Path) -> GitRepo:
    return make_repo(tmp_path, {"resources/notes/a.html": memory("Ann likes tea.")})


def _override(repo: GitRepo, data: bytes, name: str = NAME) -> Path:
    target = repo.root / override_path(name)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    return target


def test_the_shipped_prompt_is_read_when_no_override_exists(repo: GitRepo) -> None:
    text = load_prompt(repo, NAME)
    assert text == shipped_prompt(NAME) and "health check" in text


def test_an_override_replaces_the_shipped_text(repo: GitRepo) -> None:
    _override(repo, b"Check in, {who}. Keep {unknown} and {\"json\": 1} as they are.\n")
    assert override_path(NAME) == ".memhtml/prompts/doctor.md"
    assert load_prompt(repo, NAME, {"who": "model"}) == 'Check in, model. Keep {unknown} and {"json": 1} as they are.\n'


def test_a_byte_order_mark_is_not_prompt_text(repo: GitRepo) -> None:
    _override(repo, "\ufeffHello {who}".encode())
    assert load_prompt(repo, NAME, {"who": "you"}) == "Hello you"


@pytest.mark.parametrize(("text", "values", "expected"), [
    ("{a} and {b}", {"a": "{b}", "b": "B"}, "{b} and B"),  # a value is never scanned again
    ("{a}{a}", {"a": "{a}"}, "{a}{a}"),
    ("{{a}}", {"a": "x"}, "{x}"),  # literal: no brace escaping either
    ("{ a }", {"a": "x"}, "{ a }"),
    ("{a-b} {A_1}", {"a-b": "no", "A_1": "yes"}, "{a-b} yes"),
    ("$a \\1 \\g<0> {a}", {"a": "\\1 \\g<0>"}, "$a \\1 \\g<0> \\1 \\g<0>"),  # no regex template in values
])
def test_substitution_is_literal_and_single_pass(text: str, values: dict[str, str], expected: str) -> None:
    assert fill(text, values) == expected


def test_a_symlinked_override_is_refused_naming_the_file(repo: GitRepo, tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("from outside the tree", encoding="utf-8")
    target = repo.root / override_path(NAME)
    target.parent.mkdir(parents=True)
    target.symlink_to(outside)
    with pytest.raises(ConfigError) as caught:
        load_prompt(repo, NAME)
    assert caught.value.path == ".memhtml/prompts/doctor.md" and "symlink" in caught.value.message
    assert caught.value.hint


@pytest.mark.parametrize("link", [".memhtml", ".memhtml/prompts"])
def test_a_symlinked_folder_on_the_way_is_refused_even_dangling(repo: GitRepo, tmp_path: Path, link: str) -> None:
    elsewhere = tmp_path / "elsewhere"
    (repo.root / link).parent.mkdir(parents=True, exist_ok=True)
    (repo.root / link).symlink_to(elsewhere)  # dangling
    with pytest.raises(ConfigError, match="symlink"):
        load_prompt(repo, NAME)
    (elsewhere / ("prompts" if link == ".memhtml" else "")).mkdir(parents=True, exist_ok=True)
    (elsewhere / ("prompts/doctor.md" if link == ".memhtml" else "doctor.md")).write_text("x", encoding="utf-8")
    with pytest.raises(ConfigError, match="symlink"):
        load_prompt(repo, NAME)


def test_a_folder_or_a_fifo_at_the_override_path_is_refused(repo: GitRepo) -> None:
    target = repo.root / override_path(NAME)
    target.mkdir(parents=True)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_prompt(repo, NAME)
    target.rmdir()
    os.mkfifo(target)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_prompt(repo, NAME)  # refused at once: a FIFO is never opened for a blocking read


def test_a_non_utf8_override_is_refused(repo: GitRepo) -> None:
    _override(repo, b"caf\xe9 {who}")
    with pytest.raises(ConfigError, match="not UTF-8") as caught:
        load_prompt(repo, NAME)
    assert caught.value.path == ".memhtml/prompts/doctor.md"


def test_an_oversize_override_is_refused_without_reading_it_whole(repo: GitRepo) -> None:
    """An override of exactly the limit is read; a sparse 64 MiB one is refused, and the refusal allocates a small
    fraction of the file (the limit plus one byte is read, not 64 MiB): memory, counted by ``tracemalloc``, not
    seconds."""
    import tracemalloc

    _override(repo, b"a" * MAX_PROMPT_BYTES)
    assert len(load_prompt(repo, NAME)) == MAX_PROMPT_BYTES
    target = _override(repo, b"")
    with target.open("wb") as handle:
        handle.truncate(64 * 1024 * 1024)  # sparse: read whole, it would take 64 MiB of memory
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="more than") as caught:
            load_prompt(repo, NAME)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 16 * MAX_PROMPT_BYTES, peak  # 1 MiB: the capped read and the shipped prompt, not the file
    assert caught.value.path == ".memhtml/prompts/doctor.md"


@pytest.mark.parametrize("name", ["../doctor", "doctor/../../etc", "/etc/passwd", "Doctor", "doctor.md", "",
                                  "a..b", "doctor.task.more", "doc tor", "docto\u0072\u0301"])
def test_a_name_that_is_not_a_prompt_name_is_refused(repo: GitRepo, name: str) -> None:
    with pytest.raises(ValueError):
        load_prompt(repo, name)


def test_a_name_that_ships_no_prompt_is_refused_even_with_an_override(repo: GitRepo) -> None:
    _override(repo, b"an override with nothing shipped", name="no-such-phase")
    with pytest.raises(ValueError, match="no prompt named"):
        load_prompt(repo, "no-such-phase")
