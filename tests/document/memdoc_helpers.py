"""Builders for memory files used by the document tests (hand-written, independent of the serializer)."""

from __future__ import annotations

HEAD_METAS = (
    '<meta name="memhtml-type" content="semantic">\n'
    '<meta name="memhtml-status" content="active">\n'
    '<meta name="memhtml-created" content="2026-01-02T03:04:05Z">\n'
    '<meta name="memhtml-updated" content="2026-01-02T03:04:05Z">\n'
)

MINIMAL_ARTICLE = "<p><mark>Deploys roll back in two minutes.</mark> Measured on the ALB.</p>"


def memory_file(
    article: str = MINIMAL_ARTICLE,
    *,
    extra_head: str = "",
    metas: str = HEAD_METAS,
    title: str = "<title>Deploy rollbacks</title>\n",
) -> str:
    """A whole memory file in the canonical layout with the given article inner HTML and extra head lines."""
    return (
        '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        + title
        + metas
        + extra_head
        + "</head>\n<body>\n<article>\n"
        + article
        + "\n</article>\n</body>\n</html>\n"
    )


def article_of(html: str) -> str:
    """The bytes between ``<article>\\n`` and ``\\n</article>`` of a canonical file."""
    start = html.index("<article>\n") + len("<article>\n")
    return html[start : html.rindex("\n</article>")]
