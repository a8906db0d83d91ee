"""entity-resolution, model core: centroids as evidence, one clustering call per type per shard, code decides
(docs/entities.md §6 "Model stage", docs/models.md §6).

Per entity type, each name (key) with a centroid is offered as a member: its display name, how many memories
claim it, three of their titles, the three names whose centroids are nearest (with the cosine), and for a person
the aliases a person file declares. The centroid of a name is the mean, in float64, of the first-chunk vectors of
its claimant files (sorted), L2-normalised; it is evidence shown to the model and, through the rule below, a
condition of a merge (two names' centroids must agree), never a reason for one.

The model answers ``EntityClustering``. Code then decides each cluster:

- a cluster counts only if its ``canonicalKey`` resolves and is one of its own members (``canonical-not-member``);
- the canonical is the member most memories claim, ties to the smaller name: never the model's ``canonicalKey``;
- every other member is an ``alias → canonical`` merge, judged over every cross pair of the two sets it would join
  (complete linkage) by :func:`git_memhtml.domain.entities.name_merge_refusal`, the rule the run gate reads too: refused
  whatever the model says when two names differ by a number or a variant, or by one letter inside a short token
  (``identity-veto``), or when they are neither the same letters nor one name in a shorter and a fuller form (a person's
  leading words, a service's role word) whose centroids agree (``name-evidence``: ``Dana Okafor`` = ``Priya Raman``,
  ``checkout-api`` = ``payments-api``, every night);
- a merge below the 0.7 confidence floor is deferred to a review task (``below-floor``);
- otherwise it is corroborated: one detection per corpus (``index/corroboration.py:bump_entity``); it is accepted
  only at its second detection over a changed corpus, and then an ``EntityPromoted`` mark goes to the ledger.

A pair the character rule or a person file already merged is not the model's to decide (an alias source backs
it: accepted uncorroborated, counted as an alias merge). Every refusal goes through :meth:`PhaseModel.reject`. The
centroids the rail reads are the ones the members show (:func:`git_memhtml.index.corpus.name_centroids`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from pydantic import Field

from git_memhtml.domain.entities import (
    CENTROID_AGREEMENT,
    IDENTITY_REASONS,
    PERSON,
    ROLE_SUFFIXES,
    centroid_cosine,
    name_merge_refusal,
    name_tokens,
)
from git_memhtml.index.corpus import active_corpus, corpus_digest, name_centroids
from git_memhtml.index.corroboration import bump_entity
from git_memhtml.llm.contract import AnswerSchema, ModelRequest
from git_memhtml.sleep.engine.batch import KeyedBatch, Member, pack_groups
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.sleep.engine.ledger import EntityPromoted
from git_memhtml.sleep.engine.model import PhaseModel
from git_memhtml.sleep.engine.prompts import load_prompt, stated

ENTITY_CONFIDENCE_FLOOR = 0.7
"""A cluster below this confidence merges nothing; its pairs go to review (carried over, docs/entities.md §6)."""

ENTITY_PROMOTE_DETECTIONS = 2
"""Detections, over two different corpora, before a model merge is accepted (carried over; docs/models.md §5)."""


def prompt_values() -> dict[str, str]:
    """What the entity prompt states the code decides regardless of the answer (docs/models.md §10)."""
    return {"confidence_floor": stated(ENTITY_CONFIDENCE_FLOOR),
            "promote_detections": stated(ENTITY_PROMOTE_DETECTIONS),
            "centroid_agreement": stated(CENTROID_AGREEMENT), "role_suffixes": ", ".join(ROLE_SUFFIXES)}


ENTITY_SHARD = 500
"""Names per clustering call (carried over)."""

ENTITY_SHARD_MIN = 2
"""A shard smaller than this is not sent: a merge needs two names (carried over)."""

SAMPLE_TITLES = 3
"""Titles shown per name (carried over)."""

NEAREST = 3
"""Nearest centroids shown per name (carried over)."""

ENTITY_MEMBER_CHARS = 600
"""Characters of one name's member text (carried over)."""

LABEL = "entity"
"""Block label of an entity member (docs/models.md §2)."""

REASON_BELOW_FLOOR = "below-floor"
"""The review reason of a model merge below :data:`ENTITY_CONFIDENCE_FLOOR`."""

