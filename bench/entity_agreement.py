"""Centroid agreement of one person's two names against two people's, on the six LoCoMo dev conversations: the source
of ``domain.entities.CENTROID_AGREEMENT`` (issue 27 item 3; docs/entities.md §6 "Model stage").

Per conversation, its observations are written the way an agent writes memories (the title is the claim, one
``person:<speaker>`` subject, the event time, nothing else) by ``apply_batch`` into a new repository at ``--now``
and indexed with ``--embed``. Each speaker's memories are then the claimants of one name, and a *name's centroid* is
what entity-resolution and the run gate compute (``index.corpus.name_centroids``: the float64 mean of the claimants'
first-chunk vectors, L2-normalised).

For each size ``a+b`` (claimants of the shorter name + of the fuller one), ``--samples`` seeded draws of:

- **one person**: ``a + b`` different memories of one speaker, split into two names (a person written as
  ``Caroline`` in some memories and ``Caroline M.`` in others);
- **same conversation**: ``a`` memories of one speaker and ``b`` of the other (two people talking about one life);
- **other conversation**: ``a`` of one speaker and ``b`` of a speaker of another conversation (unrelated people).

Printed per size: the cosine quantiles (p1, p5, p50, p95) of each kind, the share of one-person splits whose cosine
reaches ``--threshold`` (a true merge the check lets through) and the share of two-people draws below it (a false
merge the check refuses), and, per speaker, the cosine of the first half of their memories against the second half
beside their cosine to the other speaker.

Usage::

    python bench/entity_agreement.py                       # six conversations, wordllama, 400 draws per size
    python bench/entity_agreement.py --embed fake --samples 200 --json out.json

Exit 2 on a bad argument or absent data.
"""

from __future__ import annotations

import argparse
import random
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from git_memhtml.domain.entities import CENTROID_AGREEMENT, centroid
from git_memhtml.errors import MemhtmlError
from git_memhtml.index.corpus import first_chunk_vector_map
from git_memhtml.output import emit, log

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import timing  # noqa: E402  (a script beside this one)

DEFAULT_NOW = "2026-11-30T09:00:00Z"
"""The import instant, as ``import_sleep.py``."""
SIZES: tuple[tuple[int, int], ...] = ((1, 1), (1, 3), (2, 2), (3, 3), (3, 10), (5, 5), (10, 10), (20, 20))
"""Claimants of the two names per draw: a short name used once or a few times, up to two well-used names."""
EMBED_CHOICES = ("wordllama", "fake")
KINDS = ("one person", "same conversation", "other conversation")

Vectors = list[np.ndarray]


def speaker_vectors(locomo: Any, item: Mapping[str, Any], *, embed: str, root: Path, now: str) -> dict[str, Vectors]:
    """``{speaker: first-chunk vectors of their memories, in path order}`` of one imported conversation."""
    sid = str(item["sample_id"])
    stream = locomo.dumps_jsonl(locomo.agent_observation_ops(item))
    with timing.imported_memory(root, stream, sample_id=sid, embed=embed, now=now) as imported:
        rows = imported.db.query("SELECT entity_name, path FROM file_entities WHERE entity_type = 'person' "
                                 "ORDER BY path")
        space = imported.embedder.space if imported.embedder is not None else ""
        vectors = first_chunk_vector_map(imported.db, [str(p) for _, p in rows], space)
        out: dict[str, Vectors] = {}
        for name, path in rows:
            if str(path) in vectors:
                out.setdefault(str(name), []).append(vectors[str(path)])
        return out


def cosine(a: Sequence[np.ndarray], b: Sequence[np.ndarray]) -> float:
    """The cosine of the centroids of ``a`` and ``b`` (as ``name_centroids`` computes them)."""
    ca, cb = centroid(a), centroid(b)
    return 0.0 if ca is None or cb is None else float(np.dot(ca, cb))


def draws(people: Mapping[tuple[str, str], Vectors], size: tuple[int, int], samples: int,
          rng: random.Random) -> dict[str, list[float]]:
    """``samples`` cosines of each kind at ``size`` (module docstring)."""
    a, b = size
    keys = sorted(people)
    out: dict[str, list[float]] = {kind: [] for kind in KINDS}
    for _ in range(samples):
        key = rng.choice(keys)
        own = people[key]
        picked = rng.sample(range(len(own)), a + b)
        out["one person"].append(cosine([own[i] for i in picked[:a]], [own[i] for i in picked[a:]]))
        partner = next(k for k in keys if k[0] == key[0] and k != key)
        out["same conversation"].append(cosine(rng.sample(own, a), rng.sample(people[partner], b)))
        stranger = rng.choice([k for k in keys if k[0] != key[0]])
        out["other conversation"].append(cosine(rng.sample(own, a), rng.sample(people[stranger], b)))
    return out


