"""``index verify``: compare the index plane with a re-projection of the tree (issue 4 item 6; docs/style.md §4).

The tree (HEAD overlaid with the work tree) is re-projected into a scratch in-memory index with the same
``rebuild`` the CLI uses, then both are compared path by path as row sets (``files`` without ``id``/
``indexed_at``, the four detail tables, chunks, authored out-edges without ``created_at``, duplicate-content
refusals). Sleep-derived edges are not re-projectable and are left out. The vector matrix beside the index is
checked against its CRCs (docs/index.md §3.12). Reads only; :func:`repair` fixes.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, replace

from git_memhtml.embed.base import Embedder
from git_memhtml.index import indexer
from git_memhtml.index.active import ACTIVE_MEMORY
from git_memhtml.index.db import IndexDB, open_index
from git_memhtml.index.embedding import embed_missing
from git_memhtml.index.matrix import sync
from git_memhtml.index.matrix_read import damage
from git_memhtml.index.source import IndexedRepo, Parser
from git_memhtml.index.watermark import indexed_head, vector_space

_FILE_COLUMNS = (
    "blob_sha, content_hash, memory_type, status, title, body_text, gist, fts_text, disclosure_text, para, "
    "workspace, confidence, importance, archived, origin_path, word_count, created_at, updated_at, event_at, "
    "archived_at, valid_from, valid_until, reprieves, needs_revision, author, session_id, prompt_id, turn_uuid, "
    "task_status, due_at, frame_key, stub"
)
PLANE_SQL: dict[str, str] = {
    "files": f"SELECT path, {_FILE_COLUMNS} FROM files",
    "file_tags": "SELECT path, tag FROM file_tags",
    "file_entities": "SELECT path, entity_type, entity_name, entity_key FROM file_entities",
    "file_facets": "SELECT path, name, value, numeric_value FROM file_facets",
    "file_citations": "SELECT path, text, href FROM file_citations",
    "chunks": "SELECT path, chunk_id, content_hash, ordinal, text, char_count FROM chunks",
    "edges": "SELECT src_path, rel, dst_path, edge_class, strength, src_hash FROM edges WHERE provenance = 'authored'",
    "index_refusals": "SELECT path, content_hash FROM index_refusals",
}
"""Per table: a query whose first column is the owning path; timestamps (``indexed_at``, ``created_at``) and
rowids are left out because a re-projection cannot reproduce them."""
DANGLING_CLASSES: tuple[str, ...] = ("memory", "person", "task")
"""Edge classes whose target must be a file of the tree; ``from_session`` (provenance) names a session."""


@dataclass(frozen=True)
class IndexDrift:
    """What differs between the index and the tree.

    ``missing``: paths the tree indexes but the index lacks; ``extra``: indexed paths the tree does not have;
    ``differing``: ``(path, tables)`` whose rows differ; ``stale``: the watermark is not HEAD; ``fts_ok``: the
    FTS5 table agrees with ``files``; ``missing_vectors``: chunks without a vector of the recorded space;
    ``matrix_damage``: the vector matrix's body fails its CRCs (``matrix_read.damage``: the file and the block).
    """

    indexed_head: str | None
    head: str | None
    stale: bool
    missing: tuple[str, ...]
    extra: tuple[str, ...]
    differing: tuple[tuple[str, tuple[str, ...]], ...]
    fts_ok: bool
    missing_vectors: int
    matrix_damage: str | None = None
    refused: tuple[tuple[str, str], ...] = ()
    """``(path, reason)`` of every tree file a rebuild refuses (does not parse, duplicate live content, a name
    that is not UTF-8): exactly the ``errors`` of the re-projection, so ``index verify`` says what ``index
    rebuild`` says. Not drift: an index without those files *is* the rebuild; the files need fixing."""

    @property
    def drifted_paths(self) -> tuple[str, ...]:
        """Every path whose rows must be re-projected, sorted."""
        return tuple(sorted({*self.missing, *self.extra, *(p for p, _ in self.differing)}))

    @property
    def not_built(self) -> bool:
        """The index was never built for this checkout (no watermark, HEAD exists, nothing extra or differing):
        a fresh clone. One finding, not one per missing path."""
        return self.indexed_head is None and self.head is not None and not self.extra and not self.differing

    @property
    def clean(self) -> bool:
        """No drift of any kind."""
        return not (self.stale or self.drifted_paths or not self.fts_ok or self.missing_vectors or self.matrix_damage)


@dataclass(frozen=True)
class TreeFacts:
    """What a re-projection of the tree says besides rows: unparseable files ``(path, violations)``, duplicate
    live content ``(path, holder)``, authored links to absent files ``(src, rel, dst)``."""

    unparseable: tuple[tuple[str, str], ...]
    duplicates: tuple[tuple[str, str], ...]
    dangling: tuple[tuple[str, str, str], ...]


def _by_path(db: IndexDB) -> dict[str, dict[str, list[tuple[object, ...]]]]:
    out: dict[str, dict[str, list[tuple[object, ...]]]] = defaultdict(lambda: defaultdict(list))
    for table, sql in PLANE_SQL.items():
        for row in db.query(sql):
            out[str(row[0])][table].append(tuple(row))
    for tables in out.values():
        for rows in tables.values():
            rows.sort(key=repr)
    return out


def _fts_ok(db: IndexDB) -> bool:
    if db.read_only is not None:  # the FTS5 'integrity-check' command is a write; the pragma runs its xIntegrity
        return db.query("PRAGMA main.integrity_check(files_fts)") == [("ok",)]
    try:
        db.execute("INSERT INTO files_fts(files_fts, rank) VALUES ('integrity-check', 1)")
    except Exception:
        return False
    return True


def _missing_vectors(db: IndexDB) -> int:
    space = vector_space(db)
    if space is None:
        return 0
    found = db.query_one(
        "SELECT count(*) FROM chunks c LEFT JOIN embeddings e ON e.chunk_id = c.chunk_id AND e.model = ? "
        "WHERE e.chunk_id IS NULL", (space,))
    return int(found[0]) if found else 0


def reproject(repo: IndexedRepo, *, now: str, parse: Parser | None = None) -> tuple[IndexDB, indexer.IndexReport]:
    """Project the tree into a new in-memory index (no vectors); the caller closes the returned database."""
    scratch = open_index(":memory:", ":memory:")
    try:
        report = indexer.rebuild(repo, scratch, None, now=now, parse=parse)
    except BaseException:
        scratch.close()
        raise
    return scratch, report


def compare(db: IndexDB, scratch: IndexDB, *, head: str | None) -> IndexDrift:
    """Compare the live index ``db`` with the re-projection ``scratch`` (reads only)."""
    live, want = _by_path(db), _by_path(scratch)
    live_files = {p for p, t in live.items() if t.get("files")}
    want_files = {p for p, t in want.items() if t.get("files")}
    differing: list[tuple[str, tuple[str, ...]]] = []
    for path in sorted(set(live) | set(want)):
        if path in want_files ^ live_files:
            continue
        tables = tuple(t for t in PLANE_SQL if live.get(path, {}).get(t, []) != want.get(path, {}).get(t, []))
        if tables:
            differing.append((path, tables))
    indexed = indexed_head(db)
    return IndexDrift(
        indexed_head=indexed, head=head, stale=indexed != head,
        missing=tuple(sorted(want_files - live_files)), extra=tuple(sorted(live_files - want_files)),
        differing=tuple(differing), fts_ok=_fts_ok(db), missing_vectors=_missing_vectors(db),
        matrix_damage=damage(db),
    )


def held_refusals(db: IndexDB) -> tuple[tuple[str, str], ...]:
    """``(path, reason)`` of every file ``index_refusals`` holds (live content a smaller path already holds;
    migration 0009), sorted by path: the refusals an incremental pass knows of without reading the tree. The
    reason names the holder as the pass that refused the file did. Reads only, one query."""
    rows = db.query(
        f"SELECT r.path, (SELECT f.path FROM files f WHERE f.content_hash = r.content_hash AND {ACTIVE_MEMORY} "
        "ORDER BY f.path LIMIT 1) FROM index_refusals r ORDER BY r.path")
    return tuple((str(path), f"same content as {holder} (the smallest path is indexed)" if holder is not None
                  else "duplicate content: waiting for the holder to go") for path, holder in rows)


def tree_facts(repo: IndexedRepo, scratch: IndexDB, report: indexer.IndexReport,
               tree_paths: Callable[[], set[str]]) -> TreeFacts:
    """Unparseable files, duplicate live content and dangling authored links of the re-projected tree.

    ``tree_paths`` returns every path of the effective tree (any file, not only memories), so a link to e.g.
    ``README.html`` is not dangling. Paths are compared as strings; nothing is opened.
    """
    refused = {str(r[0]): str(r[1]) for r in scratch.query("SELECT path, content_hash FROM index_refusals")}
    holders = {str(r[1]): str(r[0]) for r in scratch.query(
        f"SELECT path, content_hash FROM files WHERE {ACTIVE_MEMORY}")}
    unparseable = tuple((p, why) for p, why in report.errors if p not in refused)
    duplicates = tuple(sorted((p, holders.get(h, "")) for p, h in refused.items()))
    present = tree_paths()
    marks = ", ".join("?" for _ in DANGLING_CLASSES)
    dangling = tuple(
        (str(s), str(r), str(d)) for s, r, d in scratch.query(
            f"SELECT src_path, rel, dst_path FROM edges WHERE provenance = 'authored' AND edge_class IN ({marks}) "
            "ORDER BY src_path, rel, dst_path", DANGLING_CLASSES)
        if d not in present
    )
    return TreeFacts(unparseable=unparseable, duplicates=duplicates, dangling=dangling)


def verify(repo: IndexedRepo, db: IndexDB, *, now: str, parse: Parser | None = None) -> IndexDrift:
    """Re-project the tree and compare it with ``db``; reads only (docs/index.md §3.4: the index is a cache of the
    tree).

    Returns:
        :class:`IndexDrift`; ``clean`` when the index is exactly what a rebuild would write; ``refused`` lists the
        files that rebuild refuses (``IndexReport.errors``), whether or not the index is clean.
    Raises:
        GitError: the repository cannot be read. StorageError: SQLite failed.
    """
    scratch, report = reproject(repo, now=now, parse=parse)
    try:
        return replace(compare(db, scratch, head=repo.head_sha()), refused=tuple(sorted(report.errors)))
    finally:
        scratch.close()


def repair(repo: IndexedRepo, db: IndexDB, embedder: Embedder | None, *, now: str,
           parse: Parser | None = None) -> IndexDrift:
    """Catch the index up (``update``), re-project every drifted path, rebuild the FTS table if it disagrees and
    embed missing chunks, rebuild a vector matrix whose body fails its CRCs; return the drift that remains
    (normally none). Never touches the tree.

    Raises:
        EmbedModelMismatch: the index holds vectors of another space (hint ``git memhtml index rebuild``).
        GitError, StorageError: as :func:`verify`.
    """
    indexer.update(repo, db, embedder, now=now, parse=parse)
    drift = verify(repo, db, now=now, parse=parse)
    if drift.drifted_paths:
        indexer.reproject_paths(repo, db, drift.drifted_paths, now=now, parse=parse)
    if not drift.fts_ok:
        with db.atomic():
            db.execute("INSERT INTO files_fts(files_fts) VALUES ('rebuild')")
    embed_missing(db, embedder, now=now)
    if drift.matrix_damage or damage(db):
        sync(db, full=True)
    return verify(repo, db, now=now, parse=parse)
