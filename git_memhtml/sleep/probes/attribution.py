"""Which phase touched a memory: the ``Memhtml-Phase`` trailers of the commits of ``base..tip`` that changed it
(docs/gate.md §9.3; trailers, docs/sleep.md §2).

One tree diff per commit against its first parent, read once per verdict and only when a probe is lost.
"""

from __future__ import annotations

from collections.abc import Iterable

from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.commit import TRAILER_PHASE


class Touches:
    """``path → [(commit, phase)]`` over ``base..tip``, oldest first."""

    def __init__(self, repo: GitRepo, base: str, tip: str) -> None:
        phases = dict(repo.log_trailers(base, tip, TRAILER_PHASE))
        self._by_path: dict[str, list[tuple[str, str]]] = {}
        commits = repo.commits_between(base, tip)
        self._position = {sha: n for n, sha in enumerate(commits)}
        for sha in commits:
            parents = repo.parents(sha)
            if not parents:
                continue
            phase = ", ".join(phases.get(sha, [])) or "no phase trailer"
            for change in repo.tree_changes(parents[0], sha):
                self._by_path.setdefault(change.path, []).append((sha, phase))

    def of(self, paths: Iterable[str | None]) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """``(phases, commits)`` that changed any of ``paths``, each unique, in commit order."""
        touched = sorted({hit for p in paths if p for hit in self._by_path.get(p, [])},
                         key=lambda hit: self._position.get(hit[0], -1))
        phases: list[str] = []
        commits: list[str] = []
        for sha, phase in touched:
            if sha not in commits:
                commits.append(sha)
            if phase not in phases:
                phases.append(phase)
        return tuple(phases), tuple(commits)
