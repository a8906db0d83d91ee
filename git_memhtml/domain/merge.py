"""Merge veto and in-batch role guard for near-duplicate folds (docs/veto.md §3; docs/phases.md §0.4 and docs/veto.md
§3).

Cosine similarity cannot see polarity, quantities, variants, times, promises or whom a memory is about, so every
proposed fold of ``drop`` into ``keep`` passes six symmetric divergence predicates first; any one of them vetoes the
fold. The numeric, time and commitment predicates read the one-line claim (gist) alone, while negation and variant
read the claim joined with the article text (docs/veto.md §3: over whole articles the numeric predicate vetoed every
candidate, because bodies cite dates and ids); the subject predicate reads the two memories' subject identities
(docs/veto.md §3 "Subjects"). A weekday, a month or a part of the day is one value of a slot, as a number is
(docs/veto.md §3 "When"); a promise and the statement that it is done are two facts (docs/veto.md §3 "Done").

:func:`carry_gaps` is the same reading turned one way, for a text written to stand for others (a compress
canonical, a replacement the run gate follows): which of a member's numbers, qualifiers, times, polarity, promises
and subjects the carrier drops or turns. Members of a compress batch differ from each other by design; what must
hold is that the canonical carries each one (docs/veto.md §4).

:func:`merge_candidates` is the post-filter every proposal goes through, deterministic or model-made: the
similarity threshold, the veto, the self-pair check, the role guard (v0.6 semantics, docs/veto.md §3) and the per-run
cap. Pure: no I/O.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass

from git_memhtml.domain.claim_names import PASSIVE, leading_name_divergent

NEAR_DUPLICATE_THRESHOLD = 0.92
"""Cosine a pair must strictly exceed to fold (docs/phases.md §1.2 and docs/veto.md §3; docs/phases.md §0.4)."""

MAX_MERGE_PAIRS = 100
"""Folds committed per night at most (docs/phases.md §1.2; docs/phases.md §0.4)."""

NEGATION_MARKERS: frozenset[str] = frozenset(
    {
        "not", "no", "never", "none", "cannot", "without", "neither", "nor", "avoid", "disallow", "disallowed",
        "forbidden", "unsafe", "invalid", "false", "fail", "fails", "failed", "deny", "denied", "reject",
        "rejected",
    }
)
"""Tokens that mark a negated statement (docs/veto.md §3 "The three predicates")."""

VARIANT_QUALIFIERS: frozenset[str] = frozenset(
    {"pro", "max", "beta", "alpha", "rc", "preview", "legacy", "deprecated", "experimental"}
)
"""Tokens that qualify a product variant (docs/veto.md §3 "The three predicates")."""

TIME_WORDS: dict[str, str] = {
    **{day: day for day in ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")},
    "mon": "monday", "tue": "tuesday", "tues": "tuesday", "thu": "thursday", "thur": "thursday",
    "thurs": "thursday", "fri": "friday",
    "weekend": "weekend", "weekday": "weekday",
    **{month: month for month in ("january", "february", "march", "april", "june", "july", "august", "september",
                                  "october", "november", "december")},
    "feb": "february", "apr": "april", "aug": "august", "sept": "september", "oct": "october", "nov": "november",
    "dec": "december",
    **{part: part for part in ("morning", "afternoon", "evening", "night", "noon", "midday", "midnight")},
    **{season: season for season in ("spring", "summer", "autumn", "winter")},
    **{often: often for often in ("hourly", "daily", "nightly", "weekly", "biweekly", "fortnightly", "monthly",
                                  "quarterly", "yearly")},
    "annually": "yearly", "annual": "yearly",
}
"""Words that name a value of a *when* slot, each mapped to its one spelling (docs/veto.md §3 "When"): weekdays and
their unambiguous abbreviations, months and theirs (not ``may``, read by :data:`MAY_CUES`; not ``jan``, ``mar``,
``jun``, ``jul``, ``sep``, which are names or words), parts of the day, seasons (not ``fall``) and frequencies. A final
``s`` is dropped first (``Thursdays`` = ``Thursday``, ``weekends``, ``mornings``). Deictic words (``today``,
``yesterday``, ``tomorrow``, ``tonight``) are left out: they name a day only against the day the memory was written,
so "today" in one memory and "yesterday" in the next day's can be one day, and "X today" restates "X"."""

MAY_CUES: frozenset[str] = frozenset({
    "in", "of", "since", "until", "till", "by", "during", "early", "late", "mid", "last", "next", "every",
    "through", "from", "before", "after",
})
"""``may`` is the month only after one of these words or beside a digit-bearing token (``in May``, ``8 May 2023``);
otherwise it is the modal verb (``Ana may update the runbook``)."""

