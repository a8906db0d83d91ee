"""Allow ``python -m git_memhtml``."""

from git_memhtml.cli.main import main

raise SystemExit(main())
