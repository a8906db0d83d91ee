"""``git memhtml agent install|uninstall``: plan, write and record an agent's configuration (docs/agents.md).

Rules:

- every file is read, parsed and planned before the first write, so a refusal (a file that does not parse, a
  symlink, an entry of ours that no receipt records) writes nothing;
- each write is atomic (a temporary file and a rename) and keeps the file's permission bits;
- the receipt is written before the files, so a failure part-way leaves a receipt ``uninstall`` can work from;
- installing again with the same executable and repository is a no-op; with another, it is refused until
  ``uninstall``;
- uninstall puts a file unchanged since the install back to its exact pre-install bytes (or deletes it when the
  install created it); from a file edited since, it removes only our fragments, each when it is unchanged; an edited
  fragment is left in place and reported as a warning (exit 0), and the receipt is removed either way.
"""

from __future__ import annotations

import copy
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memhtml.agents import claude_code, codex, cursor, opencode
from git_memhtml.agents.jsonsplice import Splice, cut_once, unapply
from git_memhtml.agents.model import (
    MARKDOWN_COMMENT,
    TOML_COMMENT,
    AgentName,
    AgentScope,
    Launch,
)
from git_memhtml.agents.plan import plan_file, under
from git_memhtml.agents.receipts import (
    FileRecord,
    Fragment,
    Receipt,
    agents_lock,
    read_receipt,
    receipt_path,
    save_receipt,
    sha256_text,
    write_atomic,
)
from git_memhtml.agents.textblock import MARK, has_marker
from git_memhtml.config import xdg_dir
from git_memhtml.errors import AgentConfigRefused, NotAMemoryRepo, StorageError
from git_memhtml.tree.layout import STATE_DIR

_WANTED = {"claude-code": claude_code.wanted, "codex": codex.wanted, "cursor": cursor.wanted,
           "opencode": opencode.wanted}


@dataclass(frozen=True)
class Places:
    """Where things go: the user's home, the project folder (``--project``), the state home for receipts, and
    the environment values that move an agent's user folder (``CODEX_HOME``, ``XDG_CONFIG_HOME``)."""

    home: Path
    project: Path
    state_home: Path
    env: Mapping[str, str]


@dataclass(frozen=True)
class FileAction:
    """What happened to one file: ``created``, ``changed``, ``unchanged``, ``restored``, ``deleted``,
    ``fragments removed``, ``left`` (nothing of ours could be removed) or ``missing``."""

    path: str
    action: str


@dataclass(frozen=True)
class AgentReport:
    """The outcome of one install or uninstall."""

    agent: str
    scope: str
    action: str  # installed | already installed | uninstalled | not installed
    receipt: str
    files: tuple[FileAction, ...]
    warnings: tuple[str, ...] = ()


def check_memory_repo(root: Path) -> None:
    """Refuse a repository that ``git memhtml init`` did not scaffold (no ``.memhtml/state/`` folder).

    Raises:
        NotAMemoryRepo: names the repository, with the ``init`` hint.
    """
    if not (root / STATE_DIR).is_dir():
        raise NotAMemoryRepo(f"{root} is not a memory repository (no {STATE_DIR}/); nothing was written",
                             hint=f"git memhtml -C {root} init (or pass -C <memory repository>)", path=str(root))


def base_folder(agent: AgentName, scope: AgentScope, places: Places) -> Path:
    """The folder an agent's files of ``scope`` live under: the project folder, or the agent's user folder
    (``$HOME``; ``$CODEX_HOME`` or ``~/.codex`` for Codex; ``$XDG_CONFIG_HOME/opencode`` or ``~/.config/opencode``
    for OpenCode; a relative ``XDG_CONFIG_HOME`` is ignored, as the XDG specification requires).

    Raises:
        AgentConfigRefused: ``CODEX_HOME`` is a relative path (it names another folder from every working
            directory, so neither Codex nor uninstall could find what install wrote there).
    """
    if scope == "project":
        return places.project
    if agent == "codex":
        codex_home = places.env.get("CODEX_HOME") or ""
        if codex_home and not os.path.isabs(codex_home):
            raise AgentConfigRefused(f"CODEX_HOME={codex_home!r} is not an absolute path; nothing was written",
                                     hint="set CODEX_HOME to an absolute folder (or unset it for ~/.codex), then "
                                     "run the command again")
        return Path(codex_home) if codex_home else places.home / ".codex"
    if agent == "opencode":
        return xdg_dir(places.env, "XDG_CONFIG_HOME", places.home / ".config") / "opencode"
    return places.home


