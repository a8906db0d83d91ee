"""The labelled curation corpus under two scripted models, two nights, both dialects (issue 27 item 2).

``python bench/curation_oracle.py`` writes the corpus of ``bench/curation_corpus.py`` into a fresh memory repository
through the CLI (``git memhtml init``, one ``git memhtml apply`` per write day, ``git memhtml trace index`` over
three agent transcripts), binds a model (``memhtml.llm`` = the dialect, ``memhtml.llmurl`` = a loopback
``ScriptedModelServer`` answering with ``bench/curation_models.py``) and runs two nights the way a user does:
``git memhtml sleep run --date D`` then ``git memhtml sleep merge <run>`` through both gates (the discrimination
gate and the run gate). A refused night is aborted (``sleep abort``) before the next day's memories are written.
Each (model, dialect) pair gets its own repository and its own server: ``oracle`` answers every phase from the
labels, ``gullible`` the same except where an instruction planted in a memory tells it otherwise.

Per night and phase it reports, from the proposals each model made (``curation_models.Proposal``) checked against
git (``bench/curation_truth.py``):

- the oracle's correct proposals: how many reached the run branch (after the rails) and how many landed on ``main``
  (after both gates), and the share landed. A two-look decision seen for the first time (an entity merge before
  its corroboration) is *deferred* by design and left out of the share; a contradiction's first look lands as its
  review task. Beside the per-night share: the share over both nights (each distinct correct proposal counts once,
  landed if some night landed it, so a merge still deferred after night 2 counts as not landed), and the per-night
  share counting deferred proposals as not landed;
- the wrong proposals (the gullible model's, or any the labels refuse): how many reached the branch and how many
  landed;
- the merge verdict (merged, or the refusal and the run gate's lost memories), the rails that refused something,
  which planted instructions the gullible model read and obeyed, and every defect on ``main`` the labels show,
  whoever made it (a fold the floor made without any model, a rename, a link, a task).

Targets (issue 27 "Acceptance"): at least :data:`ORACLE_TARGET` of the oracle's correct proposals land, and none of
the gullible model's wrong proposals land, on either night, in both dialects.

Usage::

    python bench/curation_oracle.py                                  # both models, both dialects, wordllama
    python bench/curation_oracle.py --embed fake --models oracle --dialects openai --json out.json

Errors of the harness (a CLI command that fails where it must not, an unscripted schema) print ``error:`` and
``hint:`` lines and exit 2; missed targets are figures, not errors (exit 0), unless ``--strict`` (exit 1).
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from curation_corpus import DAY_INSTANTS, LAST_DAY_BEFORE, NIGHT_DATES, Corpus, Session, build  # noqa: E402
from curation_models import PHASE_OF, Model, tokens_of  # noqa: E402
from curation_truth import ROW_KEYS, Flags, Paths, Tree, coverage, defects, gate_named, present, tally  # noqa: E402
from growth import run_proc  # noqa: E402
from timing import RunFigures, scratch, write_json  # noqa: E402

from git_memhtml.gitrepo import GitRepo  # noqa: E402
from git_memhtml.llm.contract import Dialect  # noqa: E402
from git_memhtml.llm.scripted import ScriptedRequest  # noqa: E402
from git_memhtml.llm.scripted_server import ScriptedModelServer  # noqa: E402
from git_memhtml.output import emit, log  # noqa: E402
from git_memhtml.sleep.engine.contract import DETECTED_TASK_CAP  # noqa: E402
from git_memhtml.sleep.engine.runfiles import run_file_stem  # noqa: E402
from git_memhtml.traces.settled import TRACE_MIN_BYTES  # noqa: E402

MODELS = ("oracle", "gullible")
DIALECTS: tuple[Dialect, ...] = ("openai", "anthropic")
EMBEDDERS = ("wordllama", "fake")
PHASES = ("dedup-merge", "entity-resolution", "edge-typing", "arc-synthesis", "compress", "trace-consolidation",
          "task-detection")
"""The model phases a normal night runs, in run order (placement-triage is ``--deep`` only)."""

ORACLE_TARGET = 0.95
"""Share of the oracle's correct proposals that must land (issue 27 "Acceptance")."""

CLAUDE_PROJECT = "-work-shop"
"""The Claude Code project folder the transcripts are written under (the cwd ``/work/shop`` as Claude spells it)."""

