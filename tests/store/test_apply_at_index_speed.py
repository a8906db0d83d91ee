"""``apply`` at index speed (issue 12 Build 2): the writer hands the documents its render gate built to the
post-commit index pass, the batch's blobs go into one pack, and the git index gets stat data without a re-hash.

Real repositories, real SQLite, real ``git``; the LoCoMo slice is read from the shared data beside the project.
"""

from __future__ import annotations

import dataclasses
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.document.model import MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_checked
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.packwrite import PACK_MIN_BLOBS, blob_id, distinct_blobs, pack_stream
from git_memhtml.index import indexer
from git_memhtml.index.db import open_index
from git_memhtml.index.source import git_blob_sha
from git_memhtml.store.ops import WriteOp, parse_op_stream
from git_memhtml.store.writer import apply_batch
from tests.bench.bench_support import LOCOMO_JSON, load_locomo_module
from tests.document.test_doc_fast_parser import generated_article
from tests.index.test_incremental_property import plane

NOW = "2026-11-30T10:00:00Z"
EMBEDDER = FakeEmbedder(dim=8)
LOCOMO_SLICE = 60
HOSTILE = 60


def locomo_ops(count: int) -> list[WriteOp]:
    """The first ``count`` LoCoMo turn ops, converted by ``bench/locomo.py`` from the shared data."""
    if not LOCOMO_JSON.is_file():
        pytest.fail(f"{LOCOMO_JSON} is missing: the shared data must lie beside the project")
    locomo = load_locomo_module()
    rows = locomo.convert(locomo.load_data(LOCOMO_JSON), "all", "turns")[:count]
    return parse_op_stream(locomo.dumps_jsonl(rows))


def hostile_ops(count: int) -> list[WriteOp]:
    """Drafts whose article is the fast-parser differential's generated markup (odd seeds hostile: NUL, CR,
    comments, CDATA, legacy entities …): some are refused by the gate, some take html5lib, most the fast parser."""
    out = []
    for seed in range(count):
        raw: dict[str, Any] = {"title": f"Hostile {seed}", "type": "semantic", "tags": ["fuzz"],
                               "article_html": generated_article(seed)}
        out.append(WriteOp.from_json(raw))
    return out


def fields(doc: MemoryDocument) -> dict[str, object]:
    """Every field, ``article_digest`` included (it takes no part in ``==``)."""
    return {f.name: getattr(doc, f.name) for f in dataclasses.fields(doc)}


def test_a_rendered_document_is_what_a_parse_of_its_file_gives() -> None:
    ops = locomo_ops(60) + hostile_ops(HOSTILE)
    checked = fast = slow = 0
    for op in ops:
        try:
            rendered = render_checked(op.draft, now=NOW)
        except MemhtmlError:
            continue
        parsed = parse_memory(rendered.text.encode("utf-8"), path="areas/x.html")
        assert fields(rendered.as_parsed()) == fields(parsed), op.draft.title
        checked += 1
        fast += parsed.article_digest is not None
        slow += parsed.article_digest is None
    assert checked >= 60 + HOSTILE // 4
    assert fast and slow  # both parsers' outcomes are covered


def _dirty_paths(root: Path) -> list[str]:
    out = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=root, capture_output=True,
                         text=True, check=True).stdout
    return out.splitlines()


def _loose_objects(root: Path) -> int:
    out = subprocess.run(["git", "count-objects", "-v"], cwd=root, capture_output=True, text=True, check=True).stdout
    return int(next(line.split()[1] for line in out.splitlines() if line.startswith("count:")))


