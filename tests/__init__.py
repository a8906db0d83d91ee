"""The test suite as a package, so that mypy checks it and helpers import as ``tests.<folder>.<module>``."""
