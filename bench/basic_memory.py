"""git-memhtml against basic-memory 0.24.1 on the 3,435 LoCoMo turns, side by side in one run (issue 12 "Targets").

Opt-in, never in CI (pytest does not collect ``bench/``). It needs a basic-memory install, which needs Python
≥ 3.12, in a virtualenv of its own::

    ~/.pyenv/versions/3.12.1/bin/python -m venv /tmp/bm-venv && /tmp/bm-venv/bin/pip install basic-memory==0.24.1
    python bench/basic_memory.py --out bm.json          # ~10 min on the shared 2-CPU box

Both tools get the same memories: ``bench/locomo.py convert --conversation all --units turns`` (3,435 write ops).

- **git-memhtml**, through its CLI as a user would: ``git memhtml init``, then ``git memhtml apply --file`` of
  the stream with ``MEMHTML_EMBED=wordllama`` (the product default): one commit, indexed and embedded before it
  returns.
- **basic-memory**, through its CLI: one markdown note per op (``<workspace>/<title>.md``: front matter with the
  title and tags, a ``# title`` heading and the op's article as plain text, paragraph per paragraph) in an empty
  folder, then ``basic-memory project add locomo <folder>``, which indexes every note before it returns ("a local
  project is indexed before this command returns, so its notes are searchable immediately"). Its state lives
  under a fresh ``BASIC_MEMORY_CONFIG_DIR`` and ``HOME``; update checks are off.

Rows (each tool measured the same way, wall seconds of new processes, ``os.wait4`` for CPU and peak RSS):

- import + index from scratch (the ratio basic-memory / git-memhtml is the issue's target, ≥ 20×);
- one edited file searchable: one memory's text is replaced on disk by a sentence with a new word, then the
  commands a user needs until a search finds it: ``git memhtml search WORD`` (it catches the index up with the
  work tree first); ``basic-memory project index locomo`` then ``basic-memory tool search-notes WORD``;
- search through the CLI: median of ``--searches`` LoCoMo questions (conv-26's first ones);
- search in process (git-memhtml only): ``retrieval.search`` p50 / p95 over 50 questions with wordllama.

basic-memory's semantic search needs SQLite extension loading; where its Python lacks it (the pyenv 3.12.1 build
here) it logs "Semantic search disabled" and indexes keyword-only, so it embeds nothing while git-memhtml does:
the ratio is then a lower bound. The script records what basic-memory printed.
"""

from __future__ import annotations

import argparse
import html
import json
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from growth import cli_env, loadavg, pct, run_proc  # noqa: E402  (scripts beside this one)
from timing import load_script, write_json  # noqa: E402

from git_memhtml.embed.registry import get_embedder  # noqa: E402
from git_memhtml.gitrepo import GitRepo  # noqa: E402
from git_memhtml.index.db import IndexDB  # noqa: E402
from git_memhtml.index.retrieval import search  # noqa: E402

DEFAULT_BM = Path("/tmp/bm-venv/bin/basic-memory")
EDIT_WORD = "quokkaborealis"
"""The new word the edited memory carries (in neither corpus)."""
TAG = re.compile(r"<[^>]+>")
BLOCK_END = re.compile(r"</(p|aside|dl|dd|dt|li|h[1-6])>")


def article_text(article_html: str) -> str:
    """The op's article as plain text: one paragraph per block element, tags dropped, entities decoded."""
    text = BLOCK_END.sub("\n\n", article_html)
    paragraphs = [" ".join(html.unescape(TAG.sub(" ", p)).split()) for p in text.split("\n\n")]
    return "\n\n".join(p for p in paragraphs if p)


def note_name(title: str) -> str:
    """A file name for ``title`` (``Caroline, D1:3`` → ``Caroline D1-3``)."""
    return re.sub(r"[^A-Za-z0-9 _-]+", "-", title.replace(",", "")).strip() + ".md"


def write_notes(ops: list[dict[str, Any]], folder: Path) -> dict[str, Path]:
    """One markdown note per op under ``folder/<workspace>/``; returns ``{title: path}``."""
    paths: dict[str, Path] = {}
    for op in ops:
        target = folder / op["workspace"] / note_name(op["title"])
        target.parent.mkdir(parents=True, exist_ok=True)
        tags = ", ".join(op["tags"])
        target.write_text(f"---\ntitle: {json.dumps(op['title'])}\ntags: [{tags}]\n---\n\n# {op['title']}\n\n"
                          f"{article_text(op['article_html'])}\n", encoding="utf-8")
        paths[op["title"]] = target
    return paths


def proc_row(proc: Any) -> dict[str, Any]:
    return {"wall_s": round(proc.wall_s, 3), "cpu_s": round(proc.cpu_s, 3), "rss_mib": proc.rss_mib,
            "code": proc.code}


