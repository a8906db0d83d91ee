"""Retention scoring: eight signals, per-type weight profiles, bands and the TTL reprieve (docs/retention.md §4.1-4.4).

Each signal lies in [0, 1] and each profile's weights sum to exactly 1.0 under Neumaier summation, so the
composite is a convex combination in [0, 1] (docs/retention.md §4.1). Bands partition [0, 1] with boundaries going to
the
lower band. Pure: callers pass counts and ages already read from the index.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import astuple, dataclass
from typing import Literal

from git_memhtml.domain.instants import parse_instant, require_instant

LN2 = math.log(2.0)
"""Recency is ``exp(-LN2 * age / half_life)``: the half-life defines the curve exactly (docs/retention.md §4.1)."""

ACCESS_SATURATION = 10
"""``access = min(1, access_count / 10)`` (docs/retention.md §4.1)."""

BRIDGE_SATURATION = 5
"""``bridge = min(1, bridges / 5)`` (docs/retention.md §4.1)."""

REINFORCEMENT_SATURATION = 5
"""``reinforcement = min(1, inbound supports / 5)`` (docs/retention.md §4.1)."""

CONTESTED_SATURATION = 3
"""``contested = 1 - min(1, authored inbound contradicts / 3)`` (docs/retention.md §4.1)."""

SHORT_WORD_COUNT = 10
"""Below 10 words density is ``wc / 20``, otherwise ``min(1, wc / 100)`` (docs/retention.md §4.1)."""

KEEP_ABOVE = 0.7
"""Score strictly above 0.7 → ``keep`` (docs/retention.md §4.2; docs/phases.md §0.4)."""

COMPRESS_ABOVE = 0.3
"""Score strictly above 0.3 (and not keep) → ``compress``; otherwise ``evict`` (docs/retention.md §4.2; docs/phases.md
§0.4)."""

REPRIEVE_FLOOR = 0.5
"""A TTL-passed memory is reprieved when its reprieve score is >= 0.5 (docs/retention.md §4.4; docs/phases.md §0.4)."""

REPRIEVE_DAYS = 14
"""A reprieve extends ``valid-until`` by 14 days (docs/retention.md §4.4; docs/phases.md §0.4)."""

MAX_REPRIEVES = 3
"""At most 3 reprieves per memory; the fourth expiry archives it (docs/retention.md §4.4; docs/phases.md §0.4)."""

OBSERVATION_WINDOW_DAYS = 30.0
"""Retention-triage archives an evict-band memory only after reads of it were observed for 30 days and none came
(issue 8 item 4; our rule, not in docs/retention.md §4). The spec's access, reinforcement, bridge and PageRank signals
read *absence* of use as disuse, but absence is evidence only over a window in which use was being recorded: a
memory's observed window runs from the later of its ``created_at`` and the store's observation start (its first
recorded read, ``index.access.observation_start``) to the run, and is 0 when the store never recorded a read.
30 days is the ``default`` profile's recency half-life, the time scale the spec itself gives to "unused"."""

Band = Literal["keep", "compress", "evict"]


@dataclass(frozen=True)
class SignalVector:
    """One value per retention signal, in signal order (docs/retention.md §4.1-4.2): a memory's eight normalised signals
    (each in [0, 1], :func:`retention_signals`) and a profile's eight weights (:data:`WEIGHT_PROFILES`) are both
    this record, so the two cannot disagree on the signals or their order."""

    recency: float
    access: float
    confidence: float
    pagerank: float
    bridge: float
    reinforcement: float
    density: float
    contested: float

    def values(self) -> tuple[float, ...]:
        """The eight values in signal order."""
        return tuple(float(v) for v in astuple(self))


DEFAULT_PROFILE = "default"

