-- Trace consolidation watermarks (docs/index.md §3.2); survive `index rebuild`. Sleep run/phase rows live in the state
-- plane (state_migrations/0004_sleep_runs.sql) because runs execute in linked worktrees with their own index.db.
CREATE TABLE trace_consolidations (
  session_id TEXT PRIMARY KEY,
  run_id TEXT,
  consolidated_at TEXT NOT NULL
);
