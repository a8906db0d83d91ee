-- Corroboration needs a second look at a different corpus (issue 11, docs/models.md §5): the digest of the active
-- corpus the last detection was made over. A run over the same corpus (a re-run, a dropped branch re-cut from the
-- same base) adds no detection; a changed corpus does. NULL on rows written before this column existed, so their
-- next detection counts.
ALTER TABLE state.edge_corroboration ADD COLUMN corpus_digest TEXT;
ALTER TABLE state.entity_corroboration ADD COLUMN corpus_digest TEXT;
