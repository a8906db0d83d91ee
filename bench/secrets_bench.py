"""Secret detection: false positives per detect-secrets plugin on our corpora, and scan throughput (docs/secrets.md).

``python bench/secrets_bench.py fp [--synth 2000]`` scans, line by line, with every detect-secrets 1.5 plugin
(``detect_secrets.settings.default_settings`` + ``scan_line``):

- LoCoMo: every dialogue turn, observation and session summary of ``../shared/data/locomo/locomo-dev.json``;
- the demo corpus: each write op of ``git_memhtml/resources/demo/memories.jsonl`` rendered through the apply door;
- ``bench/synth.py``'s ``render(i)`` memory files for ``i < --synth``;
- the real Claude Code transcripts of ``../shared/data/transcripts/claude-code/`` (hits there may be real);

and prints, per corpus, the lines scanned, the findings per plugin type, and what :func:`git_memhtml.secrets
.find_secrets` (the chosen plugin set) finds. Never prints a found value: only counts and kinds.

``python bench/secrets_bench.py speed [--mb 10]`` times :func:`find_secrets` on inputs of ``--mb`` MiB: ordinary
text, one 10 MiB line without a break, the quadratic shapes of two plugin patterns (``://a:a:a…`` for the basic-auth
pattern, ``//a//a…`` for the npm one), a text dense with secrets, and JSON-escaped lines; prints MiB/s each.
"""

from __future__ import annotations

import argparse
import json
import random
import string
import time
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path

from detect_secrets.core.scan import scan_line
from detect_secrets.settings import default_settings, get_plugins
from timing import load_script

from git_memhtml.document.template import render_memory
from git_memhtml.secrets import find_secrets
from git_memhtml.store.ops import WriteOp

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
LOCOMO = SHARED / "locomo" / "locomo-dev.json"
TRANSCRIPTS = SHARED / "transcripts" / "claude-code"
DEMO = ROOT / "git_memhtml" / "resources" / "demo" / "memories.jsonl"
NOW = "2026-01-15T12:00:00Z"


def locomo_texts() -> Iterator[str]:
    """Every turn, observation and session summary text of the LoCoMo dev file."""
    for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                for turn in value:
                    yield str(turn.get("text", ""))
        for group in ("observation", "session_summary", "event_summary"):
            yield json.dumps(sample.get(group, {}), ensure_ascii=False)


def demo_texts() -> Iterator[str]:
    """Each demo write op rendered as the memory file ``git memhtml demo`` writes."""
    for line in DEMO.read_text(encoding="utf-8").splitlines():
        if line.strip():
            op = json.loads(line)
            if op.get("op") == "write":
                yield render_memory(WriteOp.from_json(op).draft, now=NOW)


def synth_texts(count: int) -> Iterator[str]:
    synth = load_script("synth")
    for i in range(count):
        yield synth.render(i)[1]


def transcript_texts() -> Iterator[str]:
    for path in sorted(TRANSCRIPTS.rglob("*.jsonl")):
        yield path.read_text(encoding="utf-8", errors="surrogateescape")


def per_plugin(texts: Iterable[str]) -> tuple[int, Counter[str], Counter[str], Counter[str]]:
    """(lines, findings per detect-secrets type with every plugin on as ``scan_line`` runs them, findings of the two
    entropy plugins as a file scan runs them (quoted strings only, no eager search), findings per kind of
    find_secrets)."""
    lines = 0
    every: Counter[str] = Counter()
    quoted: Counter[str] = Counter()
    ours: Counter[str] = Counter()
    materialised = list(texts)
    with default_settings():
        entropy = [p for p in get_plugins() if p.secret_type.endswith("High Entropy String")]
        for text in materialised:
            for line in text.splitlines():
                lines += 1
                every.update(s.type for s in scan_line(line))
                for plugin in entropy:
                    quoted.update(s.type for s in plugin.analyze_line(filename="memory.html", line=line))
    for text in materialised:
        ours.update(f.kind for f in find_secrets(text))
    return lines, every, quoted, ours


def fp(synth: int) -> None:
    corpora = {
        "locomo": locomo_texts,
        "demo": demo_texts,
        "synth": lambda: synth_texts(synth),
        "transcripts": transcript_texts,
    }
    for name, source in corpora.items():
        t0 = time.perf_counter()
        lines, every, quoted, ours = per_plugin(source())
        print(f"{name}: {lines} lines ({time.perf_counter() - t0:.1f} s)")
        print("  every plugin:", dict(sorted(every.items())) or "{}")
        print("  entropy, file-scan mode:", dict(sorted(quoted.items())) or "{}")
        print("  chosen set  :", dict(sorted(ours.items())) or "{}")


def _fake(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def speed(mb: int) -> None:
    size = mb * 1024 * 1024
    rng = random.Random(7)
    words = ("the", "deploy", "of", "checkout", "ran", "at", "noon", "and", "cache", "was", "warm", "again")
    prose = " ".join(rng.choice(words) for _ in range(size // 5))[:size]
    dense_line = f'token ghp_{_fake(rng, 36)} key AKIA{_fake(rng, 16, string.ascii_uppercase)} pw="{_fake(rng, 12)}"\n'
    inputs = {
        "prose lines": "\n".join(prose[i:i + 100] for i in range(0, size, 100)),
        "one line, no break": prose.replace(" ", "x"),
        "basic-auth shape": "://" + "a:" * (size // 2),
        "npm shape": "//a/" * (size // 4),
        "npm shape with its literal": ("//a/" * 1000 + "/:_authToken=x ") * (size // 4015),
        "dense secrets": dense_line * (size // len(dense_line)),
        "private-key headers, no end": "-----BEGIN RSA PRIVATE KEY-----\n" * (size // 32),
        "json-escaped": ('{"text": "' + "line of text\\n" * 80 + '"}\n') * (size // 1100),
    }
    for name, text in inputs.items():
        t0 = time.perf_counter()
        found = find_secrets(text)
        took = time.perf_counter() - t0
        print(f"{name}: {len(text) / 2**20:.1f} MiB in {took:.2f} s = {len(text) / 2**20 / took:.2f} MiB/s, "
              f"{len(found)} findings")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="cmd", required=True)
    fp_cmd = sub.add_parser("fp")
    fp_cmd.add_argument("--synth", type=int, default=2000)
    speed_cmd = sub.add_parser("speed")
    speed_cmd.add_argument("--mb", type=int, default=10)
    args = parser.parse_args()
    if args.cmd == "fp":
        fp(args.synth)
    else:
        speed(args.mb)


if __name__ == "__main__":
    main()
