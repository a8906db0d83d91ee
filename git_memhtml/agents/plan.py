"""Planning an agent install: every file read, parsed and changed in memory before the first write, so a refusal
writes nothing (docs/agents.md). :func:`plan_file` is the one entry; ``agents/install.py`` writes what it plans.
"""

from __future__ import annotations

import base64
import copy
import json
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memhtml.agents.jsonsplice import Splice, add_element, add_member, apply
from git_memhtml.agents.model import (
    MARKDOWN_COMMENT,
    TOML_COMMENT,
    Block,
    Element,
    Member,
    TomlTable,
    WantedFile,
    WholeFile,
)
from git_memhtml.agents.receipts import (
    KEEP_BYTES,
    Before,
    Fragment,
    canonical_sha,
    sha256_text,
)
from git_memhtml.agents.textblock import append_block, block, has_marker, toml_key, toml_string
from git_memhtml.errors import AgentConfigRefused


def refuse(path: Path, what: str, hint: str) -> AgentConfigRefused:
    """The refusal of agent file ``path``: ``what`` is wrong with it, ``hint`` what to do; nothing was written."""
    return AgentConfigRefused(f"{path}: {what}; nothing was written", hint=hint, path=str(path))


# ---- planning -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Plan:
    """One agent file as install will write it: what it wants, the file before, the new text, the splices and
    fragments that make the difference, and the folders that must be created first."""

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
        raise refuse(path, f"is a symlink (to {os.readlink(path)})",
                      "install writes a file by replacing it, which would replace the link; point the agent at the "
                      "real file or replace the link by a copy, then run install again")
    if not path.exists():
        return Before(exists=False), ""
    if not path.is_file():
        raise refuse(path, "is not a regular file", "move it aside, then run install again")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise refuse(path, f"is not UTF-8 text (byte {exc.start})", "save it as UTF-8, then run install again") \
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
        raise refuse(folder, "is not a folder, and install must create a file inside it",
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
            raise refuse(path, f"{'.'.join(keys[:i]) or 'the top level'} is not a JSON object",
                          "fix the file's shape, then run install again")
        if key not in node:
            inner: Any = _nest((want.key,), want.value) if isinstance(want, Member) else [want.value]
            value = _nest(keys[i + 1:], inner)
            return Fragment("member", canonical_sha(value), keys[:i], key, value)
        node = node[key]
    if isinstance(want, Member):
        if not isinstance(node, dict):
            raise refuse(path, f"{'.'.join(keys) or 'the top level'} is not a JSON object",
                          "fix the file's shape, then run install again")
        if want.key in node:
            if want.if_absent:
                return None
            raise refuse(path, f"already has {'.'.join((*keys, want.key))} (not written by a recorded install)",
                          "remove that entry (or keep it and do not install), then run install again")
        return Fragment("member", canonical_sha(want.value), keys, want.key, want.value)
    if not isinstance(node, list):
        raise refuse(path, f"{'.'.join(keys)} is not a JSON array", "fix the file's shape, then run install again")
    if want.value in node:
        raise refuse(path, f"{'.'.join(keys)} already holds our hook (not written by a recorded install)",
                      "remove that hook entry, then run install again")
    return Fragment("element", canonical_sha(want.value), keys, None, want.value)


def _plan_json(wf: WantedFile, text: str, exists: bool) -> tuple[str, list[Splice], list[Fragment]]:
    if exists:
        try:
            doc = json.loads(text)
        except json.JSONDecodeError as exc:
            raise refuse(wf.path, f"is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg})",
                          "fix the JSON (comments and trailing commas are not JSON), then run install again") \
                from exc
        if not isinstance(doc, dict):
            raise refuse(wf.path, "does not hold a JSON object", "fix the file's shape, then run install again")
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
            raise refuse(wf.path, "already exists (not written by a recorded install)",
                          "move it aside, then run install again")
        return want.text, [Splice(0, want.text)], [Fragment("file", sha256_text(want.text), text=want.text)]
    comment = TOML_COMMENT if wf.fmt == "toml" else MARKDOWN_COMMENT
    if has_marker(text, agent, comment):
        raise refuse(wf.path, f"already holds a git-memhtml block for {agent} (not recorded by a receipt)",
                      "delete that block, then run install again")
    if isinstance(want, TomlTable):
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise refuse(wf.path, f"is not valid TOML ({exc})", "fix the TOML, then run install again") from exc
        node: Any = data
        for key in want.path:
            node = node.get(key) if isinstance(node, dict) else None
        if node is not None:
            raise refuse(wf.path, f"already has [{'.'.join(want.path)}] (not written by a recorded install)",
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
            raise refuse(wf.path, f"cannot take the table [{'.'.join(want.path)}] appended ({exc})",
                          "define mcp_servers as [mcp_servers.<name>] tables (not inline), then run install again") \
                from exc
        if node != want.values:
            raise refuse(wf.path, "the appended table would not read back as written",
                          "report this with the file attached")
    return new_text, [splice], [Fragment("block", sha256_text(block(agent, body, comment)),
                                         text=block(agent, body, comment))]


def under(path: str | Path, base: Path) -> bool:
    """Whether ``path`` lies strictly inside ``base`` (lexically, after normalisation)."""
    return os.path.normpath(path).startswith(os.path.normpath(base) + os.sep)


def plan_file(wf: WantedFile, agent: str, base: Path) -> Plan:
    """Read ``wf.path`` and plan what ``agent``'s install changes in it, under the agent's folder ``base``.

    Raises:
        AgentConfigRefused: the file is outside ``base``, a sibling install does not edit sits beside it, it is a
            symlink or no regular file, it is not UTF-8 or does not parse, it already holds an entry of ours that no
            receipt records, or a file sits where a folder must be created.
    """
    if not under(wf.path, base):
        raise refuse(wf.path, f"is outside {base}", "report this: an agent file must live under its folder")
    for name in wf.refuse_beside:
        if (wf.path.parent / name).exists():
            raise refuse(wf.path.parent / name, f"exists beside {wf.path.name}, and install does not edit it",
                          f"move the settings of {name} into {wf.path.name} (plain JSON), then run install again")
    before, text = _read(wf.path)
    if wf.fmt == "json":
        new_text, splices, fragments = _plan_json(wf, text, before.exists)
    else:
        new_text, splices, fragments = _plan_text(wf, agent, text, before.exists)
    return Plan(wf, before, new_text, tuple(splices), tuple(fragments), _missing_dirs(wf.path.parent))
