"""Tests of install."""
