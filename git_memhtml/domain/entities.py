"""Entity names: matching keys, display forms, the pairwise merge rule, complete linkage and the survivor
union-find (docs/entities.md §6 steps 2, 3, 8; docs/entities.md §6; issue 8 item 4).

Two names are *one key* when they are equal after NFC, case folding and whitespace collapsing
(:func:`name_key`, :func:`entity_key`); this one function is what the indexer projects, the scope filters compare
and entity-resolution groups by, so ``--entity org:DGIA`` and ``--entity org:dgia`` find the same files. A name
keeps its *display* form (:func:`display_name`: NFC and collapsed whitespace, case kept).

Two different keys merge only when :func:`pair_verdict` says ``merge``: an LCS ratio of at least
:data:`AUTO_MERGE_RATIO`, no numeric or variant divergence (the memory-merge veto of ``domain.merge``, so
``node-1``/``node-10`` and ``python3.11``/``python3.12`` stay apart), and either the same letters and digits
(``checkout-api``/``checkout api``) or only long-token spelling edits (never for persons; never a short token, so
``anna``/``hanna`` stays apart). A fuzzy cluster is built by complete linkage (:func:`complete_linkage`): every
pair inside it passes the rule, so no chain of near neighbours can grow it. Which name survives is decided by
the corpus's own file counts (higher count wins, ties to the lexicographically smaller key), never by a model
(docs/entities.md §6).

What a *model* may make one is decided by :func:`name_merge_refusal`, the one rule the model stage's rail and the run
gate both read: no identity veto, and either the same letters or one name in a shorter and a fuller form (a person's
leading words, a service's role word: :func:`same_name_forms`) whose centroids (:func:`centroid`) agree
(:data:`CENTROID_AGREEMENT`). Pure.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from git_memhtml.domain.merge import identity_veto_reasons

AUTO_MERGE_RATIO = 0.85
"""Character ratio at or above which two names may merge without review (docs/entities.md §6 step 3; docs/phases.md
§0.4)."""

REVIEW_RATIO = 0.75
"""Lower bound of the review band [0.75, 0.85) (docs/entities.md §6 step 3; docs/phases.md §0.4)."""

SHORT_TOKEN_LENGTH = 8
"""A spelling edit counts as evidence only inside two tokens of at least 8 letters or digits (issue 8 item 4:
"a one-letter difference between short names is not evidence"). Our choice: at 8, ``kubernetes``/``kubernets``
and ``postgres``/``postgress`` merge, while ``anna``/``hanna``, ``andrea``/``andreas`` and ``api``/``app`` do not."""

PERSON = "person"
"""The entity type whose spellings never merge by edit distance (two people's names differ by one letter)."""

MARKUP_ENTITY_TYPES: frozenset[str] = frozenset({"lang", "concept"})
"""Entity types derived from article markup (``<code data-lang>``, ``<dfn>``; docs/index.md §3.5): what the article's
markup says, not what the memory is about. They cap no disclosure, form no compress group and name no subject."""

UNTYPED = "unknown"
"""The type of a value with no valid colon (:func:`split_entity`): it names no subject either."""

MERGE, REVIEW, DISTINCT = "merge", "review", "distinct"
"""The three verdicts of :func:`pair_verdict`."""

REASON_SAME_LETTERS = "same-letters"
REASON_SPELLING = "long-token-spelling"
REASON_SHORT_NAME = "short-name"
REASON_PERSON_SPELLING = "person-spelling"
REASON_TOKEN_SHAPE = "token-mismatch"
REASON_BAND = "character-band"

_WHITESPACE = re.compile(r"\s+")
_TOKEN = re.compile(r"[^\W_]+")
"""Runs of Unicode letters and digits: a name's tokens (separators and punctuation split them)."""


def display_name(name: str) -> str:
    """The form a name is written in: NFC, whitespace runs collapsed to one space, trimmed; case kept."""
    return _WHITESPACE.sub(" ", unicodedata.normalize("NFC", name)).strip()


def name_key(name: str) -> str:
    """The matching key of a name: :func:`display_name`, case-folded, NFC again (docs/entities.md §6 step 2).

    >>> name_key("  DGIA ") == name_key("dgia")
    True
    """
    return unicodedata.normalize("NFC", display_name(name).casefold())


def split_entity(value: str) -> tuple[str, str]:
    """Split ``type:name`` at the first colon (valid when the colon is neither first nor last), else
    ``("unknown", value)`` (docs/format.md §1.8)."""
    idx = value.find(":")
    if 0 < idx < len(value) - 1:
        return value[:idx], value[idx + 1 :]
    return "unknown", value


def entity_key(value: str) -> str:
    """The matching key of a ``type:name`` value: ``<type key>:<name key>`` (a value without a valid colon is keyed
    as ``unknown:<name key>``). The one key the index stores, the scope filters compare and the phase groups by.

    >>> entity_key("org:DGIA") == entity_key("ORG: dgia ") == "org:dgia"
    True
    """
    etype, name = split_entity(value)
    return f"{name_key(etype)}:{name_key(name)}"


def subject_identities(values: Iterable[str], aliases: Mapping[str, str] | None = None) -> frozenset[str]:
    """The subject identities of a memory's entity values, what the merge veto's subject predicate compares
    (``domain.merge.subject_divergent``, docs/veto.md §3 "Subjects").

    Each ``type:name`` value (or matching key) becomes ``<type key>:<letters>``: the name's matching key
    (:func:`name_key`) with every separator dropped (``checkout_api``, ``Checkout API`` and ``checkout-api`` are one
    identity, as entity-resolution merges them on sight). A person name in ``aliases`` (name key → the key of its
    alias group's representative, from the person files, docs/entities.md §6 step 4) takes its group's identity, so
    ``Caroline`` and ``Caroline M.`` declared one person are one subject. Markup-derived and untyped values
    (:data:`MARKUP_ENTITY_TYPES`, :data:`UNTYPED`) are no subject. Pure.
    """
    out: set[str] = set()
    for value in values:
        etype, name = split_entity(value)
        kind, key = name_key(etype), name_key(name)
        if kind in MARKUP_ENTITY_TYPES or kind == UNTYPED or not key:
            continue
        if kind == PERSON and aliases:
            key = aliases.get(key, key)
        letters = "".join(name_tokens(key))
        if letters:
            out.add(f"{kind}:{letters}")
    return frozenset(out)


def alias_representatives(groups: Iterable[Sequence[str]]) -> dict[str, str]:
    """``{name key: representative}`` of person alias groups (each a tuple of name keys, as
    ``tree.people.alias_group`` reads a person file): the smallest key of the group, groups sharing a key joined."""
    finder = UnionFind()
    for group in groups:
        keys = sorted({name_key(k) for k in group if name_key(k)})
        for key in keys:
            finder.add(key)
        for key in keys[1:]:
            finder.union(keys[0], key)
    return finder.mapping()


def name_tokens(key: str) -> list[str]:
    """The letter/digit runs of a name, in order (``checkout-api`` → ``["checkout", "api"]``)."""
    return _TOKEN.findall(key)


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence of ``a`` and ``b`` (O(|a|·|b|) time, O(|b|) memory)."""
    if not a or not b:
        return 0
    previous = [0] * (len(b) + 1)
    for char in a:
        current = [0]
        for j, other in enumerate(b):
            current.append(previous[j] + 1 if char == other else max(previous[j + 1], current[j]))
        previous = current
    return previous[-1]


def lcs_ratio(a: str, b: str) -> float:
    """``2·LCS(a, b) / (|a| + |b|)`` in [0, 1]; identical strings score 1, an empty side scores 0 (docs/entities.md §6).

    >>> round(lcs_ratio("checkout-api", "checkout api"), 2)
    0.92
    """
    if a == b and a:
        return 1.0
    if not a or not b:
        return 0.0
    return 2 * lcs_length(a, b) / (len(a) + len(b))


@dataclass(frozen=True)
class PairVerdict:
    """The pairwise rule's answer for two keys ``a < b``.

    Attributes:
        verdict: ``merge`` (may join one cluster), ``review`` (ask a human: a detected task), or ``distinct``
            (different entities by rule: a numeric or variant divergence; never merged, never asked).
        reason: why — a veto name (``numeric``, ``variant``) or one of the ``REASON_*`` constants.
    """

    a: str
    b: str
    ratio: float
    verdict: str
    reason: str


def _ratio_may_reach(a: str, b: str, floor: float) -> bool:
    """Cheap upper bound: LCS ≤ min length, so ``2·min/(|a|+|b|) < floor`` can never reach ``floor``."""
    total = len(a) + len(b)
    return total > 0 and 2 * min(len(a), len(b)) / total >= floor


def _spelling_reason(a: str, b: str, entity_type: str) -> str | None:
    """``None`` when the letters of ``a`` and ``b`` justify a merge; else the reason they do not."""
    ta, tb = name_tokens(a), name_tokens(b)
    if ta and "".join(ta) == "".join(tb):
        return None  # only separators, spacing or case differ
    if entity_type == PERSON:
        return REASON_PERSON_SPELLING
    if len(ta) != len(tb):
        return REASON_TOKEN_SHAPE
    for x, y in zip(ta, tb, strict=True):
        if x != y and min(len(x), len(y)) < SHORT_TOKEN_LENGTH:
            return REASON_SHORT_NAME
    return None


def pair_verdict(a: str, b: str, entity_type: str = "") -> PairVerdict | None:
    """The pairwise rule over two different keys of one type; ``None`` when they are unrelated (ratio < 0.75).

    In order: ratio below :data:`REVIEW_RATIO` → ``None``; a numeric or variant divergence
    (:func:`git_memhtml.domain.merge.identity_veto_reasons`) → ``distinct``; ratio below :data:`AUTO_MERGE_RATIO`
    → ``review`` (the character band); the same letters and digits → ``merge``; a person → ``review``; a
    different token count or an edit inside a token shorter than :data:`SHORT_TOKEN_LENGTH` → ``review``;
    otherwise ``merge``. Symmetric in ``a``/``b`` (the verdict is reported with ``a < b``).
    """
    if a == b:
        return None
    a, b = sorted((a, b))
    if not _ratio_may_reach(a, b, REVIEW_RATIO):
        return None
    ratio = lcs_ratio(a, b)
    if ratio < REVIEW_RATIO:
        return None
    vetoes = identity_veto_reasons(a, b)
    if vetoes:
        return PairVerdict(a, b, ratio, DISTINCT, vetoes[0])
    if ratio < AUTO_MERGE_RATIO:
        return PairVerdict(a, b, ratio, REVIEW, REASON_BAND)
    refusal = _spelling_reason(a, b, entity_type)
    if refusal is not None:
        return PairVerdict(a, b, ratio, REVIEW, refusal)
    same = "".join(name_tokens(a)) == "".join(name_tokens(b))
    return PairVerdict(a, b, ratio, MERGE, REASON_SAME_LETTERS if same else REASON_SPELLING)


def may_merge(a: str, b: str, entity_type: str = "") -> bool:
    """Whether the pairwise rule lets keys ``a`` and ``b`` share a cluster (equal keys always do)."""
    if a == b:
        return True
    verdict = pair_verdict(a, b, entity_type)
    return verdict is not None and verdict.verdict == MERGE


def pair_verdicts(keys: Iterable[str], entity_type: str = "") -> list[PairVerdict]:
    """Every related pair of the distinct ``keys`` (verdict not ``None``), in sorted ``(a, b)`` order."""
    out: list[PairVerdict] = []
    for a, b in combinations(sorted(set(keys)), 2):
        verdict = pair_verdict(a, b, entity_type)
        if verdict is not None:
            out.append(verdict)
    return out


def complete_linkage(
    names: Iterable[str], pairs: Iterable[tuple[str, str, float]], passes: Callable[[str, str], bool]
) -> list[tuple[str, ...]]:
    """Clusters of ``names`` joined along ``pairs`` under complete linkage. Pure, deterministic.

    ``pairs`` are ``(a, b, ratio)`` candidates, taken by ratio descending, then ``(a, b)``; two clusters join only
    when ``passes(x, y)`` holds for **every** ``x`` of one and ``y`` of the other. So every pair inside a returned
    cluster passes on its own, and a chain ``a~b~c`` with ``a`` and ``c`` apart never becomes one cluster.

    Returns:
        Every cluster (singletons included) as a sorted tuple, the list sorted.
    """
    cluster: dict[str, tuple[str, ...]] = {n: (n,) for n in sorted(set(names))}
    for a, b, _ratio in sorted(pairs, key=lambda p: (-p[2], p[0], p[1])):
        ca, cb = cluster.get(a), cluster.get(b)
        if ca is None or cb is None or ca == cb:
            continue
        if all(passes(x, y) for x in ca for y in cb):
            joined = tuple(sorted((*ca, *cb)))
            for member in joined:
                cluster[member] = joined
    return sorted(set(cluster.values()))


class UnionFind:
    """Union-find over names where a merged set's root is its survivor (docs/entities.md §6 step 8).

    On :meth:`union` the root with the higher count wins; equal counts go to the lexicographically smaller name.
    A root's count is the count of the name itself (the corpus file count), not the size of its set: the
    survivor is the most-used *name*, which a later merge with a less-used name cannot displace.

    Args:
        counts: file count per name; a name not listed counts 0. Names may also be added lazily by :meth:`find`.
    """

    def __init__(self, counts: Mapping[str, int] | None = None) -> None:
        self._counts: dict[str, int] = dict(counts or {})
        self._parent: dict[str, str] = {name: name for name in sorted(self._counts)}

    def add(self, name: str, count: int = 0) -> None:
        """Register ``name`` (idempotent; an existing count is kept)."""
        if name not in self._parent:
            self._parent[name] = name
            self._counts.setdefault(name, count)

    def find(self, name: str) -> str:
        """The survivor of ``name``'s set (registers an unknown name with count 0)."""
        self.add(name)
        root = name
        while self._parent[root] != root:
            root = self._parent[root]
        while self._parent[name] != root:
            self._parent[name], name = root, self._parent[name]
        return root

    def _wins(self, a: str, b: str) -> bool:
        ca, cb = self._counts.get(a, 0), self._counts.get(b, 0)
        return ca > cb or (ca == cb and a < b)

    def union(self, a: str, b: str) -> str:
        """Merge the sets of ``a`` and ``b``; return the surviving root."""
        ra, rb = self.find(a), self.find(b)
        if ra == rb:
            return ra
        winner, loser = (ra, rb) if self._wins(ra, rb) else (rb, ra)
        self._parent[loser] = winner
        return winner

    def mapping(self) -> dict[str, str]:
        """``{name: survivor}`` for every registered name, in sorted name order."""
        return {name: self.find(name) for name in sorted(self._parent)}


def merge_names(counts: Mapping[str, int], pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Union every accepted pair over names taken in sorted order; return ``{name: survivor}`` (docs/entities.md §6 step
    8).

    Pairs are applied sorted (each pair's two names sorted, then the pair list sorted), so the result does not
    depend on the order the three sources (character, alias, model) produced them in.
    """
    forest = UnionFind(counts)
    for a, b in sorted(tuple(sorted(pair)) for pair in pairs):
        forest.union(a, b)
    return forest.mapping()


def resolve_names(
    counts: Mapping[str, int],
    verdicts: Sequence[PairVerdict],
    alias_pairs: Iterable[tuple[str, str]] = (),
) -> dict[str, str]:
    """``{key: survivor key}`` for one type: complete-linkage clusters of the ``merge`` verdicts, then the declared
    alias pairs, through one survivor union-find (docs/entities.md §6 step 8).

    ``verdicts`` must come from :func:`pair_verdicts` over the same keys (only their ``merge`` pairs are read).
    Alias pairs are a person file's assertion of identity, not a similarity, so they join whole clusters; the
    character evidence never grows a cluster past what each of its pairs justifies alone.
    """
    merges = [(v.a, v.b, v.ratio) for v in verdicts if v.verdict == MERGE]
    passing = {(a, b) for a, b, _ in merges}
    clusters = complete_linkage(counts, merges, lambda x, y: (min(x, y), max(x, y)) in passing)
    accepted: list[tuple[str, str]] = []
    for members in clusters:
        accepted.extend((members[0], other) for other in members[1:])
    accepted.extend((min(a, b), max(a, b)) for a, b in alias_pairs if a != b)
    return merge_names(counts, accepted)


CENTROID_AGREEMENT = 0.30
"""Least cosine between two names' centroids (:func:`centroid`) for their memories to *agree*: below it a merge of
the two names is refused by the model stage's rail and by the run gate alike (:func:`name_merge_refusal`).

Source: ``bench/entity_agreement.py`` on the six LoCoMo conversations written as an agent writes memories, with the
default embedder (wordllama; figures in bench/README.md). 0.30 is the median cosine of two *unrelated* people
(different conversations) at 3 memories each; one person's memories split at random into two names reach it in
94 % of 1 + 3 splits and 99 % or more from 2 + 2 on. It is a guard against gross mismatches, not a proof of
identity: two people of one conversation reach it too (median 0.45 at 3 + 3), so it never merges anything on its
own (docs/entities.md §6 "Model stage")."""

REASON_NOT_ONE_NAME = "not-one-name"
"""Refusal of :func:`name_merge_refusal`: neither the same letters nor one name in a shorter and a fuller form (a
person's leading words, a service's role word: :func:`same_name_forms`)."""

REASON_NO_CENTROID = "no-centroid"
"""Refusal of :func:`name_merge_refusal`: a name has no centroid (no claimant with a vector), so nothing shows that
the two names' memories agree."""

REASON_CENTROIDS_DISAGREE = "centroids-disagree"
"""Refusal of :func:`name_merge_refusal`: the two names' centroids are below :data:`CENTROID_AGREEMENT`."""

IDENTITY_REASONS: frozenset[str] = frozenset({"numeric", "variant", REASON_SHORT_NAME})
"""The refusals of :func:`name_merge_refusal` that say two names denote *different* things (the identity veto);
the others say only that nothing shows they are one."""

NAME_FORM_TYPES: frozenset[str] = frozenset({PERSON})
"""Entity types whose names have shorter forms (:func:`same_name_forms`). A person's name is given names then family
names, and an initial abbreviates a word, so its leading words are the same name written short. The names of things
are compounds whose extra word often names another thing (``kafka``/``kafka-connect``,
``postgres``/``postgres-exporter``, ``api``/``api-gateway``): a leading part is no evidence there, and the prompt
says so ("a shared word is not identity"). One exception, for services only: a trailing role word
(:func:`role_word_form`)."""


SERVICE = "service"
"""The entity type of a running service (``service:checkout-api``): the one type whose names take a role word."""

ROLE_SUFFIXES: tuple[str, ...] = ("service", "svc", "srv", "server", "daemon", "worker")
"""Role words (our decision, issue 27; docs/entities.md §6 "A service and its role word"): a *service* name followed
by one of these is the same service's name in a fuller form (``notifications`` / ``notifications-worker``,
``billing`` / ``billing-service``). Each says only what the named thing already is or how it runs: a service, a
server, a daemon, a worker process. Words that name *another* thing beside the first are not role words and never
will be: ``connect`` (``kafka-connect`` is Kafka's connector framework), ``exporter``, ``client``, ``proxy``,
``gateway``, ``db``, ``api``, ``web``, ``ui``, ``indexer``, ``sync``, ``cli``."""

ROLE_SUFFIX_TYPES: frozenset[str] = frozenset({SERVICE})
"""Entity types whose names take a role word (:func:`role_word_form`): only services. A project, a tool or an org
followed by ``service`` or ``server`` is another thing of its own (``atlas`` the project, ``atlas-server`` its
server)."""


def role_word_form(a: str, b: str, entity_type: str) -> bool:
    """``a`` and ``b`` (name keys of ``entity_type``) are one service's name without and with a role word: for a type
    of :data:`ROLE_SUFFIX_TYPES`, the tokens (:func:`name_tokens`) of one are exactly the tokens of the other plus
    one trailing word of :data:`ROLE_SUFFIXES`, and the shorter holds a word that is neither a role word nor a
    number (its name proper).

    ``notifications`` / ``notifications-worker``, ``billing`` / ``billing-service``, ``checkout-api`` /
    ``checkout-api-svc``: one name. ``kafka`` / ``kafka-connect``, ``postgres`` / ``postgres-exporter``,
    ``checkout`` / ``checkout-api`` (not role words), ``notifications-worker`` / ``notifications-server`` (two
    role words: a worker and a server of one system are two processes), ``notifications`` /
    ``notifications-worker-2`` (a number), ``service`` / ``service-worker`` (no name proper), ``notifications`` /
    ``worker-notifications`` (a leading word): not. Symmetric, pure."""
    if entity_type not in ROLE_SUFFIX_TYPES:
        return False
    ta, tb = name_tokens(a), name_tokens(b)
    short, full = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    if len(full) != len(short) + 1 or full[:-1] != short or full[-1] not in ROLE_SUFFIXES:
        return False
    return any(t not in ROLE_SUFFIXES and not t.isdigit() for t in short)


def same_letters(a: str, b: str) -> bool:
    """``a`` and ``b`` have the same letters and digits in the same order: only case, spacing and separators differ
    (``checkout_api``/``checkout-api``). Names with no letter or digit are never the same. Symmetric, pure."""
    ta = name_tokens(a)
    return bool(ta) and "".join(ta) == "".join(name_tokens(b))


def _word_form(short: str, full: str, entity_type: str) -> str | None:
    """How token ``short`` writes token ``full``: ``"word"`` (the same word), ``"initial"`` (a person's one-letter
    initial of it), or ``None``."""
    if short == full:
        return "word"
    if entity_type == PERSON and len(short) == 1 and short.isalpha() and full.startswith(short) and len(full) > 1:
        return "initial"
    return None


def same_name_forms(a: str, b: str, entity_type: str) -> bool:
    """``a`` and ``b`` (name keys) are one name in a shorter and a fuller form: for a type of :data:`NAME_FORM_TYPES`,
    the tokens (:func:`name_tokens`) of the one with fewer, or as many, are the *leading* tokens of the other, each
    the same word or a one-letter initial of it, at least one the same whole word, and the two differ.

    ``Caroline`` / ``Caroline M.``, ``Laith`` / ``Laith Al-Saadoon``, ``Caroline M.`` / ``Caroline Miller``,
    ``C. Miller`` / ``Caroline Miller``: one name. ``Dana Okafor`` / ``Priya Raman``, ``Caroline M.`` /
    ``Caroline N.``, ``Caroline Miller`` / ``Caroline Ng``, ``Okafor`` / ``Dana Okafor`` (a family name alone is not a
    leading part), ``Bob`` / ``Robert`` (a nickname), ``M.`` / ``Miller`` (an initial alone): not; a person file's
    ``memhtml-alias`` joins those (docs/entities.md §6 step 4). A service: only its name and that name with one role
    word (:func:`role_word_form`). Any other type: never. Symmetric, pure.
    """
    if role_word_form(a, b, entity_type):
        return True
    if entity_type not in NAME_FORM_TYPES:
        return False
    ta, tb = name_tokens(a), name_tokens(b)
    if not ta or not tb or ta == tb:
        return False
    short, full = (ta, tb) if len(ta) <= len(tb) else (tb, ta)
    for pair in ((short, full), (full, short)) if len(ta) == len(tb) else ((short, full),):
        forms = [_word_form(x, y, entity_type) for x, y in zip(pair[0], pair[1][: len(pair[0])], strict=True)]
        if None not in forms and "word" in forms:
            return True
    return False


def centroid(vectors: Sequence[np.ndarray]) -> np.ndarray | None:
    """A name's centroid: the mean of its claimants' first-chunk ``vectors`` in float64, L2-normalised; ``None``
    with no vector or a zero mean. The caller passes the vectors in claimant path order."""
    if not vectors:
        return None
    mean = np.mean(np.stack([np.asarray(v, dtype=np.float64) for v in vectors]), axis=0)
    norm = float(np.linalg.norm(mean))
    return mean / norm if norm > 0 else None


def centroid_cosine(centroids: Mapping[str, np.ndarray], a: str, b: str) -> float | None:
    """The cosine of the centroids of names ``a`` and ``b`` in ``centroids`` (unit vectors, :func:`centroid`),
    ``None`` when either has none: the ``cosine`` :func:`name_merge_refusal` reads."""
    va, vb = centroids.get(a), centroids.get(b)
    return None if va is None or vb is None else float(np.dot(va, vb))


def name_merge_refusal(a: str, b: str, entity_type: str, cosine: float | None) -> str | None:
    """Why two names (keys ``a``, ``b`` of ``entity_type``) may not be made one on a model's word, or ``None``: the
    one rule the model stage's rail (``sleep/phases/entity_model.py``) and the run gate's rename check
    (``sleep/probes/pointers.py``) both read (docs/entities.md §6 "Model stage", docs/gate.md §9.2).

    ``cosine`` is the cosine of the two names' centroids (:func:`centroid`), ``None`` when either has none. In order:

    1. the identity veto: a numeric or variant divergence (``identity_veto_reasons``: ``svc-amber-1`` and
       ``svc-amber-2`` are two services), or a one-letter edit (one insertion, deletion or substitution) inside a
       token shorter than :data:`SHORT_TOKEN_LENGTH` between names of the same token count (``anna``/``hanna``,
       ``api``/``app``: issue 8, "a one-letter difference between short names is not evidence"); returns the veto
       name or :data:`REASON_SHORT_NAME`;
    2. the same letters and digits (:func:`same_letters`) are one name: ``None``;
    3. otherwise the names must be one name in a shorter and a fuller form (:func:`same_name_forms`: a person's
       leading words or initials, a service's name and that name with one role word), else
       :data:`REASON_NOT_ONE_NAME` (``Dana Okafor``/``Priya Raman``, ``checkout-api``/``payments-api``,
       ``kafka``/``kafka-connect``);
    4. and their memories must agree: :data:`REASON_NO_CENTROID` without a cosine,
       :data:`REASON_CENTROIDS_DISAGREE` below :data:`CENTROID_AGREEMENT`.

    Symmetric, pure. Equal keys are one name (``None``).
    """
    if a == b:
        return None
    vetoes = identity_veto_reasons(a, b)
    if vetoes:
        return vetoes[0]
    ta, tb = name_tokens(a), name_tokens(b)
    if len(ta) == len(tb) and "".join(ta) != "".join(tb):
        for x, y in zip(ta, tb, strict=True):
            if x != y and min(len(x), len(y)) < SHORT_TOKEN_LENGTH and _one_edit(x, y):
                return REASON_SHORT_NAME
    if same_letters(a, b):
        return None
    if not same_name_forms(a, b, entity_type):
        return REASON_NOT_ONE_NAME
    if cosine is None:
        return REASON_NO_CENTROID
    if cosine < CENTROID_AGREEMENT:
        return REASON_CENTROIDS_DISAGREE
    return None


def _one_edit(x: str, y: str) -> bool:
    """``x`` and ``y`` differ by one inserted, deleted or substituted character."""
    if abs(len(x) - len(y)) > 1:
        return False
    return lcs_length(x, y) >= max(len(x), len(y)) - 1
