"""Tests of the CI entry point (.ci/run)."""
