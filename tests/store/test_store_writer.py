"""write/apply/correct/archive on real repositories: one operation, one commit, refuse before writing."""

from __future__ import annotations

from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.document.editors import get_links, get_meta
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.errors import PathNotFound, UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.memories import HashHolders
from git_memhtml.store.edits import apply_edits, set_meta
from git_memhtml.store.ops import BadLine, WriteOp, parse_op_lines, parse_op_stream
from git_memhtml.store.writer import apply_batch, archive_memory, commit_subject, correct_memory
from tests.treewalk import work_tree_paths

NOW = "2026-11-30T10:00:00Z"


@pytest.fixture
def repo(tmp_path: Path) -> GitRepo:
    init_repo(tmp_path / "memory")
    return GitRepo.discover(tmp_path / "memory")


def no_dedupe(_: str) -> list[str]:
    return []


def op(title: str, claim: str, **extra: object) -> WriteOp:
    return WriteOp.from_json({"title": title, "type": "semantic", "body": claim, **extra})


def snapshot(repo: GitRepo) -> dict[str, bytes]:
    return {str(p.relative_to(repo.root)): p.read_bytes() for p in work_tree_paths(repo.root)
            if p.is_file() and ".git" not in p.relative_to(repo.root).parts}


def test_init_is_convergent(tmp_path: Path) -> None:
    first = init_repo(tmp_path / "m")
    second = init_repo(tmp_path / "m")
    assert first.commit_sha and first.created_repo
    assert second.written == () and second.commit_sha is None
    attributes = (tmp_path / "m" / ".gitattributes").read_text()
    assert "index.html" in attributes and "sitemap.xml" in attributes


def test_apply_writes_one_commit_and_dedupes_within_the_batch(repo: GitRepo) -> None:
    result = apply_batch(repo, [op("A", "The cache is warm."), op("A again", "The cache is warm."),
                               op("B", "The queue is long.")], now=NOW, dedupe=no_dedupe)
    assert result.ok and result.summary == {"total": 3, "written": 2, "deduped": 1, "failed": 0, "skipped": 0}
    assert result.results[1].deduped and result.results[1].existing_path == result.results[0].path
    assert repo.commit_message(result.commit_sha or "").startswith("memhtml(batch): 2 memories")
    assert repo.dirty() == []


def test_store_dedupe_returns_the_existing_path_and_writes_nothing(repo: GitRepo) -> None:
    stored = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW, dedupe=no_dedupe).results[0].path or ""
    head = repo.head_sha()
    result = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW, dedupe=lambda h: ["areas/x.html", stored])
    assert result.results[0].deduped and result.results[0].existing_path == stored
    assert result.commit_sha is None and repo.head_sha() == head


def test_dedupe_sees_commits_that_landed_after_the_index_was_caught_up(repo: GitRepo) -> None:
    indexed = repo.head_sha()
    stored = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW, dedupe=no_dedupe).results[0].path
    result = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW,
                         dedupe_view=lambda _: HashHolders({}, indexed, frozenset()))
    assert result.results[0].deduped and result.results[0].existing_path == stored and result.commit_sha is None


def test_dedupe_hashes_the_committed_bytes_of_the_work_tree_overlay(repo: GitRepo) -> None:
    """A committed file the index shows from the work tree (here deleted there) is hashed from HEAD's blob."""
    stored = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW, dedupe=no_dedupe).results[0].path or ""
    (repo.root / stored).unlink()
    result = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW,
                         dedupe_view=lambda _: HashHolders({}, repo.head_sha(), frozenset({stored})))
    assert result.results[0].deduped and result.results[0].existing_path == stored and result.commit_sha is None


@pytest.mark.parametrize("watermark", [None, "0" * 40], ids=["never-stamped", "missing-commit"])
def test_dedupe_without_a_usable_watermark_hashes_all_of_head(repo: GitRepo, watermark: str | None) -> None:
    stored = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW, dedupe=no_dedupe).results[0].path or ""
    result = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW,
                         dedupe_view=lambda _: HashHolders({}, watermark, frozenset()))
    assert result.results[0].deduped and result.results[0].existing_path == stored and result.commit_sha is None


