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

import base64
import copy
import json
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memhtml.agents import claude_code, codex, cursor, opencode
from git_memhtml.agents.jsonsplice import Splice, add_element, add_member, apply, cut_once, unapply
from git_memhtml.agents.model import (
    MARKDOWN_COMMENT,
    TOML_COMMENT,
    AgentName,
    AgentScope,
    Block,
    Element,
    Launch,
    Member,
    TomlTable,
    WantedFile,
    WholeFile,
)
from git_memhtml.agents.receipts import (
    KEEP_BYTES,
    Before,
    FileRecord,
    Fragment,
    Receipt,
    agents_lock,
    canonical_sha,
    read_receipt,
    receipt_path,
    save_receipt,
    sha256_text,
    write_atomic,
)
from git_memhtml.agents.textblock import MARK, append_block, block, has_marker, toml_key, toml_string
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


def _refuse(path: Path, what: str, hint: str) -> AgentConfigRefused:
    return AgentConfigRefused(f"{path}: {what}; nothing was written", hint=hint, path=str(path))


# ---- planning -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Plan:
    wanted: WantedFile
    before: Before
    new_text: str
    splices: tuple[Splice, ...]
    fragments: tuple[Fragment, ...]
    created_dirs: tuple[str, ...]


def _read(path: Path) -> tuple[Before, str]:
    """The pre-install state of ``path`` and its text (``""`` when absent); refuses a symlink, a folder and bytes
    that are not UTF-8."""
    if path.is_symlink():
        raise _refuse(path, f"is a symlink (to {os.readlink(path)})",
                      "install writes a file by replacing it, which would replace the link; point the agent at the "
                      "real file or replace the link by a copy, then run install again")
    if not path.exists():
        return Before(exists=False), ""
    if not path.is_file():
        raise _refuse(path, "is not a regular file", "move it aside, then run install again")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise _refuse(path, f"is not UTF-8 text (byte {exc.start})", "save it as UTF-8, then run install again") \
            from exc
    kept = base64.b64encode(raw).decode("ascii") if len(raw) <= KEEP_BYTES else None
    return Before(True, sha256_text(text), path.stat().st_mode & 0o7777, kept), text


def _missing_dirs(folder: Path) -> tuple[str, ...]:
    """The folders of ``folder``'s chain that do not exist yet, outermost first; refuses a chain blocked by
    something that is not a folder (a file named ``.claude``), which would fail the install after its first
    write."""
    missing: list[str] = []
    while not folder.exists():
        missing.append(str(folder))
        folder = folder.parent
    if not folder.is_dir():
        raise _refuse(folder, "is not a folder, and install must create a file inside it",
                      "move it aside, then run install again")
    return tuple(reversed(missing))


def _nest(keys: tuple[str, ...], value: Any) -> Any:
    for key in reversed(keys):
        value = {key: value}
    return value


def _merge(into: dict[str, Any], extra: dict[str, Any]) -> None:
    """Fold ``extra`` into ``into``: objects merge key by key, arrays are extended."""
    for key, value in extra.items():
        if isinstance(into.get(key), dict) and isinstance(value, dict):
            _merge(into[key], value)
        elif isinstance(into.get(key), list) and isinstance(value, list):
            into[key].extend(value)
        else:
            into[key] = value


def _json_fragment(doc: Any, want: Member | Element, path: Path) -> Fragment | None:
    """The concrete fragment that makes ``doc`` hold ``want``: a member added where the first missing key is, or an
    element appended; ``None`` when an ``if_absent`` member is already there."""
    keys = want.path
    node = doc
    for i, key in enumerate(keys):
        if not isinstance(node, dict):
            raise _refuse(path, f"{'.'.join(keys[:i]) or 'the top level'} is not a JSON object",
                          "fix the file's shape, then run install again")
        if key not in node:
            inner: Any = _nest((want.key,), want.value) if isinstance(want, Member) else [want.value]
            value = _nest(keys[i + 1:], inner)
            return Fragment("member", canonical_sha(value), keys[:i], key, value)
        node = node[key]
    if isinstance(want, Member):
        if not isinstance(node, dict):
            raise _refuse(path, f"{'.'.join(keys) or 'the top level'} is not a JSON object",
                          "fix the file's shape, then run install again")
        if want.key in node:
            if want.if_absent:
                return None
            raise _refuse(path, f"already has {'.'.join((*keys, want.key))} (not written by a recorded install)",
                          "remove that entry (or keep it and do not install), then run install again")
        return Fragment("member", canonical_sha(want.value), keys, want.key, want.value)
    if not isinstance(node, list):
        raise _refuse(path, f"{'.'.join(keys)} is not a JSON array", "fix the file's shape, then run install again")
    if want.value in node:
        raise _refuse(path, f"{'.'.join(keys)} already holds our hook (not written by a recorded install)",
                      "remove that hook entry, then run install again")
    return Fragment("element", canonical_sha(want.value), keys, None, want.value)


