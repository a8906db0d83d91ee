"""The one resolver of path arguments: a path names a memory, or it is refused before anything moves.

Every command and tool that takes a repository path (``read``, ``archive``, ``correct``, both ends of ``link``,
``reinforce``, ``neighbors``, the explicit ``path`` of ``write``/``apply``) calls :func:`resolve_memory_path`
with the :class:`Need` of its verb (:data:`VERB_NEEDS`). The rules (docs/store.md "Path arguments"):

1. The argument is text a person or agent typed: refused when empty, not UTF-8, holding a control or invisible
   character (NUL, ESC, DEL, C1, bidi overrides…), a backslash, a percent-escape (``%2e``, ``%2F``…),
   leading/trailing whitespace or a trailing ``/``.
2. It is resolved the way git resolves a path: relative to ``base`` (the CLI's current folder, or ``-C``;
   the work-tree root for callers without one), an absolute path as it stands, ``.``/``..`` folded lexically.
   The result must lie inside the work tree.
3. The repository path must be a memory path: ``.html`` (any case, as validate and the index read it) under a PARA
   bucket with at least two segments, no segment starting with ``.`` (so never ``.git/``, ``.memhtml/``, a dotfile or
   dot-folder), not a generated listing (``index.html``; ``sitemap.xml`` and the root ``README.html`` fail the bucket
   rule).
4. ``archive/`` is accepted only by verbs that read (:data:`Need.EXISTING`).
5. No component of the path on disk may be a symlink (``lstat`` each one, the folders too); an existing
   memory must be a regular file, a new one must not exist.
6. A new path (``Need.NEW``) must be in Unicode NFC form, and no existing file or folder on the way may be the
   same name in another Unicode form, so ``café`` typed two ways cannot name two memories; an existing file whose
   name is not NFC is still read and changed (``validate`` reports its name).

Nothing here writes. :func:`read_tree_file` is the one way to read a work-tree file without following a link;
:func:`read_memory_file` reads a memory resolved outside the write lock (one another process may move meanwhile).
"""

from __future__ import annotations

import enum
import os
import re
import stat
import tempfile
import unicodedata
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from git_memhtml.document.model import PARA_BUCKETS
from git_memhtml.errors import PathNotFound, PathRefused
from git_memhtml.pathnames import NOT_UTF8, is_utf8_name, shown_name
from git_memhtml.tree.layout import GENERATED_NAMES, MEMORY_SUFFIX, archive_path_for, has_memory_suffix

SYMLINK_REFUSED: Final[str] = "refused, symlinks are never followed"
"""The tail of every symlink refusal (shared with ``validate``'s findings)."""
MAX_READ_BYTES: Final[int] = 16 * 1024 * 1024
"""Ceiling of :func:`read_tree_file`, above the parser's own per-file limit so the parser reports the size."""

_PERCENT_ESCAPE = re.compile(r"%[0-9A-Fa-f]{2}")
PATH_HINT: Final[str] = ("name a memory file like areas/inbox/x.html (relative to the current folder, or absolute "
                          "inside the repository)")
"""The hint of every resolver refusal (a CLI argument); ``service/door.py:memory_path`` swaps it for tools."""


class Need(enum.Enum):
    """What a verb needs of its path.

    ``EXISTING``: an existing memory, live or archived (verbs that only read).
    ``LIVE``: an existing memory outside ``archive/`` (verbs that change or move it, or bump its access).
    ``NEW``: a live memory path nothing occupies yet (explicit ``write``/``apply`` paths).
    """

    EXISTING = "existing"
    LIVE = "live"
    NEW = "new"


VERB_NEEDS: Final[dict[str, Need]] = {
    "read": Need.EXISTING,
    "neighbors": Need.EXISTING,
    "link-dst": Need.EXISTING,
    "archive": Need.LIVE,
    "correct": Need.LIVE,
    "link-src": Need.LIVE,
    "reinforce": Need.LIVE,
    "task-status": Need.LIVE,
    "write": Need.NEW,
    "apply": Need.NEW,
}
"""The per-verb decision (our decision, docs/store.md): a link may point into the archive (``supersedes`` does),
but its source is edited, so it must be live; ``reinforce`` bumps what retention reads for live memories."""


