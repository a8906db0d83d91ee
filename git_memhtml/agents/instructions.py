"""The instruction block an install writes into the agent's own instruction file (docs/agents.md).

The text tells the agent how to use the memory: recall before answering, write what it learns as facts, correct a
memory rather than write a second one, and leave ``sleep`` (curation) to the person who runs it.
"""

from __future__ import annotations

from git_memhtml.agents.model import SERVER_NAME


def instruction_text(repo: str) -> str:
    """The Markdown body of the block for the memory repository ``repo`` (an absolute path, shown as data)."""
    return f"""## Long-term memory (git-memhtml)

You have a long-term memory: the `{SERVER_NAME}` MCP server, backed by the git repository `{repo}`.

- Before answering, recall: ask the memory about the task at hand and use what it returns; say when it has nothing.
- When you learn a durable fact (a decision, a preference, how something works), write it as one short memory.
- When a memory is wrong or out of date, correct that memory instead of writing a second one beside it.
- Never write secrets, credentials or personal data you were not asked to keep.
- Curation (`git memhtml sleep`) is an operator action: do not start, merge or review a sleep run yourself.
"""