def _plan_json(wf: WantedFile, text: str, exists: bool) -> tuple[str, list[Splice], list[Fragment]]:
    if exists:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise _refuse(wf.path, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                          "fix the JSON (comments and trailing commas are not JSON), then run install again") \
                from exc
        if not isinstance(doc, dict):
            raise _refuse(wf.path, "does not hold a JSON object", "fix the file's shape, then run install again")
    else:
        text, doc = "{}\n", {}
    fragments: list[Fragment] = []
    for want in wf.wants:
        assert isinstance(want, (Member, Element))
        fragment = _json_fragment(doc, want, wf.path)
        if fragment is None:
            continue
        full = (*fragment.path, fragment.key) if fragment.key is not None else None  # elements: an existing array
        host = None if full is None else next((i for i, f in enumerate(fragments) if f.key is not None
                                               and full[:len(f.path) + 1] == (*f.path, f.key)), None)
        if host is None or full is None:
            fragments.append(fragment)
            continue
        # a parent an earlier fragment of ours creates: the want joins that fragment, which stays one piece
        owner = fragments[host]
        value = copy.deepcopy(owner.value)
        _merge(value, _nest(full[len(owner.path) + 1:], fragment.value))
        fragments[host] = Fragment("member", canonical_sha(value), owner.path, owner.key, value)
    splices: list[Splice] = []
    for fragment in fragments:
        if fragment.kind == "member":
            assert fragment.key is not None
            splice = add_member(text, fragment.path, fragment.key, fragment.value)
        else:
            splice = add_element(text, fragment.path, fragment.value)
        text = apply(text, splice)
        splices.append(splice)
    json.loads(text)  # what we built must parse (a bug here must not reach the user's file)
    return text, splices, fragments


def _toml_body(table: TomlTable) -> str:
    lines = ["[" + ".".join(toml_key(k) for k in table.path) + "]"]
    for key, value in table.values.items():
        rendered = toml_string(value) if isinstance(value, str) else "[" + ", ".join(map(toml_string, value)) + "]"
        lines.append(f"{toml_key(key)} = {rendered}")
    return "\n".join(lines) + "\n"


def _plan_text(wf: WantedFile, agent: str, text: str, exists: bool) -> tuple[str, list[Splice], list[Fragment]]:
    want = wf.wants[0]
    if isinstance(want, WholeFile):
        if exists:
            raise _refuse(wf.path, "already exists (not written by a recorded install)",
                          "move it aside, then run install again")
        return want.text, [Splice(0, want.text)], [Fragment("file", sha256_text(want.text), text=want.text)]
    comment = TOML_COMMENT if wf.fmt == "toml" else MARKDOWN_COMMENT
    if has_marker(text, agent, comment):
        raise _refuse(wf.path, f"already holds a git-memhtml block for {agent} (not recorded by a receipt)",
                      "delete that block, then run install again")
    if isinstance(want, TomlTable):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise _refuse(wf.path, f"is not valid TOML ({exc})", "fix the TOML, then run install again") from exc
        node: Any = data
        for key in want.path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            raise _refuse(wf.path, f"already has [{'.'.join(want.path)}] (not written by a recorded install)",
                          "remove that table, then run install again")
        body = _toml_body(want)
    else:
        assert isinstance(want, Block)
        body = want.body
    splice = append_block(text, agent, body, comment)
    new_text = apply(text, splice)
    if isinstance(want, TomlTable):
        try:
            node = tomllib.loads(new_text)
            for key in want.path:
                node = node[key]
        except (tomllib.TOMLDecodeError, KeyError, TypeError) as exc:
            raise _refuse(wf.path, f"cannot take the table [{'.'.join(want.path)}] appended ({exc})",
                          "define mcp_servers as [mcp_servers.<name>] tables (not inline), then run install again") \
                from exc
        if node != want.values:
            raise _refuse(wf.path, "the appended table would not read back as written",
                          "report this with the file attached")
    return new_text, [splice], [Fragment("block", sha256_text(block(agent, body, comment)),
                                         text=block(agent, body, comment))]


def _under(path: str | Path, base: Path) -> bool:
    """Whether ``path`` lies strictly inside ``base`` (lexically, after normalisation)."""
    return os.path.normpath(path).startswith(os.path.normpath(base) + os.sep)


def _plan(wf: WantedFile, agent: str, base: Path) -> _Plan:
    if not _under(wf.path, base):
        raise _refuse(wf.path, f"is outside {base}", "report this: an agent file must live under its folder")
    for name in wf.refuse_beside:
        if (wf.path.parent / name).exists():
            raise _refuse(wf.path.parent / name, f"exists beside {wf.path.name}, and install does not edit it",
                          f"move the settings of {name} into {wf.path.name} (plain JSON), then run install again")
    before, text = _read(wf.path)
    if wf.fmt == "json":
        new_text, splices, fragments = _plan_json(wf, text, before.exists)
    else:
        new_text, splices, fragments = _plan_text(wf, agent, text, before.exists)
    return _Plan(wf, before, new_text, tuple(splices), tuple(fragments), _missing_dirs(wf.path.parent))


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
    plans = [_plan(wf, agent, base) for wf in _WANTED[agent](scope, base, launch)]
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
    strays = [r.path for r in recorded.files if not _under(r.path, base)]
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
