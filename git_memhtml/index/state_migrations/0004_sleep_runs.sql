-- Sleep run and phase rows (docs/sleep.md §2.4 "Rows"). They live in the shared state plane because a run executes in
-- its own linked worktree (with its own index.db) while status, review and merge read them from any checkout.
-- They are a convenience: resume reads the Memhtml-Phase trailers on the branch, never these rows.
-- `owner` is <host>:<pid> of the process running the run, so a row left `running` by a killed process can be
-- told from a run that is executing right now.
CREATE TABLE state.sleep_runs (
  run_id TEXT PRIMARY KEY,
  branch TEXT NOT NULL,
  base_sha TEXT NOT NULL,
  head_sha TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','interrupted','review','merged','abandoned','failed')),
  dry_run INTEGER NOT NULL DEFAULT 0,
  owner TEXT,
  started_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE TABLE state.sleep_phases (
  run_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok','failed','skipped')),
  commit_sha TEXT,
  counts TEXT NOT NULL DEFAULT '{}',
  detail TEXT,
  llm_calls INTEGER NOT NULL DEFAULT 0,
  started_at TEXT,
  ended_at TEXT,
  PRIMARY KEY (run_id, phase)
);
