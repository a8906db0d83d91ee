-- The consolidation watermark moved to the state plane (state_migrations/0009_trace_consolidations.sql), where an
-- index rebuild cannot reach it. Nothing ever wrote this index-plane table.
DROP TABLE IF EXISTS trace_consolidations;
