-- Single-row watermark and vector space (docs/index.md §3.2, §3.7).
CREATE TABLE index_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  head_sha TEXT,
  embed_model TEXT,
  embed_dim INTEGER,
  rebuilt_at TEXT,
  updated_at TEXT
);