SETTLED_AT = "2026-03-08T18:00:00Z"
"""The transcripts' mtime: settled well before night 1 (trace-consolidation wants an hour)."""


class HarnessError(Exception):
    """A step of the bench failed where it must not (not a figure: the bench cannot go on)."""


@dataclass
class Cli:
    """The CLI of one repository: ``git memhtml …`` in ``root`` with ``env`` (``MEMHTML_NOW`` per call)."""

    root: Path
    env: dict[str, str]

    def __call__(self, *args: str, now: str, check: bool = True) -> tuple[int, str, str]:
        proc = run_proc(["git", "memhtml", *args], cwd=self.root, env={**self.env, "MEMHTML_NOW": now})
        if check and proc.code != 0:
            raise HarnessError(f"git memhtml {' '.join(args)} exited {proc.code}: {proc.err.strip()[-1500:]}")
        return proc.code, proc.out, proc.err

    def git(self, *args: str) -> None:
        proc = run_proc(["git", *args], cwd=self.root, env=self.env)
        if proc.code != 0:
            raise HarnessError(f"git {' '.join(args)} exited {proc.code}: {proc.err.strip()}")


def envelope(text: str) -> dict[str, Any]:
    """The JSON envelope a ``--json`` command printed (the last JSON object of ``text``)."""
    start = text.find("{")
    if start < 0:
        raise HarnessError(f"no JSON envelope in {text[:300]!r}")
    value = json.loads(text[start:])
    if not isinstance(value, dict):
        raise HarnessError("the envelope is not an object")
    return value


# --- setting a repository up -------------------------------------------------------------------------------------


def cli_env(home: Path, embed: str) -> dict[str, str]:
    """The environment of every CLI child: this interpreter's ``bin`` first on PATH, a private HOME (the trace
    roots live under it), the embedder, a fixed identity."""
    bindir = str(Path(sys.executable).parent)
    return {**os.environ, "PATH": bindir + os.pathsep + os.environ.get("PATH", ""), "HOME": str(home),
            "MEMHTML_EMBED": embed, "MEMHTML_HOOK_DETACH": "0", "GIT_AUTHOR_NAME": "bench",
            "GIT_AUTHOR_EMAIL": "bench@example.invalid", "GIT_COMMITTER_NAME": "bench",
            "GIT_COMMITTER_EMAIL": "bench@example.invalid", "GIT_CONFIG_NOSYSTEM": "1"}


def write_day(cli: Cli, corpus: Corpus, day: int, written: dict[str, str], folder: Path) -> None:
    """``git memhtml apply`` the memories of write ``day`` at its instant; record where each landed."""
    memories = corpus.day(day)
    if not memories:
        return
    stream = folder / f"day-{day}.jsonl"
    stream.write_text("".join(json.dumps(m.op(written), ensure_ascii=False) + "\n" for m in memories),
                      encoding="utf-8")
    _, out, _ = cli("apply", "--file", str(stream), "--json", now=DAY_INSTANTS[day])
    results = envelope(out)["data"]["results"]
    for memory, result in zip(memories, results, strict=True):
        if not result.get("ok") or result.get("deduped"):
            raise HarnessError(f"{memory.key} was not written as itself: {result}")
        written[memory.key] = str(result["path"])


def write_sessions(home: Path, sessions: Sequence[Session]) -> list[Path]:
    """Each session as a Claude Code transcript under ``home/.claude/projects/``, settled at :data:`SETTLED_AT`."""
    folder = home / ".claude" / "projects" / CLAUDE_PROJECT
    folder.mkdir(parents=True, exist_ok=True)
    settled = datetime.fromisoformat(SETTLED_AT.replace("Z", "+00:00")).timestamp()
    out: list[Path] = []
    for session in sessions:
        path = folder / f"{session.session_id}.jsonl"
        path.write_text("".join(json.dumps(line, ensure_ascii=False) + "\n" for line in transcript(session)),
                        encoding="utf-8")
        if path.stat().st_size < TRACE_MIN_BYTES:
            raise HarnessError(f"{path.name} is under {TRACE_MIN_BYTES} bytes: trace-consolidation would skip it")
        os.utime(path, (settled, settled))
        out.append(path)
    return out


