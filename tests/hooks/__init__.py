"""Tests of hooks."""