RAIL_UNKNOWN_KEY = "unknown-key"
RAIL_CANONICAL = "canonical-not-member"
RAIL_REPEATED = "member-repeated"
RAIL_IDENTITY = "identity-veto"
RAIL_EVIDENCE = "name-evidence"
"""The rail of a merge nothing shows to be one name (:func:`git_memhtml.domain.entities.name_merge_refusal`'s
``not-one-name``, ``no-centroid``, ``centroids-disagree``); the identity veto's reasons go to :data:`RAIL_IDENTITY`."""


class EntityCluster(AnswerSchema):
    """One proposed subject: the keys of the names that denote it."""

    canonical_key: str = Field(description="key of the fullest name of the subject; must be one of memberKeys")
    member_keys: list[str] = Field(description="keys (m1, m2 ...) of every name that denotes this subject")
    confidence: float = Field(ge=0.0, le=1.0, description="how sure you are that these names are one subject")
    evidence: str = Field(description="one sentence: what in the members shows they are one subject")


class EntityClustering(AnswerSchema):
    """The answer of one clustering call; singletons or an empty list merge nothing."""

    clusters: list[EntityCluster]


@dataclass(frozen=True)
class TypeEvidence:
    """What the model stage reads of one type.

    Attributes:
        counts: file count per key. shown: display form per key. paths: claimant paths per key.
        survivors: ``{key: survivor}`` before the model (character clusters and alias pairs).
        aliases: per key, the names a person file declares as the same subject (persons only).
    """

    entity_type: str
    counts: Mapping[str, int]
    shown: Mapping[str, str]
    paths: Mapping[str, Sequence[str]]
    survivors: Mapping[str, str]
    aliases: Mapping[str, Sequence[str]] = field(default_factory=dict)


@dataclass
class TypeVerdicts:
    """What the model stage decided for one type.

    Attributes:
        accepted: ``(alias, canonical)`` keys accepted (``llmMerges``), for the phase's union-find.
        clustered: key pairs the model put in one admitted cluster (no ``character-band`` task for them).
        deferred: ``(a, b, confidence)`` pairs below the floor, ``a < b``.
        pending: merges detected but not yet corroborated (``pendingCorroboration``).
    """

    accepted: list[tuple[str, str]] = field(default_factory=list)
    clustered: set[frozenset[str]] = field(default_factory=set)
    deferred: list[tuple[str, str, float]] = field(default_factory=list)
    pending: int = 0


def nearest(key: str, centroids: Mapping[str, np.ndarray], n: int = NEAREST) -> list[tuple[str, float]]:
    """The ``n`` other keys whose centroids are nearest to ``key``'s: cosine descending, then key."""
    own = centroids[key]
    sims = [(other, float(np.dot(own, vec))) for other, vec in centroids.items() if other != key]
    return sorted(sims, key=lambda item: (-item[1], item[0]))[:n]


class _Sets:
    """Disjoint sets of keys (the model's working view of who is already one subject)."""

    def __init__(self, survivors: Mapping[str, str]) -> None:
        self.of: dict[str, set[str]] = {}
        for key, root in survivors.items():
            group = self.of.setdefault(root, {root})
            group.add(key)
            self.of[key] = group

    def get(self, key: str) -> set[str]:
        return self.of.setdefault(key, {key})

    def union(self, a: str, b: str) -> None:
        joined = self.get(a) | self.get(b)
        for key in joined:
            self.of[key] = joined


def cross_refusals(left: Iterable[str], right: Iterable[str], entity_type: str, centroids: Mapping[str, np.ndarray]
                   ) -> list[tuple[str, str, str, float | None]]:
    """``(x, y, reason, cosine)`` for every cross pair of the two sets that
    :func:`~git_memhtml.domain.entities.name_merge_refusal` refuses, in sorted order: a merge joins every name of one
    set to every name of the other, so each such pair must pass, as in the character rule's complete linkage, and no
    chain through a third name can join two names the rule keeps apart."""
    out: list[tuple[str, str, str, float | None]] = []
    for x in sorted(left):
        for y in sorted(right):
            cosine = centroid_cosine(centroids, x, y)
            reason = name_merge_refusal(x, y, entity_type, cosine)
            if reason is not None:
                out.append((x, y, reason, cosine))
    return out