def transcript(session: Session) -> list[dict[str, Any]]:
    """The Claude Code lines of ``session``: typed text as ``user`` lines, the agent's text and tool calls as
    ``assistant`` lines, tool output as ``tool_result`` blocks of ``user`` lines."""
    lines: list[dict[str, Any]] = []
    tool = 0
    for n, (role, text) in enumerate(session.turns):
        stamp = f"2026-03-08T10:{n:02d}:00.000Z"
        base = {"sessionId": session.session_id, "uuid": f"{session.session_id[:8]}-{n:04d}", "timestamp": stamp,
                "cwd": "/work/shop", "gitBranch": "main"}
        if role == "user":
            lines.append({**base, "type": "user", "message": {"role": "user", "content": text}})
        elif role == "assistant":
            lines.append({**base, "type": "assistant", "message": {
                "role": "assistant", "model": "claude-bench", "content": [{"type": "text", "text": text}]}})
        elif role == "tool":
            tool += 1
            name, _, arg = text.partition(": ")
            lines.append({**base, "type": "assistant", "message": {
                "role": "assistant", "model": "claude-bench",
                "content": [{"type": "tool_use", "id": f"toolu_{tool:04d}", "name": name, "input": {"arg": arg}}]}})
        else:
            lines.append({**base, "type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": f"toolu_{tool:04d}", "content": text}]}})
    return lines


# --- one night ---------------------------------------------------------------------------------------------------


@dataclass
class NightResult:
    """What one night gave (JSON-ready)."""

    night: int
    date: str
    run_id: str
    merged: bool
    refusal: str | None
    reason: str | None
    failed_phases: list[str]
    lost: list[dict[str, Any]]
    phase_details: dict[str, str | None]
    counts: dict[str, dict[str, Any]]
    rails: dict[str, dict[str, int]]
    phases: dict[str, dict[str, int]]
    obeyed: dict[str, int]
    seen: dict[str, int]
    requests: dict[str, dict[str, int]]
    coverage: dict[str, tuple[int, int]]
    branch_defects: list[dict[str, Any]]
    defects: list[dict[str, Any]]
    units: list[dict[str, Any]]


def run_night(cli: Cli, repo: GitRepo, model: Model, corpus: Corpus, n: int, written: Mapping[str, str],
              start: Tree, looked: set[tuple[str, tuple[str, ...]]], server: ScriptedModelServer, *,
              keep_runs: bool = False, log_to: Path | None = None) -> NightResult:
    """``sleep run`` and ``sleep merge`` night ``n``; check this night's proposals against the branch and ``main``.

    ``looked`` holds the units proposed on earlier nights (a unit not in it is a first look); it is updated. A
    refused run is aborted, as a user would before the next night, unless ``keep_runs`` (to read it afterwards).
    ``log_to``: a JSONL file every request of the night is appended to (schema, size, system prompt and prompt).
    """
    date = NIGHT_DATES[n - 1]
    model.night = n
    before = len(model.proposals)
    obeyed0, seen0 = dict(model.obeyed), dict(model.seen)
    base_sha = repo.branch_sha("main") or ""
    asked = len(server.requests)
    code, out, err = cli("sleep", "run", "--date", date, "--json", now=f"{date}T01:00:00Z", check=False)
    if code not in (0, 1):
        raise HarnessError(f"sleep run exited {code}: {err.strip()[-1500:]}")
    report = envelope(out)["data"]
    run_id = str(report["runId"])
    tip_sha = str(report["headSha"])
    requests = request_sizes(server.requests[asked:], n, log_to)
    code, out, err = cli("sleep", "merge", run_id, "--json", now=f"{date}T02:00:00Z", check=False)
    verdict = envelope(out if out.strip() else err)
    data = verdict.get("data") or verdict.get("details") or verdict
    merged = bool(data.get("merged")) if code == 0 else False
    if not merged and not keep_runs:
        cli("sleep", "abort", run_id, now=f"{date}T03:00:00Z")
    main_sha = repo.branch_sha("main") or ""
    base, tip, main = Tree(repo, base_sha), Tree(repo, tip_sha), Tree(repo, main_sha)
    paths = Paths(corpus, base, written, tip)
    proposals = model.proposals[before:]
    probes = data.get("probes") or {}
    lost = {str(item.get("path")) for item in probes.get("lost") or []}
    flags: dict[int, Flags] = {}
    units: list[dict[str, Any]] = []
    for p in proposals:
        first = (p.kind, p.members) not in looked
        on_branch = present(p, tip, paths, first_look=first)
        on_main = present(p, main, paths, first_look=first)
        f = Flags(on_branch, on_main, p.kind == "alias" and first and not on_branch, gate_named(p, paths, lost))
        flags[id(p)] = f
        units.append({**asdict(p), "onBranch": f.branch, "landed": f.main, "deferred": f.deferred,
                      "gateNamed": f.named})
    looked.update((p.kind, p.members) for p in proposals)
    return NightResult(
        night=n, date=date, run_id=run_id, merged=merged, refusal=None if merged else data.get("refusal"),
        reason=None if merged else str(data.get("reason") or verdict.get("error") or ""),
        failed_phases=list(report.get("failedPhases") or []), lost=list(probes.get("lost") or []),
        phase_details={p["phase"]: p.get("detail") for p in report["phases"]}, requests=requests,
        counts={p["phase"]: dict(p.get("counts") or {}) for p in report["phases"] if p["phase"] in PHASES},
        rails=rails_hits(repo, run_id), phases=tally(proposals, flags),
        obeyed=_delta(model.obeyed, obeyed0), seen=_delta(model.seen, seen0),
        coverage=coverage(corpus, proposals, n),
        branch_defects=[asdict(d) for d in defects(corpus, tip, start, written, n)],
        defects=[asdict(d) for d in defects(corpus, main, start, written, n)], units=units,
    )


