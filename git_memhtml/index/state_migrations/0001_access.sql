-- State plane (docs/index.md §3.3): not rebuildable; exported to .memhtml/state/access.jsonl.
CREATE TABLE state.access (
  path TEXT PRIMARY KEY,
  access_count INTEGER NOT NULL DEFAULT 0,
  reinforcement_count INTEGER NOT NULL DEFAULT 0,
  outcome_score REAL NOT NULL DEFAULT 0 CHECK (outcome_score BETWEEN -1 AND 1),
  last_accessed_at TEXT,
  last_reinforced_at TEXT,
  updated_at TEXT NOT NULL
);
