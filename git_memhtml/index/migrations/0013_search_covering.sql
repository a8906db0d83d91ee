-- Covering indexes of the search read path (issue 12 "cold CLI search", docs/retrieval.md §4.14). A search process
-- reads three query-independent relations over every admitted file: the vector matrix's slot map (files ⋈ chunks ⋈
-- vector_slots), the recency arm and the salience arm. Each read the wide `files` rows (body, FTS and disclosure
-- text: ~2 KB a memory) and `chunks` rows (the chunk text) only for a few narrow columns, and the slot map looked
-- each slot's `model` up in the table after finding its chunk in the unique index. These indexes hold those
-- columns, so the same plans read index pages alone; the rows they return are unchanged (an index never changes a
-- result, only the pages a plan reads).
-- files_recency gains `DESC, path`: the recency arm's `ORDER BY coalesce(event_at, updated_at) DESC, path` is then
-- the index order, so its LIMIT stops after 40 entries even when thousands of files share one instant (an import).
DROP INDEX files_recency;
CREATE INDEX files_recency ON files(archived, coalesce(event_at, updated_at) DESC, path, memory_type);
CREATE INDEX files_scope ON files(archived, path, memory_type, workspace, updated_at);
DROP INDEX chunks_path;
CREATE INDEX chunks_path ON chunks(path, ordinal, chunk_id);
CREATE INDEX vector_slots_chunk ON vector_slots(chunk_id, model);
