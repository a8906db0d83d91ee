-- How each sleep run reached main (issue 5): `sleep merge`, or on a forge by fast-forward, merge commit or squash.
-- One row per run, first landing wins; `sleep status` shows it. Written by sleep/landings.py.
CREATE TABLE state.sleep_landings (
  run_id TEXT PRIMARY KEY,
  how TEXT NOT NULL CHECK (how IN ('sleep-merge','fast-forward','merge-commit','squash')),
  commit_sha TEXT,
  landed_at TEXT NOT NULL
);