def fail(what: str, proc: Any) -> SystemExit:
    return SystemExit(f"error: {what} exited {proc.code}\n{(proc.err or proc.out).strip()[-2000:]}\n"
                      "hint: run it by hand with --workdir to keep the folders")


def memhtml_side(ops_file: Path, work: Path, questions: list[str], searches: int) -> dict[str, Any]:
    """git-memhtml's rows (see the module docstring)."""
    env = cli_env("wordllama")
    repo = work / "memhtml"
    git_memhtml = ["git", "memhtml"]
    init = run_proc([*git_memhtml, "init", str(repo)], cwd=work, env=env)
    if init.code:
        raise fail("git memhtml init", init)
    load = loadavg()
    proc = run_proc([*git_memhtml, "apply", "--file", str(ops_file), "--json"], cwd=repo, env=env)
    if proc.code:
        raise fail("git memhtml apply", proc)
    written = json.loads(proc.out)["data"]["summary"]["written"]
    out: dict[str, Any] = {"import": {**proc_row(proc), "memories": written, "load": [load, loadavg()]}}
    # one edited file searchable: the first conv-26 turn's claim replaced on disk
    target = next(repo.glob("projects/conv-26/*.html"))
    text = target.read_text(encoding="utf-8")
    edited = re.sub(r"<mark>.*?</mark>", f"<mark>The {EDIT_WORD} visited the lake on Sunday.</mark>", text, count=1)
    target.write_text(edited, encoding="utf-8")
    found = run_proc([*git_memhtml, "search", EDIT_WORD, "--json"], cwd=repo, env=env)
    hits = [h["path"] for h in json.loads(found.out)["data"]["hits"]] if found.code == 0 else []
    out["edit_searchable"] = {**proc_row(found), "found": str(target.relative_to(repo)) in hits}
    times = []
    for q in questions[:searches]:
        p = run_proc([*git_memhtml, "search", q, "--json"], cwd=repo, env=env)
        if p.code:
            raise fail("git memhtml search", p)
        times.append(p.wall_s)
    out["cli_search"] = {"median_s": round(statistics.median(times), 3), "runs": len(times)}
    out["inproc_search"] = inproc_search(repo, questions)
    return out


def inproc_search(root: Path, questions: list[str]) -> dict[str, float]:
    """p50 / p95 ms of ``retrieval.search`` (wordllama, default scope, limit 10) over ``questions`` after 5
    warm-ups, on the index ``apply`` built."""
    embedder = get_embedder("wordllama")
    questions = [questions[i % len(questions)] for i in range(55)]  # a small --data slice has fewer questions
    now = "2026-12-01T00:00:00Z"
    with IndexDB.for_repo(GitRepo.discover(root)) as db:
        for q in questions[:5]:
            search(db, q, embedder=embedder, now=now)
        times = []
        for q in questions[5:55]:
            t = time.perf_counter()
            search(db, q, embedder=embedder, now=now)
            times.append((time.perf_counter() - t) * 1000)
    return {"p50_ms": round(pct(times, 0.5), 1), "p95_ms": round(pct(times, 0.95), 1), "queries": len(times)}


def bm_env(work: Path) -> dict[str, str]:
    """basic-memory's environment: its own config dir and home (nothing of the user's), no update check."""
    home = work / "bm-home"
    home.mkdir(exist_ok=True)
    return {**os.environ, "HOME": str(home), "BASIC_MEMORY_CONFIG_DIR": str(work / "bm-config"),
            "BASIC_MEMORY_AUTO_UPDATE": "false", "COLUMNS": "120", "NO_COLOR": "1"}


def bm_side(bm: Path, ops: list[dict[str, Any]], work: Path, questions: list[str], searches: int) -> dict[str, Any]:
    """basic-memory's rows (see the module docstring)."""
    env = bm_env(work)
    notes = work / "bm-notes"
    paths = write_notes(ops, notes)
    load = loadavg()
    proc = run_proc([str(bm), "project", "add", "locomo", str(notes)], cwd=work, env=env)
    if proc.code:
        raise fail("basic-memory project add", proc)
    settled = re.search(r"(\d+) notes from (\d+) files", proc.out)
    out: dict[str, Any] = {"import": {**proc_row(proc), "memories": int(settled.group(1)) if settled else None,
                                      "load": [load, loadavg()],
                                      "semantic": "keyword-only" if "semantic search is unavailable" in proc.out
                                      else "embedded"},
                           "import_output_tail": proc.out.strip().splitlines()[-6:]}
    target = paths[next(op["title"] for op in ops if op["workspace"] == "conv-26")]
    body = target.read_text(encoding="utf-8")
    head, _, rest = body.partition("\n\n# ")
    heading, _, article = rest.partition("\n\n")
    _, _, others = article.partition("\n\n")
    target.write_text(f"{head}\n\n# {heading}\n\nThe {EDIT_WORD} visited the lake on Sunday.\n\n{others}",
                      encoding="utf-8")
    index = run_proc([str(bm), "project", "index", "locomo"], cwd=work, env=env)
    found = run_proc([str(bm), "tool", "search-notes", EDIT_WORD, "--project", "locomo", "--json"], cwd=work, env=env)
    hit = found.code == 0 and target.name.removesuffix(".md") in found.out
    out["edit_searchable"] = {"wall_s": round(index.wall_s + found.wall_s, 3), "index_s": round(index.wall_s, 3),
                              "search_s": round(found.wall_s, 3), "found": hit, "codes": [index.code, found.code]}
    times = []
    for q in questions[:searches]:
        p = run_proc([str(bm), "tool", "search-notes", q, "--project", "locomo", "--json"], cwd=work, env=env)
        if p.code:
            raise fail("basic-memory tool search-notes", p)
        times.append(p.wall_s)
    out["cli_search"] = {"median_s": round(statistics.median(times), 3), "runs": len(times)}
    return out