# ---- fragment state and removal ------------------------------------------------------------------------------


def _walk(doc: Any, keys: tuple[str, ...]) -> Any:
    node = doc
    for key in keys:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def _state(text: str, fmt: str, fragment: Fragment) -> str:
    """``present`` (as written), ``edited`` or ``gone``."""
    if fragment.kind in ("member", "element"):
        try:
            doc = json.loads(text)
        except json.JSONDecodeError:
            return "edited"
        node = _walk(doc, fragment.path)
        if fragment.kind == "member":
            if not isinstance(node, dict) or fragment.key not in node:
                return "gone"
            return "present" if node[fragment.key] == fragment.value else "edited"
        return "present" if isinstance(node, list) and fragment.value in node else "edited"
    assert fragment.text is not None
    if fragment.kind == "file":
        return "present" if text == fragment.text else "edited"
    if fragment.text in text:
        return "present"
    agent = fragment.text.split("(", 1)[1].split(")", 1)[0]
    comment = TOML_COMMENT if fmt == "toml" else MARKDOWN_COMMENT
    return "edited" if has_marker(text, agent, comment) else "gone"


def _without(text: str, fragment: Fragment, splice: Splice) -> str:
    """``text`` without ``fragment`` (present): our inserted text cut out when that reads back right, else (JSON
    reformatted around it) the parsed document without it, written with two-space indentation."""
    if fragment.kind in ("block", "file"):
        assert fragment.text is not None
        return cut_once(text, splice.text) or cut_once(text, fragment.text) or text.replace(fragment.text, "", 1)
    expected = copy.deepcopy(json.loads(text))
    node = _walk(expected, fragment.path)
    if fragment.kind == "member":
        del node[fragment.key]
    else:
        node.remove(fragment.value)
    cut = cut_once(text, splice.text)
    if cut is not None:
        try:
            if json.loads(cut) == expected:
                return cut
        except json.JSONDecodeError:
            pass
    return json.dumps(expected, indent=2, ensure_ascii=False) + "\n"


def _empty_scaffold(text: str, fmt: str) -> bool:
    """Whether a file the install created holds nothing but the empty shell we started it from."""
    if fmt == "json":
        try:
            return bool(json.loads(text) == {})
        except json.JSONDecodeError:
            return False
    return not text.strip()


def _only_blocks(record: FileRecord) -> bool:
    """Whether the file held nothing but git-memhtml blocks before this install (another agent's install created
    it: ``AGENTS.md`` is shared by Codex and OpenCode), so emptied now it goes as that install would have let it."""
    raw = record.before.raw()
    if raw is None or record.fmt not in ("markdown", "toml"):
        return False
    rest = re.sub(rf"^.*>>> {MARK} \((?P<a>[\w-]+)\).*\n(?:.*\n)*?.*<<< {MARK} \((?P=a)\).*\n", "",
                  raw.decode("utf-8"), flags=re.MULTILINE)
    return not rest.strip()


# ---- install / uninstall --------------------------------------------------------------------------------------


def _launch_of(receipt: Receipt) -> tuple[str, str]:
    return receipt.exe, receipt.repo