_UNBOUNDED = 1 << 62
"""No character bound on a shard: :meth:`PhaseModel.fit` cuts each shard to the prompt cap."""


def name_groups(keys: Iterable[str], entity_type: str) -> list[list[str]]:
    """The names of one type as groups that one request keeps together: connected components of the pairs the rail
    could let through on their names alone (:func:`~git_memhtml.domain.entities.name_merge_refusal` with agreeing
    centroids: the same letters, or one name in a shorter and a fuller form), each sorted, in the order of their
    first key.

    Without it the names went to the model in key order and a request boundary could fall between two forms of one
    name (``notifications`` | ``notifications-worker``), so that merge was never proposed that night. Shape:
    ``[[key, ...], ...]``, every key once. Cost: pairs are only tried within one block of names whose letters begin
    with the same character (every pair the rule can pass shares it: a shorter form's first word, or its initial,
    leads the fuller one), so about n²/26 calls of the rule.
    """
    ordered = sorted(set(keys))
    parent = {key: key for key in ordered}

    def root(key: str) -> str:
        while parent[key] != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    blocks: dict[str, list[str]] = {}
    for key in ordered:
        letters = "".join(name_tokens(key))
        blocks.setdefault(letters[:1].casefold(), []).append(key)
    for block in blocks.values():
        for i, a in enumerate(block):
            for b in block[i + 1:]:
                if name_merge_refusal(a, b, entity_type, 1.0) is None:
                    ra, rb = root(a), root(b)
                    if ra != rb:
                        parent[max(ra, rb)] = min(ra, rb)
    components: dict[str, list[str]] = {}
    for key in ordered:
        components.setdefault(root(key), []).append(key)
    return sorted(components.values(), key=lambda group: group[0])


