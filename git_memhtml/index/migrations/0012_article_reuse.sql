-- Head-only rewrites reuse the article (issue 12 item 3, docs/index.md "Head-only rewrites"): the digest of the
-- article's source bytes (NULL when html5lib built the tree: never reused) and the article's extracted facts as
-- JSON (body_text stays in its own column). The FTS row is rewritten only when fts_text really changes.
ALTER TABLE files ADD COLUMN article_digest TEXT;
ALTER TABLE files ADD COLUMN article_facts TEXT;
DROP TRIGGER files_fts_au;
CREATE TRIGGER files_fts_au AFTER UPDATE OF fts_text ON files WHEN old.fts_text IS NOT new.fts_text BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.id, old.fts_text);
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.id, new.fts_text);
END;
