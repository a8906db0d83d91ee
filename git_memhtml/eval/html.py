"""Hand-built memory file bytes for the fixture corpus (docs/format.md §1.1; docs/gate.md §8.1 "hand-built HTML in
META_ORDER").

The corpus writes its files itself rather than through the store, as the original does, so the gate measures
retrieval over bytes that do not depend on the writer. The layout is the serializer's: one line each for the
doctype, ``<html lang="en">``, ``<head>``, ``<meta charset>``, ``<title>``, every ``memhtml-`` meta in
``META_ORDER`` (stable for repeatables), every link, then ``<body>``, ``<article>``, the inner HTML, and the closers.
"""

from __future__ import annotations

from collections.abc import Sequence

from git_memhtml.document.model import META_ORDER, rel_token

_ORDER = {name: position for position, name in enumerate(META_ORDER)}


def escape_text(text: str) -> str:
    """Escape ``& < >`` and U+00A0 for HTML text content (docs/format.md §1.1)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\u00a0", "&nbsp;")


def escape_attr(value: str) -> str:
    """Escape ``& "`` and U+00A0 for a double-quoted attribute value (docs/format.md §1.1)."""
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("\u00a0", "&nbsp;")


def render_file(
    *,
    title: str,
    metas: Sequence[tuple[str, str]],
    links: Sequence[tuple[str, str]],
    article_html: str,
) -> str:
    """Return the whole file text of one memory.

    Args:
        title: the ``<title>`` text (escaped here).
        metas: ``(short name, value)`` pairs, any order; emitted sorted into ``META_ORDER``, stable.
        links: ``(rel in underscore form, root-relative href)`` pairs, emitted in the given order.
        article_html: the article's inner HTML, already canonical (sorted attributes, escaped text).

    Raises:
        KeyError: a meta name outside ``META_ORDER`` (a programming error in the corpus tables).
    """
    ordered = sorted(metas, key=lambda pair: _ORDER[pair[0]])
    lines = ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">']
    lines.append(f"<title>{escape_text(title)}</title>")
    lines.extend(f'<meta name="memhtml-{name}" content="{escape_attr(value)}">' for name, value in ordered)
    lines.extend(f'<link rel="{rel_token(rel)}" href="{escape_attr(href)}">' for rel, href in links)
    lines.extend(["</head>", "<body>", "<article>", article_html.strip(), "</article>", "</body>", "</html>"])
    return "\n".join(lines) + "\n"


KIT_COUNT = 9
"""Number of HTML element kits (docs/gate.md §8.1)."""


def render_kit(kit: int, *, claim: str, sentences: Sequence[str], service: str, scope: str, anchor: str,
               event_date: str) -> str:
    """Return article inner HTML for element kit ``kit`` (0..8).

    The claim is the ``<mark>`` in the first ``<p>``/``<li>``; ``sentences`` are the three body sentences (all of
    them appear in the text). Kits add only digit-free, marker-free text; kit 3 carries a ``<time>`` whose
    ``datetime`` is ``event_date`` (``YYYY-MM-DD``), so recency reads the event time for those memories. A control
    reuses its target's kit and sentences, so target and control differ only in the claim (docs/gate.md §8.2).
    """
    mark = f"<mark>{escape_text(claim)}</mark>"
    s1, s2, s3 = (escape_text(s) for s in sentences)
    svc, scp, anc = escape_text(service), escape_text(scope), escape_text(anchor)
    k = kit % KIT_COUNT
    if k == 0:
        parts = [f"<p>{mark} {s1}</p>", f"<p>{s2} {s3}</p>"]
    elif k == 1:
        parts = ["<ul>", f"<li>{mark}</li>", f"<li>{s1}</li>", f"<li>{s2}</li>", f"<li>{s3}</li>", "</ul>"]
    elif k == 2:
        parts = [f"<p>{mark} {s1}</p>", "<dl>", "<dt>service</dt>", f"<dd>{svc}</dd>", "<dt>scope</dt>",
                 f"<dd>{scp}</dd>", "</dl>", f"<p>{s2} {s3}</p>"]
    elif k == 3:
        parts = [f"<p>{mark} {s1}</p>",
                 f'<p>Observed during the <time datetime="{event_date}">{scp} review</time>. {s2} {s3}</p>']
    elif k == 4:
        parts = [f"<p>{mark} {s1}</p>", "<figure>", f"<figcaption>{s2}</figcaption>",
                 f'<pre><code data-lang="shell">{svc} status --scope {scp}</code></pre>', "</figure>",
                 f"<p>{s3}</p>"]
    elif k == 5:
        parts = [f"<p>{mark} {s1}</p>", f"<p>{s2}</p>", f"<aside>{s3}</aside>"]
    elif k == 6:
        parts = [f"<p>{mark} {s1}</p>", "<details>", f"<summary>{s2}</summary>", f"<p>{s3}</p>", "</details>"]
    elif k == 7:
        parts = [f"<p>{mark} {s1}</p>", f"<p>{s2} <q>{s3}</q> <cite>{svc} handbook</cite></p>"]
    else:
        parts = [f"<p>{mark} {s1}</p>", "<table>", "<tbody>",
                 f"<tr><th>service</th><td>{svc}</td></tr>",
                 f"<tr><th><dfn>{anc}</dfn></th><td>{scp}</td></tr>", "</tbody>", "</table>", f"<p>{s2} {s3}</p>"]
    return "\n".join(parts)