WEIGHT_PROFILES: Mapping[str, SignalVector] = {
    "episodic": SignalVector(0.25, 0.15, 0.10, 0.10, 0.10, 0.10, 0.10, 0.10),
    "semantic": SignalVector(0.05, 0.15, 0.20, 0.20, 0.15, 0.10, 0.10, 0.05),
    "procedural": SignalVector(0.0, 0.20, 0.15, 0.15, 0.10, 0.20, 0.10, 0.10),
    "arc": SignalVector(0.10, 0.10, 0.15, 0.15, 0.15, 0.15, 0.10, 0.10),
    "error_pattern": SignalVector(0.20, 0.15, 0.10, 0.05, 0.05, 0.20, 0.10, 0.15),
    DEFAULT_PROFILE: SignalVector(0.15, 0.15, 0.15, 0.15, 0.10, 0.10, 0.10, 0.10),
}
"""Weight profile per memory type; any other type uses ``default`` (docs/retention.md §4.2)."""

HALF_LIVES: Mapping[str, float | None] = {
    "episodic": 10.0,
    "semantic": 90.0,
    "procedural": None,
    "arc": 30.0,
    "error_pattern": 14.0,
    "task": None,
    DEFAULT_PROFILE: 30.0,
}
"""Recency half-life in days per type; ``None`` = age never lowers recency (docs/retention.md §4.2; docs/retention.md
§4.1)."""


def neumaier_sum(values: Iterable[float]) -> float:
    """Compensated (Neumaier) sum of ``values``, the summation every profile and composite uses (docs/retention.md
    §4.2)."""
    total = 0.0
    compensation = 0.0
    for value in values:
        t = total + value
        if abs(total) >= abs(value):
            compensation += (total - t) + value
        else:
            compensation += (value - t) + total
        total = t
    return total + compensation


def round_half_up(value: float, places: int = 4) -> float:
    """Round half up to ``places`` decimals, as the original's ``Math.round(x * 10**p) / 10**p``."""
    factor = float(10**places)
    return math.floor(value * factor + 0.5) / factor


def profile_for(memory_type: str) -> SignalVector:
    """The weight profile of ``memory_type`` (``default`` for unlisted types)."""
    return WEIGHT_PROFILES.get(memory_type, WEIGHT_PROFILES[DEFAULT_PROFILE])


def half_life_for(memory_type: str) -> float | None:
    """Recency half-life in days of ``memory_type`` (``default``'s 30 for unlisted types)."""
    if memory_type in HALF_LIVES:
        return HALF_LIVES[memory_type]
    return HALF_LIVES[DEFAULT_PROFILE]


_parse_instant = require_instant


def age_days(updated_at: str, at: str) -> float:
    """Days from ``updated_at`` to ``at`` (ISO-8601 instants), clamped at 0 (docs/retention.md §4.1 recency)."""
    seconds = (_parse_instant(at) - _parse_instant(updated_at)).total_seconds()
    return max(0.0, seconds / 86_400.0)


def _clamp01(value: float) -> float:
    if math.isnan(value):
        return 0.0
    return min(1.0, max(0.0, value))


def recency_signal(age: float, half_life: float | None) -> float:
    """``exp(-LN2 * age / half_life)``; 1 when there is no half-life or ``age <= 0`` (docs/retention.md §4.1)."""
    if half_life is None or half_life <= 0 or age <= 0:
        return 1.0
    return math.exp(-LN2 * age / half_life)


def density_signal(word_count: int) -> float:
    """``wc / 20`` below 10 words, else ``min(1, wc / 100)`` (docs/retention.md §4.1)."""
    wc = max(0, word_count)
    if wc < SHORT_WORD_COUNT:
        return wc / 20
    return min(1.0, wc / 100)


@dataclass(frozen=True)
class RetentionInput:
    """Everything the scorer reads about one memory.

    Attributes:
        memory_type: the memory's type (picks the profile and half-life).
        age_days: days since ``updated_at`` at the run instant (see :func:`age_days`); negative reads as 0.
        access_count: ``state.access.access_count`` (0 when no row).
        confidence: the projected ``files.confidence`` (clamped to [0, 1]).
        pagerank: the memory's PageRank; ``max_pagerank`` the corpus maximum (signal = rank / max; 0 if max <= 0).
        bridges: bridge count from :func:`git_memhtml.domain.graph.bridge_counts`.
        reinforcements: inbound ``supports`` edges, derived ones included.
        word_count: article word count.
        contradictions: inbound authored (``derived=0``) ``contradicts`` edges.
    """

    memory_type: str
    age_days: float = 0.0
    access_count: int = 0
    confidence: float = 1.0
    pagerank: float = 0.0
    max_pagerank: float = 0.0
    bridges: int = 0
    reinforcements: int = 0
    word_count: int = 0
    contradictions: int = 0


