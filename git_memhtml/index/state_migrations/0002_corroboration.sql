-- Two-night corroboration ledgers (docs/index.md §3.3, docs/entities.md §6).
CREATE TABLE state.edge_corroboration (
  src_path TEXT NOT NULL,
  rel TEXT NOT NULL,
  dst_path TEXT NOT NULL,
  detections INTEGER NOT NULL DEFAULT 1 CHECK (detections >= 1),
  confirmed INTEGER NOT NULL DEFAULT 0,
  promoted INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (src_path, rel, dst_path)
);
CREATE TABLE state.entity_corroboration (
  entity_type TEXT NOT NULL,
  alias_name TEXT NOT NULL,
  canonical_name TEXT NOT NULL,
  detections INTEGER NOT NULL DEFAULT 1 CHECK (detections >= 1),
  confirmed INTEGER NOT NULL DEFAULT 0,
  promoted INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (entity_type, alias_name, canonical_name)
);