def install(agent: AgentName, scope: AgentScope, launch: Launch, places: Places) -> AgentReport:
    """Write ``agent``'s MCP entry, session hooks and instructions for ``scope`` and record a receipt.

    Raises:
        AgentConfigRefused: a file cannot be changed safely (names the file, with a hint), or a different install
            is recorded; nothing was written.
        StorageError: a write failed part-way (the receipt records what was planned; ``uninstall`` undoes it).
    """
    base = base_folder(agent, scope, places)
    with agents_lock(places.state_home):
        return _install(agent, scope, launch, base, receipt_path(places.state_home, agent, scope, base))


def _install(agent: AgentName, scope: AgentScope, launch: Launch, base: Path, where: Path) -> AgentReport:
    recorded = read_receipt(where)
    if recorded is not None:
        return _already(recorded, launch, where)
    plans = [plan_file(wf, agent, base) for wf in _WANTED[agent](scope, base, launch)]
    plans = [p for p in plans if p.fragments]
    receipt = Receipt(agent=agent, scope=scope, base=str(base), repo=launch.repo, exe=launch.exe, files=tuple(
        FileRecord(path=str(p.wanted.path), fmt=p.wanted.fmt, before=p.before, after_sha256=sha256_text(p.new_text),
                   splices=p.splices, fragments=p.fragments, created_dirs=p.created_dirs) for p in plans))
    try:
        save_receipt(where, receipt)
        for p in plans:
            p.wanted.path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(p.wanted.path, p.new_text.encode("utf-8"), p.before.mode)
    except OSError as exc:
        raise StorageError(f"{exc.filename or where}: {exc.strerror or exc}",
                           hint=f"fix the cause, then run: git memhtml agent uninstall {agent} --scope {scope}",
                           path=str(exc.filename or where)) from exc
    files = tuple(FileAction(str(p.wanted.path), "changed" if p.before.exists else "created") for p in plans)
    return AgentReport(agent, scope, "installed", str(where), files)


def _already(recorded: Receipt, launch: Launch, where: Path) -> AgentReport:
    if _launch_of(recorded) != (launch.exe, launch.repo):
        raise AgentConfigRefused(
            f"{recorded.agent} is already installed ({recorded.scope} scope) for {recorded.repo} with "
            f"{recorded.exe}; nothing was written",
            hint=f"git memhtml agent uninstall {recorded.agent} --scope {recorded.scope}, then install again",
            path=str(where))
    problems: list[str] = []
    for record in recorded.files:
        path = Path(record.path)
        text = path.read_text(encoding="utf-8") if path.is_file() and not path.is_symlink() else None
        for fragment in record.fragments:
            state = "gone" if text is None else _state(text, record.fmt, fragment)
            if state != "present":
                problems.append(f"{record.path}: our {fragment.kind} is {state}")
    if problems:
        raise AgentConfigRefused(
            f"{recorded.agent} is recorded as installed, but {problems[0]}; nothing was written",
            hint=f"git memhtml agent uninstall {recorded.agent} --scope {recorded.scope}, then install again",
            path=problems[0].split(": ", 1)[0])
    return AgentReport(recorded.agent, recorded.scope, "already installed", str(where),
                       tuple(FileAction(r.path, "unchanged") for r in recorded.files))


def _restore(record: FileRecord, text: str) -> tuple[str | None, str]:
    """The pre-install text of an unchanged file (``None``: delete it) and the action name."""
    if not record.before.exists:
        return None, "deleted"
    raw = record.before.raw()
    if raw is not None:
        return raw.decode("utf-8"), "restored"
    for splice in reversed(record.splices):
        cut = unapply(text, splice)
        if cut is None:
            break
        text = cut
    else:
        if sha256_text(text) == record.before.sha256:
            return text, "restored"
    raise AgentConfigRefused(f"{record.path}: the pre-install bytes cannot be rebuilt; nothing was written",
                             hint="remove the git-memhtml entries by hand", path=record.path)


