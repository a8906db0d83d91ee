-- Stubs are no search result (issue 27, docs/retrieval.md §4.1): `stub` is 1 for a memory whose whole article
-- says nothing but that a person exists (`tree.people.is_stub`: the sentence person-links mints, "<name> appears in
-- this agent's memory.", or a bare person name), written by the projection and read by the one scope filter every
-- search arm shares. Existing rows are backfilled through the same Python function, registered on the connection as
-- `memhtml_stub` (title, article text, the file's entity values joined by U+001F).
ALTER TABLE files ADD COLUMN stub INTEGER NOT NULL DEFAULT 0 CHECK (stub IN (0, 1));
UPDATE files SET stub = memhtml_stub(title, body_text, (
  SELECT group_concat(e.entity_type || ':' || e.entity_name, char(31)) FROM file_entities e WHERE e.path = files.path
));
-- A stub is no lexical document either: its text would count in the FTS5 statistics every bm25 score reads (a
-- person's name gains a document, the corpus a row), and its short "<name> appears …" would take a place in the
-- lexical arm's first cut before the scope filter drops it. Measured on LoCoMo conv-43 (bench/curation.py): with
-- the two minted stubs indexed, one question's evidence fell out of the top 10 after a night that changed no fact.
UPDATE files SET fts_text = '' WHERE stub = 1;
-- The covering indexes of the search read path (migration 0013) hold the column the scope filter now reads, so the
-- same plans still read index pages alone.
DROP INDEX files_recency;
CREATE INDEX files_recency ON files(archived, coalesce(event_at, updated_at) DESC, path, memory_type, stub);
DROP INDEX files_scope;
CREATE INDEX files_scope ON files(archived, path, memory_type, workspace, updated_at, stub);
