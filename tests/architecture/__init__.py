"""Architecture rules: data, pure checks, and the tests that prove them (docs/architecture.md)."""