def retention_signals(inp: RetentionInput) -> SignalVector:
    """The eight signals of ``inp``, each in [0, 1] (docs/retention.md §4.1)."""
    pagerank = inp.pagerank / inp.max_pagerank if inp.max_pagerank > 0 else 0.0
    return SignalVector(
        recency=recency_signal(inp.age_days, half_life_for(inp.memory_type)),
        access=_clamp01(inp.access_count / ACCESS_SATURATION),
        confidence=_clamp01(inp.confidence),
        pagerank=_clamp01(pagerank),
        bridge=_clamp01(inp.bridges / BRIDGE_SATURATION),
        reinforcement=_clamp01(inp.reinforcements / REINFORCEMENT_SATURATION),
        density=density_signal(inp.word_count),
        contested=1.0 - _clamp01(inp.contradictions / CONTESTED_SATURATION),
    )


def retention_score(inp: RetentionInput) -> float:
    """Composite retention score in [0, 1]: Neumaier sum of weight x signal, rounded half up to 4 decimals."""
    weights = profile_for(inp.memory_type).values()
    signals = retention_signals(inp).values()
    return round_half_up(neumaier_sum(w * s for w, s in zip(weights, signals, strict=True)), 4)


def band(score: float) -> Band:
    """``keep`` if score > 0.7, ``compress`` if > 0.3, else ``evict``; boundaries go to the lower band."""
    if score > KEEP_ABOVE:
        return "keep"
    if score > COMPRESS_ABOVE:
        return "compress"
    return "evict"


def observed_window_days(created_at: str | None, observed_since: str | None, at: str) -> float:
    """Days over which disuse of a memory has been observed at instant ``at``: ``at − max(created_at,
    observed_since)``, clamped at 0 (ISO-8601 instants; a bare date is midnight UTC).

    0 when ``observed_since`` is ``None`` (the store never recorded a read) or either stamp is unreadable: never
    read disuse into a window that cannot be established. Raises ``ValueError`` only for an unreadable ``at``.
    """
    now = _parse_instant(at)
    created = parse_instant(created_at)
    since = parse_instant(observed_since)
    if created is None or since is None:
        return 0.0
    seconds = (now - max(created, since)).total_seconds()
    return max(0.0, seconds / 86_400.0)


def disuse_observed(window_days: float, window: float = OBSERVATION_WINDOW_DAYS) -> bool:
    """Whether an observed window of ``window_days`` is long enough for disuse to count (``window_days >= 30``);
    a negative or NaN window is not."""
    return window_days >= window


def reprieve_score(importance: float, access_count: int, outcome: float, hours: float) -> float:
    """TTL reprieve score (docs/retention.md §4.4); not bounded to [0, 1].

    ``0.4*clamp(importance, 1, 10)/10 + 0.3*ln(1 + access) + 0.2*max(0, outcome) + 0.1*exp(-0.01*hours)``, with
    ``hours`` since last access (else ``updated_at``). Negative ``access_count`` and ``hours`` read as 0.
    """
    imp = min(10.0, max(1.0, importance))
    access = max(0, access_count)
    return (
        0.4 * imp / 10
        + 0.3 * math.log1p(access)
        + 0.2 * max(0.0, outcome)
        + 0.1 * math.exp(-0.01 * max(0.0, hours))
    )


def should_reprieve(score: float, reprieves: int, max_reprieves: int = MAX_REPRIEVES) -> bool:
    """Reprieve iff ``score >= REPRIEVE_FLOOR`` and ``reprieves < max_reprieves`` (0 forces expiry)."""
    return score >= REPRIEVE_FLOOR and reprieves < max_reprieves
