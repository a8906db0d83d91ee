"""The verbs both doors call: the CLI commands (``cli/``) and the MCP tools (``mcp/``) (docs/mcp.md "The verb layer").

Each verb is a plain function over a :class:`~git_memhtml.service.door.Door` (the invocation's repository,
embedder, weights and post-commit catch-up), an open :class:`~git_memhtml.index.db.IndexDB` and the instant
``now``; it returns a frozen result whose ``json()`` is the ``--json`` data of the CLI verb, which is also the
structured content of the MCP tool. Rendering for people stays in ``cli/``; the protocol stays in ``mcp/``.
"""