def test_dedupe_ignores_an_uncommitted_file_with_the_same_content(repo: GitRepo) -> None:
    """A file the index holds but HEAD does not (a killed writer's leftover) is never "already stored"."""
    ghost = repo.root / "areas/inbox/ghost.html"
    ghost.write_text(render_memory(op("A", "The cache is warm.").draft, now=NOW), encoding="utf-8")
    result = apply_batch(repo, [op("A", "The cache is warm.")], now=NOW, dedupe=lambda h: "areas/inbox/ghost.html")
    assert not result.results[0].deduped and result.commit_sha
    assert result.results[0].path in repo.tree_blobs(result.commit_sha)


def test_an_invalid_op_refuses_the_whole_batch_and_writes_nothing(repo: GitRepo) -> None:
    before, head = snapshot(repo), repo.head_sha()
    bad = WriteOp.from_json({"title": "Bad", "type": "semantic", "article_html": "<p>no mark</p>"})
    result = apply_batch(repo, [op("A", "Fine."), bad, op("C", "Also fine.")], now=NOW, dedupe=no_dedupe)
    assert not result.ok and result.commit_sha is None
    assert result.results[1].code == "ERR_INVALID_MEMORY"
    assert result.results[0].skipped and result.results[2].skipped
    assert snapshot(repo) == before and repo.head_sha() == head


def test_continue_on_error_commits_the_survivors(repo: GitRepo) -> None:
    bad = WriteOp.from_json({"title": "Bad", "type": "semantic", "article_html": "<p>no mark</p>"})
    result = apply_batch(repo, [op("A", "Fine."), bad], now=NOW, dedupe=no_dedupe, continue_on_error=True)
    assert result.commit_sha and result.results[0].ok and result.results[1].code


def test_explicit_paths_inside_archive_or_outside_the_repo_are_refused(repo: GitRepo) -> None:
    for path in ("archive/2026/areas/x.html", "../outside.html", "areas/../../x.html"):
        result = apply_batch(repo, [op("A", "Fine.", path=path)], now=NOW, dedupe=no_dedupe)
        assert result.results[0].code == "ERR_INVALID_FLAG", path
    assert not (repo.root.parent / "outside.html").exists()


def test_a_workspace_must_be_one_folder_name(repo: GitRepo) -> None:
    for workspace in ("..", "../../etc", "a/b", "!!!"):
        result = apply_batch(repo, [op("A", "Fine.", workspace=workspace)], now=NOW, dedupe=no_dedupe)
        assert result.results[0].code == "ERR_INVALID_FLAG", workspace


def test_staged_foreign_changes_are_neither_committed_nor_unstaged(repo: GitRepo) -> None:
    (repo.root / "notes.txt").write_text("mine")
    repo.stage(["notes.txt"])
    result = apply_batch(repo, [op("A", "Fine.")], now=NOW, dedupe=no_dedupe)
    assert result.commit_sha and "notes.txt" not in repo.tree_blobs(result.commit_sha, prefixes=())
    assert [e.path for e in repo.dirty()] == ["notes.txt"] and repo.staged_changes()


def test_correct_supersedes_archives_and_keeps_the_targets_place_and_entities(repo: GitRepo) -> None:
    first = apply_batch(repo, [op("Timeout", "The timeout is 30 seconds.", entities=["service:api"],
                                  tags=["ops"], workspace="w")], now=NOW, dedupe=no_dedupe)
    target = first.results[0].path or ""
    result = correct_memory(repo, target, op("Timeout fixed", "The timeout is 45 seconds."), reason="measured",
                            now="2026-12-01T00:00:00Z")
    assert result.archived_path == f"archive/2026/{target}"
    assert result.path.startswith("projects/w/")
    new = parse_memory((repo.root / result.path).read_bytes())
    assert new.entities == ("service:api",) and new.tags == ("ops",)
    assert ("supersedes", "/" + result.archived_path) in {(l.rel, l.href) for l in new.links}
    loser = (repo.root / result.archived_path).read_text()
    assert get_meta(loser, "status") == "archived" and get_meta(loser, "superseded-by") == "/" + result.path
    assert get_meta(loser, "valid-until") == new.valid_from
    assert repo.dirty() == [] and "reason: measured" in repo.commit_message(result.commit_sha or "")


