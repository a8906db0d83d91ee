"""Vocabulary tables of the fixture corpus (docs/gate.md §8.1).

The tables are ours (the spec fixes only their shape): 12 topics, each a service with a workspace string, a
variant anchor, nouns and verbs; 23 digit-free scope words; the 9 memory types of the corpus; 4 people; per-type
claim templates. Every word here is free of digits, of the merge veto's negation markers and of its variant
qualifiers (``git_memhtml.domain.merge``), so a transform of the claim is the only thing that can make a control
diverge from its target; ``tests/eval`` enforces this.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Topic:
    """One service of the corpus.

    Attributes:
        workspace: the service slug; it is also the project, area and resource directory name, so the topic of a
            file is the one whose workspace is a directory segment of its path (docs/gate.md §8.2).
        anchor: the variant anchor phrase the variant control qualifies.
        nouns: nouns; memory ``i`` uses ``nouns[(i // 108) % len(nouns)]`` (docs/gate.md §8.1).
        verbs: ``(base, past)`` verb forms.
    """

    workspace: str
    anchor: str
    nouns: tuple[str, ...]
    verbs: tuple[tuple[str, str], ...]


TOPICS: tuple[Topic, ...] = (
    Topic("checkout-api", "target group", ("ledger", "basket", "receipt"),
          (("drain", "drained"), ("rotate", "rotated"), ("warm", "warmed"))),
    Topic("metrics-agent", "scrape pool", ("collector", "exporter", "sampler"),
          (("restart", "restarted"), ("throttle", "throttled"), ("tune", "tuned"))),
    Topic("payments-gateway", "retry queue", ("settlement", "acquirer", "refund"),
          (("replay", "replayed"), ("batch", "batched"), ("route", "routed"))),
    Topic("auth-service", "token bucket", ("session", "keyring", "issuer"),
          (("renew", "renewed"), ("seal", "sealed"), ("scope", "scoped"))),
    Topic("search-index", "shard", ("segment", "analyzer", "replica"),
          (("compact", "compacted"), ("reindex", "reindexed"), ("merge", "merged"))),
    Topic("batch-loader", "staging bucket", ("manifest", "partition", "loader"),
          (("upload", "uploaded"), ("split", "split"), ("stage", "staged"))),
    Topic("notification-worker", "delivery lane", ("digest", "template", "channel"),
          (("send", "sent"), ("queue", "queued"), ("render", "rendered"))),
    Topic("schema-migrator", "migration lock", ("changelog", "column", "backfill"),
          (("apply", "applied"), ("verify", "verified"), ("squash", "squashed"))),
    Topic("cdn-edge", "origin shield", ("cache", "certificate", "route"),
          (("purge", "purged"), ("pin", "pinned"), ("prefetch", "prefetched"))),
    Topic("feature-flags", "rollout cohort", ("toggle", "override", "audience"),
          (("enable", "enabled"), ("ramp", "ramped"), ("audit", "audited"))),
    Topic("cost-explorer", "budget view", ("forecast", "report", "tagset"),
          (("refresh", "refreshed"), ("export", "exported"), ("allocate", "allocated"))),
    Topic("incident-review", "paging rotation", ("timeline", "runbook", "postmortem"),
          (("publish", "published"), ("escalate", "escalated"), ("triage", "triaged"))),
)
"""The 12 topics (docs/gate.md §8.1); topic of memory ``i`` is ``TOPICS[i % 12]``."""

SCOPES: tuple[str, ...] = (
    "regional", "nightly", "staging", "canary", "tenant", "weekend", "quarterly", "shared", "internal",
    "partner", "mobile", "desktop", "overnight", "seasonal", "primary", "secondary", "coastal", "northern",
    "southern", "eastern", "western", "bulk", "hourly",
)
"""The 23 digit-free scope words (docs/gate.md §8.1); memory ``i`` uses ``SCOPES[i % 23]``."""

CORPUS_TYPES: tuple[str, ...] = (
    "episodic", "semantic", "procedural", "agent_insight", "user_preference", "error_pattern", "verdict",
    "precedent", "arc",
)
"""The 9 types of the corpus (docs/gate.md §8.1); memory ``i`` has type ``CORPUS_TYPES[i % 9]``."""

PEOPLE: tuple[str, ...] = ("sanju", "imani", "dara", "wren")
"""The 4 people; each gets ``resources/people/<name>.html`` (docs/gate.md §8.1, docs/layout.md §2.5)."""

CLAIM_TEMPLATES: dict[str, str] = {
    "episodic": "During the {scope} window the {service} {noun} was {past} after {n} retries.",
    "semantic": "The {service} {noun} is {past} through the {scope} {anchor}.",
    "procedural": "Operators should {verb} the {service} {noun} on the {anchor} in {n} {scope} batches.",
    "agent_insight": "The {service} {noun} runs smoother when the {scope} {anchor} holds {n} workers.",
    "user_preference": "The user prefers {n} {scope} summaries about the {service} {noun}.",
    "error_pattern": "The {service} {noun} stalls when {n} {scope} jobs {verb} at once.",
    "verdict": "The {scope} review found the {service} {noun} can {verb} {n} requests per second.",
    "precedent": "Last time the {service} {noun} was {past}, the {scope} {anchor} took {n} hours.",
    "arc": "The {service} {noun} story spans {n} {scope} milestones.",
}
"""Per-type claim templates (docs/gate.md §8.1). Semantic claims carry no number, so they get no numeric control;
some templates carry no negation anchor and no variant anchor, so the fallbacks of docs/gate.md §8.2 are exercised
too."""

STOPWORDS: frozenset[str] = frozenset(
    [
        "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "from", "has", "have", "he", "her", "his", "i",
        "if", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or", "our", "she", "so", "than", "that", "the",
        "their", "them", "then", "there", "these", "they", "this", "those", "to", "up", "was", "we", "were", "what",
        "when", "where", "which", "who", "will", "with", "you", "your",
    ]
)
"""English stop words removed from a probe query (docs/gate.md §8.2)."""

NEGATION_ANCHORS: tuple[str, ...] = (
    " should ", " must ", " will ", " does ", " were ", " was ", " are ", " can ", " is ", " do ",
)
"""Negation insertion anchors, searched in this order; ``not `` goes after the first one found (docs/gate.md §8.2)."""

CONTROL_QUALIFIERS: tuple[str, ...] = ("pro", "beta", "legacy", "experimental", "preview")
"""The variant control's qualifier, picked by the target path's char-code sum mod 5 (docs/gate.md §8.2)."""
