-- The persistent vector matrix's change log (docs/index.md §3.12, issue 12 item 1). Every chunk vector owns a
-- slot: its row in <git-dir>/memhtml/vectors.f32. `seq` is the index's vector generation: a trigger bumps
-- `vector_state.seq` on every insert or update of an embedding and stamps the slot with it, so the matrix syncs the
-- slots whose `seq` is above the one in its header (O(changed rows)). A deleted vector drops its slot (an
-- ON DELETE CASCADE from chunks fires the trigger too); the chunk→path mapping is read from SQL at query time, so
-- renames and deletes need no matrix write. `token` names this index.db: a matrix built from another one (a copied
-- .git/memhtml, a re-created index) never matches it.
CREATE TABLE vector_state (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  token TEXT NOT NULL,
  seq INTEGER NOT NULL
);
INSERT INTO vector_state(id, token, seq) VALUES (1, lower(hex(randomblob(16))), 1);

-- `model` repeats embeddings.model, so the query-time mapping never reads the vector blobs' pages.
CREATE TABLE vector_slots (
  slot INTEGER PRIMARY KEY,
  chunk_id TEXT NOT NULL UNIQUE,
  seq INTEGER NOT NULL,
  model TEXT NOT NULL
);
CREATE INDEX vector_slots_seq ON vector_slots(seq);
INSERT INTO vector_slots(slot, chunk_id, seq, model)
  SELECT row_number() OVER (ORDER BY chunk_id) - 1, chunk_id, 1, model FROM embeddings;

CREATE TRIGGER embeddings_slot_insert AFTER INSERT ON embeddings BEGIN
  UPDATE vector_state SET seq = seq + 1 WHERE id = 1;
  INSERT INTO vector_slots(chunk_id, seq, model)
    VALUES (NEW.chunk_id, (SELECT seq FROM vector_state WHERE id = 1), NEW.model)
    ON CONFLICT(chunk_id) DO UPDATE SET seq = excluded.seq, model = excluded.model;
END;

CREATE TRIGGER embeddings_slot_update AFTER UPDATE ON embeddings BEGIN
  UPDATE vector_state SET seq = seq + 1 WHERE id = 1;
  DELETE FROM vector_slots WHERE chunk_id = OLD.chunk_id AND OLD.chunk_id IS NOT NEW.chunk_id;
  INSERT INTO vector_slots(chunk_id, seq, model)
    VALUES (NEW.chunk_id, (SELECT seq FROM vector_state WHERE id = 1), NEW.model)
    ON CONFLICT(chunk_id) DO UPDATE SET seq = excluded.seq, model = excluded.model;
END;

CREATE TRIGGER embeddings_slot_delete AFTER DELETE ON embeddings BEGIN
  DELETE FROM vector_slots WHERE chunk_id = OLD.chunk_id;
END;