def test_correct_of_a_missing_target_writes_nothing(repo: GitRepo) -> None:
    before = snapshot(repo)
    with pytest.raises(PathNotFound):
        correct_memory(repo, "areas/inbox/none.html", op("X", "Y."), reason=None, now=NOW)
    assert snapshot(repo) == before


def test_archive_moves_with_git_mv_and_never_deletes(repo: GitRepo) -> None:
    path = apply_batch(repo, [op("A", "Fine.")], now=NOW, dedupe=no_dedupe).results[0].path or ""
    result = archive_memory(repo, path, reason="stale", now="2027-01-02T00:00:00Z")
    assert result.archive_path == f"archive/2027/{path}" and not (repo.root / path).exists()
    assert get_meta((repo.root / result.archive_path).read_text(), "status") == "archived"
    with pytest.raises(UsageError):
        archive_memory(repo, result.archive_path, reason="again", now=NOW)


def test_stamps_never_move_updated_back_in_time() -> None:
    html = (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>t</title>\n'
        '<meta name="memhtml-type" content="semantic">\n<meta name="memhtml-status" content="active">\n'
        '<meta name="memhtml-created" content="2026-11-30T09:00:00Z">\n'
        '<meta name="memhtml-updated" content="2026-11-30T09:00:00Z">\n</head>\n<body>\n<article>\n'
        "<p><mark>c</mark></p>\n</article>\n</body>\n</html>\n"
    )
    assert get_meta(apply_edits(html, [set_meta("updated", "2026-11-30T00:00:00Z")]),
                    "updated") == "2026-11-30T09:00:00Z"
    assert get_meta(apply_edits(html, [set_meta("updated", "2026-12-01T00:00:00Z")]),
                    "updated") == "2026-12-01T00:00:00Z"
    assert get_links(html) == []


def test_commit_subjects_are_flat_and_capped() -> None:
    assert commit_subject("write", "a\n  b") == "memhtml(write): a b"
    assert len(commit_subject("write", "x" * 200)) <= len("memhtml(write): ") + 72
    assert commit_subject("write", "  ") == "memhtml(write): (untitled)"


def test_op_stream_refuses_unknown_fields_and_names_every_bad_line() -> None:
    with pytest.raises(UsageError) as err:
        parse_op_stream('{"op":"write","title":"t","type":"semantic","body":"a.","x":1}\n\n[1]\n', source="s.jsonl")
    assert "s.jsonl:1" in err.value.message and "s.jsonl:3" in err.value.message
    with pytest.raises(UsageError):
        parse_op_stream("\n\n", source="empty.jsonl")


@pytest.mark.parametrize("sep", ["\u2028", "\u2029", "\u0085", "\x0b", "\x0c", "\x1c", "\x1d", "\x1e"])
def test_a_line_break_json_allows_inside_a_string_does_not_split_the_op(sep: str) -> None:
    """JSONL lines end at ``\\n`` only: a raw U+2028, U+2029 or NEL inside a JSON string is text and the op is read;
    a raw VT, FF, FS, GS or RS is a control character JSON forbids in a string, so that line (and only it) is not
    JSON — never split into fragments."""
    line = '{"op":"write","title":"t","type":"semantic","body":"A' + sep + 'fact."}'
    parsed = parse_op_lines(line + "\r\n" + line.replace('"t"', '"u"') + "\n", source="s.jsonl")
    assert len(parsed) == 2
    if sep in "\u2028\u2029\u0085":
        assert all(isinstance(p, WriteOp) for p in parsed)
    else:
        assert all(isinstance(p, BadLine) and "Invalid control character" in p.reason for p in parsed)
        assert [p.line for p in parsed if isinstance(p, BadLine)] == [1, 2]
