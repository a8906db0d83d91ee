-- Per-file detail rows (docs/index.md §3.2); they follow the file's path on rename and go with it on delete.
CREATE TABLE file_tags (
  path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE ON UPDATE CASCADE,
  tag TEXT NOT NULL,
  PRIMARY KEY (path, tag)
);
CREATE INDEX file_tags_tag ON file_tags(tag);

CREATE TABLE file_entities (
  path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE ON UPDATE CASCADE,
  entity_type TEXT NOT NULL,
  entity_name TEXT NOT NULL,
  PRIMARY KEY (path, entity_type, entity_name)
);
CREATE INDEX file_entities_key ON file_entities(entity_type, entity_name);

CREATE TABLE file_facets (
  path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE ON UPDATE CASCADE,
  name TEXT NOT NULL,
  value TEXT NOT NULL,
  numeric_value REAL,
  PRIMARY KEY (path, name, value)
);

CREATE TABLE file_citations (
  path TEXT NOT NULL REFERENCES files(path) ON DELETE CASCADE ON UPDATE CASCADE,
  text TEXT NOT NULL,
  href TEXT,
  PRIMARY KEY (path, text)
);
