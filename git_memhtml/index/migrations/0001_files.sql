-- Index plane: one row per indexed memory file (docs/index.md §3.2). Rebuildable from the tree.
-- `id` is a stable integer rowid for the external-content FTS table (a bare rowid could be renumbered by VACUUM);
-- `path` is the identity and the upsert key.
CREATE TABLE files (
  id INTEGER PRIMARY KEY,
  path TEXT NOT NULL UNIQUE,
  blob_sha TEXT NOT NULL,
  content_hash TEXT NOT NULL,
  memory_type TEXT NOT NULL CHECK (memory_type IN ('episodic','semantic','procedural','agent_insight',
    'user_preference','error_pattern','verdict','precedent','arc','task')),
  status TEXT NOT NULL DEFAULT 'active',
  title TEXT NOT NULL,
  body_text TEXT NOT NULL DEFAULT '',
  gist TEXT NOT NULL DEFAULT '',
  fts_text TEXT NOT NULL DEFAULT '',
  disclosure_text TEXT NOT NULL DEFAULT '',
  para TEXT NOT NULL,
  workspace TEXT,
  confidence REAL NOT NULL DEFAULT 1.0,
  importance INTEGER NOT NULL DEFAULT 5,
  archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
  origin_path TEXT NOT NULL,
  word_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  event_at TEXT,
  archived_at TEXT,
  valid_from TEXT,
  valid_until TEXT,
  reprieves INTEGER NOT NULL DEFAULT 0,
  needs_revision INTEGER NOT NULL DEFAULT 0,
  author TEXT NOT NULL DEFAULT 'agent',
  session_id TEXT,
  prompt_id TEXT,
  turn_uuid TEXT,
  indexed_at TEXT NOT NULL,
  task_status TEXT CHECK (task_status IS NULL OR task_status IN ('todo','doing','blocked','done')),
  due_at TEXT,
  frame_key TEXT
);
CREATE UNIQUE INDEX files_active_content ON files(content_hash) WHERE archived = 0 AND memory_type <> 'task';
CREATE INDEX files_task_status ON files(task_status) WHERE memory_type = 'task' AND archived = 0;
CREATE INDEX files_frame_key ON files(frame_key)
  WHERE archived = 0 AND memory_type <> 'task' AND frame_key IS NOT NULL;
CREATE INDEX files_recency ON files(archived, coalesce(event_at, updated_at));
CREATE INDEX files_workspace ON files(workspace);
CREATE INDEX files_session ON files(session_id) WHERE session_id IS NOT NULL;
