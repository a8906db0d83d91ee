"""What a model reads of one memory: its title, its claim and its article, each fact once (docs/models.md §11).

A memory's claim is its ``<mark>``, which sits inside its article, so the index's ``body_text`` already holds it;
and an agent writes the claim as the title too (docs/format.md). Sending ``title``, ``gist`` and ``body_text`` one
after the other, as the phases did, sent one sentence three times: a third of a small model's context spent on
repeats, and a fact that looks emphasised. :func:`claim_once` sends the title only when it says something the claim
does not, then the article, which holds the claim where its author put it; the claim goes on a line of its own
only when the article does not hold it.
"""

from __future__ import annotations

import re

_TRAILING = re.compile(r"[\s.!?…]+$")


def same_sentence(a: str, b: str) -> bool:
    """``a`` and ``b`` say the same words: equal once case, runs of whitespace and trailing ``.!?…`` are ignored,
    or ``a`` is the start of ``b`` that way, ending on a word boundary (a title cut from its claim)."""
    left, right = _norm(a), _norm(b)
    return bool(left) and right.startswith(left) and (len(right) == len(left) or not right[len(left)].isalnum())


def claim_once(title: str, gist: str, body: str) -> str:
    """``title``, ``gist`` and ``body``, one per line, each fact once.

    - The title is left out when the claim restates it (:func:`same_sentence`), or when there is no claim and the
      body opens with it.
    - The claim is left out when the body holds it verbatim (the article holds the ``<mark>`` text as it is):
      the body is sent as it is, so its lines stay the author's (the kernel reads line starts, ``batch.py``).
    """
    title, gist, body = title.strip(), gist.strip(), body.strip()
    lines: list[str] = []
    if title and not (same_sentence(title, gist) or (not gist and same_sentence(title, body))):
        lines.append(title)
    if gist and gist not in body:
        lines.append(gist)
    if body:
        lines.append(body)
    return "\n".join(lines)


def _norm(text: str) -> str:
    return " ".join(_TRAILING.sub("", text).split()).casefold()