class EntityJudge:
    """The model stage of one run: prompts, titles and the corpus digest read once, then :meth:`judge` per type."""

    def __init__(self, env: PhaseEnv, model: PhaseModel) -> None:
        self.env = env
        self.model = model
        self.system = load_prompt(env.repo, "entity-resolution",  # what code decides, stated in the prompt
                                  prompt_values())
        self.corpus = corpus_digest(env.db)
        self.titles = {row.path: row.title for row in active_corpus(env.db)}

    def judge(self, evidence: TypeEvidence) -> TypeVerdicts:
        """Ask about one type's names, shard by shard, and decide every cluster (module docstring)."""
        verdicts = TypeVerdicts()
        centroids = self._centroids(evidence)
        members = [Member(key, self._text(evidence, key, centroids)) for key in sorted(centroids)]
        if len(members) < ENTITY_SHARD_MIN:
            return verdicts
        instruction = load_prompt(self.env.repo, "entity-resolution.task",
                                  {**prompt_values(), "entity_type": evidence.entity_type})
        sets = _Sets(evidence.survivors)
        preamble = f"Entity type: {evidence.entity_type}"

        def render(batch: KeyedBatch) -> ModelRequest[EntityClustering]:
            return ModelRequest(EntityClustering, system=self.system, prompt=batch.prompt(instruction,
                                                                                           preamble=preamble))

        by_key = {m.ref: m for m in members}
        groups = [[by_key[key] for key in group] for group in name_groups(by_key, evidence.entity_type)]
        for shard in pack_groups(groups, ENTITY_SHARD, _UNBOUNDED, lambda _m: 0):
            if sum(len(group) for group in shard) < ENTITY_SHARD_MIN:
                continue
            fitted = self.model.fit(shard, render, label=LABEL, member_chars=ENTITY_MEMBER_CHARS)
            for batch, request in fitted:
                if len(batch.members) < ENTITY_SHARD_MIN:
                    continue  # one name left alone by the split: nothing to merge it with in this call
                answer = self.model.call(request)
                if answer is None:
                    continue
                used: set[str] = set()
                for cluster in answer.clusters:
                    self._decide(evidence, batch, cluster, used, sets, verdicts, centroids)
        return verdicts

    def _centroids(self, evidence: TypeEvidence) -> dict[str, np.ndarray]:
        """``{key: centroid}`` of the type's names that have one; none without an embedder."""
        embedder = self.env.embedder
        if embedder is None:
            return {}
        claimants = {key: evidence.paths.get(key, ()) for key in evidence.counts}
        return name_centroids(self.env.db, claimants, embedder.space)

    def _text(self, evidence: TypeEvidence, key: str, centroids: Mapping[str, np.ndarray]) -> str:
        shown = evidence.shown
        lines = [f"name: {shown.get(key, key)}", f"memories: {evidence.counts[key]}", "titles:"]
        titles = [t for t in (self.titles.get(p, "").strip() for p in sorted(set(evidence.paths.get(key, ())))) if t]
        lines += [f"- {t}" for t in titles[:SAMPLE_TITLES]]
        lines.append("nearest by memory centroid:")
        lines += [f"- {shown.get(other, other)} ({sim:.2f})" for other, sim in nearest(key, centroids)]
        if evidence.entity_type == PERSON:
            lines.append("declared aliases:")
            lines += [f"- {alias}" for alias in evidence.aliases.get(key, ())]
        return "\n".join(lines)

    def _decide(self, evidence: TypeEvidence, batch: KeyedBatch, cluster: EntityCluster, used: set[str],
                sets: _Sets, verdicts: TypeVerdicts, centroids: Mapping[str, np.ndarray]) -> None:
        members, unknown = batch.resolve(cluster.member_keys)
        for key in unknown:
            self.model.reject(RAIL_UNKNOWN_KEY, {"key": key, "cluster": list(cluster.member_keys)})
        canonical_member = batch.member(cluster.canonical_key)
        if canonical_member is None or canonical_member not in members:
            self.model.reject(RAIL_CANONICAL, {"canonicalKey": cluster.canonical_key,
                                               "cluster": list(cluster.member_keys)})
            return
        names: list[str] = []
        for member in members:
            if member.ref in used:
                self.model.reject(RAIL_REPEATED, {"key": batch.key_of(member.ref),
                                                  "cluster": list(cluster.member_keys)})
                continue
            names.append(member.ref)
        if len(names) < 2:
            return
        used.update(names)
        counts = evidence.counts
        canonical = min(names, key=lambda k: (-counts.get(k, 0), k))
        for alias in sorted(n for n in names if n != canonical):
            self._merge(evidence, alias, canonical, cluster, sets, verdicts, centroids)

    def _merge(self, evidence: TypeEvidence, alias: str, canonical: str, cluster: EntityCluster, sets: _Sets,
               verdicts: TypeVerdicts, centroids: Mapping[str, np.ndarray]) -> None:
        etype = evidence.entity_type
        if evidence.survivors.get(alias, alias) == evidence.survivors.get(canonical, canonical):
            verdicts.clustered.add(frozenset((alias, canonical)))
            return  # the character rule or a person file already merged them
        refused = cross_refusals(sets.get(alias), sets.get(canonical), etype, centroids)
        if refused:
            identity = [r for r in refused if r[2] in IDENTITY_REASONS]
            x, y, reason, cosine = (identity or refused)[0]
            payload: dict[str, object] = {"type": etype, "alias": alias, "canonical": canonical, "reason": reason}
            if (x, y) != (alias, canonical):
                payload["pair"] = [x, y]
            if cosine is not None:
                payload["cosine"] = round(cosine, 4)
            self.model.reject(RAIL_IDENTITY if identity else RAIL_EVIDENCE, payload)
            return
        verdicts.clustered.add(frozenset((alias, canonical)))
        if cluster.confidence < ENTITY_CONFIDENCE_FLOOR:
            a, b = sorted((alias, canonical))
            verdicts.deferred.append((a, b, cluster.confidence))
            return
        seen = bump_entity(self.env.db, etype, alias, canonical, corpus=self.corpus, now=self.env.at)
        if seen.detections < ENTITY_PROMOTE_DETECTIONS and not seen.promoted:
            verdicts.pending += 1
            return
        verdicts.accepted.append((alias, canonical))
        sets.union(alias, canonical)
        if not seen.promoted:
            self.env.services.ledger.append(EntityPromoted(etype, alias, canonical))
