"""document package."""