def size_row(size: tuple[int, int], cosines: Mapping[str, list[float]], threshold: float) -> dict[str, Any]:
    """The figures of one size: quantiles per kind, and the shares at ``threshold``."""
    row: dict[str, Any] = {"size": f"{size[0]}+{size[1]}"}
    for kind in KINDS:
        values = cosines[kind]
        row[kind] = {f"p{q}": round(timing.pct(values, q / 100), 3) for q in (1, 5, 50, 95)}
    one = cosines["one person"]
    row["onePersonPasses"] = round(sum(1 for v in one if v >= threshold) / len(one), 3)
    for kind in KINDS[1:]:
        values = cosines[kind]
        row[f"{kind} refused"] = round(sum(1 for v in values if v < threshold) / len(values), 3)
    return row


def halves(people: Mapping[tuple[str, str], Vectors]) -> list[dict[str, Any]]:
    """Per speaker: first half of their memories against the second half, and all of them against the partner."""
    out = []
    for key in sorted(people):
        own = people[key]
        partner = next(k for k in sorted(people) if k[0] == key[0] and k != key)
        half = len(own) // 2
        out.append({"conversation": key[0], "speaker": key[1], "memories": len(own),
                    "halves": round(cosine(own[:half], own[half:]), 3),
                    "partner": round(cosine(own, people[partner]), 3)})
    return out


def table(rows: Sequence[Mapping[str, Any]], threshold: float) -> str:
    quant = " / ".join(f"p{q}" for q in (1, 5, 50, 95))
    head = (f"| a+b | one person {quant} | same conversation {quant} | other conversation {quant} | "
            f"one person ≥ {threshold:.2f} | same conv. < {threshold:.2f} | other conv. < {threshold:.2f} |")
    out = [head, "|" + "---|" * 7]
    for r in rows:
        cells = [r["size"], *(" / ".join(f"{v:.2f}" for v in r[k].values()) for k in KINDS),
                 f"{r['onePersonPasses']:.1%}", f"{r['same conversation refused']:.1%}",
                 f"{r['other conversation refused']:.1%}"]
        out.append("| " + " | ".join(str(c) for c in cells) + " |")
    return "\n".join(out)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the bench; print the tables (and ``--json`` the figures)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="all")
    parser.add_argument("--embed", default="wordllama", choices=EMBED_CHOICES)
    parser.add_argument("--samples", type=int, default=400)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--threshold", type=float, default=CENTROID_AGREEMENT)
    parser.add_argument("--now", default=DEFAULT_NOW)
    parser.add_argument("--data", type=Path, default=None)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.samples < 1:
        parser.error("--samples must be at least 1")
    locomo = timing.load_script("locomo")
    try:
        data = locomo.load_data(args.data or locomo.DEFAULT_DATA)
        ids = timing.conversation_ids(locomo, data, args.conversation)
        if len(ids) < 2:
            parser.error("the other-conversation draws need at least two conversations: use --conversation all")
        people: dict[tuple[str, str], Vectors] = {}
        with timing.scratch(args.workdir, "entity-agreement-") as work:
            for sid in ids:
                log(sid)
                item = locomo.find_conversation(data, sid)
                for speaker, vectors in speaker_vectors(locomo, item, embed=args.embed, root=work / sid / "memory",
                                                        now=args.now).items():
                    people[(sid, speaker)] = vectors
    except MemhtmlError as exc:
        print(timing.failure(exc), file=sys.stderr)
        return 2
    rng = random.Random(args.seed)
    rows = [size_row(size, draws(people, size, args.samples, rng), args.threshold) for size in SIZES]
    split = halves(people)
    emit(table(rows, args.threshold))
    emit("")
    emit("| conversation | speaker | memories | first half vs second half | vs the other speaker |")
    emit("|---|---|---|---|---|")
    for s in split:
        emit(f"| {s['conversation']} | {s['speaker']} | {s['memories']} | {s['halves']:.3f} | {s['partner']:.3f} |")
    config = {"conversations": ids, "embed": args.embed, "samples": args.samples, "seed": args.seed,
              "threshold": args.threshold, "now": args.now}
    timing.write_json(args.json, {"config": config, "sizes": rows, "halves": split})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