_CONTRACTIONS: tuple[tuple[str, str], ...] = (
    ("isn't", "is not"),
    ("aren't", "are not"),
    ("wasn't", "was not"),
    ("weren't", "were not"),
    ("don't", "do not"),
    ("doesn't", "does not"),
    ("didn't", "did not"),
    ("won't", "will not"),
    ("can't", "can not"),
    ("cannot", "can not"),
    ("couldn't", "could not"),
    ("shouldn't", "should not"),
    ("wouldn't", "would not"),
    ("mustn't", "must not"),
    ("haven't", "have not"),
    ("hasn't", "has not"),
    ("hadn't", "had not"),
)
"""Whole-word contraction rewrites, applied in this order (docs/veto.md §3 "Tokenisation" step 2)."""

_CONTRACTION_RES: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(r"\b" + re.escape(word) + r"\b"), repl) for word, repl in _CONTRACTIONS
)
_GENERIC_NT = re.compile(r"n't\b")
_TOKEN = re.compile(r"[a-z0-9]+(?:\.[0-9]+)*")
_DIGIT = re.compile(r"[0-9]")

VETO_NEGATION = "negation"
VETO_NUMERIC = "numeric"
VETO_VARIANT = "variant"
VETO_SUBJECT = "subject"
VETO_TIME = "time"
VETO_COMMITMENT = "commitment"
VETO_LEADING_NAME = "leading-name"
VETO_WORD_ORDER = "word-order"


def tokenize(text: str) -> list[str]:
    """Split ``text`` into veto tokens (docs/veto.md §3 "Tokenisation").

    NFC-normalise and lowercase; rewrite contractions (only the ASCII apostrophe) in the fixed order, then any
    remaining ``n't`` to `` not``; return every match of ``[a-z0-9]+(?:\\.[0-9]+)*`` in order, so ``v2.1`` and
    ``3.5`` stay one token. Non-ASCII letters are separators.
    """
    lowered = unicodedata.normalize("NFC", text).lower()
    for pattern, repl in _CONTRACTION_RES:
        lowered = pattern.sub(repl, lowered)
    lowered = _GENERIC_NT.sub(" not", lowered)
    return _TOKEN.findall(lowered)


def _has_negation(text: str) -> bool:
    return any(token in NEGATION_MARKERS for token in tokenize(text))


def negation_divergent(a: str, b: str) -> bool:
    """True when exactly one of ``a`` and ``b`` carries a negation marker (:data:`NEGATION_MARKERS`). Symmetric."""
    return _has_negation(a) != _has_negation(b)


def _numeric_tokens(text: str) -> frozenset[str]:
    return frozenset(token for token in tokenize(text) if _DIGIT.search(token))


def numeric_token_divergent(a: str, b: str) -> bool:
    """True when the sets of digit-bearing tokens (``m1``, ``sev1``, ``v2.1``, ``3``) differ.

    False when neither side has one. Symmetric (docs/veto.md §3).
    """
    left, right = _numeric_tokens(a), _numeric_tokens(b)
    if not left and not right:
        return False
    return left != right


def _qualifiers(text: str) -> frozenset[str]:
    return frozenset(token for token in tokenize(text) if token in VARIANT_QUALIFIERS)


def variant_qualifier_divergent(a: str, b: str) -> bool:
    """True when the sets of variant qualifiers (:data:`VARIANT_QUALIFIERS`) differ; two empty sets are equal."""
    return _qualifiers(a) != _qualifiers(b)


def _time_token(tokens: list[str], at: int) -> str | None:
    token = tokens[at]
    if token == "may":
        before = tokens[at - 1] if at > 0 else ""
        after = tokens[at + 1] if at + 1 < len(tokens) else ""
        return "may" if before in MAY_CUES or _DIGIT.search(before) or _DIGIT.search(after) else None
    if token not in TIME_WORDS and token.endswith("s"):
        token = token[:-1]
    return TIME_WORDS.get(token)


def time_words(text: str) -> frozenset[str]:
    """The *when* values ``text`` names (:data:`TIME_WORDS`, ``may`` by :data:`MAY_CUES`), each in its one spelling:
    ``"every Thursday morning"`` → ``{"thursday", "morning"}``."""
    tokens = tokenize(text)
    return frozenset(word for at in range(len(tokens)) if (word := _time_token(tokens, at)) is not None)


def time_divergent(a: str, b: str) -> bool:
    """True when the sets of *when* values (:func:`time_words`) differ; two empty sets are equal. Symmetric.

    Read like the numeric predicate (a weekday, a month, a part of the day is one value of a slot, as a number is):
    ``on Monday`` / ``on Tuesday`` and ``Thursday morning`` / ``Tuesday afternoon`` diverge, ``on Thursdays`` /
    ``every Thursday`` do not, and a side that names a value the other does not diverges too (``on Monday`` / ``on
    Monday morning``), because a fold keeps one text and would lose the value (docs/veto.md §3 "When").
    """
    return time_words(a) != time_words(b)


