"""The generated files: per-folder listings, the sitemap and the access sidecar (render, parse, merge)."""
