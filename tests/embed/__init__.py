"""Tests of embed."""
