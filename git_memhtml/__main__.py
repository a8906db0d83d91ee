"""Allow ``python -m git_memhtml`` (the console script's :func:`~git_memhtml.cli.main.run`)."""

from git_memhtml.cli.main import run

run()
