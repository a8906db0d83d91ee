"""sleep/phases package."""
