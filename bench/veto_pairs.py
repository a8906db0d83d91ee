"""What the merge veto refuses on real memory: same-speaker LoCoMo observation pairs above a cosine floor.

For each LoCoMo observation imported in one of ``bench/locomo.py``'s two shapes (``agent``: title = the claim, one
``person:`` entity, the event day after the claim; ``converter``: the project's converter with its per-observation
boilerplate), the article text is embedded (what the index's first chunk holds, so what dedup-merge's floor mines),
and every pair of one conversation and one speaker whose cosine is strictly above ``--floor`` is read by the merge
veto (``domain.merge.veto_reasons``, over the two claims; the subject predicate is left out, since both sides name
one speaker). Pairs across speakers are left out: the subject predicate refuses them all.

It prints the pairs, how many the veto refuses per predicate, and, with ``--baseline DIR`` (a checkout of an older
``git_memhtml``), the pairs the current veto refuses that the baseline's admitted, each with its two claims: the
cost of a new predicate on real memory, where refusing two tellings of one fact is a loss (docs/veto.md §3 "When").

Usage::

    python bench/veto_pairs.py                                   # agent shape, floor 0.92, wordllama
    python bench/veto_pairs.py --shape converter --floor 0.85 --baseline /tmp/old-checkout
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import re
import sys
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import locomo  # noqa: E402

from git_memhtml.domain.merge import NEAR_DUPLICATE_THRESHOLD, veto_reasons  # noqa: E402
from git_memhtml.embed.registry import get_embedder  # noqa: E402

_TAG = re.compile(r"<[^>]+>")
_MARK = re.compile(r"<mark>(.*?)</mark>", re.S)

Row = tuple[str, str, str, str]
"""(sample id, speaker entity, claim, article text)."""


def rows(data: Sequence[dict[str, object]], shape: str) -> list[Row]:
    """One row per observation op of every conversation, in the given import shape."""
    out: list[Row] = []
    for item in data:
        ops = locomo.agent_observation_ops(item) if shape == "agent" else locomo.observation_ops(item)
        for op in ops:
            article = str(op["article_html"])
            mark = _MARK.search(article)
            claim = html.unescape(mark.group(1)) if mark else str(op["title"])
            text = html.unescape(" ".join(_TAG.sub(" ", article).split()))
            out.append((str(item["sample_id"]), str(op["entities"][0]), claim, text))
    return out


def pairs_above(found: Sequence[Row], floor: float, embed: str) -> list[tuple[int, int, float]]:
    """Same-conversation, same-speaker pairs ``(i, j, cosine)`` with cosine strictly above ``floor``."""
    embedder = get_embedder(embed)
    if embedder is None:
        raise SystemExit("error: an embedder is needed (--embed wordllama or fake)")
    vectors = np.asarray(embedder.embed([r[3] for r in found]), dtype=np.float32)
    vectors /= np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
    sims = vectors @ vectors.T
    out: list[tuple[int, int, float]] = []
    for i in range(len(found)):
        for j in range(i + 1, len(found)):
            if found[i][:2] == found[j][:2] and sims[i, j] > floor:
                out.append((i, j, float(sims[i, j])))
    return out


def _baseline(checkout: Path) -> Callable[[str, str], tuple[str, ...]]:
    path = checkout / "git_memhtml" / "domain" / "merge.py"
    spec = importlib.util.spec_from_file_location("baseline_merge", path)
    if spec is None or spec.loader is None:
        raise SystemExit(f"error: no merge veto at {path}")
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    reasons: Callable[[str, str], tuple[str, ...]] = module.veto_reasons
    return reasons


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="veto_pairs.py", description=__doc__.split("\n", 1)[0])
    p.add_argument("--shape", choices=("agent", "converter"), default="agent")
    p.add_argument("--floor", type=float, default=NEAR_DUPLICATE_THRESHOLD, help="cosine to exceed (default 0.92)")
    p.add_argument("--embed", default="wordllama", help="embedder (default wordllama)")
    p.add_argument("--data", type=Path, default=locomo.DEFAULT_DATA)
    p.add_argument("--baseline", type=Path, default=None, help="a checkout whose veto to compare against")
    args = p.parse_args(argv)
    found = rows(locomo.load_data(args.data), args.shape)
    pairs = pairs_above(found, args.floor, args.embed)
    old = _baseline(args.baseline) if args.baseline else None
    now, before = Counter[str](), Counter[str]()
    newly: list[tuple[float, str, tuple[str, ...], str, str]] = []
    for i, j, sim in pairs:
        a, b = found[i][2], found[j][2]
        fired = veto_reasons(a, b)
        now.update(fired or ("admitted",))
        if old is not None:
            was = old(a, b)
            before.update(was or ("admitted",))
            if fired and not was:
                newly.append((sim, found[i][0], fired, a, b))
    print(f"{len(found)} observations ({args.shape} shape), {len(pairs)} same-speaker pairs above {args.floor} "
          f"({args.embed})")
    print("veto now: " + ", ".join(f"{k} {v}" for k, v in sorted(now.items())))
    if old is not None:
        print("baseline: " + ", ".join(f"{k} {v}" for k, v in sorted(before.items())))
        print(f"refused now, admitted by the baseline: {len(newly)}")
        for sim, sample, fired, a, b in sorted(newly, reverse=True):
            print(f"  {sim:.3f} {sample} {','.join(fired)}\n    {a}\n    {b}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
