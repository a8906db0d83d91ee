"""Tests of document."""