def test_apply_then_index_with_the_writers_documents_equals_a_rebuild(tmp_path: Path) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    db = open_index(tmp_path / "inc.db", tmp_path / "inc-state.db")
    indexer.update(repo, db, EMBEDDER, now=NOW)  # the watermark: the next pass is incremental
    loose_before = _loose_objects(repo.root)
    ops = locomo_ops(LOCOMO_SLICE) + hostile_ops(HOSTILE)
    result = apply_batch(repo, ops, now=NOW, continue_on_error=True)
    assert result.commit_sha is not None and any(r.code for r in result.results)
    assert len(result.documents) == len(result.written) > PACK_MIN_BLOBS

    parsed: list[str] = []

    def counting(data: bytes, *, path: str, **options: Any) -> MemoryDocument:
        parsed.append(path)
        return parse_memory(data, path=path, **options)

    report = indexer.update(repo, db, EMBEDDER, now=NOW, parse=counting, documents=result.documents)
    assert report.added == len(result.written) and not report.errors
    assert not set(parsed) & set(result.written)  # not one written file was parsed again

    fresh = open_index(tmp_path / "reb.db", tmp_path / "reb-state.db")
    indexer.rebuild(repo, fresh, EMBEDDER, now=NOW)
    assert plane(db) == plane(fresh)

    # the blobs went into one pack, the git index has stat data: status is clean without a refresh
    assert _loose_objects(repo.root) - loose_before < 10  # the commit and its trees only
    assert len(list((repo.common_dir / "objects" / "pack").glob("*.pack"))) == 1
    assert _dirty_paths(repo.root) == []
    stat_dirty = subprocess.run(["git", "diff-files", "--name-only"], cwd=repo.root, capture_output=True,
                                text=True, check=True).stdout
    assert stat_dirty == ""
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo.root, capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr


def test_a_small_batch_stays_loose_and_clean(tmp_path: Path) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    result = apply_batch(repo, locomo_ops(3), now=NOW)
    assert len(result.written) == 3
    assert not list((repo.common_dir / "objects" / "pack").glob("*.pack"))
    assert _dirty_paths(repo.root) == []
    assert subprocess.run(["git", "diff-files", "--name-only"], cwd=repo.root, capture_output=True, text=True,
                          check=True).stdout == ""


def test_without_pygit2_s_internals_a_batch_is_staged_the_public_way_and_stays_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A pygit2 whose cffi module moved (``pygit2.ffi.C``): entries go in with no stat data,
    and the commit, the work tree and git's index still agree (git hashes each file once to compare it)."""
    from git_memhtml.gitrepo import index_entries

    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    assert index_entries.stat_entries_supported(repo._repo.index)  # the installed pygit2 has them
    monkeypatch.setattr(index_entries, "_libgit2_c", None)  # as when ``pygit2.ffi`` no longer imports
    assert not index_entries.stat_entries_supported(repo._repo.index)
    result = apply_batch(repo, locomo_ops(PACK_MIN_BLOBS + 4), now=NOW)
    assert result.commit_sha is not None and len(result.written) == PACK_MIN_BLOBS + 4
    assert _dirty_paths(repo.root) == []
    staged = subprocess.run(["git", "diff", "--cached", "--name-only"], cwd=repo.root, capture_output=True,
                            text=True, check=True).stdout
    assert staged == ""  # git's index holds exactly the commit's blobs
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo.root, capture_output=True, text=True, check=False)
    assert fsck.returncode == 0, fsck.stderr


@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_the_pack_stream_is_what_git_reads_in_either_object_format(tmp_path: Path, object_format: str) -> None:
    subprocess.run(["git", "init", "-q", f"--object-format={object_format}", str(tmp_path)], check=True)
    blobs: Sequence[bytes] = [b"", b"x", b"caf\xc3\xa9\n" * 40, bytes(range(256)) * 300, b"x"]
    ids, unique = distinct_blobs(blobs, object_format)
    assert len(unique) == 4 and ids[1] == ids[4]
    proc = subprocess.run(["git", "index-pack", "--stdin"], cwd=tmp_path, input=pack_stream(list(unique.values()),
                          object_format), capture_output=True, check=False)
    assert proc.returncode == 0, proc.stderr
    for data, oid in zip(blobs, ids, strict=True):
        got = subprocess.run(["git", "cat-file", "blob", oid], cwd=tmp_path, capture_output=True, check=True).stdout
        assert got == data
        hashed = subprocess.run(["git", "hash-object", "--stdin"], cwd=tmp_path, input=data, capture_output=True,
                                check=True).stdout.decode().strip()
        assert blob_id(data, object_format) == hashed
    assert blob_id(b"abc", "sha1") == git_blob_sha(b"abc")
