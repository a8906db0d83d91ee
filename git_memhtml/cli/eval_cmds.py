"""``git memhtml eval discriminate``: the discrimination gate on its own seeded fixture corpus."""

from __future__ import annotations

import tempfile
from pathlib import Path

import click

from git_memhtml.cli.common import app_of, json_option, respond
from git_memhtml.cli.probe_view import probe_settings, run_probes, verdict_text
from git_memhtml.eval.defaults import DEFAULT_PROBES, DEFAULT_SEED, DEFAULT_SIZE, MRR_FLOOR
from git_memhtml.output import table
from git_memhtml.sleep.probes.defaults import DEFAULT_K, DEFAULT_SAMPLE


@click.group("eval")
def eval_group() -> None:
    """Measure retrieval quality."""


@eval_group.command("discriminate")
@click.option("--seed", type=int, default=DEFAULT_SEED, show_default=True, help="Fixture corpus seed.")
@click.option("--size", type=click.IntRange(24, 5000), default=DEFAULT_SIZE, show_default=True, help="Base memories.")
@click.option("--probes", type=click.IntRange(1, 500), default=DEFAULT_PROBES, show_default=True)
@click.option("--mrr-floor", type=click.FloatRange(0, 1), default=MRR_FLOOR, show_default=True)
@json_option
def discriminate_cmd(seed: int, size: int, probes: int, mrr_floor: float, as_json: bool) -> int:
    """Does every probe rank its target above its wrong twins? Never opens your store; exits 1 when it fails."""
    from git_memhtml.eval.discriminate import run_discrimination

    with tempfile.TemporaryDirectory(prefix="memhtml-eval-") as folder:
        report = run_discrimination(workdir=Path(folder), seed=seed, size=size, probes=probes, mrr_floor=mrr_floor)

    def human() -> str:
        lines = [
            f"{'passed' if report.passed else 'FAILED'}: {len(report.probes)} probes, {report.inversions} inversions, "
            f"mrr {report.mrr:.4f} (floor {report.mrr_floor}), corpus mrr {report.corpus_mrr:.4f}, seed {report.seed}"
        ]
        if report.inverted:
            lines.append(table(["target", "rank", "controls"], [
                [p.target_path, p.target_rank, ", ".join(f"{k}={v}" for k, v in p.control_ranks)]
                for p in report.inverted
            ]))
        return "\n".join(lines)

    respond(as_json, "eval.discrimination", report.to_dict(), human)
    return 0 if report.passed else 1


@eval_group.command("run")
@click.argument("run_id")
@click.option("--probes", "sample_size", type=click.IntRange(1, 100_000), default=DEFAULT_SAMPLE, show_default=True,
              help="Claim probes sampled from the run's base (seeded by the run id).")
@click.option("--k", type=click.IntRange(1, 1000), default=DEFAULT_K, show_default=True,
              help="A probe passes when its memory is in the top k.")
@click.option("--max-lost", type=click.IntRange(0, 1_000_000), default=None,
              help="Unexplained losses tolerated [default: git config memhtml.gatemaxlost, else 0].")
@json_option
@click.pass_context
def run_cmd(ctx: click.Context, run_id: str, sample_size: int, k: int, max_lost: int | None, as_json: bool) -> int:
    """The run gate alone: did this run make your memory harder to find? Exits 1 when it refuses."""
    app = app_of(ctx)
    settings = probe_settings(app, sample_size=sample_size, k=k, max_lost=max_lost)
    with app.index(catch_up=False) as db:
        report = run_probes(app, db, run_id, settings)
    data = report.as_json()
    respond(as_json, "eval.run", data, lambda: verdict_text(data["verdict"], data["timing"]))
    return 0 if report.verdict.passed else 1


