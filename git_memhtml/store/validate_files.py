"""Validate memory files of a work tree: what ``git memhtml validate`` and the pre-commit hook run.

Path handling is the safety part: a path argument is resolved lexically against the caller's folder and must
stay inside the repository; a symlink anywhere on the way is refused, never followed; directories, missing
files and non-``.html`` names are one finding each. Generated artifacts (``index.html``, ``sitemap.xml``,
docs/layout.md §2.7) are skipped. Files are opened with ``O_NOFOLLOW`` and size-checked before reading,
so a 5 GB file is refused without being read.
"""

from __future__ import annotations

import os
import stat
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Final

from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.document.parse import MAX_FILE_BYTES
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.gitrepo import GitRepo
from git_memhtml.pathnames import NOT_UTF8, is_utf8_name, shown_name
from git_memhtml.progress import NO_PROGRESS, Progress
from git_memhtml.tree.layout import GENERATED_NAMES, has_memory_suffix, is_indexable
from git_memhtml.tree.paths import symlink_problem

MEMORY_SUFFIX: Final[str] = ".html"
"""Extension of every memory file (docs/format.md §1)."""

ROOT_SCAFFOLD: Final[frozenset[str]] = frozenset({"README.html"})
"""Repository-root pages written by ``init`` (docs/layout.md §2.6) that are not memories; skipped like generated
artifacts (our decision, docs/format.md)."""


@dataclass(frozen=True)
class Finding:
    """One line of the report: ``path`` (repository-relative POSIX, or the argument as given when it is not
    inside the repository), ``reason`` (one line), ``warning`` (shown, fails only under ``--strict``)."""

    path: str
    reason: str
    warning: bool = False

    def line(self) -> str:
        """``"path: reason"`` or ``"path: warning: reason"``."""
        return f"{self.path}: {'warning: ' if self.warning else ''}{self.reason}"


@dataclass(frozen=True)
class ValidationReport:
    """Outcome of one validation run.

    Attributes:
        checked: repository paths whose content was read and checked, in order.
        skipped: generated artifacts (and the root ``README.html``) named by the caller and skipped.
        findings: every finding, in file order then rule order.
    """

    checked: tuple[str, ...] = ()
    skipped: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = field(default=())

    @property
    def violation_count(self) -> int:
        """Number of findings that fail the run."""
        return sum(1 for finding in self.findings if not finding.warning)

    @property
    def warning_count(self) -> int:
        """Number of warnings."""
        return sum(1 for finding in self.findings if finding.warning)

    def failed(self, *, strict: bool = False) -> bool:
        """True on any violation, or on any warning when ``strict``."""
        return self.violation_count > 0 or (strict and self.warning_count > 0)


def _shown(argument: str) -> str:
    """An argument made safe for one output line (control characters escaped)."""
    return "".join(ch if ch.isprintable() else f"\\x{ord(ch):02x}" for ch in argument) or "''"


def default_memory_paths(repo: GitRepo) -> list[str]:
    """Every memory file of the work tree: tracked and untracked-but-not-ignored paths under the PARA buckets
    that are indexable (``.html``, not generated; docs/layout.md §2.1), plus every symlink there whatever its name (a
    linked folder is reported, never entered), sorted; tracked files deleted from disk are left
    out (they are deletions, not files). Names are read as bytes and decoded with ``os.fsdecode``, so a name that
    is not UTF-8 is listed (with lone surrogates) for :func:`validate_files` to refuse.

    Raises:
        GitError: ``git ls-files`` failed.
    """
    out = repo.run_git_bytes(["ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", *PARA_BUCKETS])
    names = (os.fsdecode(raw) for raw in out.split(b"\0") if raw)
    paths = sorted({path for path in names if is_indexable(path) or os.path.islink(repo.root / path)})
    return [path for path in paths if os.path.lexists(repo.root / path)]


