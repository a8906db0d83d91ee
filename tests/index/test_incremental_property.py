"""Property: after every commit, ``indexer.update`` leaves the index plane equal to a fresh ``rebuild``.

Histories are generated on a real git repository (pygit2 through ``git_memhtml.gitrepo``, the ``git`` binary for
branch switches, merges and resets): writes, article edits, head-only edits, renames, archives, copies (identical
content, so the duplicate-content rule is exercised), deletes, unparseable files, merges of two branches, hard /
soft / mixed resets and uncommitted edits (which must be indexed and win). The index plane is compared as sorted
row sets with ``indexed_at`` and ``created_at`` left out (docs/index.md §3.4–§3.7, issue 4 item 6).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from git_memhtml.document.model import MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer, matrix, matrix_read
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.retrieval_sql import ARM_LIMIT, Scope, scope_sql, vector_arm_sql
from git_memhtml.index.source import git_blob_sha
from tests.index.index_helpers import NOW, memory_html

EMBEDDER = FakeEmbedder(dim=8)
MATRIX_QUERIES = ("alpha mondays", "beta caches pages", "gamma delta", "uncommitted note")
MATRIX_SCOPES = (Scope(), Scope(include_archived=True), Scope(tags=("cache",)))
LIVE = (
    "areas/inbox/a.html", "areas/inbox/b.html", "projects/web/c.html", "projects/api/d.html",
    "resources/topic/e.html", "resources/topic/f.html",
)
SIDE = ("areas/side/s.html", "areas/side/t.html")
CLAIMS = ("Alpha deploys on Mondays.", "Beta caches pages.", "Gamma retries thrice.", "Delta logs to disk.")
TAGS = ((), ("cache",), ("ops", "cache"))
PLANE: dict[str, str] = {
    "files": "SELECT path, blob_sha, content_hash, memory_type, status, title, body_text, gist, fts_text, "
    "disclosure_text, para, workspace, confidence, importance, archived, origin_path, word_count, created_at, "
    "updated_at, event_at, archived_at, valid_from, valid_until, reprieves, needs_revision, author, session_id, "
    "prompt_id, turn_uuid, task_status, due_at, frame_key, article_digest, article_facts FROM files",
    "file_tags": "SELECT path, tag FROM file_tags",
    "file_entities": "SELECT path, entity_type, entity_name FROM file_entities",
    "file_facets": "SELECT path, name, value, numeric_value FROM file_facets",
    "file_citations": "SELECT path, text, coalesce(href, '') FROM file_citations",
    "chunks": "SELECT chunk_id, path, content_hash, ordinal, text, char_count FROM chunks",
    "embeddings": "SELECT chunk_id, model, dim, hex(vec) FROM embeddings",
    "edges": "SELECT src_path, rel, dst_path, edge_class, derived, strength, provenance, coalesce(sleep_run, ''), "
    "coalesce(src_hash, ''), coalesce(dst_hash, '') FROM edges",
    "worktree_paths": "SELECT path FROM worktree_paths",
    "index_refusals": "SELECT path, content_hash FROM index_refusals",
    "head": "SELECT coalesce(head_sha, ''), coalesce(embed_model, '') FROM index_state",
}
"""The index plane as comparable row sets: every column except ``files.id``, ``indexed_at``, ``created_at``."""


_PARSED: dict[tuple[bytes, str], MemoryDocument | InvalidMemory] = {}


def cached_parse(data: bytes, *, path: str, reuse: object = None) -> MemoryDocument:
    """``parse_memory`` memoised on (bytes, path): it is pure, and parsing is most of this test's cost (``reuse``, the
    indexer's cached article, gives the same document, so the memo ignores it)."""
    key = (data, path)
    if key not in _PARSED:
        try:
            _PARSED[key] = parse_memory(data, path=path)
        except InvalidMemory as exc:
            _PARSED[key] = exc
    found = _PARSED[key]
    if isinstance(found, InvalidMemory):
        raise found
    return found