@dataclass(frozen=True)
class MemoryPath:
    """A resolved path argument.

    Attributes:
        path: the repository path (POSIX, no leading ``/``), e.g. ``areas/inbox/x.html``.
        file: the absolute file on disk (``root / path``; never a symlink, possibly absent for ``Need.NEW``).
        archived: whether it lies under ``archive/``.
        exists: whether a regular file is there.
    """

    path: str
    file: Path
    archived: bool
    exists: bool


def _refuse(argument: str, name: str, why: str, *, shown: str | None = None) -> PathRefused:
    label = shown or shown_name(argument) or "''"
    return PathRefused(f"{name} {label}: {why}", hint=PATH_HINT, path=label)


def _check_text(argument: str, name: str) -> None:
    if not is_utf8_name(argument):
        raise _refuse(argument, name, NOT_UTF8)
    if not argument:
        raise _refuse(argument, name, "is empty")
    if any(not ch.isprintable() and ch != " " for ch in argument):
        raise _refuse(argument, name, "holds a control or invisible character")
    if "\\" in argument:
        raise _refuse(argument, name, "holds a backslash; repository paths use /")
    if _PERCENT_ESCAPE.search(argument):
        raise _refuse(argument, name, "holds a percent-escape; give the path unencoded")
    if argument != argument.strip():
        raise _refuse(argument, name, "starts or ends with whitespace")
    if argument.endswith("/"):
        raise _refuse(argument, name, "names a folder; name a memory file")


def repo_relative(root: Path, argument: str, *, base: Path | None = None, name: str = "PATH") -> str:
    """Resolve ``argument`` like git does and return it relative to the work tree ``root`` (rules 1-2).

    Args:
        root: the work-tree folder, resolved (``GitRepo.root``).
        argument: the path as given.
        base: the folder a relative argument is read from (default ``root``); resolved here.
        name: the argument's name in messages (``PATH``, ``DST``, ``path``…).

    Raises:
        PathRefused: rule 1 fails, or the path is outside the work tree or is the work tree itself.
    """
    _check_text(argument, name)
    origin = (base or root).resolve()
    candidate = Path(os.path.normpath(origin / argument))
    relative = _under_root(root, candidate)
    if relative is None:
        hint = " (repository paths have no leading /)" if argument.startswith("/") else ""
        raise _refuse(argument, name, f"is outside the repository {root}{hint}")
    if relative == Path("."):
        raise _refuse(argument, name, "is the repository folder, not a memory file")
    return PurePosixPath(*relative.parts).as_posix()


def _under_root(root: Path, candidate: Path) -> Path | None:
    """``candidate`` relative to the work tree: lexically, else through the one prefix of it that *is* the work
    tree reached another way (``/tmp/link-to-repo/areas/x.html``, as git accepts it). Only that prefix, which
    lies outside the repository, is resolved; every component inside is still checked by ``lstat``."""
    try:
        return candidate.relative_to(root)
    except ValueError:
        pass
    for ancestor in candidate.parents:
        if os.path.realpath(ancestor) == str(root):
            return candidate.relative_to(ancestor)
    return None


def memory_path_problem(path: str) -> str | None:
    """Why the repository path ``path`` is not a memory path (rule 3), or ``None`` when it is one."""
    parts = path.split("/")
    if any(part.startswith(".") for part in parts):
        return "names a dotfile or dot-folder (.git, .memhtml…); only memory files are accepted"
    if parts[0] not in PARA_BUCKETS or len(parts) < 2:
        return f"is not under {', '.join(b + '/' for b in PARA_BUCKETS)}; only memory files are accepted"
    if parts[-1].casefold() in GENERATED_NAMES:  # INDEX.HTML is index.html on a case-insensitive file system
        return "is a generated listing, not a memory"
    if not has_memory_suffix(parts[-1]) or parts[-1].lower() == MEMORY_SUFFIX:
        return "is not a memory file: memory files end in .html (any case)"
    return None


def symlink_problem(root: Path, path: str) -> str | None:
    """``lstat`` every component of ``path`` under ``root``: the reason when one is a symlink, else ``None``.

    Components that do not exist end the walk (nothing there to follow). Returns e.g. ``"is a symlink: refused,
    symlinks are never followed"`` or ``"goes through the symlink linked-dir: refused, …"``.
    """
    cursor = root
    parts = path.split("/")
    for i, part in enumerate(parts):
        cursor = cursor / part
        try:
            info = os.lstat(cursor)
        except (FileNotFoundError, NotADirectoryError):
            return None
        except OSError as exc:  # too long, no permission…: what cannot be examined is not followed either
            return f"cannot be examined ({exc.strerror or exc}): refused"
        if stat.S_ISLNK(info.st_mode):
            if i == len(parts) - 1:
                return f"is a symlink: {SYMLINK_REFUSED}"
            return f"goes through the symlink {shown_name(part)}: {SYMLINK_REFUSED}"
    return None