def _locate(root: Path, base: Path, argument: str) -> tuple[str | None, Finding | None]:
    """Resolve one argument to a repository path, or to the finding that refuses it."""
    if argument == "" or "\0" in argument:
        return None, Finding(_shown(argument), "not a usable path")
    candidate = Path(os.path.normpath(base / argument))
    try:
        relative = candidate.relative_to(root)
    except ValueError:
        return None, Finding(_shown(argument), "outside the repository: only files inside it are validated")
    if relative == Path("."):
        return None, Finding(_shown(argument), "is a directory: name files, or give no path to check them all")
    rel = PurePosixPath(*relative.parts).as_posix()
    link = symlink_problem(root, rel)
    if link is not None:
        return None, Finding(rel, link)
    if not candidate.exists():
        return None, Finding(rel, "no such file")
    if candidate.is_dir():
        return None, Finding(rel, "is a directory: name files, or give no path to check them all")
    return rel, None


def _read_checked(root: Path, rel: str) -> tuple[bytes | None, Finding | None]:
    """Open without following a final symlink, refuse non-regular and oversized files, read the bytes."""
    try:
        fd = os.open(root / rel, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError as exc:
        return None, Finding(rel, f"cannot be read: {exc.strerror or exc}")
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None, Finding(rel, "not a regular file")
        if info.st_size > MAX_FILE_BYTES:
            return None, Finding(rel, f"file is {info.st_size} bytes, over the {MAX_FILE_BYTES}-byte limit")
        data = handle.read(MAX_FILE_BYTES + 1)
    return data, None


def validate_files(root: Path, paths: Sequence[str] | None, *, base: Path | None = None,
                   progress: Progress = NO_PROGRESS) -> ValidationReport:
    """Validate memory files of the work tree at ``root``.

    Args:
        root: the work tree folder (resolved).
        paths: file arguments as the user typed them, relative to ``base`` (or absolute); ``None`` is not
            allowed here — the caller lists the defaults with :func:`default_memory_paths`.
        base: the folder relative arguments are read from (default ``root``).
        progress: told of one stage ``"validating"`` of ``len(paths)`` arguments, advanced once per argument.

    Returns:
        :class:`ValidationReport` (never raises on a bad file: every problem is a finding).
    """
    origin = (base or root).resolve()
    checked: list[str] = []
    skipped: list[str] = []
    findings: list[Finding] = []
    seen: set[str] = set()
    progress.stage("validating", len(paths or ()))
    try:
        for argument in paths or ():
            _validate_one(root, origin, argument, seen, checked, skipped, findings)
            progress.advance()
    finally:
        progress.close()
    return ValidationReport(checked=tuple(checked), skipped=tuple(skipped), findings=tuple(findings))


def _validate_one(root: Path, origin: Path, argument: str, seen: set[str], checked: list[str], skipped: list[str],
                  findings: list[Finding]) -> None:
    """Check one argument of :func:`validate_files`, appending to ``checked``, ``skipped`` and ``findings``."""
    if not is_utf8_name(argument):
        findings.append(Finding(shown_name(argument), NOT_UTF8))
        return
    rel, refused = _locate(root, origin, argument)
    if refused is not None:
        findings.append(refused)
        return
    assert rel is not None
    if rel in seen:
        return
    seen.add(rel)
    name = PurePosixPath(rel).name
    if name in GENERATED_NAMES or rel in ROOT_SCAFFOLD:
        skipped.append(rel)
        return
    if not has_memory_suffix(name):
        findings.append(Finding(rel, "not a memory file: memory files end in .html"))
        return
    data, refused = _read_checked(root, rel)
    if refused is not None:
        findings.append(refused)
        return
    assert data is not None
    checked.append(rel)
    if not unicodedata.is_normalized("NFC", rel):
        findings.append(Finding(shown_name(rel), "file name is not in Unicode NFC form (a look-alike of "
                                f"{shown_name(unicodedata.normalize('NFC', rel))}): git mv it to the NFC name"))
    result = check_memory_bytes(data)
    findings.extend(Finding(rel, reason) for reason in result.violations)
    findings.extend(Finding(rel, reason, warning=True) for reason in result.warnings)