def plane(db: IndexDB) -> dict[str, list[tuple[object, ...]]]:
    """Every table of the index plane as a sorted list of rows (NULLs made comparable)."""
    return {name: sorted(db.query(sql), key=repr) for name, sql in PLANE.items()}


def fts_paths(db: IndexDB, word: str) -> list[str]:
    return sorted(r[0] for r in db.query(
        "SELECT f.path FROM files_fts JOIN files f ON f.id = files_fts.rowid WHERE files_fts MATCH ?", (word,)))


def memory(claim: int, meta: int, *, title: str = "Note") -> str:
    """A small memory: the article is ``CLAIMS[claim]``; ``meta`` varies only the head (tags, a link)."""
    links = (("relates_to", "/" + LIVE[meta % len(LIVE)]),) if meta % 2 else ()
    return memory_html(f"{title} {meta % 3}", CLAIMS[claim % len(CLAIMS)], tags=TAGS[meta % len(TAGS)],
                       entities=("service:web",) if meta % 4 == 3 else (), links=links)


@dataclass
class World:
    """The repository under test, its incrementally updated index, and the history so far."""

    root: Path
    git: GitRepo
    db: IndexDB
    fresh: IndexDB
    commits: list[str] = field(default_factory=list)
    side: int = 0
    deferred: bool = False
    """Run the post-commit hook's pass (``worktree=False``: no status) before each reader's full pass."""

    def files(self) -> list[str]:
        """Memory paths in the work tree, sorted."""
        out = [p.relative_to(self.root).as_posix() for p in self.root.rglob("*.html")]
        return sorted(p for p in out if not p.startswith(".git/"))

    def write(self, path: str, text: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")

    def remove(self, path: str) -> None:
        (self.root / path).unlink()

    def commit(self, message: str, paths: list[str]) -> None:
        self.git.stage(paths)
        sha = self.git.commit(message)
        if sha is not None:
            self.commits.append(sha)

    def sh(self, *args: str) -> bool:
        """Run the git binary; return whether it succeeded. Re-opens the pygit2 handle afterwards."""
        try:
            self.git.run_git(list(args))
            return True
        except Exception:
            return False
        finally:
            self.git = GitRepo.discover(self.root)

    def check_matrix(self) -> None:
        """The incremental index's matrix, synced after every step (kept across steps: only changed rows are
        rewritten), ranks like a matrix built from the rebuilt index, and both like the SQL arm, for every scope."""
        kept = self.root.parent / f"{self.root.name}-incremental.f32"
        built = self.root.parent / f"{self.root.name}-fresh.f32"
        built.unlink(missing_ok=True)
        assert matrix.sync(self.db, path=kept).result in ("synced", "built", "fresh")
        assert matrix.sync(self.fresh, path=built).result == "built"
        # every CRC block of the incrementally synced file checks out, as the freshly built one's
        assert matrix_read.damage(self.db, path=kept) is None and matrix_read.damage(self.fresh, path=built) is None
        for text, scope in itertools.product(MATRIX_QUERIES, MATRIX_SCOPES):
            qvec = np.asarray(EMBEDDER.embed([text])[0], dtype="<f4").tobytes()
            scope_filter, params = scope_sql(scope)
            sql = [r[0] for r in self.db.query(vector_arm_sql(scope_filter), {
                **params, "qvec": qvec, "space": EMBEDDER.space, "arm_limit": ARM_LIMIT})]
            got = matrix_read.vector_ranks(self.db, qvec, EMBEDDER.space, scope, path=kept, sync_stale=False)
            want = matrix_read.vector_ranks(self.fresh, qvec, EMBEDDER.space, scope, path=built, sync_stale=False)
            assert got == want == sql, f"matrix ranking of {text!r} differs"

    def check(self) -> None:
        """``update`` the incremental index and compare it with a rebuild (which empties the plane first) in the
        other database."""
        if self.deferred:
            early = indexer.update(self.git, self.db, EMBEDDER, now=NOW, parse=cached_parse, worktree=False)
            assert early.embed_error is None and early.head_sha == self.git.head_sha()
        report = indexer.update(self.git, self.db, EMBEDDER, now=NOW, parse=cached_parse)
        assert report.embed_error is None
        indexer.rebuild(self.git, self.fresh, EMBEDDER, now=NOW, parse=cached_parse)
        got, want = plane(self.db), plane(self.fresh)
        for table in PLANE:
            assert got[table] == want[table], f"{table} differs from a rebuild"
        for word in ("alpha", "beta", "gamma", "delta", "uncommitted"):
            assert fts_paths(self.db, word) == fts_paths(self.fresh, word), f"fts {word!r} differs"
        self.check_matrix()
        self.db.execute("INSERT INTO files_fts(files_fts, rank) VALUES ('integrity-check', 1)")


def pick(items: list[str], n: int) -> str | None:
    return items[n % len(items)] if items else None


def archive_path(path: str) -> str:
    return path if path.startswith("archive/") else f"archive/2026/{path}"


def apply_commit_op(w: World, op: str, a: int, b: int, c: int, pool: tuple[str, ...] = LIVE) -> None:
    """One committed change; does nothing when the op has no target."""
    files = w.files()
    target = pick(files, a)
    if op == "write":
        path = pool[a % len(pool)]
        w.write(path, memory(b, c))
        w.commit(f"write {path}", [path])
    elif op == "bad" and target is not None:
        w.write(target, "<!doctype html><html><head><title></title></head><body>broken</body></html>\n")
        w.commit(f"break {target}", [target])
    elif target is None:
        return
    elif op == "edit":
        w.write(target, memory(b, c))
        w.commit(f"edit {target}", [target])
    elif op == "head":
        text = (w.root / target).read_text(encoding="utf-8")
        w.write(target, text.replace("<title>", f"<title>v{b} ", 1).replace(
            "</head>", f'<meta name="memhtml-tag" content="t{c % 3}">\n</head>', 1) if "<title>" in text else text)
        w.commit(f"head {target}", [target])
    elif op in ("rename", "copy"):
        dst = pool[b % len(pool)]
        if dst == target or (w.root / dst).exists():
            return
        if op == "rename":
            w.git.move(target, dst)
            w.commit(f"rename {target}", [target, dst])
        else:
            w.write(dst, (w.root / target).read_text(encoding="utf-8"))
            w.commit(f"copy {target}", [dst])
    elif op == "archive":
        dst = archive_path(target)
        if dst == target or (w.root / dst).exists():
            return
        w.git.move(target, dst)
        w.commit(f"archive {target}", [target, dst])
    elif op == "delete":
        w.remove(target)
        w.commit(f"delete {target}", [target])


def apply_dirty(w: World, a: int, b: int, c: int) -> None:
    """An uncommitted change (edit, untracked file, deletion or unstaged move): indexed, and it wins."""
    files = w.files()
    kind = c % 4
    target = pick(files, a)
    changed: list[str] = []
    if kind == 0 and target is not None:
        w.write(target, memory_html("Draft", f"Uncommitted note {b}."))
        changed = [target]
    elif kind == 1:
        path = LIVE[a % len(LIVE)]
        w.write(path, memory_html("Draft", f"Uncommitted note {b}."))
        changed = [path]
    elif kind == 2 and target is not None:
        w.remove(target)
        changed = [target]
    elif kind == 3 and target is not None:
        dst = SIDE[b % len(SIDE)]
        if (w.root / dst).exists():
            return
        (w.root / dst).parent.mkdir(parents=True, exist_ok=True)
        (w.root / target).rename(w.root / dst)
        changed = [target, dst]
    if not changed:
        return
    w.check()
    for path in changed:
        disk = w.root / path
        row = w.db.query_one("SELECT blob_sha FROM files WHERE path = ?", (path,))
        if not disk.is_file():
            assert row is None, f"{path} was deleted in the work tree but is still indexed"
        elif "Uncommitted note" in disk.read_text(encoding="utf-8"):
            assert row is not None and row[0] == git_blob_sha(disk.read_bytes()), f"{path}: the edit did not win"
    if b % 2:
        w.git.restore_paths(changed)  # discard: the index must fall back to HEAD
    else:
        w.commit("commit the draft", changed)


def apply_merge(w: World, a: int, b: int, c: int) -> None:
    """Branch, commit on both sides, merge the side branch into main (a refused merge is aborted)."""
    w.side += 1
    name = f"side{w.side}"
    if not w.sh("checkout", "-q", "-b", name):
        return
    apply_commit_op(w, ("write", "edit", "rename")[a % 3], a, b, c, pool=SIDE)
    w.check()
    w.sh("checkout", "-q", "main")
    w.check()
    apply_commit_op(w, ("write", "edit", "archive", "delete")[b % 4], b, c, a)
    w.check()
    if not w.sh("merge", "-q", "--no-edit", name):
        w.sh("merge", "--abort")
    head = w.git.head_sha()
    if head is not None and head not in w.commits:
        w.commits.append(head)


def apply_reset(w: World, a: int, b: int) -> None:
    """``git reset --hard|--soft|--mixed`` to an earlier commit; soft/mixed leave the rest uncommitted."""
    if len(w.commits) < 2:
        return
    target = w.commits[a % (len(w.commits) - 1)]
    mode = ("--hard", "--soft", "--mixed")[b % 3]
    if not w.sh("reset", "-q", mode, target):
        return
    if mode != "--hard":
        w.check()  # the later commits' changes are now uncommitted: they must be indexed and win
        w.sh("add", "-A", "--", "projects", "areas", "resources", "archive")
        sha = w.git.commit("recommit after reset")
        if sha is not None:
            w.commits.append(sha)


OPS = ("write", "edit", "head", "rename", "archive", "copy", "delete", "bad", "merge", "reset", "dirty")
STEP = st.tuples(st.sampled_from(OPS), st.integers(0, 11), st.integers(0, 11), st.integers(0, 11))
SEED = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 3), st.integers(0, 5)), min_size=1, max_size=4)


