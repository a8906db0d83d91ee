"""``git memhtml demo``: build a memory repository from the shipped demo corpus and run a full sleep cycle.

plan → run → review → merge → search, offline, no credentials: the product's main job end to end.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import click

from git_memhtml.cli.app import App, utc_now
from git_memhtml.cli.common import app_of, init_memory
from git_memhtml.cli.inputs import read_text_input
from git_memhtml.cli.model_binding import bind_model, max_llm_calls_option
from git_memhtml.cli.probe_view import probe_settings, run_probes, verdict_text
from git_memhtml.cut import clip
from git_memhtml.errors import UsageError
from git_memhtml.output import emit, table, warn
from git_memhtml.sleep.probes.verdict import Verdict

if TYPE_CHECKING:
    from git_memhtml.sleep.engine.run import ModelBinding

DEMO_CORPUS = Path(__file__).resolve().parents[1] / "resources" / "demo" / "memories.jsonl"
"""The demo corpus, shipped inside the package as package data (``git_memhtml/resources/demo``), so a wheel
install finds it too (pyproject ``[tool.setuptools.package-data]`` ``resources/**/*``)."""


DEMO_IDENTITY = (("user.name", "git-memhtml demo"), ("user.email", "demo@git-memhtml.invalid"))
"""The demo repository's local identity when the user has none (``.invalid`` never resolves; RFC 2606)."""


@click.command("demo")
@click.argument("directory", required=False, type=click.Path(path_type=Path))
@click.option("--corpus", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="JSONL apply stream to import (default: the shipped demo corpus).")
@click.option("--query", default="checkout timeout", show_default=True, help="Search run after the merge.")
@click.option("--llm", type=click.Choice(["openai", "anthropic"]), default=None,
              help="Optional model step: bind a model of this dialect to the sleep run (memhtml.llm).")
@click.option("--llm-url", default=None, metavar="URL",
              help="The model server's base URL, e.g. http://localhost:11434/v1 (memhtml.llmurl).")
