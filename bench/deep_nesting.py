"""Deep nesting is refused before html5lib parses it (issue 8 item 7): timings before and after the bound.

```sh
python bench/deep_nesting.py  # after: deep inputs refused; bound cost on git_memhtml/resources/demo
python bench/deep_nesting.py --before 2000 20000  # also the unbounded path (html5lib + checks) at these depths
```

"after" is the real door: ``check_memory_bytes`` (``validate``, the pre-commit hook) and ``render_memory`` with
``article_html`` (``write``). "before" replays what those doors did without the pre-scan: the html5lib parse and
the format checks (validate), and the canonicalising article parse followed by the render gate's parse (write).
The normal-file cost is measured on every memory file of a real ``git memhtml demo`` run over
``git_memhtml/resources/demo``: files/s of ``check_memory_bytes`` and of the pre-scan alone.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from git_memhtml.document.bounds import MAX_DEPTH, nesting_depth  # noqa: E402
from git_memhtml.document.draft import MemoryDraft  # noqa: E402
from git_memhtml.document.hash import parse_document  # noqa: E402
from git_memhtml.document.serialize import canonical_article_html, serialize_memory  # noqa: E402
from git_memhtml.document.template import render_memory  # noqa: E402
from git_memhtml.document.validate import check_tree  # noqa: E402
from git_memhtml.document.wellformed import check_memory_bytes, parse_with_errors  # noqa: E402
from git_memhtml.errors import InvalidMemory  # noqa: E402

NOW = "2026-01-02T03:04:05Z"
CLAIM = "<p><mark>Deploys roll back in two minutes.</mark></p>"


def deep_article(kind: str, depth: int) -> str:
    """Article inner HTML nested ``depth`` levels: plain ``<div>``, or misnested ``<span><div></span>``."""
    if kind == "div":
        return CLAIM + "<div>" * depth + "x" + "</div>" * depth
    return CLAIM + "<span><div></span>" * (depth // 2) + "x"


def as_file(article: str) -> str:
    return serialize_memory(title="Deep", metas=[("type", "semantic"), ("status", "active"), ("created", NOW),
                                                 ("updated", NOW)], links=(), article_html=article)


def timed(action: Callable[[str], object], value: str) -> float:
    """Seconds ``action(value)`` takes; an :class:`InvalidMemory` refusal counts as done."""
    start = time.perf_counter()
    try:
        action(value)
    except InvalidMemory:
        pass
    return time.perf_counter() - start


def validate_text(text: str) -> object:
    """The validate door today: the bounded check of the file's bytes."""
    return check_memory_bytes(text.encode("utf-8"))


def write_article(article: str) -> object:
    """The write door today: the render gate over ``article``."""
    return render_memory(MemoryDraft(title="Deep", memory_type="semantic", article_html=article), now=NOW)


def before_validate(text: str) -> None:
    root, _ = parse_with_errors(text)
    check_tree(root)


def before_write(article: str) -> None:
    check_tree(parse_document(as_file(canonical_article_html(article))))


def demo_files() -> list[bytes]:
    """Every memory file of a real demo run (init, apply git_memhtml/resources/demo, sleep, merge)."""
    target = Path(tempfile.mkdtemp(prefix="deep-bench-")) / "demo"
    env = {**os.environ, "MEMHTML_EMBED": "fake", "MEMHTML_NOW": "2026-01-15T12:00:00Z", "PYTHONPATH": str(ROOT)}
    subprocess.run([sys.executable, "-m", "git_memhtml", "demo", str(target)], check=True, capture_output=True,
                   env=env)
    return [path.read_bytes() for bucket in ("projects", "areas", "resources", "archive")
            for path in sorted((target / bucket).rglob("*.html")) if path.name != "index.html"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=int, nargs="*", default=[], help="depths to time without the bound")
    parser.add_argument("--depth", type=int, default=20000, help="depth of the refused inputs (default 20000)")
    parser.add_argument("--repeat", type=int, default=20, help="passes over the demo files (default 20)")
    args = parser.parse_args()

    print(f"bound: MAX_DEPTH = {MAX_DEPTH}")
    print("\n| input | door | before (s) | after (s) |\n| --- | --- | --- | --- |")
    for kind in ("div", "span-div"):
        article = deep_article(kind, args.depth)
        text = as_file(article)
        after_v = timed(validate_text, text)
        after_w = timed(write_article, article)
        print(f"| {args.depth} `{kind}` | validate | – | {after_v:.4f} |")
        print(f"| {args.depth} `{kind}` | write | – | {after_w:.4f} |")
        for depth in args.before:
            small = deep_article(kind, depth)
            small_text = as_file(small)
            v = timed(before_validate, small_text)
            w = timed(before_write, small)
            av = timed(validate_text, small_text)
            aw = timed(write_article, small)
            print(f"| {depth} `{kind}` | validate | {v:.3f} | {av:.4f} |")
            print(f"| {depth} `{kind}` | write | {w:.3f} | {aw:.4f} |")

    at_bound = as_file(deep_article("div", MAX_DEPTH - 10))
    print(f"\nat the bound ({MAX_DEPTH - 10} nested divs, accepted): validate "
          f"{timed(validate_text, at_bound):.3f} s")

    files = demo_files()
    total = len(files) * args.repeat
    start = time.perf_counter()
    for _ in range(args.repeat):
        for data in files:
            check_memory_bytes(data)
    validate_s = time.perf_counter() - start
    texts = [data.decode("utf-8") for data in files]
    start = time.perf_counter()
    for _ in range(args.repeat):
        for text in texts:
            nesting_depth(text, stop_at=MAX_DEPTH + 1)
    scan_s = time.perf_counter() - start
    deepest = max(nesting_depth(text) for text in texts)
    print(f"\ngit_memhtml/resources/demo: {len(files)} memory files × {args.repeat}, deepest {deepest}")
    print(f"validate (with the bound): {total / validate_s:,.0f} files/s")
    print(f"pre-scan alone: {total / scan_s:,.0f} files/s ({100 * scan_s / validate_s:.1f}% of validate time)")


if __name__ == "__main__":
    main()