PROMISE_MARKERS: tuple[tuple[str, ...], ...] = (
    ("will",), ("shall",), ("ll",), ("gonna",), ("going", "to"), ("plans", "to"), ("plan", "to"),
    ("planning", "to"), ("planned", "to"), ("intends", "to"), ("intend", "to"), ("intended", "to"),
    ("promised", "to"), ("promises", "to"), ("agreed", "to"), ("offered", "to"), ("decided", "to"),
    ("wants", "to"), ("want", "to"), ("wanted", "to"), ("hopes", "to"), ("hope", "to"), ("hoping", "to"),
    ("aims", "to"), ("would", "like", "to"), ("has", "to"), ("have", "to"), ("needs", "to"), ("need", "to"),
)
"""Token sequences that put the verb after them in the future or in intent: a promise, a plan, an obligation
(``I'll`` tokenises to ``i ll``, ``won't`` to ``will not``). Docs/veto.md §3 "Done"."""

_PROMISE_SKIP: frozenset[str] = frozenset({
    "soon", "also", "still", "then", "finally", "probably", "definitely", "personally", "likely", "first", "really",
    "actually", "just", "now", "eventually", "not", "never", "be", "get", "have", "been", "try", "to",
})
"""Words passed over between a promise marker and its verb (``will soon update``, ``will be updated``)."""

IRREGULAR_PAST: dict[str, frozenset[str]] = {
    verb: frozenset(forms.split()) for verb, forms in {
        "send": "sent", "make": "made", "buy": "bought", "write": "wrote written", "take": "took taken",
        "go": "went gone", "do": "did done", "give": "gave given", "get": "got gotten", "run": "ran",
        "begin": "began begun", "bring": "brought", "build": "built", "find": "found", "keep": "kept",
        "leave": "left", "lead": "led", "meet": "met", "pay": "paid", "sell": "sold", "tell": "told",
        "teach": "taught", "think": "thought", "see": "saw seen", "speak": "spoke spoken", "spend": "spent",
        "win": "won", "choose": "chose chosen", "drive": "drove driven", "eat": "ate eaten", "fly": "flew flown",
        "grow": "grew grown", "know": "knew known", "ride": "rode ridden", "sing": "sang sung", "swim": "swam swum",
        "throw": "threw thrown", "wear": "wore worn", "draw": "drew drawn", "become": "became", "come": "came",
        "sit": "sat", "stand": "stood", "hold": "held", "feel": "felt", "hear": "heard", "lose": "lost",
        "say": "said", "sleep": "slept", "catch": "caught", "fight": "fought", "break": "broke broken",
        "forget": "forgot forgotten", "show": "showed shown", "wake": "woke woken", "lend": "lent", "bend": "bent",
        "dig": "dug", "feed": "fed", "hang": "hung", "lay": "laid", "light": "lit", "rebuild": "rebuilt",
        "rewrite": "rewrote rewritten", "undo": "undid undone", "redo": "redid redone", "seek": "sought",
        "shoot": "shot", "sweep": "swept", "stick": "stuck", "strike": "struck", "swing": "swung", "tear": "tore torn",
        "understand": "understood", "withdraw": "withdrew withdrawn", "freeze": "froze frozen", "steal": "stole stolen",
        "hide": "hid hidden", "bite": "bit bitten", "blow": "blew blown", "drink": "drank drunk",
    }.items()
}
"""Past forms of verbs that do not take ``-ed``. Verbs whose past is their base (``put``, ``set``, ``read``, ``cut``)
are left out: ``will read`` / ``read`` cannot tell a promise from its completion."""

_VOWELS = frozenset("aeiou")


def past_forms(verb: str) -> frozenset[str]:
    """The simple past and past participle spellings of ``verb`` (``update`` → ``updated``, ``fix`` → ``fixed``,
    ``plan`` → ``planned planed``, ``carry`` → ``carried``, ``send`` → ``sent``). A token that already ends in ``ed``
    is its own past form (a passive promise, ``will be updated``)."""
    if verb in IRREGULAR_PAST:
        return IRREGULAR_PAST[verb]
    if len(verb) < 2 or _DIGIT.search(verb):
        return frozenset()
    if verb.endswith("ed"):
        return frozenset({verb})
    if verb.endswith("e"):
        return frozenset({verb + "d"})
    if verb.endswith("y") and verb[-2] not in _VOWELS:
        return frozenset({verb[:-1] + "ied"})
    forms = {verb + "ed"}
    if len(verb) >= 3 and verb[-1] not in _VOWELS | set("wxy") and verb[-2] in _VOWELS and verb[-3] not in _VOWELS:
        forms.add(verb + verb[-1] + "ed")
    return frozenset(forms)