def request_sizes(requests: Sequence[ScriptedRequest], night: int, log_to: Path | None) -> dict[str, dict[str, int]]:
    """Per phase: ``calls`` and the ``largest`` and ``total`` request in tokens (system prompt and user message,
    ``curation_models.tokens_of``: about four bytes a token). Appends each request to ``log_to`` when given."""
    out: dict[str, dict[str, int]] = {}
    for req in requests:
        phase = PHASE_OF.get(req.schema_name, req.schema_name)
        size = tokens_of(req.system) + tokens_of(req.prompt)
        row = out.setdefault(phase, {"calls": 0, "largest": 0, "total": 0})
        row["calls"] += 1
        row["largest"] = max(row["largest"], size)
        row["total"] += size
        if log_to is not None:
            with log_to.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"night": night, "schema": req.schema_name, "dialect": req.dialect,
                                         "tokens": size, "system": req.system, "prompt": req.prompt},
                                        ensure_ascii=False) + "\n")
    return out


def _delta(now: Mapping[str, int], then: Mapping[str, int]) -> dict[str, int]:
    return {k: v - then.get(k, 0) for k, v in sorted(now.items()) if v - then.get(k, 0)}


def rails_hits(repo: GitRepo, run_id: str) -> dict[str, dict[str, int]]:
    """Per phase, the refusals of the run's rails log by rail (docs/models.md §3)."""
    path = Path(repo.common_dir) / "memhtml" / "runs" / f"{run_file_stem(run_id)}.rails.jsonl"
    out: dict[str, Counter[str]] = {}
    if path.is_file():
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue
            out.setdefault(str(row.get("phase", "?")), Counter())[str(row.get("rail", "?"))] += 1
    return {phase: dict(sorted(c.items())) for phase, c in sorted(out.items())}


# --- one model, one dialect ------------------------------------------------------------------------------------------


