"""Tests of sleep."""
