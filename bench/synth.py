"""Synthetic memory corpus for the index benchmarks (issue 4 "Measure").

``python bench/synth.py --size 10000`` writes ``size`` memory files made from
``git_memhtml.document.template.render_memory`` output (:func:`render`) into a new repository under
``/tmp/memhtml-bench/corpus-<size>``, commits them in one commit through ``git_memhtml.gitrepo`` and rebuilds the
index with the fake embedder
(``fake:hash@256``: deterministic, offline, the dimension of wordllama), recording the rebuild time. A corpus that
is already built is reused (delete the folder to rebuild it). Content is deterministic for a given size.

Shape: 60 % semantic, 25 % episodic, 15 % procedural; spread over ``projects/<ws>/``, ``areas/<area>/`` and
``resources/<topic>/`` sub-folders of at most 500 files; a claim of 8–14 words and one or two body sentences
drawn from a 3,000-word pseudo vocabulary (Zipf-like frequencies); 1–2 tags of 24; one entity of 400.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from multiprocessing import Pool
from pathlib import Path

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.template import render_memory
from git_memhtml.embed.fake import FakeEmbedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index import indexer
from git_memhtml.index.db import IndexDB

CACHE = Path("/tmp/memhtml-bench")
DIM = 256
NOW = "2026-01-15T12:00:00Z"
SYLLABLES = ("ka", "lo", "mi", "ne", "ra", "to", "su", "vi", "de", "po", "gu", "ze", "an", "el", "or", "um")
TYPES = ("semantic",) * 12 + ("episodic",) * 5 + ("procedural",) * 3


def vocabulary(size: int = 3000) -> list[str]:
    """``size`` distinct pseudo-words of 2–4 syllables, deterministic."""
    rng = random.Random(7)
    words: dict[str, None] = {}
    while len(words) < size:
        words["".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 4)))] = None
    return list(words)


VOCAB = vocabulary()
WEIGHTS = [1.0 / (rank + 10) for rank in range(len(VOCAB))]


def sentence(rng: random.Random, low: int, high: int) -> str:
    words = rng.choices(VOCAB, weights=WEIGHTS, k=rng.randint(low, high))
    return " ".join(words).capitalize() + "."


def memory_path(i: int) -> str:
    """Path of memory ``i``: buckets round-robin, folders of at most 500 files."""
    folder = i // 500
    bucket = ("projects/ws{:03d}", "areas/area{:03d}", "resources/topic{:03d}")[folder % 3].format(folder)
    return f"{bucket}/m{i:06d}.html"


_SKELETONS: dict[tuple[str, int], str] = {}
_HASH_META = re.compile(r'<meta name="memhtml-content-hash" content="[^"]*">\n')


def skeleton(memory_type: str, tags: int) -> str:
    """``render_memory`` output with placeholder title, claim, body, entity and ``tags`` tags, without the
    (optional) content-hash meta, which would be stale once the placeholders are replaced."""
    key = (memory_type, tags)
    if key not in _SKELETONS:
        html = render_memory(MemoryDraft(title="Phtitle", memory_type=memory_type, claim="Phclaim.", body=["Phbody."],
                             tags=[f"phtag{k}" for k in range(tags)], entities=["service:phentity"]), now=NOW)
        _SKELETONS[key] = _HASH_META.sub("", html)
    return _SKELETONS[key]


def render(i: int) -> tuple[str, str]:
    """``(path, html)`` of memory ``i`` (deterministic in ``i``): a :func:`skeleton` of ``render_memory`` with
    this memory's title, claim, body, tags and entity substituted (plain ASCII words: nothing to escape).
    ``render_memory`` itself re-validates every file (about 16 ms on a loaded 2-CPU machine: 30 min at 100k)."""
    rng = random.Random(i)
    tags = sorted({f"tag{rng.randrange(24)}" for _ in range(rng.randint(1, 2))})
    html = skeleton(rng.choice(TYPES), len(tags))
    for k, tag in enumerate(tags):
        html = html.replace(f'content="phtag{k}"', f'content="{tag}"')
    body = " ".join(sentence(rng, 6, 12) for _ in range(rng.randint(1, 2)))
    html = (html.replace("Phtitle", f"{sentence(rng, 2, 4)[:-1]} {i}").replace("Phclaim.", sentence(rng, 8, 14))
            .replace("Phbody.", body).replace("service:phentity", f"service:svc{rng.randrange(400)}"))
    return memory_path(i), html


def op(i: int) -> dict[str, object]:
    """The ``git memhtml apply`` write op of memory ``i``: the title, type, claim, body, tags, entity and path
    :func:`render` gives it (the same draws of ``random.Random(i)`` in the same order), for benches that import the
    corpus through ``apply`` instead of writing rendered files."""
    rng = random.Random(i)
    tags = sorted({f"tag{rng.randrange(24)}" for _ in range(rng.randint(1, 2))})
    memory_type = rng.choice(TYPES)
    body = " ".join(sentence(rng, 6, 12) for _ in range(rng.randint(1, 2)))
    title = f"{sentence(rng, 2, 4)[:-1]} {i}"
    claim = sentence(rng, 8, 14)
    return {"op": "write", "title": title, "type": memory_type, "claim": claim, "body": body, "tags": tags,
            "entities": [f"service:svc{rng.randrange(400)}"], "path": memory_path(i)}


def _write(args: tuple[Path, int, int]) -> list[str]:
    root, start, stop = args
    out = []
    for i in range(start, stop):
        path, html = render(i)
        target = root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")
        out.append(path)
    return out


def query(rng: random.Random) -> str:
    """A 3–4 word query drawn like the corpus text."""
    return " ".join(rng.choices(VOCAB, weights=WEIGHTS, k=rng.randint(3, 4)))


def corpus(size: int, *, log: bool = True) -> Path:
    """Return the root of the cached, committed and indexed corpus of ``size`` memories (built on first use).

    ``<root>/.git/memhtml/bench.json`` holds ``{"size", "write_s", "commit_s", "rebuild_s"}``.
    """
    root = CACHE / f"corpus-{size}"
    meta = root / ".git" / "memhtml" / "bench.json"
    if meta.is_file():
        return root
    if root.exists():
        raise SystemExit(f"error: {root} is a partial corpus\nhint: rm -rf {root} and run again")
    repo = GitRepo.init(root)
    t0 = time.perf_counter()
    step = 2000
    with Pool(2) as pool:
        paths = [p for chunk in pool.imap(_write, [(root, s, min(s + step, size)) for s in range(0, size, step)])
                 for p in chunk]
    t1 = time.perf_counter()
    repo.stage(paths)
    repo.commit(f"bench: {size} synthetic memories")
    t2 = time.perf_counter()
    with IndexDB.for_repo(repo) as db:
        report = indexer.rebuild(repo, db, FakeEmbedder(dim=DIM), now=NOW)
    t3 = time.perf_counter()
    assert report.errors == (), report.errors[:3]
    meta.write_text(json.dumps({"size": size, "write_s": t1 - t0, "commit_s": t2 - t1, "rebuild_s": t3 - t2}))
    if log:
        print(f"corpus {size}: rendered+written {t1 - t0:.1f} s, staged+committed {t2 - t1:.1f} s, "
              f"rebuilt {t3 - t2:.1f} s", file=sys.stderr)
    return root


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, required=True)
    print(corpus(parser.parse_args().size))


if __name__ == "__main__":
    main()
