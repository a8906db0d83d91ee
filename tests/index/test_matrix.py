"""The persistent vector matrix (index/matrix_file.py, matrix.py, matrix_read.py; docs/index.md §3.12) ranks exactly
like the SQL arm, syncs incrementally, and is never trusted when stale, torn, foreign or behind a symlink.

Real SQLite, real files, real git repositories; the crash cases kill a real subprocess with SIGKILL.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import StorageError
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.embedding import embed_missing
from git_memhtml.index.matrix import sync
from git_memhtml.index.matrix_file import CLEAN, DIRTY, HEADER_BYTES, MATRIX_NAME, Header, matrix_path, read_header
from git_memhtml.index.matrix_read import vector_ranks
from git_memhtml.index.retrieval import FTS_FIRST, fts_ranks, search
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Scope, arm_ranks_sql, fts_match, scope_sql, vector_arm_sql
from tests.index.index_helpers import NOW, Repo, memory_html
from tests.index.test_resident import CORPORA, OWN_SCOPES, ROWS, SCOPES, Corpus

ROOT = Path(__file__).resolve().parents[2]


def _sql_arm(db: IndexDB, qvec: bytes, space: str, scope: Scope) -> list[str]:
    scope_filter, params = scope_sql(scope)
    rows = db.query(vector_arm_sql(scope_filter), {**params, "qvec": qvec, "space": space, "arm_limit": ARM_LIMIT})
    return [str(r[0]) for r in rows]


def _qvec(embedder: FakeEmbedder, text: str) -> bytes:
    return np.asarray(embedder.embed([text])[0], dtype="<f4").tobytes()


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, tuple[Corpus, Path]]]:
    built = {}
    for name, (build, dim) in CORPORA.items():
        folder = tmp_path_factory.mktemp(name.replace("@", "-"))
        corpus = build(folder / "repo", dim)
        path = folder / MATRIX_NAME
        assert sync(corpus.db, path=path).result == "built"
        built[name] = (corpus, path)
    yield built
    for corpus, _ in built.values():
        corpus.db.close()


@pytest.mark.parametrize(("corpus_name", "scope_name"), ROWS)
def test_matrix_ranks_equal_the_sql_arm(corpora: dict[str, tuple[Corpus, Path]], corpus_name: str,
                                        scope_name: str) -> None:
    """Every corpus × scope × query (zero vectors, ties of shared chunks, multi-chunk files, archived, tasks)."""
    (corpus, path), scope = corpora[corpus_name], {**SCOPES, **OWN_SCOPES[corpus_name]}[scope_name]
    ranked_any = False
    for query in corpus.queries:
        qvec = _qvec(corpus.embedder, query)
        want = _sql_arm(corpus.db, qvec, corpus.embedder.space, scope)
        for limit in (1, 5, ARM_LIMIT):
            got = vector_ranks(corpus.db, qvec, corpus.embedder.space, scope, limit=limit, path=path,
                               sync_stale=False)
            assert got == want[:limit], query
        ranked_any = ranked_any or bool(want)
    assert ranked_any


def test_irregular_rows_rank_like_sql(tmp_path: Path, db: IndexDB, repo: Repo) -> None:
    """NaN, ±inf, huge, tiny and zero vectors written straight into ``embeddings`` rank (or not) as in SQL."""
    embedder = FakeEmbedder(dim=8)
    paths = [f"areas/inbox/m{i}.html" for i in range(12)]
    for i, p in enumerate(paths):
        repo.write(p, memory_html(f"M {i}", f"Alpha beta {i} gamma."))
    repo.commit("seed", *paths)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    chunk_ids = [str(r[0]) for r in db.query("SELECT chunk_id FROM chunks ORDER BY chunk_id")]
    rng = np.random.default_rng(3)
    odd = [np.full(8, np.nan), np.r_[np.inf, np.ones(7)], np.full(8, 3e38), np.full(8, 1e-30), np.zeros(8),
           np.r_[-np.inf, np.zeros(7)], rng.normal(size=8) * 1e20]
    for cid, vec in zip(chunk_ids, odd, strict=False):
        db.execute("UPDATE embeddings SET vec = ? WHERE chunk_id = ?", (np.asarray(vec, "<f4").tobytes(), cid))
    path = tmp_path / MATRIX_NAME
    assert sync(db, path=path).result == "built"
    queries = [_qvec(embedder, "alpha beta"), np.asarray(rng.normal(size=8), "<f4").tobytes(),
               np.full(8, 1e-30, "<f4").tobytes(), np.r_[np.nan, np.ones(7)].astype("<f4").tobytes()]
    for qvec in queries:
        want = _sql_arm(db, qvec, embedder.space, Scope())
        assert vector_ranks(db, qvec, embedder.space, Scope(), path=path, sync_stale=False) == want


def _world(tmp_path: Path) -> tuple[Repo, IndexDB, FakeEmbedder]:
    repo = Repo(tmp_path / "mem")
    rng = random.Random(5)
    words = ("alpha", "beta", "gamma", "delta", "cache", "deploy", "ledger", "queue")
    paths = []
    for i in range(40):
        p = f"{('areas/inbox', 'projects/web')[i % 2]}/m{i:02d}.html"
        repo.write(p, memory_html(f"Memory {i}", " ".join(rng.sample(words, 3)).capitalize() + f" {i}."))
        paths.append(p)
    repo.commit("seed", *paths)
    db = IndexDB.for_repo(repo.git)
    embedder = FakeEmbedder(dim=16)
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    return repo, db, embedder


QUERIES = ("alpha beta", "cache deploy ledger", "queue", "gamma delta 3", "memory 7")


def _assert_matches_sql(db: IndexDB, embedder: FakeEmbedder, path: Path | None = None) -> None:
    for q in QUERIES:
        qvec = _qvec(embedder, q)
        got = vector_ranks(db, qvec, embedder.space, Scope(), path=path, sync_stale=False)
        assert got == _sql_arm(db, qvec, embedder.space, Scope()), q


def test_indexer_syncs_in_place_and_search_uses_the_matrix(tmp_path: Path) -> None:
    """``rebuild`` builds ``<git-dir>/memhtml/vectors.f32``; a one-file commit's ``update`` rewrites its rows in
    place (same inode, ``sync`` then has nothing to do); renames, deletes and archives need no row and still rank
    like SQL; ``search`` by default equals ``search(use_matrix=False)``."""
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None and path == Path(repo.git.git_dir) / "memhtml" / MATRIX_NAME and path.is_file()
    inode = path.stat().st_ino
    _assert_matches_sql(db, embedder)
    repo.write("areas/inbox/m00.html", memory_html("Memory 0", "Ledger queue rewritten entirely."))
    repo.commit("edit", "areas/inbox/m00.html")
    repo.git.run_git(["mv", "projects/web/m01.html", "projects/web/renamed.html"])
    repo.git.run_git(["rm", "-q", "areas/inbox/m02.html"])
    repo.git.run_git(["commit", "-qm", "move and drop"])
    indexer.update(repo.git, db, embedder, now=NOW)
    assert path.stat().st_ino == inode, "the one-file update rebuilt the matrix instead of syncing it"
    assert sync(db).result == "fresh"
    _assert_matches_sql(db, embedder)
    for q in QUERIES:
        for scope in (Scope(), Scope(workspace="web"), Scope(include_archived=True)):
            fast = search(db, q, scope=scope, embedder=embedder, now=NOW, limit=10)
            plain = search(db, q, scope=scope, embedder=embedder, now=NOW, limit=10, use_matrix=False)
            assert fast == plain, q
    db.close()


def test_embed_missing_and_direct_writes_are_caught_by_the_log(tmp_path: Path) -> None:
    """A writer that is not the indexer (``embed_missing``, a raw ``UPDATE embeddings``) leaves the matrix stale
    until a sync; a search syncs it lazily and ranks like SQL."""
    _repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    db.execute("DELETE FROM embeddings WHERE chunk_id IN (SELECT chunk_id FROM chunks WHERE path LIKE 'areas/%')")
    embed_missing(db, embedder, now=NOW)
    cid = db.query_one("SELECT chunk_id FROM chunks ORDER BY chunk_id LIMIT 1")
    assert cid is not None
    db.execute("UPDATE embeddings SET vec = ? WHERE chunk_id = ?", (_qvec(embedder, "queue"), cid[0]))
    qvec = _qvec(embedder, "queue")
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) is None  # stale: not trusted
    assert vector_ranks(db, qvec, embedder.space, Scope()) == _sql_arm(db, qvec, embedder.space, Scope())
    assert sync(db).result == "fresh"
    db.close()


def _truncate(path: Path, _db: IndexDB) -> None:
    with path.open("r+b") as fh:
        fh.truncate(path.stat().st_size - 7)


def _other_index(path: Path, db: IndexDB) -> None:
    """A matrix built from another index.db (a copied .git/memhtml): same space and seq, another token."""
    other = open_index(path.parent / "other.db", path.parent / "other-state.db")
    header, _ = read_header(path)
    assert header is not None
    other.execute("UPDATE vector_state SET seq = ?", (header.seq,))
    foreign = Header(CLEAN, header.dim, header.capacity, header.seq, str(other.query("SELECT token FROM "
                     "vector_state")[0][0]), header.space)
    other.close()
    with path.open("r+b") as fh:
        fh.write(foreign.pack())


def _other_dim(path: Path, db: IndexDB) -> None:
    header, _ = read_header(path)
    assert header is not None
    with path.open("r+b") as fh:
        fh.write(Header(CLEAN, header.dim * 2, header.capacity // 2, header.seq, header.token, header.space).pack())


def _other_space(path: Path, db: IndexDB) -> None:
    header, _ = read_header(path)
    assert header is not None
    with path.open("r+b") as fh:
        fh.write(Header(CLEAN, header.dim, header.capacity, header.seq, header.token, "fake:other@16").pack())


def _dirty(path: Path, db: IndexDB) -> None:
    """What a kill -9 between the dirty mark and the clean header leaves: rows half rewritten."""
    header, _ = read_header(path)
    assert header is not None
    with path.open("r+b") as fh:
        fh.write(Header(DIRTY, header.dim, header.capacity, header.seq, header.token, header.space).pack())
        fh.seek(HEADER_BYTES)
        fh.write(os.urandom(4 * 17 * 10))


def _bad_crc(path: Path, db: IndexDB) -> None:
    with path.open("r+b") as fh:
        fh.seek(20)
        fh.write(b"\xff")


def _ahead(path: Path, db: IndexDB) -> None:
    header, _ = read_header(path)
    assert header is not None
    with path.open("r+b") as fh:
        fh.write(Header(CLEAN, header.dim, header.capacity, header.seq + 5, header.token, header.space).pack())


def _garbage(path: Path, db: IndexDB) -> None:
    path.write_bytes(os.urandom(HEADER_BYTES + 100))


def _emptied(path: Path, db: IndexDB) -> None:
    path.write_bytes(b"")


def _directory(path: Path, db: IndexDB) -> None:
    path.unlink()
    path.mkdir()


HOSTILE: dict[str, Callable[[Path, IndexDB], None]] = {
    "truncated": _truncate, "another-index": _other_index, "another-dim": _other_dim, "another-space": _other_space,
    "dirty-torn": _dirty, "bad-crc": _bad_crc, "seq-ahead": _ahead, "garbage": _garbage, "empty": _emptied,
}
"""One row per way the file can be wrong; each is detected (never read) and rebuilt by the next sync."""


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_wrong_matrix_is_detected_and_rebuilt(tmp_path: Path, case: str) -> None:
    _repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    HOSTILE[case](path, db)
    qvec = _qvec(embedder, "alpha beta")
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) is None
    want = _sql_arm(db, qvec, embedder.space, Scope())
    assert search(db, "alpha beta", embedder=embedder, now=NOW) == search(db, "alpha beta", embedder=embedder,
                                                                           now=NOW, use_matrix=False)
    assert sync(db).result == "fresh"  # the search rebuilt it
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) == want
    db.close()


def test_a_directory_at_the_matrix_path_falls_back_to_sql(tmp_path: Path) -> None:
    _repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    _directory(path, db)
    assert sync(db).result == "failed"
    assert search(db, "queue", embedder=embedder, now=NOW) == search(db, "queue", embedder=embedder, now=NOW,
                                                                     use_matrix=False)
    db.close()


def test_a_symlink_at_the_matrix_path_is_never_followed(tmp_path: Path) -> None:
    """A symlink to a valid matrix (even this index's own) is not read; the sync replaces the link, and the file
    it pointed to is left byte for byte as it was."""
    repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    target = tmp_path / "elsewhere.f32"
    os.replace(path, target)
    before = target.read_bytes()
    path.symlink_to(target)
    qvec = _qvec(embedder, "alpha beta")
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) is None
    repo.write("areas/inbox/m03.html", memory_html("Memory 3", "Queue cache rewritten."))
    repo.commit("edit", "areas/inbox/m03.html")
    indexer.update(repo.git, db, embedder, now=NOW)
    assert not path.is_symlink() and path.is_file()
    assert target.read_bytes() == before
    _assert_matches_sql(db, embedder)
    lock = path.parent / "vectors.lock"
    lock.unlink()
    lock.symlink_to(tmp_path / "lock-target")
    assert sync(db).result == "busy"  # the lock file is not followed either: no sync, readers use SQL
    assert not (tmp_path / "lock-target").exists()
    db.close()


def test_churn_compacts_the_slots(tmp_path: Path, db: IndexDB) -> None:
    """Deleted vectors leave holes; once the highest slot passes twice the live rows (+ slack) the slots are
    renumbered and the matrix rebuilt, still ranking like SQL."""
    embedder = FakeEmbedder(dim=8)
    repo = Repo(tmp_path / "mem")
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha beta."))
    repo.write("areas/inbox/b.html", memory_html("B", "Gamma delta."))
    repo.commit("seed", "areas/inbox/a.html", "areas/inbox/b.html")
    indexer.rebuild(repo.git, db, embedder, now=NOW)
    path = tmp_path / MATRIX_NAME
    for _ in range(1100):  # the oldest vector deleted and written again (an edit): it takes the next slot
        cid, vec = db.query("SELECT e.chunk_id, e.vec FROM embeddings e JOIN vector_slots s ON s.chunk_id = "
                            "e.chunk_id ORDER BY s.slot LIMIT 1")[0]
        db.execute("DELETE FROM embeddings WHERE chunk_id = ?", (cid,))
        db.execute("INSERT INTO embeddings(chunk_id, model, dim, vec, created_at) VALUES (?, ?, 8, ?, ?)",
                   (cid, embedder.space, vec, NOW))
    top = db.query_one("SELECT max(slot) FROM vector_slots")
    assert top is not None and int(top[0]) >= 1024
    assert sync(db, path=path).result == "built"
    assert sorted(db.query("SELECT slot FROM vector_slots")) == [(0,), (1,)]
    header, _size = read_header(path)
    assert header is not None and header.capacity < 1100
    qvec = _qvec(embedder, "alpha")
    assert vector_ranks(db, qvec, embedder.space, Scope(), path=path, sync_stale=False) == _sql_arm(
        db, qvec, embedder.space, Scope())


CHILD_TORN = textwrap.dedent("""
    import os, signal, sys
    from pathlib import Path
    from git_memhtml.index.db import open_index
    from git_memhtml.index import matrix
    db = open_index(sys.argv[1], sys.argv[2])
    real = os.pwrite
    count = [0]
    def pwrite(fd, data, offset):
        count[0] += 1
        real(fd, data, offset)
        if count[0] == int(sys.argv[4]):  # 1: the dirty mark, 2-4: the three rows, 5: the CRC table (not the header)
            os.kill(os.getpid(), signal.SIGKILL)
        return len(data)
    os.pwrite = pwrite
    db.execute("UPDATE embeddings SET vec = ? WHERE chunk_id IN (SELECT chunk_id FROM embeddings LIMIT 3)",
               (b"\\x00\\x00\\x80\\x3f" * int(sys.argv[3]),))
    matrix.sync(db)
""")


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.mark.parametrize("kill_at", [1, 3, 5])
def test_kill_9_in_the_middle_of_a_sync_leaves_a_matrix_that_is_not_trusted(tmp_path: Path, kill_at: int) -> None:
    """A real SIGKILL after the dirty mark, after two of the three rows, or after the CRC table (each before the
    clean header): the next reader refuses the file, the next sync rebuilds it, and it ranks like SQL."""
    _repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    args = [sys.executable, "-c", CHILD_TORN, db.index_path, db.state_path, str(embedder.dim), str(kill_at)]
    proc = subprocess.run(args, check=False, env=_env(), capture_output=True, timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr
    header, _ = read_header(path)
    assert header is not None and header.state == DIRTY
    qvec = _qvec(embedder, "alpha beta")
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) is None
    assert sync(db).result == "built"
    _assert_matches_sql(db, embedder)
    db.close()


CHILD_LOOP = textwrap.dedent("""
    import sys
    import numpy as np
    from git_memhtml.index.db import open_index
    from git_memhtml.index import matrix
    db = open_index(sys.argv[1], sys.argv[2])
    rows = db.query("SELECT chunk_id, vec FROM embeddings ORDER BY chunk_id LIMIT 6")
    scale = 1.0
    while True:  # scaling by a power of two leaves every sqlite-vec cosine distance bit for bit the same
        scale = 0.5 if scale == 2.0 else 2.0
        with db.atomic():
            for cid, vec in rows:
                v = np.frombuffer(vec, dtype="<f4") * np.float32(scale)
                db.execute("UPDATE embeddings SET vec = ? WHERE chunk_id = ?", (v.astype("<f4").tobytes(), cid))
        matrix.sync(db)
""")


@pytest.mark.parametrize("kill_after", [0.3, 0.7, 1.1])
def test_readers_during_syncs_and_kills(tmp_path: Path, kill_after: float) -> None:
    """A writer process rewrites and syncs rows in a loop while this process reads: every answer the matrix
    gives equals the SQL arm (a scan that overlapped a sync answers ``None``); the writer is then killed with
    SIGKILL at a random point, and the matrix left behind is either trusted and right, or rebuilt."""
    _repo, db, embedder = _world(tmp_path)
    qvec = _qvec(embedder, "alpha beta")
    want = _sql_arm(db, qvec, embedder.space, Scope())
    child = subprocess.Popen([sys.executable, "-c", CHILD_LOOP, db.index_path, db.state_path], env=_env(),
                             stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + kill_after + 1.0
        while time.monotonic() < deadline:
            got = vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False)
            assert got is None or got == want
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
    got = vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False)
    assert got is None or got == want
    assert sync(db).result in ("fresh", "synced", "built")
    assert vector_ranks(db, qvec, embedder.space, Scope(), sync_stale=False) == want
    db.close()


def test_in_memory_and_spaceless_indexes_have_no_matrix(db: IndexDB, repo: Repo) -> None:
    assert matrix_path(db) is None and sync(db).result == "none"
    repo.write("areas/inbox/a.html", memory_html("A", "Alpha beta."))
    repo.commit("seed", "areas/inbox/a.html")
    on_disk = IndexDB.for_repo(repo.git)
    indexer.rebuild(repo.git, on_disk, None, now=NOW)
    assert sync(on_disk).result == "none"
    assert vector_ranks(on_disk, b"\0" * 64, "fake:hash@16", Scope()) is None
    on_disk.close()


def test_a_read_only_index_never_syncs(tmp_path: Path) -> None:
    _repo, db, embedder = _world(tmp_path)
    path = matrix_path(db)
    assert path is not None
    _ahead(path, db)
    db.read_only = "test: opened read-only"
    assert vector_ranks(db, _qvec(embedder, "queue"), embedder.space, Scope()) is None
    header, _ = read_header(path)
    assert header is not None and header.seq > int(db.query("SELECT seq FROM vector_state")[0][0])
    db.read_only = None
    db.close()


def test_a_matrix_copied_from_an_identical_index_is_not_trusted(tmp_path: Path) -> None:
    """Two repositories built the same way reach the same ``seq``; the other's ``vectors.f32`` copied in (a copied
    ``.git/memhtml``) still names another index and is rebuilt, not read."""
    _, first, embedder = _world(tmp_path / "a")
    _, second, _ = _world(tmp_path / "b")
    assert first.query("SELECT seq FROM vector_state") == second.query("SELECT seq FROM vector_state")
    mine, theirs = matrix_path(second), matrix_path(first)
    assert mine is not None and theirs is not None
    mine.write_bytes(theirs.read_bytes())
    qvec = _qvec(embedder, "alpha beta")
    assert vector_ranks(second, qvec, embedder.space, Scope(), sync_stale=False) is None
    assert sync(second).result == "built"
    _assert_matches_sql(second, embedder)
    first.close()
    second.close()


def test_a_copied_index_gets_its_own_token_and_a_kept_run_index_no_matrix(tmp_path: Path) -> None:
    """``copy_index_to`` (a run's seeded and kept indexes) gives the copy a new token, so a matrix of the source
    never stands in for a copy that diverged from it at the same ``seq``; a file not named ``index.db`` (the
    ``runs/<name>.index.db`` kept side by side) has no matrix path."""
    _, db, _ = _world(tmp_path)
    copy_path = tmp_path / "runs" / "sleep-x.index.db"
    db.copy_index_to(copy_path)
    copy = open_index(copy_path, tmp_path / "runs" / "state.db")
    assert copy.query("SELECT seq FROM vector_state") == db.query("SELECT seq FROM vector_state")
    assert copy.query("SELECT token FROM vector_state") != db.query("SELECT token FROM vector_state")
    assert matrix_path(copy) is None and sync(copy).result == "none"
    copy.close()
    db.close()


FIRSTS = {"default": FTS_FIRST, "one": (1,), "two-then-five": (2, 5), "forty": (40,), "all-fall-back": (3, 7)}
"""Candidate counts for the two-step lexical arm: small ones force the retries, the fall-back to the arm's SQL, and
an edge that lands inside a run of tied scores (the generated corpus repeats claims)."""


@pytest.mark.parametrize(("corpus_name", "scope_name"), ROWS)
@pytest.mark.parametrize("firsts", list(FIRSTS))
def test_two_step_fts_arm_equals_its_sql(corpora: dict[str, tuple[Corpus, Path]], corpus_name: str,
                                         scope_name: str, firsts: str) -> None:
    (corpus, _), scope = corpora[corpus_name], {**SCOPES, **OWN_SCOPES[corpus_name]}[scope_name]
    for query in [*corpus.queries, "alpha", "alpha beta gamma delta cache deploy ledger queue retry"]:
        match = fts_match(query)
        if match is None:
            continue
        for limit in (1, 3, ARM_LIMIT):
            sql, params = arm_ranks_sql("fts", scope, match=match, arm_limit=limit)
            want = [str(r[0]) for r in corpus.db.query(sql, params)]
            assert fts_ranks(corpus.db, match, scope, arm_limit=limit, first=FIRSTS[firsts]) == want, query


def test_a_vector_of_the_wrong_length_gets_no_matrix_answer(tmp_path: Path) -> None:
    """A vector of the space whose blob is not ``4·dim`` bytes makes the SQL arm fail; the matrix refuses to
    stand in (``failed``), so ``search`` fails the same way instead of answering from stale or zeroed rows."""
    _, db, embedder = _world(tmp_path)
    cid = db.query_one("SELECT chunk_id FROM embeddings ORDER BY chunk_id LIMIT 1")
    assert cid is not None
    db.execute("UPDATE embeddings SET dim = 4, vec = ? WHERE chunk_id = ?", (b"\0\0\x80\x3f" * 4, cid[0]))
    assert sync(db).result == "failed"
    assert vector_ranks(db, _qvec(embedder, "queue"), embedder.space, Scope()) is None
    with pytest.raises(StorageError):
        search(db, "queue", embedder=embedder, now=NOW)
    db.close()
