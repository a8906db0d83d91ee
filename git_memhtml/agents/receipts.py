"""Install receipts: what ``git memhtml agent install`` wrote, so ``uninstall`` removes exactly that (docs/agents.md).

A receipt is one JSON file per agent, scope and base folder in ``<state>/git-memhtml/agents/`` (``<state>`` is
``$XDG_STATE_HOME``, default ``~/.local/state``), named ``<agent>-<scope>-<sha256(base)[:16]>.json``. It holds, per
file: its state before the install (absent, or its SHA-256, mode and — up to :data:`KEEP_BYTES` — its bytes), its
SHA-256 after, every splice (offset and text) in the order applied, the fragments we own with their SHA-256, and
the folders the install created.
"""

from __future__ import annotations

import base64
import fcntl
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from git_memhtml.agents.jsonsplice import Splice
from git_memhtml.errors import AgentConfigRefused, StorageError

RECEIPT_VERSION = 1
LOCK_TIMEOUT_S = 10.0
"""How long an install or uninstall waits for another one to finish, seconds (our decision: one holds the lock for
the milliseconds it takes to read, plan and write a few small files)."""
KEEP_BYTES = 256 * 1024
"""Pre-install bytes kept in a receipt up to this size (256 KiB); a larger file (``~/.claude.json`` can be) keeps
its SHA-256 only and is put back by cutting our splices out, checked against that SHA-256."""


def sha256_text(text: str) -> str:
    """``sha256:<hex>`` of ``text`` as UTF-8."""
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def canonical_sha(value: Any) -> str:
    """``sha256:<hex>`` of a JSON value's canonical form (sorted keys, no spaces): a fragment's identity."""
    return sha256_text(json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False))


@dataclass(frozen=True)
class Before:
    """A file before the install: ``exists``; when it did, its SHA-256, permission bits and maybe its bytes."""

    exists: bool
    sha256: str | None = None
    mode: int | None = None
    bytes_b64: str | None = None

    def raw(self) -> bytes | None:
        """The kept pre-install bytes, or ``None`` when the file was absent or too large to keep."""
        return None if self.bytes_b64 is None else base64.b64decode(self.bytes_b64)


@dataclass(frozen=True)
class Fragment:
    """What we own in a file: ``kind`` ``member`` (``path``, ``key``, ``value``), ``element`` (``path``,
    ``value``), ``block`` (``text``) or ``file`` (``text``), and its ``sha256``."""

    kind: str
    sha256: str
    path: tuple[str, ...] = ()
    key: str | None = None
    value: Any = None
    text: str | None = None


@dataclass(frozen=True)
class FileRecord:
    """One file an install changed."""

    path: str
    fmt: str
    before: Before
    after_sha256: str
    splices: tuple[Splice, ...]
    fragments: tuple[Fragment, ...]
    created_dirs: tuple[str, ...] = ()


@dataclass(frozen=True)
class Receipt:
    """One install of one agent in one scope."""

    agent: str
    scope: str
    base: str
    repo: str
    exe: str
    files: tuple[FileRecord, ...] = field(default_factory=tuple)
    version: int = RECEIPT_VERSION


def receipt_path(state_home: Path, agent: str, scope: str, base: Path) -> Path:
    """Where the receipt of ``agent`` in ``scope`` for the base folder ``base`` lives."""
    digest = hashlib.sha256(str(base).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return state_home / "git-memhtml" / "agents" / f"{agent}-{scope}-{digest}.json"


def to_json(receipt: Receipt) -> str:
    """The receipt as indented JSON text."""
    return json.dumps(asdict(receipt), indent=2, ensure_ascii=False) + "\n"


def _fragment(data: dict[str, Any]) -> Fragment:
    return Fragment(kind=data["kind"], sha256=data["sha256"], path=tuple(data.get("path") or ()),
                    key=data.get("key"), value=data.get("value"), text=data.get("text"))


def from_json(text: str, where: Path) -> Receipt:
    """Read a receipt written by :func:`to_json`.

    Raises:
        AgentConfigRefused: the file is not a receipt of this version (names the file).
    """
    try:
        data = json.loads(text)
        if data.get("version") != RECEIPT_VERSION:
            raise ValueError(f"version {data.get('version')!r}")
        files = tuple(
            FileRecord(path=f["path"], fmt=f["fmt"], before=Before(**f["before"]), after_sha256=f["after_sha256"],
                       splices=tuple(Splice(s["offset"], s["text"]) for s in f["splices"]),
                       fragments=tuple(_fragment(g) for g in f["fragments"]),
                       created_dirs=tuple(f.get("created_dirs") or ()))
            for f in data["files"])
        return Receipt(agent=data["agent"], scope=data["scope"], base=data["base"], repo=data["repo"],
                       exe=data["exe"], files=files)
    except (ValueError, KeyError, TypeError) as exc:
        raise AgentConfigRefused(f"{where}: not a git-memhtml agent receipt ({exc})",
                                 hint=f"move {where} aside; then remove the entries by hand",
                                 path=str(where)) from exc


def read_receipt(path: Path) -> Receipt | None:
    """The receipt at ``path``, or ``None`` when there is none."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return from_json(text, path)


def write_atomic(path: Path, data: bytes, mode: int | None) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same folder and a rename (``os.replace``), so a
    reader sees the old bytes or the new ones, never a part; ``mode`` (permission bits) defaults to ``0o644``."""
    fd, scratch = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(scratch, 0o644 if mode is None else mode)
        os.replace(scratch, path)
    except BaseException:
        Path(scratch).unlink(missing_ok=True)
        raise


def save_receipt(path: Path, receipt: Receipt) -> None:
    """Write ``receipt`` to ``path`` atomically (mode 0600: it holds copies of the user's config bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, to_json(receipt).encode("utf-8"), 0o600)


@contextmanager
def agents_lock(state_home: Path, *, timeout: float = LOCK_TIMEOUT_S) -> Iterator[None]:
    """Hold the exclusive ``flock`` on ``<state>/git-memhtml/agents/.lock`` for the body of the ``with``.

    Every install and uninstall runs under it, from the first read of a receipt to the last write: two agents can
    share a file (``AGENTS.md`` for Codex and OpenCode), and two unserialised read-plan-write passes over it would
    each write the file without the other's block while both report ``installed``. The kernel drops the lock when
    its holder dies.

    Raises:
        AgentConfigRefused: another install or uninstall held it for more than ``timeout`` seconds.
        StorageError: the lock file cannot be created (a read-only state home).
    """
    path = state_home / "git-memhtml" / "agents" / ".lock"
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StorageError(f"{path}: cannot open the install lock: {exc.strerror or exc}",
                           hint="make the state home writable (or set XDG_STATE_HOME to a writable folder)",
                           path=str(path)) from exc
    try:
        deadline = time.monotonic() + timeout
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise AgentConfigRefused(
                        f"another git memhtml agent install or uninstall held {path} for more than {timeout:g} s; "
                        "nothing was written", hint="wait for it to finish, then run the command again",
                        path=str(path)) from None
                time.sleep(0.01)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the flock
