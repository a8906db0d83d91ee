"""Phase 16, state-export: the committed access sidecar ``.memhtml/state/access.jsonl`` (docs/phases.md §1.16;
docs/design.md §3.2, §3.11).

``state.access`` is not rebuildable and lives outside the tree, so each run exports it as one JSON line per path
(path order) for clones to import. The bytes come from ``index.access.export_access_jsonl``; the file is written
only when they differ, so a quiet night commits nothing here.
"""

from __future__ import annotations

from dataclasses import dataclass

from git_memhtml.index.access import export_access_jsonl
from git_memhtml.sleep.engine.contract import PhaseSpec, register
from git_memhtml.sleep.engine.env import PhaseCounts, PhaseEnv, PhaseOutcome
from git_memhtml.tree.layout import ACCESS_SIDECAR


@dataclass(frozen=True)
class StateExportCounts(PhaseCounts):
    """``rows`` exported, ``bytes`` of the sidecar, ``written`` 1 when its bytes changed."""

    rows: int
    bytes: int
    written: int


def run(env: PhaseEnv) -> PhaseOutcome:
    """Export and stage the sidecar; counts ``rows, bytes, written`` (``written`` 1 when the bytes changed).

    Raises:
        StorageError: the state plane cannot be read. OSError/GitError: the file cannot be written or staged.
    """
    text = export_access_jsonl(env.db)
    data = text.encode("utf-8")
    rows = text.count("\n")
    target = env.repo.root / ACCESS_SIDECAR
    changed = not target.is_file() or target.read_bytes() != data
    if changed and not env.dry_run:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        env.repo.stage([ACCESS_SIDECAR])
    return PhaseOutcome(
        StateExportCounts(rows=rows, bytes=len(data), written=int(changed)),
        subject=f"export {rows} access rows to the committed sidecar",
    )


register(PhaseSpec("state-export", run, StateExportCounts, sweep=True))
