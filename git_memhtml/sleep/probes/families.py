"""The three probe families (docs/gate.md §9.1).

- **claim**: a sampled memory's claim is the query; it passes when the memory, or what the run says replaced it,
  is in the top k on the tip.
- **entity**: one probe per (entity value, memory carrying it) on the base; it passes when the memory, or its
  replacement, still carries the value on the tip, or a name the run renamed it to under an accepted rename
  (:mod:`git_memhtml.sleep.probes.pointers`).
- **control**: for each memory pair the merge veto refused to fold, each memory stays findable by its own claim and
  never through its twin. (Names the entity rule kept apart need no family of their own: every one of them is an
  entity probe, and a journaled rename between them is refused by the identity veto, docs/gate.md §9.2.)

A probe that fails on the base is ``not-found-before`` and is not counted (we measure the run, not the retriever).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from git_memhtml.index.probe_rows import ClaimCandidate
from git_memhtml.sleep.probes.pointers import RunPointers, Target
from git_memhtml.sleep.probes.ranker import Ranker
from git_memhtml.sleep.probes.verdict import Family, ProbeResult


def _why_unfound(path: str, targets: Sequence[Target], pointers: RunPointers, k: int, twin: str | None) -> str:
    vetoed = sorted((key[1], reasons) for key, reasons in pointers.vetoed_replacements.items() if key[0] == path)
    if vetoed and not targets:
        keeper, reasons = vetoed[0]
        return f"replaced by {keeper}, which does not carry it (drops its {', '.join(reasons)})"
    if not targets:
        archived = pointers.archived_at.get(path)
        if twin is not None and archived is not None and twin in pointers.keepers.get(archived, []):
            return f"folded into {twin}, the memory the merge veto kept it apart from"
        if archived is None:
            return "gone from the tip with no archive copy and no pointer"
        return f"archived to {archived}, which the tip does not index as archived"
    shown = ", ".join(f"{t.path} ({t.how})" for t in targets[:3])
    return f"its claim ranks none of {shown} in the top {k} on the tip"


def claim_result(family: Family, label: str, path: str, query: str, qvec: bytes | None, *, base: Ranker,
                 tip: Ranker, pointers: RunPointers, twin: str | None = None) -> ProbeResult:
    """The probe of one memory ``path`` by ``query`` (its claim); ``twin`` is never accepted as its replacement."""
    before = base.rank(path, query, qvec)
    if before is None:
        return ProbeResult(family, label, path, "not-found-before")
    targets = pointers.targets(path, exclude=frozenset({twin}) if twin else frozenset())
    best: tuple[Target, int] | None = None
    for target in targets:
        rank = tip.rank(target.path, query, qvec, archived=target.archived)
        if rank is None:
            continue
        if target.how == "self":
            return ProbeResult(family, label, path, "found", before, rank)
        if best is None or rank < best[1]:
            best = (target, rank)
    if best is None:
        return ProbeResult(family, label, path, "lost", before,
                           why=_why_unfound(path, targets, pointers, tip.k, twin))
    target, rank = best
    return ProbeResult(family, label, path, "explained", before, rank, via=target.path, how=target.how)


def claim_family(sample: Sequence[ClaimCandidate], vectors: Mapping[str, bytes | None], *, base: Ranker,
                 tip: Ranker, pointers: RunPointers) -> list[ProbeResult]:
    """One claim probe per sampled memory, in sample order."""
    return [claim_result("claim", c.path, c.path, c.gist, vectors.get(c.gist), base=base, tip=tip,
                         pointers=pointers) for c in sample]


def _entity_result(family: Family, shown: str, key: str, path: str, names: frozenset[str],
                   tip_keys: Mapping[str, frozenset[str]], pointers: RunPointers) -> ProbeResult:
    targets = pointers.targets(path)
    for target in targets:
        carried = tip_keys.get(target.path, frozenset())
        if target.how == "self" and key in carried:
            return ProbeResult(family, shown, path, "found")
        if carried & names:
            renamed = sorted(pointers.shown.get(k, k) for k in carried & names - {key})
            how = target.how if key in carried else f"renamed to {', '.join(renamed)}"
            return ProbeResult(family, shown, path, "explained", via=target.path, how=how)
    if not targets:
        why = "gone from the tip with no archive copy and no pointer"
    else:
        why = f"{targets[0].path} no longer carries {shown}"
        refused = pointers.refused.get(key, [])
        if refused:
            why += "; the run journals " + "; ".join(f"a rename to {r.new} that {r.why}" for r in refused[:3])
        elif key not in pointers.renames:
            why += " and the run records no rename of it"
    return ProbeResult(family, shown, path, "lost", why=why)


def entity_family(reach: Mapping[str, tuple[str, frozenset[str]]], tip_keys: Mapping[str, frozenset[str]],
                  pointers: RunPointers) -> list[ProbeResult]:
    """One probe per (entity value, memory) of the base, by key then path."""
    out: list[ProbeResult] = []
    for key in sorted(reach):
        shown, paths = reach[key]
        names = pointers.entity_names(key)
        out.extend(_entity_result("entity", shown, key, path, names, tip_keys, pointers) for path in sorted(paths))
    return out


def control_family(claims: Mapping[str, str], vectors: Mapping[str, bytes | None], *, base: Ranker, tip: Ranker,
                   pointers: RunPointers) -> list[ProbeResult]:
    """Both members of every vetoed pair, each by its own claim, never through its twin (module docstring)."""
    out: list[ProbeResult] = []
    for keep, drop in pointers.vetoed:
        for member, twin in ((keep, drop), (drop, keep)):
            claim = claims.get(member)
            label = f"{member} ⟂ {twin}"
            if not claim:
                out.append(ProbeResult("control", label, member, "not-found-before"))
                continue
            out.append(claim_result("control", label, member, claim, vectors.get(claim), base=base, tip=tip,
                                    pointers=pointers, twin=twin))
    return out
