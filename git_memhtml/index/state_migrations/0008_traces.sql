-- The trace plane (docs/traces.md §5): what `git memhtml trace index` keeps of agent session transcripts.
-- It lives in the shared state plane, not in the per-worktree index.db: transcripts are outside every checkout, a
-- sleep run reads them from its own linked worktree, and `index rebuild` (which empties only index-plane tables)
-- and a quarantined index.db must both leave it alone. Only pointers and capped, redacted heads are stored.
CREATE TABLE state.traces (
  session_id TEXT PRIMARY KEY,
  source TEXT NOT NULL CHECK (source IN ('claude-code','codex')),
  slug TEXT NOT NULL DEFAULT '',
  cwd TEXT NOT NULL DEFAULT '',
  git_branch TEXT NOT NULL DEFAULT '',
  model TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '',
  ended_at TEXT NOT NULL DEFAULT '',
  user_prompts INTEGER NOT NULL DEFAULT 0,
  assistant_turns INTEGER NOT NULL DEFAULT 0,
  tool_calls INTEGER NOT NULL DEFAULT 0,
  sub_agents INTEGER NOT NULL DEFAULT 0,
  unknown_types INTEGER NOT NULL DEFAULT 0,
  invalid_lines INTEGER NOT NULL DEFAULT 0,
  dropped_lines INTEGER NOT NULL DEFAULT 0,
  oversized_lines INTEGER NOT NULL DEFAULT 0,
  first_prompt TEXT NOT NULL DEFAULT '',
  ai_title TEXT NOT NULL DEFAULT '',
  search_text TEXT NOT NULL DEFAULT '',
  file_path TEXT,
  file_size INTEGER,
  file_mtime_ms INTEGER,
  redactions INTEGER NOT NULL DEFAULT 0,
  indexed_at TEXT NOT NULL
);
CREATE INDEX state.traces_started ON traces (started_at);
CREATE INDEX state.traces_cwd ON traces (cwd);
CREATE VIRTUAL TABLE state.traces_fts USING fts5(search_text, content='traces', content_rowid='rowid');
CREATE TRIGGER state.traces_fts_insert AFTER INSERT ON traces BEGIN
  INSERT INTO traces_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
END;
CREATE TRIGGER state.traces_fts_delete AFTER DELETE ON traces BEGIN
  INSERT INTO traces_fts(traces_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
END;
CREATE TRIGGER state.traces_fts_update AFTER UPDATE OF search_text ON traces BEGIN
  INSERT INTO traces_fts(traces_fts, rowid, search_text) VALUES ('delete', old.rowid, old.search_text);
  INSERT INTO traces_fts(rowid, search_text) VALUES (new.rowid, new.search_text);
END;
CREATE TABLE state.trace_prompts (
  session_id TEXT NOT NULL REFERENCES traces(session_id) ON DELETE CASCADE,
  ordinal INTEGER NOT NULL,
  uuid TEXT NOT NULL DEFAULT '',
  at TEXT NOT NULL DEFAULT '',
  head TEXT NOT NULL,
  PRIMARY KEY (session_id, ordinal)
);
-- One row per transcript file read: where the next scan starts (docs/traces.md §3).
CREATE TABLE state.trace_watermarks (
  path TEXT PRIMARY KEY,
  source TEXT NOT NULL CHECK (source IN ('claude-code','codex')),
  session_id TEXT NOT NULL,
  file_size INTEGER NOT NULL,
  mtime_ms INTEGER NOT NULL,
  byte_offset INTEGER NOT NULL,
  scanned_at TEXT NOT NULL
);
CREATE INDEX state.trace_watermarks_session ON trace_watermarks (session_id);
-- A memory file ↔ a session. `wrote` rows mirror the memhtml-session meta of the checkout's memories (refreshed by
-- `trace index` and `trace links`); the other kinds are recorded events and are never refreshed away.
CREATE TABLE state.memory_session_links (
  path TEXT NOT NULL,
  session_id TEXT NOT NULL,
  prompt_id TEXT,
  turn_uuid TEXT,
  link_kind TEXT NOT NULL CHECK (link_kind IN ('wrote','read','corrected','reinforced')),
  at TEXT NOT NULL,
  PRIMARY KEY (path, session_id, link_kind)
);
CREATE INDEX state.memory_session_links_session ON memory_session_links (session_id);
