"""The probe gate's defaults, in a module that imports nothing (``sleep run -h`` and ``eval -h`` show them without
loading the index or numpy, issue 12 item 4)."""

from __future__ import annotations

DEFAULT_K = 10
"""A probe passes when its memory is in the top k (issue 10: "top k (default 10)")."""

DEFAULT_SAMPLE = 500
"""Claim probes sampled per run (issue 10: "up to N memories (default 500)"); as many again of the memories the run
touched are added on top (:func:`git_memhtml.sleep.probes.sample.probe_sample`)."""