def resolve_memory_path(root: Path, argument: str, *, need: Need, base: Path | None = None,
                        name: str = "PATH") -> MemoryPath:
    """Resolve one path argument to a memory, or refuse it (all five rules of the module docstring).

    Args:
        root: the work-tree folder, resolved (``GitRepo.root``).
        argument: the path as given (relative to ``base``, absolute, ``./x``…).
        need: what the verb needs (:data:`VERB_NEEDS`).
        base: the folder relative arguments are read from; ``None`` means the work-tree root (callers without a
            current folder: library use, the ``apply`` stream, tools).
        name: the argument's name in messages.

    Returns:
        :class:`MemoryPath`; ``exists`` is ``True`` unless ``need`` is :attr:`Need.NEW`.

    Raises:
        PathRefused: (exit 2) the argument is malformed, outside the repository, not a memory path, archived for
            a verb that changes, or a symlink (or goes through one); a ``NEW`` path that is not NFC, or is already
            occupied by something other than a regular file.
        PathNotFound: (exit 1) ``EXISTING``/``LIVE`` and no file is there.
    """
    rel = repo_relative(root, argument, base=base, name=name)
    shown = shown_name(rel)
    problem = memory_path_problem(rel)
    if problem is not None:
        raise _refuse(argument, name, problem, shown=shown)
    archived = rel.startswith("archive/")
    if archived and need is not Need.EXISTING:
        what = "write live memories under projects/, areas/ or resources/" if need is Need.NEW else \
            "it is already archived; name the live memory"
        raise _refuse(argument, name, f"is inside archive/: {what}", shown=shown)
    link = symlink_problem(root, rel)
    if link is not None:
        raise _refuse(argument, name, link, shown=shown)
    file = root / rel
    try:
        info = os.lstat(file)
    except (FileNotFoundError, NotADirectoryError):
        info = None
    except OSError as exc:
        raise _refuse(argument, name, f"cannot be examined ({exc.strerror or exc})", shown=shown) from None
    if need is Need.NEW:
        if not unicodedata.is_normalized("NFC", rel):
            raise PathRefused(f"{name} {shown}: is not in Unicode NFC form (it would sit beside a look-alike name)",
                              hint=f"give the NFC form of the path: {shown_name(unicodedata.normalize('NFC', rel))}",
                              path=shown)
        if info is not None and not stat.S_ISREG(info.st_mode):
            raise _refuse(argument, name, "is occupied by something that is not a memory file", shown=shown)
        twin = _lookalike(root, rel) if info is None else None
        if twin is not None:
            raise PathRefused(f"{name} {shown}: {shown_name(twin)} is already there under another Unicode form of "
                              "the same name", hint=f"name the existing one: {shown_name(twin)}", path=shown)
        return MemoryPath(rel, file, archived, info is not None)
    if info is None:
        moved = None if archived else archived_copy(root, rel)
        if moved is not None:
            raise PathNotFound(f"{name} {shown}: no such memory: it was archived to {shown_name(moved)}",
                               hint=f"it is read-only there: git memhtml read {shown_name(moved)}",
                               path=shown)
        raise PathNotFound(f"{name} {shown}: no such memory", hint="run `git memhtml list` to see memory paths",
                           path=shown)
    if not stat.S_ISREG(info.st_mode):
        raise _refuse(argument, name, "is not a regular file", shown=shown)
    return MemoryPath(rel, file, archived, True)


def archived_copy(root: Path, path: str) -> str | None:
    """The newest archived copy of the live path ``path``: ``archive/<YYYY>/<path>`` of the latest year that has a
    regular file there, reached through no symlink (docs/layout.md §2.4), or ``None``. A collision's ordinal form
    (``<stem>-2.html``) is not searched: it belongs to another memory of the same name.

    Raises nothing: an unreadable ``archive/`` folder is no copy."""
    try:
        years = sorted((e.name for e in os.scandir(root / "archive") if e.name.isdigit() and len(e.name) >= 4
                        and e.is_dir(follow_symlinks=False)), key=int, reverse=True)
    except OSError:
        return None
    for year in years:
        candidate = archive_path_for(path, year)
        try:
            info = os.lstat(root / candidate)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode) and symlink_problem(root, candidate) is None:
            return candidate
    return None


