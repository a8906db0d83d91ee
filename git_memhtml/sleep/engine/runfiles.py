"""Where a run's committed record lives: its report page, pending-mark ledger and journal (docs/layout.md §2.1,
docs/ledger.md §1, §2).

Pure and import-light, so hooks and reconciliation can name these files without loading the phases.
"""

from __future__ import annotations

from git_memhtml.tree.layout import REPORT_DIR


def run_file_stem(run_id: str) -> str:
    """The run id as a file stem: ``/`` → ``-`` (``sleep/2026-01-15`` → ``sleep-2026-01-15``)."""
    return run_id.replace("/", "-")


def report_path(run_id: str) -> str:
    """``.memhtml/sleep/<run id with / → ->.html``."""
    return f"{REPORT_DIR}/{run_file_stem(run_id)}.html"


def ledger_file(run_id: str) -> str:
    """``.memhtml/sleep/<run id with / → ->.pending.jsonl``."""
    return f"{REPORT_DIR}/{run_file_stem(run_id)}.pending.jsonl"


def journal_file(run_id: str) -> str:
    """``.memhtml/sleep/<run id with / → ->.journal.jsonl`` (the run journal, docs/ledger.md §2)."""
    return f"{REPORT_DIR}/{run_file_stem(run_id)}.journal.jsonl"


def run_record_files(run_id: str) -> frozenset[str]:
    """Every file of a run's own committed record: report page, ledger, journal (the landing rail allows them and a
    rebase replays them as the run wrote them)."""
    return frozenset({report_path(run_id), ledger_file(run_id), journal_file(run_id)})