@click.option("--llm-model", default=None, metavar="MODEL", help="The model id, e.g. qwen2.5 (memhtml.llmmodel).")
@max_llm_calls_option
@click.pass_context
def demo_cmd(ctx: click.Context, directory: Path | None, corpus: Path | None, query: str, llm: str | None,
             llm_url: str | None, llm_model: str | None, max_llm_calls: int | None) -> int:
    """Create a demo memory repository and run plan → sleep run → review → merge → search in it.

    With --llm (and --llm-url, --llm-model) the sleep run calls that model: the demo first makes one tiny call
    to show the model answers, then runs the same cycle with the model bound.
    """
    from git_memhtml.eval.discriminate import TempFolderGate, gate_figures
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.gitrepo.identity import IDENTITY_HINT, IdentityUnknown, require_identity
    from git_memhtml.index.retrieval import search
    from git_memhtml.sleep.engine.run import run_sleep
    from git_memhtml.sleep.landing.merge import merge_run
    from git_memhtml.sleep.presentation.plan import plan
    from git_memhtml.sleep.presentation.review import review_run
    from git_memhtml.store.ops import parse_op_stream
    from git_memhtml.store.writer import apply_batch

    if llm is None and (llm_url or llm_model or max_llm_calls is not None):
        raise UsageError("--llm-url, --llm-model and --max-llm-calls need --llm",
                         hint="add --llm openai (any OpenAI-compatible server) or --llm anthropic")
    source = corpus or DEMO_CORPUS
    if not source.is_file():
        raise UsageError(f"demo corpus {source} not found", hint="pass --corpus FILE (a JSONL apply stream)")
    corpus_text, label = read_text_input(str(source), flag="--corpus")
    ops = parse_op_stream(corpus_text, source=label)
    if directory is None:
        directory = Path(tempfile.mkdtemp(prefix="memhtml-demo-"))
    elif directory.exists() and (not directory.is_dir() or any(directory.iterdir())):
        raise UsageError(f"{directory} is {'not a folder' if not directory.is_dir() else 'not empty'}",
                         hint="give a new or empty folder, or omit it for a temp folder")
    env = app_of(ctx).env
    repo_new = GitRepo.init(directory, env=env)
    try:
        require_identity(env, repo_new.config_get)
    except IdentityUnknown:  # a throwaway repository: give it its own identity rather than refuse the demo
        for key, value in DEMO_IDENTITY:
            repo_new.config_set(key, value)
        warn(f"no git identity is set; the demo repository commits as {DEMO_IDENTITY[0][1]} "
             f"<{DEMO_IDENTITY[1][1]}> (repository-local); set yours with: {IDENTITY_HINT}")
    init = init_memory(directory, env=env)
    emit(f"1. init      {init.root}")
    flags: dict[str, object | None] = {"llm": llm, "llm_url": llm_url, "llm_model": llm_model} if llm else {}
    app = App(repo_path=directory, env=env, flags=flags)
    model = bind_model(app, max_llm_calls)  # a bad model setting is refused before anything is imported
    repo = app.repo()
    with app.index(catch_up=False) as db:
        app.reindex(db)
        result = apply_batch(repo, ops, now=utc_now(), dedupe=lambda h: None)
        if not result.ok:
            bad = next(r for r in result.results if r.code)
            raise UsageError(f"demo corpus op {bad.index}: {bad.error}", hint="fix the corpus line")
        report = app.reindex(db)
        emit(f"2. apply     {result.summary['written']} memories in one commit {str(result.commit_sha)[:12]}; "
             f"indexed {report.added} files, {report.embeddings_written} vectors ({app.settings().settings.embed})")
        verdict = plan(repo, db, at=utc_now()[:10] + "T00:00:00Z")
        emit(f"3. plan      verdict {verdict['verdict']}")
        if model.client is not None:
            emit(f"3b. model    {_model_line(model)}")
        run = run_sleep(repo, db, date=utc_now()[:10], embedder=app.embedder(), clock=utc_now, model=model)
        outcome = "failed: " + ", ".join(run.failed_phases) if run.failed_phases else f"all {len(run.phases)} phases ok"
        emit(f"4. run       {run.run_id}: {len(run.commits)} commits, {outcome}")
        for phase in run.phases:
            shown = phase.detail or " ".join(f"{k}={v}" for k, v in phase.counts.items())
            emit(f"            {phase.phase:<20} {phase.status:<7} {clip(shown, 80)}")
        review = review_run(repo, db, run.run_id)
        emit("5. review    " + ", ".join(f"{k} {v}" for k, v in review["summary"].items())
             + f"; artifacts {review['artifacts']}")
        gate = TempFolderGate()
        probed: list[Verdict] = []

        def run_gate(name: str, base: str, tip: str) -> Verdict:
            probed.append(run_probes(app, db, name, probe_settings(app), base_sha=base, tip_sha=tip).verdict)
            return probed[-1]

        merged = merge_run(repo, db, run.run_id, gate=gate, embedder=app.embedder(), clock=utc_now,
                           run_gate=run_gate)
        landing = (
            "merged: main is at " + str(merged.head_sha)[:12] if merged.merged else "refused: " + str(merged.refusal)
        )
        emit(f"6. merge     {landing}")
        if gate.report is not None:
            emit(f"            {gate_figures(gate.report)}")
        for verdict_of_run in probed:
            emit("            " + verdict_text(verdict_of_run.as_json()).replace("\n", "\n            "))
        hits = search(db, query, limit=3, embedder=app.embedder(), weights=app.weights(), now=utc_now())
        emit(f"7. search    {query!r}")
        emit(table(["#", "path", "claim"], [[i + 1, h.path, clip(h.gist, 70)] for i, h in enumerate(hits.hits)]))
    emit(f"\nthe demo repository is {directory}; try: git -C {directory} log --oneline --graph")
    return 0 if merged.merged and not run.failed_phases else 1


def _model_line(model: ModelBinding) -> str:
    """One tiny call to the bound model (``doctor --model``'s): its latency, or its error. A failure does not stop
    the demo: each batch the run cannot get answered is counted ``failedCalls`` and the run stays green."""
    from git_memhtml.doctor import check_model
    from git_memhtml.llm.client import HttpModelClient

    if not isinstance(model.client, HttpModelClient):
        return "bound"
    check = check_model(model.client)
    budget = "" if model.max_calls is None else f"; at most {model.max_calls} calls"
    if check.ok:
        return f"{check.describe}: answered in {check.latency_ms} ms{budget}"
    return f"{check.describe}: did not answer ({check.error}); the run counts its batches as failed calls{budget}"