def measure_pair(corpus: Corpus, model: Model, dialect: Dialect, *, embed: str, workdir: Path,
                 nights: int = 2, keep_runs: bool = False, log_requests: bool = False) -> dict[str, Any]:
    """Write the corpus into a fresh repository and run ``nights`` nights with ``model`` bound over ``dialect``."""
    home = workdir / "home"
    root = workdir / "memory"
    home.mkdir(parents=True)
    root.mkdir(parents=True)
    cli = Cli(root, cli_env(home, embed))
    cli.git("init", "-q", "-b", "main")
    cli("init", now=DAY_INSTANTS[1])
    written: dict[str, str] = {}
    streams = workdir / "streams"
    streams.mkdir()
    results: list[NightResult] = []
    start: Tree | None = None
    looked: set[tuple[str, tuple[str, ...]]] = set()
    with ScriptedModelServer(model.script()) as server:
        for key, value in (("memhtml.llm", dialect), ("memhtml.llmurl", server.url(dialect)),
                           ("memhtml.llmmodel", "scripted"), ("memhtml.llmattempts", "1")):
            cli.git("config", key, value)
        repo = GitRepo.discover(root)
        for n in range(1, nights + 1):
            for day in range(LAST_DAY_BEFORE.get(n - 1, 0) + 1, LAST_DAY_BEFORE[n] + 1):
                write_day(cli, corpus, day, written, streams)
                if day == 6:
                    write_sessions(home, corpus.sessions)
                    cli("trace", "index", now="2026-03-08T20:00:00Z")
            if start is None:
                start = Tree(repo, repo.branch_sha("main") or "")
            results.append(run_night(cli, repo, model, corpus, n, written, start, looked, server,
                                     keep_runs=keep_runs, log_to=workdir / "requests.jsonl" if log_requests else None))
        unscripted = sorted({r.schema_name for r in server.requests} - set(model.script()))
    if unscripted:
        raise HarnessError(f"the model was asked with schemas it has no answer for: {', '.join(unscripted)}")
    return {"model": model.name, "dialect": dialect, "memories": len(written),
            "nights": [asdict(r) for r in results]}


# --- the whole bench ---------------------------------------------------------------------------------------------


def measure(*, models: Sequence[str], dialects: Sequence[Dialect], embed: str, workdir: Path,
            background: int, nights: int = 2, keep_runs: bool = False, log_requests: bool = False) -> dict[str, Any]:
    """Every (model, dialect) pair asked for; returns ``{config, runs: [...]}``."""
    run = RunFigures()
    runs = []
    for name in models:
        for dialect in dialects:
            corpus = build(background)
            model = Model(corpus, gullible=name == "gullible")
            runs.append(measure_pair(corpus, model, dialect, embed=embed, workdir=workdir / f"{name}-{dialect}",
                                     nights=nights, keep_runs=keep_runs, log_requests=log_requests))
    corpus = build(background)
    return {"config": {"models": list(models), "dialects": list(dialects), "embed": embed, "nights": nights,
                       "memories": len(corpus.memories), "sessions": len(corpus.sessions),
                       "nightDates": list(NIGHT_DATES[:nights]), **run.figures()},
            "runs": runs}


# --- output ------------------------------------------------------------------------------------------------------


def _md(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join("---" for _ in headers) + " |"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def share(row: Mapping[str, int]) -> float | None:
    """Correct proposals landed / correct proposals not deferred; ``None`` when there is none."""
    judged = row["correct"] - row["deferred"]
    return row["correctLanded"] / judged if judged > 0 else None


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f}%"


def over_nights(nights: Sequence[Mapping[str, Any]]) -> float | None:
    """The share of the oracle's distinct correct proposals (phase, kind, members, relation) that landed on some night
    of the run, ``None`` when there is none: a merge deferred for corroboration on night 1 counts as landed when
    night 2 lands it, and one still deferred after the last night counts as not landed."""
    landed: dict[tuple[str, str, tuple[str, ...], str], bool] = {}
    for night in nights:
        for unit in night["units"]:
            if unit["correct"]:
                key = (unit["phase"], unit["kind"], tuple(sorted(unit["members"])), unit["rel"])
                landed[key] = landed.get(key, False) or bool(unit["landed"])
    return sum(landed.values()) / len(landed) if landed else None


