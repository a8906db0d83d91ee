"""sleep package. Importing it imports :mod:`git_memhtml.sleep.phases`, which fills the engine's phase registry."""

from git_memhtml.sleep import phases

__all__ = ["phases"]
