-- Typed edges (docs/format.md §1.3, docs/index.md §3.2). No endpoint FK: an edge may name a file not (yet) indexed.
CREATE TABLE edges (
  src_path TEXT NOT NULL,
  rel TEXT NOT NULL,
  dst_path TEXT NOT NULL,
  edge_class TEXT NOT NULL,
  derived INTEGER NOT NULL DEFAULT 0 CHECK (derived IN (0, 1)),
  strength REAL NOT NULL DEFAULT 1.0,
  provenance TEXT NOT NULL DEFAULT 'authored' CHECK (provenance IN ('authored','sleep','import')),
  sleep_run TEXT,
  src_hash TEXT,
  dst_hash TEXT,
  created_at TEXT NOT NULL,
  PRIMARY KEY (src_path, rel, dst_path),
  CHECK (src_path <> dst_path),
  CHECK (derived = 0 OR provenance = 'sleep'),
  CHECK (
    (edge_class = 'memory' AND rel IN ('supersedes','contradicts','caused_by','leads_to','part_of','relates_to',
                                       'example_of','supports','laterally_related'))
    OR (edge_class = 'person' AND rel IN ('about_person','authored_by'))
    OR (edge_class = 'provenance' AND rel = 'from_session')
    OR (edge_class = 'task' AND rel IN ('blocks','subtask_of'))
  )
);
CREATE INDEX edges_dst ON edges(dst_path, rel);
