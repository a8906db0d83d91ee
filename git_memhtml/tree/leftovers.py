"""What ``doctor --fix-leftovers`` may do with leftover files (kept light: ``doctor -h`` lists the modes without
importing the doctor, issue 12 item 4)."""

from __future__ import annotations

LEFTOVER_MODES = ("commit", "remove")
"""``--fix-leftovers`` modes: commit them as they are on disk, or put them back as HEAD has them."""