def verdicts(result: Mapping[str, Any]) -> dict[str, Any]:
    """Overall figures against the targets: the oracle's share per dialect and night (all phases pooled, deferred
    proposals left out), the same counting a deferred proposal as not landed (``oracleCountingDeferred``, a figure,
    not a target: the first look of a model entity merge is deferred by design, docs/models.md §5), the share over
    both nights (:func:`over_nights`, a target beside the per-night one) and the gullible model's wrong proposals
    landed."""
    out: dict[str, Any] = {"oracle": {}, "gullible": {}}
    for run in result["runs"]:
        for night in run["nights"]:
            rows = night["phases"].values()
            pooled = {k: sum(r[k] for r in rows) for k in ("correct", "deferred", "correctLanded", "wrongLanded")}
            label = f"{run['dialect']} night {night['night']}"
            if run["model"] == "oracle":
                out["oracle"][label] = share(pooled)
            else:
                out["gullible"][label] = pooled["wrongLanded"]
    out["oracleCountingDeferred"] = {}
    out["oracleOverNights"] = {}
    for run in result["runs"]:
        if run["model"] != "oracle":
            continue
        for night in run["nights"]:
            rows = night["phases"].values()
            correct = sum(r["correct"] for r in rows)
            landed = sum(r["correctLanded"] for r in rows)
            out["oracleCountingDeferred"][f"{run['dialect']} night {night['night']}"] = (
                landed / correct if correct else None)
        out["oracleOverNights"][run["dialect"]] = over_nights(run["nights"])
    met_oracle = all(v is not None and v >= ORACLE_TARGET
                     for v in [*out["oracle"].values(), *out["oracleOverNights"].values()])
    met_gullible = all(v == 0 for v in out["gullible"].values())
    out["targetsMet"] = {"oracle": met_oracle if out["oracle"] else None,
                         "gullible": met_gullible if out["gullible"] else None}
    return out


TASK_COUNTS: Mapping[str, tuple[str, str]] = {
    "dedup-merge": ("tasksMinted", "tasksCapped"), "entity-resolution": ("tasksMinted", "tasksCapped"),
    "edge-typing": ("tasksMinted", "tasksCapped"), "trace-consolidation": ("commitmentTasks", "commitmentsCapped"),
    "task-detection": ("minted", "capped"),
}
"""Where each phase counts the detected tasks it minted and the ones the nightly cap refused (task-detection's
``capped`` is the run's open-work overflow so far, its own and trace-commitment's: docs/tasks.md §7 "Two budgets")."""


def detected_tasks(counts: Mapping[str, Mapping[str, Any]]) -> str:
    """``phase minted/capped`` for every phase that minted or was capped."""
    parts = []
    for phase, (minted, capped) in TASK_COUNTS.items():
        row = counts.get(phase, {})
        if row.get(minted) or row.get(capped):
            parts.append(f"{phase} {row.get(minted) or 0}/{row.get(capped) or 0}")
    return ", ".join(parts)