def _promises(tokens: list[str]) -> tuple[list[frozenset[str]], set[int]]:
    """The past forms of every promised verb in ``tokens``, and the positions the promises take (marker to verb)."""
    promised: list[frozenset[str]] = []
    taken: set[int] = set()
    at = 0
    while at < len(tokens):
        marker = next((m for m in PROMISE_MARKERS if tuple(tokens[at:at + len(m)]) == m), None)
        if marker is None:
            at += 1
            continue
        verb_at = at + len(marker)
        while verb_at < len(tokens) and tokens[verb_at] in _PROMISE_SKIP:
            verb_at += 1
        if verb_at < len(tokens) and (forms := past_forms(tokens[verb_at])):
            promised.append(forms)
            taken.update(range(at, verb_at + 1))
        at = verb_at if verb_at > at else at + 1
    return promised, taken


def _promise_kept_apart(promise: str, done: str) -> bool:
    """True when ``promise`` promises a verb that ``done`` states in the past and does not promise itself."""
    promised, _ = _promises(tokenize(promise))
    if not promised:
        return False
    tokens = tokenize(done)
    theirs, taken = _promises(tokens)
    stated = {token for at, token in enumerate(tokens) if at not in taken}
    return any(forms & stated and not any(forms & other for other in theirs) for forms in promised)


def commitment_divergent(a: str, b: str) -> bool:
    """True when one side promises what the other states as done (docs/veto.md §3 "Done"). Symmetric.

    A promise is a :data:`PROMISE_MARKERS` sequence and the verb after it (``will update``, ``is going to book``,
    ``plans to fix``, ``will be updated``); it is *done* on the other side when that side holds a past form of the
    same verb (:func:`past_forms`) outside a promise of its own, and promises nothing of that verb: "Ana will update
    the runbook" / "Ana updated the runbook" diverge; two promises, two completions, "will update" / "updates" (a
    habit, not a completion) and "will update" / "will have updated" do not.
    """
    return _promise_kept_apart(a, b) or _promise_kept_apart(b, a)


def _subject_kinds(subjects: Iterable[str]) -> dict[str, set[str]]:
    kinds: dict[str, set[str]] = {}
    for identity in subjects:
        kind, colon, name = identity.partition(":")
        if colon and kind and name:
            kinds.setdefault(kind, set()).add(name)
    return kinds


def subject_divergent(a: Iterable[str], b: Iterable[str]) -> bool:
    """True when, for some entity type both sides name, the two sides name no subject of that type in common.

    ``a`` and ``b`` are subject identities ``<type>:<name>`` (``domain.entities.subject_identities``: markup-derived
    types left out, names keyed, aliases a person file declares collapsed). ``person:melanie`` against
    ``person:caroline`` diverges; against ``{person:melanie, person:caroline}`` it does not (one shared person); a
    side with no subject of a type, or none at all, has no say for that type. Symmetric (docs/veto.md §3 "Subjects").
    """
    left, right = _subject_kinds(a), _subject_kinds(b)
    return any(kind in right and not names & right[kind] for kind, names in left.items())


def _content_sequence(text: str) -> list[str]:
    """The stemmed content words of ``text`` (:func:`content_words`' rule), in order, repeats kept."""
    tokens = tokenize(text)
    return [stem(token) for at, token in enumerate(tokens)
            if len(token) >= 3 and not _DIGIT.search(token) and token not in FUNCTION_WORDS
            and token not in NEGATION_MARKERS and token not in VARIANT_QUALIFIERS and _time_token(tokens, at) is None]


def _swapped_around(a: list[str], b: list[str]) -> bool:
    """``b`` is ``a`` with two runs of words exchanged across a non-empty middle (``X M Y`` → ``Y M X``), all else
    equal: the two sides of a relation swapped around its verb."""
    if len(a) != len(b) or a == b:
        return False
    p = 0
    while a[p] == b[p]:
        p += 1
    q = 0
    while a[-1 - q] == b[-1 - q]:
        q += 1
    core_a, core_b = a[p:len(a) - q], b[p:len(b) - q]
    n = len(core_a)
    for i in range(1, n - 1):
        for j in range(1, n - i):
            x, m, y = core_a[:i], core_a[i:n - j], core_a[n - j:]
            if core_b == y + m + x:
                return True
    return False


def word_order_divergent(a: str, b: str) -> bool:
    """True when one claim is the other with the two sides of its relation exchanged around a middle that stays
    (:func:`_swapped_around` over the claims' content words): "The cache calls the database on every miss" / "The
    database calls the cache on every miss", "the billing worker sends invoices to the ledger service" / "the ledger
    service sends invoices to the billing worker" (issue 27, a new user's night: no name in either, so
    ``claim_names.leading_name_divergent`` has no say). Two parts that merely trade places with nothing between them
    are a paraphrase and are not read ("prefers status updates as a short written summary" / "prefers a short written
    summary for status updates"; "pauses indexing while an import runs" / "while an import runs, pauses indexing":
    the labelled corpus's duplicates). An active claim and a passive one (``claim_names.PASSIVE``) are not compared:
    the passive states the same fact in the other order ("Ana updated the runbook" / "The runbook was updated by
    Ana").
    Symmetric (docs/veto.md §3 "Leading names")."""
    if (PASSIVE.search(a) is None) != (PASSIVE.search(b) is None):
        return False
    return _swapped_around(_content_sequence(a), _content_sequence(b))


