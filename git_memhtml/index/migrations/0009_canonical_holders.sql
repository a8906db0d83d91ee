-- Index correctness (issue 4 item 6): the index plane is a function of the tree, whatever the history.
-- `files(content_hash)` lets the indexer find every holder of a content hash cheaply: chunks are content-keyed,
-- so one chunk set serves all files with the same content and is owned by the preferred holder (live before
-- archived, then the smallest path).
CREATE INDEX files_content_hash ON files(content_hash, archived, path);
-- Files refused by the live-content unique rule (a live non-task twin with a smaller path holds the content).
-- When the holder goes (deleted, archived, edited), the next pass re-tries these paths, so an incremental
-- update ends where a rebuild would. Rebuildable: emptied by `index rebuild`.
CREATE TABLE index_refusals (
  path TEXT PRIMARY KEY,
  content_hash TEXT NOT NULL
);
CREATE INDEX index_refusals_hash ON index_refusals(content_hash);
