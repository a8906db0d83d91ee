"""No dead code: ``vulture`` finds nothing in the package beyond the reasoned whitelist (issue 9 item 9).

vulture is a test dependency (pyproject ``test`` extra); without it this test fails, it is not skipped. A finding
is either dead code to delete or, for a name used in a way vulture cannot see, an entry with its reason in
tests/vulture_whitelist.py.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MIN_CONFIDENCE = "60"
"""vulture's threshold: 60 % is where unused functions, classes, variables and attributes are reported."""


def test_vulture_finds_no_dead_code() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "vulture", "git_memhtml", "tests/vulture_whitelist.py", "--min-confidence",
         MIN_CONFIDENCE],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr
