-- Lexical arm (docs/index.md §3.2, docs/design.md §3.13): external-content FTS5 over files.fts_text, kept in sync by
-- triggers. porter + unicode61 with diacritics folded (docs/git.md §6.4: 'résumé' matches 'resume').
CREATE VIRTUAL TABLE files_fts USING fts5(
  fts_text,
  content='files',
  content_rowid='id',
  tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER files_fts_ai AFTER INSERT ON files BEGIN
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.id, new.fts_text);
END;
CREATE TRIGGER files_fts_ad AFTER DELETE ON files BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.id, old.fts_text);
END;
CREATE TRIGGER files_fts_au AFTER UPDATE OF fts_text ON files BEGIN
  INSERT INTO files_fts(files_fts, rowid, fts_text) VALUES ('delete', old.id, old.fts_text);
  INSERT INTO files_fts(rowid, fts_text) VALUES (new.id, new.fts_text);
END;
