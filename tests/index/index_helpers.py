"""Shared helpers of the index tests: hand-built memory files and a real git repository wrapper."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from git_memhtml.gitrepo import GitRepo

NOW = "2026-02-01T00:00:00Z"


def memory_html(
    title: str,
    claim: str,
    *,
    body: str = "",
    memory_type: str = "semantic",
    updated: str = "2026-01-02T00:00:00Z",
    created: str = "2026-01-01T00:00:00Z",
    tags: Sequence[str] = (),
    entities: Sequence[str] = (),
    links: Sequence[tuple[str, str]] = (),
    extra_metas: Sequence[tuple[str, str]] = (),
    article_extra: str = "",
) -> str:
    """Return a memory file in the serialized skeleton of docs/format.md §1.1 (metas in META_ORDER for what we use)."""
    metas = [("type", memory_type), ("status", "active"), ("created", created), ("updated", updated)]
    if memory_type == "task":
        metas.append(("task-status", "todo"))
    metas += list(extra_metas)
    metas += [("entity", e) for e in entities] + [("tag", t) for t in tags]
    lines = ["<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">', f"<title>{title}</title>"]
    lines += [f'<meta name="memhtml-{n}" content="{v}">' for n, v in metas]
    lines += [f'<link rel="memhtml-{r.replace("_", "-")}" href="{h}">' for r, h in links]
    lines += ["</head>", "<body>", "<article>", f"<p><mark>{claim}</mark> {body}</p>{article_extra}", "</article>"]
    lines += ["</body>", "</html>", ""]
    return "\n".join(lines)


class Repo:
    """A real git repository in tmp_path with write/commit helpers."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.git = GitRepo.init(root)

    def write(self, path: str, html: str) -> None:
        target = self.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(html, encoding="utf-8")

    def commit(self, message: str, *paths: str) -> str:
        self.git.stage(paths)
        sha = self.git.commit(message)
        assert sha is not None
        return sha