@dataclass(frozen=True)
class MergeText:
    """What the veto reads for one side of a pair (docs/veto.md §3 "MergeText").

    Attributes:
        claim: the one-line claim (the ``<mark>`` gist); the numeric predicate reads this alone.
        article: the article text; negation and variant read ``claim + "\\n" + article``.
        subjects: the memory's subject identities (:func:`subject_divergent`), or ``None`` when the caller did not
            read them; the subject predicate runs only when both sides carry them.
    """

    claim: str
    article: str = ""
    subjects: frozenset[str] | None = None

    @property
    def whole(self) -> str:
        """``claim`` and ``article`` joined by a newline: the text negation and variant read."""
        return f"{self.claim}\n{self.article}" if self.article else self.claim


def _as_text(value: MergeText | str) -> MergeText:
    return value if isinstance(value, MergeText) else MergeText(claim=value)


def veto_reasons(a: MergeText | str, b: MergeText | str) -> tuple[str, ...]:
    """Names of the divergence predicates that fire for a pair, in the order negation, numeric, variant, time,
    commitment, subject, leading-name, word-order.

    Negation and variant read claim and article; numeric, time and commitment read the claims alone (articles cite
    dates: an agent-shaped memory's article names its event day, "8 May 2023"). A bare ``str`` is taken as a claim
    with no article and no subjects; the subject predicate runs only when both sides carry subjects. Empty tuple =
    not vetoed (docs/veto.md §3).
    """
    left, right = _as_text(a), _as_text(b)
    reasons: list[str] = []
    if negation_divergent(left.whole, right.whole):
        reasons.append(VETO_NEGATION)
    if numeric_token_divergent(left.claim, right.claim):
        reasons.append(VETO_NUMERIC)
    if variant_qualifier_divergent(left.whole, right.whole):
        reasons.append(VETO_VARIANT)
    if time_divergent(left.claim, right.claim):
        reasons.append(VETO_TIME)
    if commitment_divergent(left.claim, right.claim):
        reasons.append(VETO_COMMITMENT)
    if left.subjects is not None and right.subjects is not None and subject_divergent(left.subjects, right.subjects):
        reasons.append(VETO_SUBJECT)
    if leading_name_divergent(left.claim, right.claim):
        reasons.append(VETO_LEADING_NAME)
    if word_order_divergent(left.claim, right.claim):
        reasons.append(VETO_WORD_ORDER)
    return tuple(reasons)


def edge_veto_reasons(a: MergeText | str, b: MergeText | str) -> tuple[str, ...]:
    """The predicates that refuse a typed edge (``supports``, ``leads_to`` …) between two memories (docs/veto.md §6).

    :func:`veto_reasons` read for an edge rather than a fold: an edge keeps both texts, so nothing is lost by a value
    only one side names. Negation, numeric, variant and subject as for a fold; ``time`` only when the two claims'
    *when* values clash (neither holds the other's: "on Monday" / "on Tuesday", not "joined a running club in
    January" / "finished a half marathon"); ``commitment`` never: a promise ``leads_to`` its completion, and both
    hold. Symmetric.
    """
    left, right = _as_text(a), _as_text(b)
    reasons = [r for r in veto_reasons(left, right)
               if r not in (VETO_TIME, VETO_COMMITMENT, VETO_LEADING_NAME, VETO_WORD_ORDER)]
    if _times_clash(left.claim, right.claim):
        reasons.insert(len([r for r in reasons if r != VETO_SUBJECT]), VETO_TIME)
    return tuple(reasons)


FUNCTION_WORDS = frozenset((
    "the", "and", "for", "are", "was", "were", "has", "have", "had", "this", "that", "with", "from", "into", "onto",
    "over", "under", "its", "they", "them", "their", "there", "then", "than", "but", "not", "any", "all", "can",
    "will", "would", "should", "could", "been", "being", "our", "your", "his", "her", "who", "what", "when",
    "where", "which", "how", "why", "also", "just", "only", "very", "each", "per", "via", "about", "after",
    "before", "does", "did",
))
"""Words that state no fact of their own: left out when a claim's words are matched against a carrier."""

_CLAUSE_BREAK = re.compile(
    r"[.;:!?\n]+(?:\s|$)|,?\s+(?:but|while|whereas|although|though|however|yet)\s+", re.IGNORECASE
)
"""Where one clause of a carrier ends: a sentence stop, a semicolon or colon, or a contrastive conjunction."""


