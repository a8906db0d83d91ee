"""sleep package."""