def _uninstall_file(record: FileRecord, warnings: list[str]) -> tuple[FileAction, str | None, bool]:
    """What uninstall does to one file: the action, the new text (``None``: delete) and whether to write."""
    path = Path(record.path)
    if path.is_symlink():
        warnings.append(f"{record.path}: is now a symlink; left as it is")
        return FileAction(record.path, "left"), None, False
    if not path.exists():
        if record.before.exists:
            warnings.append(f"{record.path}: was deleted since install; left absent")
        return FileAction(record.path, "missing"), None, False
    text = path.read_bytes().decode("utf-8", "surrogateescape")
    if sha256_text(text) == record.after_sha256:
        restored, action = _restore(record, text)
        return FileAction(record.path, action), restored, True
    if record.before.exists and sha256_text(text) == record.before.sha256:
        return FileAction(record.path, "unchanged"), text, False
    removed = 0
    for fragment, splice in reversed(list(zip(record.fragments, record.splices, strict=True))):
        state = _state(text, record.fmt, fragment)
        if state == "present":
            text = _without(text, fragment, splice)
            removed += 1
        elif state == "edited":
            warnings.append(f"{record.path}: our {fragment.kind} "
                            f"{'.'.join((*fragment.path, fragment.key or ''))}".rstrip(". ") +
                            " was edited since install; left in place (remove it by hand if you want it gone)")
    if not removed:
        return FileAction(record.path, "left"), text, False
    if _empty_scaffold(text, record.fmt) and (not record.before.exists or _only_blocks(record)):
        return FileAction(record.path, "deleted"), None, True
    return FileAction(record.path, "fragments removed"), text, True


def uninstall(agent: AgentName, scope: AgentScope, places: Places) -> AgentReport:
    """Remove exactly what the recorded install of ``agent`` in ``scope`` wrote, then its receipt.

    Edited fragments are left and listed in ``warnings``. No receipt: ``not installed``, nothing changed.

    Raises:
        AgentConfigRefused: the receipt is unreadable, names a file outside the agent's folder or another base
            folder (install writes only under it; such a receipt was not written by it), or a large file's
            pre-install bytes cannot be rebuilt.
        StorageError: a write failed.
    """
    base = base_folder(agent, scope, places)
    with agents_lock(places.state_home):
        return _uninstall(agent, scope, base, receipt_path(places.state_home, agent, scope, base))


def _uninstall(agent: AgentName, scope: AgentScope, base: Path, where: Path) -> AgentReport:
    recorded = read_receipt(where)
    if recorded is None:
        return AgentReport(agent, scope, "not installed", str(where), ())
    strays = [r.path for r in recorded.files if not under(r.path, base)]
    if recorded.base != str(base) or strays:
        # install only writes under the base folder; a receipt naming anything else was not written by it
        raise AgentConfigRefused(
            f"{where}: names {strays[0] if strays else recorded.base}, outside {base}; nothing was changed",
            hint=f"move {where} aside; then remove the git-memhtml entries by hand", path=str(where))
    warnings: list[str] = []
    outcomes = [(record, *_uninstall_file(record, warnings)) for record in recorded.files]
    try:
        for record, _, new_text, write in outcomes:
            if not write:
                continue
            path = Path(record.path)
            if new_text is None:
                path.unlink(missing_ok=True)
            else:
                write_atomic(path, new_text.encode("utf-8", "surrogateescape"), path.stat().st_mode & 0o7777)
        for record in reversed(recorded.files):
            for folder in reversed(record.created_dirs):
                try:
                    Path(folder).rmdir()
                except OSError:
                    pass  # not empty (something else lives there now) or already gone
        where.unlink(missing_ok=True)
    except OSError as exc:
        raise StorageError(f"{exc.filename or where}: {exc.strerror or exc}", hint="fix the cause, then run "
                           f"git memhtml agent uninstall {agent} --scope {scope} again",
                           path=str(exc.filename or where)) from exc
    return AgentReport(agent, scope, "uninstalled", str(where), tuple(action for _, action, _, _ in outcomes),
                       tuple(warnings))