def stem(token: str) -> str:
    """``deploys`` → ``deploy``: a plural or third-person ``s`` is no other fact (tokens with digits kept whole)."""
    return token[:-1] if len(token) > 3 and token.endswith("s") and not _DIGIT.search(token) else token


def content_words(text: str) -> frozenset[str]:
    """The stemmed words of ``text`` that state something: three letters or more, no digit, not a function word, not
    a negation marker, not a variant qualifier and not a *when* word (:func:`time_words`): polarity, variants and
    times are read apart."""
    tokens = tokenize(text)
    return frozenset(stem(t) for at, t in enumerate(tokens)
                     if len(t) >= 3 and not _DIGIT.search(t) and t not in FUNCTION_WORDS
                     and t not in NEGATION_MARKERS and t not in VARIANT_QUALIFIERS and _time_token(tokens, at) is None)


def clauses(text: str) -> list[str]:
    """``text`` cut into clauses (:data:`_CLAUSE_BREAK`), blanks dropped."""
    return [part.strip() for part in _CLAUSE_BREAK.split(text) if part.strip()]


CARRYING_SHARE = 0.5
"""A clause of a carrier *carries* a member's claim clause when its weight of shared claim words is at least this share
of the best clause's (our decision, docs/veto.md §4). A shared word weighs ``1 / (carrier clauses holding it)``, so a
word every clause repeats ("cache") says little about which clause states the claim: "the edge cache serves assets.
the edge cache is not enabled for checkout" states "the edge cache is enabled for checkout" only in its second
clause, while "enabled for checkout but not for search" carries both a claim about checkout and one about search."""


def _polarity_kept(claim: str, carrier: str) -> bool:
    """Whether every clause of ``claim`` keeps its polarity in ``carrier`` (docs/veto.md §4).

    For each clause of the claim, the carrier's clauses that carry it (:data:`CARRYING_SHARE`) must include one of
    the same polarity. A claim clause that shares no word with any carrier clause is kept when it is not negated, or
    when the carrier holds a negation somewhere.
    """
    carried = [(content_words(c), _has_negation(c)) for c in clauses(carrier)]
    spread: dict[str, int] = {}
    for have, _ in carried:
        for word in have:
            spread[word] = spread.get(word, 0) + 1
    for part in clauses(claim) or [claim]:
        negated = _has_negation(part)
        words = content_words(part)
        scored = [(sum(1 / spread[w] for w in words & have), neg) for have, neg in carried]
        best = max((weight for weight, _ in scored), default=0.0)
        if best == 0:
            if negated and not _has_negation(carrier):
                return False
            continue
        if not any(neg == negated for weight, neg in scored if weight >= CARRYING_SHARE * best):
            return False
    return True


SAME_FACT_OVERLAP = 0.8
"""Share of two claims' content words in common (``|A ∩ B| / |A ∪ B|``) at or above which they state one fact (our
decision, docs/veto.md §4 "Contradictions"): "the edge cache is (not) enabled for checkout (anymore)" reach it, "the
checkout timeout is 10 seconds" / "checkout retries wait 30 seconds after a timeout" (0.6) do not."""


def contradiction_reasons(a: str, b: str) -> tuple[str, ...]:
    """The predicates (negation, numeric, variant, time) that fire between two claims stating *one* fact otherwise, or
    ``()`` (docs/veto.md §4 "Contradictions").

    Two claims state one fact when their content words (:func:`content_words`) overlap by at least
    :data:`SAME_FACT_OVERLAP`: "the edge cache is enabled for checkout" / "the edge cache is not enabled for
    checkout", "the checkout timeout is 10 seconds" / "... 30 seconds", "the handoff is on Monday" / "... on
    Tuesday" (times clash only when neither side's *when* values hold the other's). Such a pair contradicts itself
    wherever it is folded: no canonical can carry both as one memory. A promise and its completion are two true
    facts, not a contradiction: ``commitment`` is not read here. Two claims about different things ("checkout p95
    latency stays under 300 ms" / "checkout latency is tracked on the dashboard") are different facts, whatever their
    numbers or polarity: ``()``. Read over the claims alone. Symmetric.
    """
    left, right = content_words(a), content_words(b)
    if not left or not right or len(left & right) < SAME_FACT_OVERLAP * len(left | right):
        return ()
    reasons: list[str] = []
    if negation_divergent(a, b):
        reasons.append(VETO_NEGATION)
    if numeric_token_divergent(a, b):
        reasons.append(VETO_NUMERIC)
    if variant_qualifier_divergent(a, b):
        reasons.append(VETO_VARIANT)
    if _times_clash(a, b):
        reasons.append(VETO_TIME)
    return tuple(reasons)


def _times_clash(a: str, b: str) -> bool:
    """Two claims name *when* values neither of which holds the other's (``Monday`` / ``Tuesday``); a claim that
    only adds a value (``Monday`` / ``Monday morning``) or names none refines the other, it does not contradict it."""
    left, right = time_words(a), time_words(b)
    return not left <= right and not right <= left


