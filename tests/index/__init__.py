"""Tests of index."""
