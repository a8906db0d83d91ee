-- Pending-mark ledgers already applied to the state plane, by sleep run id.
CREATE TABLE state.applied_ledgers (
  run_id TEXT PRIMARY KEY,
  applied_at TEXT NOT NULL
);
