-- Paths whose index rows were projected from uncommitted work-tree bytes (docs/index.md §3.7: dirty files win).
-- When such a path is clean again, the next update re-projects it from HEAD (or drops it when HEAD lacks it).
CREATE TABLE worktree_paths (
  path TEXT PRIMARY KEY
);