def run_history(root: Path, seed: list[tuple[int, int, int]], steps: list[tuple[str, int, int, int]], *,
                deferred: bool = False) -> None:
    """Replay one generated history in a new repository at ``root``; check the invariant after every commit
    (``deferred``: each check starts with the post-commit hook's status-free pass)."""
    db, fresh = open_index(":memory:", ":memory:"), open_index(":memory:", ":memory:")
    try:
        w = World(root, GitRepo.init(root), db, fresh, deferred=deferred)
        for path_i, claim, meta in seed:
            w.write(LIVE[path_i], memory(claim, meta))
        w.commit("seed", [LIVE[p] for p, _, _ in seed])
        w.check()
        for op, a, b, c in steps:
            if op == "merge":
                apply_merge(w, a, b, c)
            elif op == "reset":
                apply_reset(w, a, b)
            elif op == "dirty":
                apply_dirty(w, a, b, c)
            else:
                apply_commit_op(w, op, a, b, c)
            w.check()
    finally:
        db.close()
        fresh.close()


@pytest.fixture(scope="module")
def fresh_root(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Path]:
    """A new repository folder per example; pytest's tmp retention removes them later (cheaper than rmtree)."""
    base = tmp_path_factory.mktemp("histories")
    counter = itertools.count()
    return lambda: base / f"h{next(counter)}"


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=SEED, steps=st.lists(STEP, min_size=3, max_size=8))
def test_incremental_update_equals_rebuild(fresh_root: Callable[[], Path], seed: list[tuple[int, int, int]],
                                           steps: list[tuple[str, int, int, int]]) -> None:
    run_history(fresh_root(), seed, steps)


@pytest.mark.slow
@settings(max_examples=60, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(seed=SEED, steps=st.lists(STEP, min_size=3, max_size=8))
def test_a_deferred_status_pass_then_a_full_pass_equals_rebuild(fresh_root: Callable[[], Path],
                                                               seed: list[tuple[int, int, int]],
                                                               steps: list[tuple[str, int, int, int]]) -> None:
    """The post-commit hook's pass leaves the work tree to the next reader (docs/hooks.md): whatever it left,
    the reader's full pass converges on a rebuild (uncommitted edits, resets and merges included)."""
    run_history(fresh_root(), seed, steps, deferred=True)
