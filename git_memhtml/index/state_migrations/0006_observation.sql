-- When this store began observing reads (issue 8 item 4): one row, the instant of the first recorded access bump
-- (`read`, `reinforce`; index/access.py). Retention-triage reads disuse as evidence only over the window since
-- then (docs/sleep.md "Retention on a new corpus"). No row = nobody ever read anything through this store.
CREATE TABLE state.observation (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  started_at TEXT NOT NULL
);
-- An older state.db recorded reads before this table existed. Its earliest surviving `last_accessed_at` is a read
-- that certainly happened while reads were being recorded; the true first read can only be earlier, so this start
-- never lengthens the window (it can shorten it: conservative).
INSERT INTO state.observation (id, started_at)
  SELECT 1, last_accessed_at FROM state.access WHERE unixepoch(last_accessed_at) IS NOT NULL
  ORDER BY unixepoch(last_accessed_at), last_accessed_at LIMIT 1;