def _lookalike(root: Path, path: str) -> str | None:
    """The existing repository path that differs from the absent ``path`` only in the Unicode form of one component
    (a decomposed ``café`` committed by hand beside the precomposed one typed now), else ``None``. Walks from the
    root; at the first component that does not exist, lists its folder (one ``scandir``)."""
    cursor, done = root, list[str]()
    for part in path.split("/"):
        if os.path.lexists(cursor / part):
            cursor, done = cursor / part, [*done, part]
            continue
        want = unicodedata.normalize("NFC", part)
        try:
            names = [entry.name for entry in os.scandir(cursor)]
        except OSError:
            return None
        twin = next((n for n in names if n != part and unicodedata.normalize("NFC", n) == want), None)
        return None if twin is None else "/".join([*done, twin])
    return None


def read_memory_file(root: Path, path: str, *, name: str = "PATH") -> bytes:
    """:func:`read_tree_file` of a memory the resolver accepted earlier without the write lock (``read``, the
    default type of ``correct``): another process may have moved it since (``archive``, ``correct``, a ``sleep
    merge``), which is an answer, not a crash (docs/store.md "Path arguments").

    Raises:
        PathNotFound: the file went after it was resolved: the resolver's own refusal (naming the archived copy
            when there is one), or, when the path is back already, one saying it moved while being read.
        PathRefused: as :func:`read_tree_file`.
    """
    try:
        return read_tree_file(root, path)
    except (FileNotFoundError, NotADirectoryError):
        resolve_memory_path(root, path, need=Need.EXISTING, name=name)  # gone: raises PathNotFound
        raise PathNotFound(f"{name} {shown_name(path)}: no such memory (it moved while it was being read)",
                           hint="run the command again", path=shown_name(path)) from None


def read_tree_file(root: Path, path: str, *, limit: int = MAX_READ_BYTES) -> bytes:
    """Read the work-tree file ``root / path`` without following any symlink on the way.

    Every component is ``lstat``-ed (:func:`symlink_problem`), the file is opened with ``O_NOFOLLOW`` and must be a
    regular file; at most ``limit + 1`` bytes are read (the caller's parser refuses oversized files).

    Raises:
        PathRefused: a component is a symlink, or the file is not a regular file.
        FileNotFoundError: nothing is there.
    """
    problem = symlink_problem(root, path)
    if problem is not None:
        raise PathRefused(f"{shown_name(path)}: {problem}", hint="replace the link by the file itself",
                          path=shown_name(path))
    fd = os.open(root / path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise PathRefused(f"{shown_name(path)}: not a regular file", hint="memories are regular files",
                              path=shown_name(path))
        return handle.read(limit + 1)


def write_tree_file(root: Path, path: str, data: bytes) -> None:
    """Replace the work-tree file ``root / path`` with ``data`` without writing through any link.

    The bytes go to a temporary file in the same folder, which then replaces the name (``os.replace``): a
    symlink or a hard link at ``path`` is replaced, never written through, and a reader never sees half a file.
    The file keeps its permission bits.

    Raises:
        PathRefused: a folder on the way is a symlink (nothing is written). OSError: the disk failed.
    """
    problem = symlink_problem(root, path.rsplit("/", 1)[0]) if "/" in path else None
    if problem is not None:
        raise PathRefused(f"{shown_name(path)}: {problem}", hint="replace the linked folder by a real one",
                          path=shown_name(path))
    target = root / path
    try:
        mode: int | None = stat.S_IMODE(os.lstat(target).st_mode)
    except FileNotFoundError:
        mode = None
    fd, name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".memhtml-tmp")
    scratch = Path(name)
    try:
        os.fchmod(fd, 0o644 if mode is None else mode)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(scratch, target)
    except BaseException:
        scratch.unlink(missing_ok=True)
        raise


def tree_file_problem(root: Path, path: str) -> str | None:
    """Why the work-tree file ``path`` must not be read (a symlink on the way, not a regular file), or ``None``
    (also when nothing is there: absence is the caller's business)."""
    problem = symlink_problem(root, path)
    if problem is not None:
        return problem
    try:
        info = os.lstat(root / path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"cannot be examined ({exc.strerror or exc}): refused"
    return None if stat.S_ISREG(info.st_mode) else "not a regular file"
