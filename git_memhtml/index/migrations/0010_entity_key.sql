-- Entity matching key (issue 8 item 4): `entity_key` is `domain.entities.entity_key(type || ':' || name)` (NFC,
-- case-folded, whitespace collapsed), written by the projection and compared by every `--entity` scope filter,
-- so `org:DGIA` and `org:dgia` find the same files while `entity_name` keeps the name as written. Existing rows
-- are backfilled through the same Python function, registered on the connection as `memhtml_entity_key`.
ALTER TABLE file_entities ADD COLUMN entity_key TEXT NOT NULL DEFAULT '';
UPDATE file_entities SET entity_key = memhtml_entity_key(entity_type || ':' || entity_name);
CREATE INDEX file_entities_match ON file_entities(entity_key, path);
