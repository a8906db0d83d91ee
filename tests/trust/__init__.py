"""Tests of trust."""
