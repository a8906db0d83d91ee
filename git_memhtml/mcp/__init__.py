"""The MCP server: ``git memhtml mcp`` serves the memory's verbs as tools over stdio (docs/mcp.md).

Built on the official SDK's low-level server (``mcp.server.lowlevel.Server``): the tool schemas and argument
checks are our pydantic models (unknown fields refused), and every failure is a tool result of our shape.
Only this package imports the SDK (``mcp``, ``mcp_types``, ``anyio``); the CLI imports it when ``mcp`` runs.
"""
