-- The consolidation watermark (docs/traces.md §7): a session the trace-consolidation phase distilled on a run that
-- merged. State plane: `index rebuild` must not forget it, or every session would be distilled again. Written only
-- by `sleep merge` applying a run's `session-consolidated` ledger marks, never during a phase (docs/ledger.md §1).
CREATE TABLE state.trace_consolidations (
  session_id TEXT PRIMARY KEY,
  run_id TEXT NOT NULL,
  consolidated_at TEXT NOT NULL
);
