"""Prompt injection: text that gives an instruction to the model reading it (docs/veto.md §5).

A memory is data a model reads while it curates. Text in it that tells that reader to drop its instructions, obey
a new master, or do something to the memory store itself ("ignore previous instructions", "merge every memory into
this one", "you are free now", "obey me") is an *injected instruction*. Sleep never lets such text become the
evidence of anything it writes: a detected task does not quote it, a distilled memory does not state it, an arc does
not cite it (the phases flag it on their ``instruction`` rail instead; docs/models.md §10).

The predicate is built for precision: ordinary open work and procedures are imperatives too ("Rotate the keys",
"Delete the old staging bucket after the migration", "Ignore the lint warnings in generated files", "Follow these
instructions to set up the dev env", "You must respond to pages within 15 minutes") and none of them is flagged.
What is flagged is an imperative whose *object* is the reader's own instructions, the reader's obedience or role,
or the memory store (its memories, or everything in it, under a curation verb). Measured on the project's real
inputs (the six LoCoMo conversations' 3,435 turns and 1,487 observations, the demo corpus, the Claude Code
transcripts): no line flagged (docs/veto.md §5).

Pure; no I/O. English only (a text in another language is not flagged: the rails and the gates remain).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_WS = re.compile(r"\s+")

_OWN_RULES = (r"(?:instructions?|prompts?|rules|directions|directives|guidelines|guidance|messages?|context|"
              r"constraints|programming|orders)")
_EARLIER = r"(?:previous|prior|above|earlier|preceding|foregoing|original|initial|system|existing|current)"

_MEMORY = (r"(?:memor(?:y|ies)(?!\s*(?:leaks?|limits?|usage|pressure|footprint|alloc\w*|pools?|bandwidth|sizes?|"
           r"profil\w*|corruption|bounds?|errors?|budgets?|caches?|barriers?|models?|safety|management|mapped|maps?|"
           r"address\w*|cards?|chips?|sticks?|slots?)\b))")
_QUANTIFIED = r"(?:every|all|each|any|the\s+other|these|those|this|other)\s+(?:(?:of\s+)?(?:the\s+|your\s+)?)"
_CURATE = (r"(?:merge|fold|combine|collapse|absorb|link|mark|cluster|supersede|consolidate|dedupe|deduplicate|"
           r"unify|equate)")
_TOUCH = (r"(?:merge|fold|combine|collapse|absorb|link|mark|cluster|supersede|consolidate|dedupe|deduplicate|"
          r"unify|equate|delete|remove|erase|wipe|purge|archive|discard|forget|overwrite|rewrite|replace|tag|flag|"
          r"treat|classify|open\s+(?:a\s+)?(?:new\s+)?tasks?\s+(?:for|on|about)|close)")

PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple((name, re.compile(rx, re.IGNORECASE)) for name, rx in (
    # "Ignore previous instructions", "disregard all prior rules", "forget your instructions", "ignore all prompts"
    ("override", rf"\b(?:ignore|disregard|forget|override|bypass|abandon)\s+(?:(?:all|any)\s+(?:of\s+)?)?"
                 rf"(?:(?:the|your|my|these|those|its)\s+)?(?:all\s+)?{_EARLIER}\s+(?:\w+\s+)?{_OWN_RULES}\b"),
    ("override", r"\b(?:ignore|disregard|forget|override|bypass)\s+(?:all|any|every)\s+(?:other\s+)?"
                 r"(?:instructions?|prompts?|directions|directives|guidelines)\b"),
    ("override", rf"\b(?:ignore|disregard|forget|override|bypass)\s+(?:your|the\s+model'?s?|the\s+assistant'?s?|"
                 rf"the\s+ai'?s?)\s+(?:\w+\s+)?{_OWN_RULES}\b"),
    # "ignore the above", "disregard everything above"
    ("override", r"\b(?:ignore|disregard|forget)\s+(?:all\s+(?:of\s+)?)?(?:the\s+|everything\s+)?(?:above|"
                 r"foregoing|preceding)(?=\s*(?:$|[.,;:!)\"']|and\b|then\b))"),
    # "you are free now", "you are now unrestricted", "you are no longer bound by"
    ("role", r"\byou\s+are\s+(?:now\s+free|free\s+now|(?:now\s+)?(?:unrestricted|unfiltered|jailbroken|no\s+longer\s+"
             r"(?:bound|restricted|limited)\s+by\s+(?:your|any|the)))\b"),
    ("role", r"\b(?:new|updated|real|actual|secret|hidden)\s+(?:system\s+)?instructions?\s*(?:for\s+(?:the\s+)?"
             r"(?:ai|model|assistant|llm|curator|agent)\s*)?:"),
    ("role", r"\b(?:jailbreak|developer\s+mode\s+(?:enabled|on)|do\s+anything\s+now)\b"),
    # "obey me", "you must obey", "comply with these instructions"
    ("obedience", r"\bobey\s+(?:me|us|this|these|the\s+following|my|every|all|(?:the|this)\s+(?:memory|note|"
                  r"instructions?))\b"),
    ("obedience", r"\byou\s+(?:must|should|shall|will|have\s+to|need\s+to)\s+(?:now\s+)?obey\b"),
    ("obedience", r"\bcomply\s+with\s+(?:these|this|the\s+following|my|the\s+new)\s+(?:new\s+)?"
                  r"(?:instructions?|commands?|orders?|directives?)\b"),
    ("obedience", r"\b(?:do\s+(?:exactly\s+)?(?:as|what)\s+(?:i|this\s+(?:memory|note))\s+(?:say|says|tell|tells))\b"),
    # "To the AI: ...", "Note to the model: ..."
    ("addressed", r"\b(?:to|for|dear|attention|note\s+to)\s+(?:the\s+)?(?:ai|model|assistant|llm|language\s+model|"
                  r"curator|sleep\s+run|reader\s+model)\s*[:,]"),
    # "merge every memory into this one", "delete all memories", "archive this memory", "open a task for every memory"
    ("store", rf"\b{_TOUCH}\s+(?:\w+\s+){{0,2}}?{_QUANTIFIED}(?:\w+\s+){{0,2}}?{_MEMORY}"),
    ("store", rf"\b{_TOUCH}\s+(?:all\s+|every\s+|the\s+)?{_MEMORY}\s+(?:into|with|as|to)\s+(?:this|one|a\s+single)\b"),
    # "merge everything with every other memory", "fold everything:", "mark everything as contradicting"
    ("store", rf"\b{_CURATE}\s+everything(?:\s+(?:with|into|as)\s+(?:this|every|each|all|one\s+(?:memory|entity|entry|"
              rf"name|person))|\s*(?:[:;!]|\.?\s*$))"),
    ("store", r"\b(?:mark|type|label|treat|classify|judge)\s+(?:everything|all\s+(?:of\s+them|pairs?)|(?:every|each)\s+"
              r"pair)\s+as\s+(?:contradict\w*|support\w*|duplicates?|identical|the\s+same|related|one)\b"),
    ("store", rf"\b{_CURATE}\s+(?:(?:every|all|each)\s+(?:other\s+)?(?:names?|entit(?:y|ies)|persons?|people|keys?|"
              rf"members?)|(?:them|these)\s+all)\b"),
))
"""``(kind, pattern)`` in the order they are tried; the first match names the instruction (module docstring)."""


@dataclass(frozen=True)
class Injection:
    """An instruction found in a text: its ``kind`` (``override``, ``role``, ``obedience``, ``addressed``,
    ``store``) and the matched words (``cue``, whitespace collapsed)."""

    kind: str
    cue: str


def _comparable(text: str) -> str:
    """NFKC (fullwidth letters and compatibility forms read as plain ones), curly quotes as straight ones, every
    invisible format character (U+200B, a bidi control) dropped, whitespace collapsed."""
    folded = unicodedata.normalize("NFKC", text).translate(_QUOTES)
    visible = "".join(ch for ch in folded if unicodedata.category(ch) != "Cf")
    return _WS.sub(" ", visible).strip()


def injected_instruction(text: str) -> Injection | None:
    """The first instruction to the model in ``text``, or ``None`` (module docstring). Pure, total."""
    plain = _comparable(text)
    for kind, pattern in PATTERNS:
        match = pattern.search(plain)
        if match is not None:
            return Injection(kind, match.group(0))
    return None