def carry_gaps(member: MergeText | str, carrier: MergeText | str) -> tuple[str, ...]:
    """Which of ``member``'s markers ``carrier`` drops, in the order negation, numeric, variant, time, commitment,
    subject (docs/veto.md §4). Directional: the carrier is a text written to stand for the member (a compress
    canonical, a fold's keeper as the run gate follows it), so it may say more than the member, never less or the
    opposite.

    - ``negation``: the clauses of the carrier that carry the member's claim (:data:`CARRYING_SHARE`) all have the
      other polarity (a claim stated "not", or a negated claim stated plainly);
    - ``numeric``: a digit-bearing token of the member's claim is nowhere in the carrier;
    - ``variant``: a variant qualifier of the member's claim is nowhere in the carrier;
    - ``time``: a *when* value of the member's claim (:func:`time_words`) is nowhere in the carrier;
    - ``commitment``: the carrier states done what the member's claim only promises, or promises what the member's
      claim states done, and does not also state it the member's way (:func:`commitment_divergent` turned one way);
    - ``subject``: :func:`subject_divergent` of the two subject sets (run only when both carry them).

    The member is read by its claim (the fact it states); the carrier by its claim and article. Empty = carried.
    """
    left, right = _as_text(member), _as_text(carrier)
    have = set(tokenize(right.whole))
    gaps: list[str] = []
    if not _polarity_kept(left.claim, right.whole):
        gaps.append(VETO_NEGATION)
    if not _numeric_tokens(left.claim) <= have:
        gaps.append(VETO_NUMERIC)
    if not _qualifiers(left.claim) <= have:
        gaps.append(VETO_VARIANT)
    if not time_words(left.claim) <= time_words(right.whole):
        gaps.append(VETO_TIME)
    if _commitment_flipped(left.claim, right.whole):
        gaps.append(VETO_COMMITMENT)
    if left.subjects is not None and right.subjects is not None and subject_divergent(left.subjects, right.subjects):
        gaps.append(VETO_SUBJECT)
    return tuple(gaps)


def _commitment_flipped(member: str, carrier: str) -> bool:
    """Whether ``carrier`` turns a promise of ``member`` into a completion, or a completion into a promise.

    A member promise is kept when the carrier promises the verb too (it may also say it is done); a member completion
    (a past form of a verb the carrier promises, outside a promise of the member's own) is kept when the carrier also
    states that past form outside its promises.
    """
    if _promise_kept_apart(member, carrier):
        return True
    theirs, taken = _promises(tokens := tokenize(carrier))
    stated = {token for at, token in enumerate(tokens) if at not in taken}
    mine, my_taken = _promises(member_tokens := tokenize(member))
    my_stated = {token for at, token in enumerate(member_tokens) if at not in my_taken}
    return any(forms & my_stated and not forms & stated and not any(forms & other for other in mine)
               for forms in theirs)


def identity_veto_reasons(a: str, b: str) -> tuple[str, ...]:
    """The predicates that say two *names* denote different things: ``numeric`` then ``variant``.

    The same numeric-token and variant-qualifier predicates that guard memory folds, read over two entity names
    (``payments-v1``/``payments-v2``, ``node-1``/``node-10``, ``python3.11``/``python3.12``, ``api``/``api-beta``).
    Negation is left out: a name carries no polarity. Empty tuple = not vetoed. Symmetric, pure.
    """
    reasons: list[str] = []
    if numeric_token_divergent(a, b):
        reasons.append(VETO_NUMERIC)
    if variant_qualifier_divergent(a, b):
        reasons.append(VETO_VARIANT)
    return tuple(reasons)


@dataclass(frozen=True)
class MergeProposal:
    """One proposed fold of ``drop`` into ``keep``.

    Attributes:
        keep: repository path of the keeper (the older file, by corpus order).
        drop: repository path of the file that would be archived.
        sim: the pair's cosine (the model path passes the mined value or 0.86).
        keep_text / drop_text: article text of each side, or ``None`` when unknown.
        keep_claim / drop_claim: claim (gist) of each side, or ``None`` when unknown.
        keep_subjects / drop_subjects: subject identities of each side (``MergeText.subjects``), or ``None`` when
            not read.

    A side is *known* when its claim or its text is not ``None`` (a missing part reads as ""). The veto runs only
    when both sides are known (docs/veto.md §3: "If either text is missing, the veto is skipped").
    """

    keep: str
    drop: str
    sim: float
    keep_text: str | None = None
    drop_text: str | None = None
    keep_claim: str | None = None
    drop_claim: str | None = None
    keep_subjects: frozenset[str] | None = None
    drop_subjects: frozenset[str] | None = None

    def texts(self) -> tuple[MergeText, MergeText] | None:
        """Both sides' :class:`MergeText`, or ``None`` when either side is unknown."""
        if (self.keep_text is None and self.keep_claim is None) or (
            self.drop_text is None and self.drop_claim is None
        ):
            return None
        return (
            MergeText(self.keep_claim or "", self.keep_text or "", self.keep_subjects),
            MergeText(self.drop_claim or "", self.drop_text or "", self.drop_subjects),
        )


