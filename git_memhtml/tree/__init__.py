"""The memory tree: where a memory file goes, which paths are memory files, and safe work-tree file access."""
