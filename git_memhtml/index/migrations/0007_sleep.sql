-- Run state (core §3.2, sleep-eval §2 "Rows"); survives `index rebuild`.
CREATE TABLE sleep_runs (
  run_id TEXT PRIMARY KEY,
  branch TEXT,
  base_sha TEXT NOT NULL,
  head_sha TEXT,
  status TEXT NOT NULL CHECK (status IN ('running','review','merged','abandoned','failed')),
  started_at TEXT,
  ended_at TEXT
);
CREATE TABLE sleep_phases (
  run_id TEXT NOT NULL,
  phase TEXT NOT NULL,
  ordinal INTEGER NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('ok','failed','skipped')),
  commit_sha TEXT,
  counts TEXT,
  error TEXT,
  llm_calls INTEGER NOT NULL DEFAULT 0,
  started_at TEXT,
  ended_at TEXT,
  PRIMARY KEY (run_id, phase)
);
CREATE TABLE trace_consolidations (
  session_id TEXT PRIMARY KEY,
  run_id TEXT,
  consolidated_at TEXT NOT NULL
);
