"""Shared helpers of the hook and merge-driver tests: real git repositories driven by the real ``git`` binary."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from git_memhtml.artifacts.listings import PublishRow, render_artifacts


def git(
    root: Path, *args: str, check: bool = True, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the real ``git`` in ``root`` with the (hermetic) process environment plus ``env``."""
    proc = subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, check=False,
                          env={**os.environ, **(env or {})})
    if check and proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def memhtml(root: Path, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    """Run the installed ``git-memhtml`` executable in ``root``."""
    proc = subprocess.run(["git-memhtml", *args], cwd=root, capture_output=True, text=True, check=False)
    if check and proc.returncode != 0:
        raise AssertionError(f"git-memhtml {' '.join(args)} exited {proc.returncode}: {proc.stderr}")
    return proc


def memory(title: str, claim: str, updated: str = "2026-01-02T00:00:00Z") -> str:
    """A valid memory file (docs/format.md §1.1 skeleton)."""
    return "\n".join([
        "<!doctype html>", '<html lang="en">', "<head>", '<meta charset="utf-8">', f"<title>{title}</title>",
        '<meta name="memhtml-type" content="semantic">', '<meta name="memhtml-status" content="active">',
        '<meta name="memhtml-created" content="2026-01-01T00:00:00Z">',
        f'<meta name="memhtml-updated" content="{updated}">',
        "</head>", "<body>", "<article>", f"<p><mark>{claim}</mark></p>", "</article>", "</body>", "</html>", "",
    ])


def write(root: Path, path: str, text: str | bytes) -> None:
    """Write ``text`` at repo path ``path`` (folders created)."""
    target = root / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)


def publish_rows(root: Path) -> list[PublishRow]:
    """Rows of every memory under ``areas/`` of the work tree, parsed from disk."""
    from git_memhtml.document.parse import parse_memory
    from git_memhtml.errors import InvalidMemory

    rows = []
    for file in sorted((root / "areas").rglob("*.html")):
        rel = file.relative_to(root).as_posix()
        if file.name == "index.html":
            continue
        try:
            doc = parse_memory(file.read_bytes(), path=rel)
        except InvalidMemory:
            continue
        rows.append(PublishRow(rel, doc.title, doc.memory_type, doc.updated, doc.gist))
    return rows


def publish(root: Path) -> list[str]:
    """Regenerate every listing and the sitemap from the work tree (as publish does); return written paths."""
    written = []
    for path, data in render_artifacts(publish_rows(root)).items():
        write(root, path, data)
        written.append(path)
    return written


def snapshot(root: Path) -> dict[str, bytes]:
    """Bytes of everything install may touch: hooks, git config, our git-dir folder's config files, attributes."""
    out: dict[str, bytes] = {}
    gitdir = root / ".git"
    for folder in (gitdir / "hooks", gitdir / "memhtml"):
        if folder.is_dir():
            for file in sorted(folder.iterdir()):
                if file.is_file() and not file.name.startswith(("index.db", "state.db", "hook")):
                    out[file.relative_to(root).as_posix()] = file.read_bytes() + oct(file.stat().st_mode).encode()
        out[folder.relative_to(root).as_posix() + "/"] = b"present" if folder.is_dir() else b"absent"
    out[".git/config"] = (gitdir / "config").read_bytes()
    attrs = root / ".gitattributes"
    out[".gitattributes"] = attrs.read_bytes() if attrs.exists() else b"<absent>"
    return out