def render(result: dict[str, Any]) -> str:
    m, b = result["memhtml"], result["basic_memory"]

    def ratio(x: float, y: float) -> str:
        return f"{y / x:.1f}×" if x > 0 else "—"

    rows = [
        ("import + index from scratch (s)", m["import"]["wall_s"], b["import"]["wall_s"]),
        ("  its CPU (s)", m["import"]["cpu_s"], b["import"]["cpu_s"]),
        ("  its peak RSS (MiB)", m["import"]["rss_mib"], b["import"]["rss_mib"]),
        ("one edited file searchable (s)", m["edit_searchable"]["wall_s"], b["edit_searchable"]["wall_s"]),
        ("search through the CLI, median (s)", m["cli_search"]["median_s"], b["cli_search"]["median_s"]),
    ]
    lines = ["| measurement | git-memhtml | basic-memory 0.24.1 | ratio |", "| --- | ---: | ---: | ---: |"]
    lines += [f"| {name} | {x} | {y} | {ratio(x, y)} |" for name, x, y in rows]
    s = m["inproc_search"]
    lines.append(f"| search in process, p50 / p95 (ms) | {s['p50_ms']} / {s['p95_ms']} | — | — |")
    lines.append("")
    lines.append(f"memories: git-memhtml {m['import']['memories']}, basic-memory {b['import']['memories']} "
                 f"({b['import']['semantic']}); edited file found: git-memhtml {m['edit_searchable']['found']}, "
                 f"basic-memory {b['edit_searchable']['found']}; load average {result['config']['load_start']} → "
                 f"{result['config']['load_end']}, nproc {result['config']['nproc']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bm", type=Path, default=DEFAULT_BM, help=f"basic-memory executable (default {DEFAULT_BM})")
    parser.add_argument("--data", type=Path, default=None, help="LoCoMo JSON (default: bench/locomo.py's)")
    parser.add_argument("--conversation", default="all", help="sample id or all (default)")
    parser.add_argument("--searches", type=int, default=5, help="CLI searches per tool (default 5)")
    parser.add_argument("--workdir", type=Path, default=None, help="keep the folders here (must be empty)")
    parser.add_argument("--out", type=Path, default=None, help="also write the figures as JSON here")
    args = parser.parse_args(argv)
    if not args.bm.is_file():
        print(f"error: {args.bm}: no basic-memory executable\nhint: see this script's docstring for the venv",
              file=sys.stderr)
        return 2
    locomo = load_script("locomo")
    data = locomo.load_data(args.data) if args.data else locomo.load_data()
    ops = locomo.convert(data, args.conversation, "turns")
    questions = [q for q, _, _ in locomo.load_questions(data, "conv-26")]
    work = args.workdir or Path(tempfile.mkdtemp(prefix="memhtml-vs-bm-"))
    work.mkdir(parents=True, exist_ok=True)
    if any(work.iterdir()):
        print(f"error: --workdir {work} is not empty\nhint: give a new or empty folder", file=sys.stderr)
        return 2
    ops_file = work / "ops.jsonl"
    ops_file.write_text(locomo.dumps_jsonl(ops), encoding="utf-8")
    started = loadavg()
    try:
        result = {"memhtml": memhtml_side(ops_file, work, questions, args.searches),
                  "basic_memory": bm_side(args.bm, ops, work, questions, args.searches)}
    finally:
        if args.workdir is None:
            shutil.rmtree(work, ignore_errors=True)
    result["config"] = {"ops": len(ops), "nproc": os.cpu_count(), "load_start": started, "load_end": loadavg(),
                        "basic_memory": str(args.bm)}
    result["ratio_import"] = round(result["basic_memory"]["import"]["wall_s"] / result["memhtml"]["import"]["wall_s"],
                                   2)
    print(render(result))
    write_json(args.out, result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
