-- Content-keyed chunks and their vectors (docs/index.md §3.2, §3.8). chunk_id =
-- hex(sha256("<content_hash>:<ordinal>")), so a rename re-points chunks (ON CONFLICT) and keeps their vectors.
CREATE TABLE chunks (
  chunk_id TEXT PRIMARY KEY,
  path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE ON UPDATE CASCADE,
  content_hash TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  text TEXT NOT NULL,
  char_count INTEGER NOT NULL,
  UNIQUE (content_hash, ordinal)
);
CREATE INDEX chunks_path ON chunks(path, ordinal);

-- `model` is the vector space "<provider>:<model>@<dim>"; `vec` is dim × float32 little-endian.
CREATE TABLE embeddings (
  chunk_id TEXT PRIMARY KEY REFERENCES chunks(chunk_id) ON DELETE CASCADE,
  model TEXT NOT NULL,
  dim INTEGER NOT NULL CHECK (dim > 0),
  vec BLOB NOT NULL CHECK (length(vec) = 4 * dim),
  created_at TEXT NOT NULL
);
CREATE INDEX embeddings_model ON embeddings(model);
