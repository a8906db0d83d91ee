"""Who a claim is about, and who does what in it: the things a claim names and its agent, read from the claim's own
words (docs/veto.md §3 "Leading names"). The merge veto's ``leading-name`` predicate
(:func:`leading_name_divergent`) and the passive test of its ``word-order`` one (:data:`PASSIVE`,
``domain/merge.py``) read this module. English, pure, no I/O.
"""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_](?:[\w-]*[^\W_])?")
"""A word of a claim for :func:`named_things`: letters, digits, inner hyphens and underscores."""

_IDENTIFIER = re.compile(r"[^\W\d_]+(?:[-_][^\W_]+)+")
"""A system name: words joined by a hyphen or underscore, the first of letters (``checkout-api``, ``cache-node-3``,
``svc_amber``)."""

SENTENCE_STARTERS = frozenset((
    "a", "an", "the", "this", "that", "these", "those", "it", "its", "we", "they", "he", "she", "i", "you", "our",
    "their", "his", "her", "my", "your", "there", "here", "on", "in", "at", "after", "before", "when", "if", "every",
    "each", "all", "some", "no", "not", "yesterday", "today", "tomorrow", "last", "next", "since", "during", "as",
    "for", "from", "to", "with", "by", "both", "one", "two", "once", "now", "then", "also", "and", "but", "so",
    "while", "whenever", "wherever", "although", "though", "because", "until", "unless", "whether", "where", "how",
    "what", "why", "who", "which", "whose", "always", "never", "usually", "often", "sometimes", "please", "do",
    "does", "did", "is", "are", "was", "were", "be", "any", "most", "many", "few", "several", "only", "even",
))
"""Capitalised only because they open the claim: never a name (:func:`named_things`)."""


CALENDAR_NAMES = frozenset((
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october", "november",
    "december", "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
))
"""Capitalised in English, but a *when*, not a thing a claim is about (the time predicate reads them)."""


def named_things(claim: str, other: str = "") -> list[str]:
    """The things ``claim`` names, in order, case-folded, each once (docs/veto.md §3 "Leading names"):

    - a system name anywhere (:data:`_IDENTIFIER`: ``checkout-api``, ``cache-node-3``);
    - a capitalised word after the first (``Caroline``, ``Melanie``), except a month or weekday
      (:data:`CALENDAR_NAMES`) and an all-capital acronym (``TLS``, ``API``: what a thing is made of, rarely whom
      the claim is about);
    - the first word when it is capitalised, not a sentence starter (:data:`SENTENCE_STARTERS`), not a month, weekday
      or acronym, and not written in lower case in ``other`` (the claim it is compared with: "Staging TLS cert" against
      "the staging TLS certificate" shows a common word).

    A possessive ``'s`` is no part of a name (``Caroline's`` → ``caroline``)."""
    lower = {m.group(0) for m in _WORD.finditer(other) if m.group(0).islower()}
    out: list[str] = []
    for at, match in enumerate(_WORD.finditer(claim)):
        word = match.group(0)
        folded = word.casefold()
        if _IDENTIFIER.fullmatch(word):
            named = True
        elif (not word[0].isupper() or folded in CALENDAR_NAMES or folded.removesuffix("s") in CALENDAR_NAMES
              or (word.isupper() and len(word) > 1)):
            named = False
        else:
            named = at > 0 or (folded not in SENTENCE_STARTERS and folded not in lower)
        if named and folded not in out:
            out.append(folded)
    return out


def leading_name_divergent(a: str, b: str) -> bool:
    """True when both claims name something (:func:`named_things`) and their *agents* differ: the name a claim leads
    with, or in a passive the name after ``by`` (:func:`agent`). "Melanie values friendship with Caroline" /
    "Caroline values friendship with Melanie", "checkout-api calls payments-api" / "checkout-api is called by
    payments-api", "Mei Lin is mentored by Omar Haddad" / "Omar Haddad is mentored by Mei Lin", "Melanie loves hiking" /
    "Caroline loves hiking" diverge; "Mei Lin maintains the design system" / "The design system is maintained by Mei
    Lin" does not. Read from the claims themselves, so it holds for a memory written without a subject entity, and
    for two memories of one entity that say who does what to whom the other way round (issue 27, two new users'
    nights). A claim that names nothing has no say. Symmetric (docs/veto.md §3 "Leading names")."""
    left, right = named_things(a, b), named_things(b, a)
    if not left or not right:
        return False
    return agent(a, left) != agent(b, right)


PASSIVE = re.compile(
    r"\b(?:is|are|was|were|be|been|being|gets|get|got|gotten)\s+(?:[^\W\d_]+\s+){0,2}?[^\W\d_]+\s+by\s+"
    r"(?:the\s+|a\s+|an\s+)?([^\W_](?:[\w-]*[^\W_])?)", re.IGNORECASE)
"""A passive's agent: an auxiliary, up to three words (the participle among them), ``by`` and the agent (an article
skipped): "is run by Priya", "was quietly handed over by the checkout-api"."""


def agent(claim: str, names: list[str]) -> str:
    """Who does what ``claim`` states: the first named thing (``names``, :func:`named_things`) that a passive names
    as its agent (:data:`PASSIVE`), else the first named thing."""
    for match in PASSIVE.finditer(claim):
        if match.group(1).casefold() in names:
            return match.group(1).casefold()
    return names[0]
