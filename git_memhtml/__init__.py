"""git-memhtml: a long-term memory for AI agents kept as semantic HTML5 files in a git repository."""

__version__ = "0.1.0"