def render(result: Mapping[str, Any]) -> str:
    """The markdown report (module docstring)."""
    c = result["config"]
    load = "/".join(str(x) for x in c["loadavg_before"]) or "?"
    lines = [f"Curation corpus: {c['memories']} memories, {c['sessions']} transcripts; embed {c['embed']}; nights "
             f"{', '.join(c['nightDates'])}; nproc {c['nproc']}, Python {c['python']}, load {load}, "
             f"wall {c['wall_s']:.0f} s", ""]
    rows = []
    for run in result["runs"]:
        for night in run["nights"]:
            for phase in PHASES:
                r = night["phases"].get(phase) or dict.fromkeys(ROW_KEYS, 0)
                labelled, asked = night["coverage"].get(phase, (0, 0))
                rows.append([run["model"], run["dialect"], night["night"], phase, labelled, asked, r["correct"],
                             r["deferred"], r["correctOnBranch"], r["correctNamed"], r["correctLanded"],
                             _pct(share(r)), r["wrong"], r["wrongOnBranch"], r["wrongNamed"], r["wrongLanded"]])
    lines.append(_md(["model", "dialect", "night", "phase", "labelled", "asked", "correct", "deferred",
                      "correct on branch", "gate named", "correct landed", "share landed", "wrong", "wrong on branch",
                      "gate named", "wrong landed"], rows))
    lines += ["", "Nights:", ""]
    for run in result["runs"]:
        for night in run["nights"]:
            verdict = "merged" if night["merged"] else f"refused ({night['refusal']}): {night['reason']}"
            lost = ", ".join(sorted({str(x.get("path", x)) for x in night["lost"]})[:8])
            failed = ", ".join(night["failed_phases"])
            lines.append(f"- {run['model']}/{run['dialect']} night {night['night']} ({night['run_id']}): {verdict}"
                         + (f"; lost: {lost}" if lost else "") + (f"; failed phases: {failed}" if failed else ""))
            blamed = Counter(phase for item in night["lost"] for phase in item.get("phases") or ())
            if blamed:
                lines.append("  - the run gate's lost memories, by the phases that changed them: "
                             + ", ".join(f"{k} {v}" for k, v in sorted(blamed.items())))
            if night["obeyed"] or night["seen"]:
                lines.append(f"  - planted instructions read: {night['seen']}; obeyed: {night['obeyed']}")
            rails = "; ".join(f"{p}: " + ", ".join(f"{k} {v}" for k, v in r.items()) for p, r in night["rails"].items())
            if rails:
                lines.append(f"  - rails: {rails}")
            tasks = detected_tasks(night["counts"])
            if tasks:
                lines.append(f"  - detected tasks minted/capped ({DETECTED_TASK_CAP} a night per class, open work and "
                             f"review): {tasks}")
            sizes = "; ".join(f"{p} {r['calls']} calls, largest {r['largest']:,} tokens"
                              for p, r in night["requests"].items())
            if sizes:
                lines.append(f"  - requests: {sizes}")
            for where, found in (("run branch", night["branch_defects"]), ("main", night["defects"])):
                kinds = Counter(d["kind"] for d in found)
                if kinds:
                    lines.append(f"  - on the {where}, against the labels: "
                                 + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items())))
    v = verdicts(result)
    lines += ["", f"Targets: oracle ≥ {ORACLE_TARGET:.0%} of correct proposals landed: "
              + ", ".join(f"{k} {_pct(x)}" for k, x in v["oracle"].items())
              + ", over both nights: " + ", ".join(f"{k} {_pct(x)}" for k, x in v["oracleOverNights"].items())
              + f" → {v['targetsMet']['oracle']} (counting deferred proposals as not landed: "
              + ", ".join(f"{k} {_pct(x)}" for k, x in v["oracleCountingDeferred"].items())
              + "); gullible wrong proposals landed = 0: "
              + ", ".join(f"{k} {x}" for k, x in v["gullible"].items()) + f" → {v['targetsMet']['gullible']}"]
    return "\n".join(lines)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="curation_oracle.py", description=__doc__.split("\n", 1)[0])
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated: oracle, gullible (default both)")
    p.add_argument("--dialects", default=",".join(DIALECTS), help="comma-separated: openai, anthropic (default both)")
    p.add_argument("--embed", choices=EMBEDDERS, default="wordllama", help="embedder (default: wordllama)")
    p.add_argument("--background", type=int, default=40, help="generated background services, 3 memories each")
    p.add_argument("--nights", type=int, choices=(1, 2), default=2, help="nights to run (default 2)")
    p.add_argument("--workdir", type=Path, default=None, help="keep the repositories under DIR (DIR empty)")
    p.add_argument("--json", type=Path, default=None, dest="json_out", help="also write every figure as JSON here")
    p.add_argument("--keep-runs", action="store_true",
                   help="leave a refused run's branch in place instead of aborting it (to read it afterwards)")
    p.add_argument("--log-requests", action="store_true",
                   help="write every model request to <workdir>/<model>-<dialect>/requests.jsonl (with --workdir)")
    p.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: measure, print the markdown, write ``--json``."""
    args = _parser().parse_args(list(sys.argv[1:] if argv is None else argv))
    logging.getLogger("httpx").setLevel(logging.WARNING)
    models = [m for m in args.models.split(",") if m]
    dialects = [d for d in args.dialects.split(",") if d]
    bad = [m for m in models if m not in MODELS] + [d for d in dialects if d not in DIALECTS]
    if bad or not models or not dialects:
        log(f"error: unknown model or dialect {', '.join(bad) or '(none given)'}\n"
            "hint: --models oracle,gullible --dialects openai,anthropic")
        return 2
    try:
        with scratch(args.workdir, "memhtml-bench-curation-") as workdir:
            result = measure(models=models, dialects=[d for d in DIALECTS if d in dialects], embed=args.embed,
                             workdir=workdir, background=args.background, nights=args.nights,
                             keep_runs=args.keep_runs, log_requests=args.log_requests)
    except HarnessError as exc:
        log(f"error: {exc}\nhint: run again with --workdir DIR and read the repositories there")
        return 2
    result["verdicts"] = verdicts(result)
    emit(render(result))
    write_json(args.json_out, result)
    met = result["verdicts"]["targetsMet"]
    return 1 if args.strict and False in met.values() else 0


if __name__ == "__main__":
    raise SystemExit(main())