@dataclass(frozen=True)
class MergeDecision:
    """A fold that passed every filter: archive ``drop`` into ``keep``."""

    keep: str
    drop: str
    sim: float


@dataclass(frozen=True)
class VetoedPair:
    """A proposal refused by the divergence veto; ``reasons`` names the predicates that fired."""

    keep: str
    drop: str
    sim: float
    reasons: tuple[str, ...]


@dataclass(frozen=True)
class MergeOutcome:
    """Every proposal lands in exactly one field, each in proposal order.

    Attributes:
        decisions: folds to commit.
        vetoed: refused by the divergence veto (with the firing predicates).
        role_guarded: refused because a path already took an incompatible role this batch.
        below_threshold: ``sim <= threshold``.
        self_pairs: ``keep == drop``.
        capped: not examined because :data:`MAX_MERGE_PAIRS` decisions were already made.
    """

    decisions: tuple[MergeDecision, ...]
    vetoed: tuple[VetoedPair, ...]
    role_guarded: tuple[MergeProposal, ...]
    below_threshold: tuple[MergeProposal, ...]
    self_pairs: tuple[MergeProposal, ...]
    capped: tuple[MergeProposal, ...]


def merge_candidates(
    proposals: Iterable[MergeProposal],
    *,
    threshold: float = NEAR_DUPLICATE_THRESHOLD,
    cap: int = MAX_MERGE_PAIRS,
) -> MergeOutcome:
    """Filter proposals in one ordered pass (docs/veto.md §3 "Role guard", docs/veto.md §3 v0.6 semantics).

    For each proposal, in order: once ``cap`` decisions exist every remaining proposal is ``capped``; a ``sim``
    not strictly above ``threshold`` is ``below_threshold``; a pair whose texts are both known and diverge is
    ``vetoed``; ``keep == drop`` is a ``self_pair``; then the role guard: a path already dropped this batch can
    be neither dropped again nor keep, and a path already kept can keep again but never be dropped; a pair that
    breaks this is ``role_guarded``. Otherwise the fold is a decision. So (gf, a) then (b, gf) commits only the
    first, while (k, a), (k, b) folds both into ``k``.
    """
    decisions: list[MergeDecision] = []
    vetoed: list[VetoedPair] = []
    guarded: list[MergeProposal] = []
    below: list[MergeProposal] = []
    selfs: list[MergeProposal] = []
    capped: list[MergeProposal] = []
    kept: set[str] = set()
    dropped: set[str] = set()
    for proposal in proposals:
        if len(decisions) >= cap:
            capped.append(proposal)
            continue
        if not proposal.sim > threshold:
            below.append(proposal)
            continue
        texts = proposal.texts()
        if texts is not None:
            reasons = veto_reasons(*texts)
            if reasons:
                vetoed.append(VetoedPair(proposal.keep, proposal.drop, proposal.sim, reasons))
                continue
        if proposal.keep == proposal.drop:
            selfs.append(proposal)
            continue
        if proposal.drop in dropped or proposal.drop in kept or proposal.keep in dropped:
            guarded.append(proposal)
            continue
        decisions.append(MergeDecision(proposal.keep, proposal.drop, proposal.sim))
        kept.add(proposal.keep)
        dropped.add(proposal.drop)
    return MergeOutcome(
        decisions=tuple(decisions),
        vetoed=tuple(vetoed),
        role_guarded=tuple(guarded),
        below_threshold=tuple(below),
        self_pairs=tuple(selfs),
        capped=tuple(capped),
    )


def connected_components(pairs: Iterable[tuple[str, str] | tuple[str, str, float]]) -> list[list[str]]:
    """Connected components of an undirected edge list (docs/veto.md §3 ``connectedComponents``).

    Args:
        pairs: ``(a, b)`` path pairs (extra items, such as a similarity, are ignored).

    Returns:
        Each component's members sorted ascending; components ordered by their root, which is the smallest member
        (union-find where the lexicographically smaller root wins). A self pair yields a singleton component.
    """
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent[root] != root:
            root = parent[root]
        while parent[x] != root:
            parent[x], x = root, parent[x]
        return root

    for pair in pairs:
        a, b = pair[0], pair[1]
        parent.setdefault(a, a)
        parent.setdefault(b, b)
        ra, rb = find(a), find(b)
        if ra == rb:
            continue
        if ra < rb:
            parent[rb] = ra
        else:
            parent[ra] = rb
    groups: dict[str, list[str]] = {}
    for node in parent:
        groups.setdefault(find(node), []).append(node)
    return [sorted(groups[root]) for root in sorted(groups)]
