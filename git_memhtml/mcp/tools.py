"""The tools: name, description, argument model and body of each (docs/mcp.md "Tools"; spec digest §7).

A body takes the :class:`~git_memhtml.mcp.session.Session` and its validated arguments and returns the
structured result: the ``--json`` data of the CLI verb of the same name, from the same ``service/`` verb.
Paths are resolved by the one resolver (``tree/paths.py``) before anything is opened or written, and an absolute
path is refused; the memory fields of a write go through the ``apply`` op model (``store/ops.py:OpLine``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from pydantic import ValidationError

from git_memhtml.document.secret_gate import SECRET_HINT
from git_memhtml.errors import InvalidMemory, PathNotFound, SecretInMemory, UsageError, WriteConflict
from git_memhtml.index.defaults import DEFAULT_BUDGET
from git_memhtml.mcp import args as a
from git_memhtml.mcp.session import Session
from git_memhtml.service import memories, retrieval, status, tasks, traces
from git_memhtml.service.door import memory_path, naming, validation_error
from git_memhtml.store.ops import WriteOp, parse_op_lines, parse_op_stream

A = TypeVar("A", bound=a.Args)

OP_HINTS: dict[str, str] = {
    UsageError.code: "fix the named argument (the tool's input schema lists them)",
    WriteConflict.code: "choose another path, or memory_correct the memory already there",
    PathNotFound.code: "check the path with memory_list",
    SecretInMemory.code: SECRET_HINT,
    InvalidMemory.code: "fix the memory and write again",
}
"""The hint of a refused write op, by its code (``service/memories.py:raise_first_error``)."""

SLEEP_NOTE = ("Sleep (the nightly curation run: dedup, decay, consolidation) is an operator action, not a tool: "
              "never ask for it; a person runs and reviews it.")
CORRECT_NOTE = ("When a fact changed or was wrong, do not write a second memory: memory_correct the old one, which "
                "archives it and links both.")


@dataclass(frozen=True)
class Tool:
    """One tool: ``writes`` tools commit (identity checked first); ``read_only`` ones change no file or row
    (``memory_read`` and ``memory_reinforce`` bump access rows, so they are neither)."""

    name: str
    description: str
    model: type[a.Args]
    body: Callable[[Session, Any], dict[str, Any]]
    writes: bool = False
    read_only: bool = False

    def schema(self) -> dict[str, Any]:
        """The JSON input schema (``additionalProperties: false``)."""
        return self.model.model_json_schema()


def _path(s: Session, value: str, verb: str, argument: str) -> str:
    return memory_path(s.door.repo().root, value, verb, argument=argument, relative_only=True)


def _op(fields: Mapping[str, object], *, rename: Mapping[str, str]) -> WriteOp:
    """The write op of a tool's memory fields (``None`` dropped; ``rename``: tool name → op name), checked by the op
    model. Raises UsageError naming the tool argument."""
    raw = {rename.get(k, k): v for k, v in fields.items() if v is not None}
    try:
        return WriteOp.from_json(raw)
    except ValidationError as exc:
        back = {v: k for k, v in rename.items()}
        raise validation_error(exc, what="invalid memory", rename=back,
                               hint="a memory needs title and claim (or body, or article_html)") from None


_MEMORY_FIELDS = ("title", "claim", "body", "article_html", "tags", "entities", "importance", "session_id",
                  "prompt_id", "turn_uuid")


def memory_write(s: Session, x: a.MemoryWrite) -> dict[str, Any]:
    path = _path(s, x.path, "write", "path") if x.path is not None else None
    fields = {k: getattr(x, k) for k in (*_MEMORY_FIELDS, "memory_type", "workspace", "confidence")}
    op = _op({**fields, "path": path}, rename={"memory_type": "type"})
    return memories.write_one(s.door, s.db, op, now=s.now(), hints=OP_HINTS).json()


def memory_write_batch(s: Session, x: a.MemoryWriteBatch) -> dict[str, Any]:
    provenance = {k: v for k, v in (("session_id", x.session_id), ("prompt_id", x.prompt_id),
                                    ("turn_uuid", x.turn_uuid)) if v is not None}
    text = "\n".join(json.dumps({**provenance, **op}, ensure_ascii=False) for op in x.ops)
    keep_going = bool(x.continue_on_error)
    try:
        parsed = parse_op_lines(text, source="ops") if keep_going else parse_op_stream(text, source="ops")
    except UsageError as exc:
        raise naming(exc, "ops") from None
    root = s.door.repo().root
    for number, op in enumerate(parsed):
        if isinstance(op, WriteOp) and op.path is not None and not keep_going:
            memory_path(root, op.path, "apply", argument=f"ops[{number}].path", relative_only=True)
    applied = memories.apply_ops(s.door, s.db, parsed, now=s.now(), label="ops", continue_on_error=keep_going,
                                 retry_hint="continue_on_error: true")
    return applied.json()


def memory_read(s: Session, x: a.MemoryRead) -> dict[str, Any]:
    return memories.read(s.door, s.db, _path(s, x.path, "read", "path"), now=s.now())


_SCOPE_NAMES = ("workspace", "tags", "entity", "as_of")


def _scope(x: a.Scoped) -> Any:
    return retrieval.build_scope(x.memory_types or (), x.workspace, x.tags or (), x.entity, bool(x.include_archived),
                                 x.as_of, names=_SCOPE_NAMES)


def memory_search(s: Session, x: a.MemorySearch) -> dict[str, Any]:
    retrieval.require_query("memory_search", x.query, argument="query", example='e.g. query: "checkout timeout"')
    found = retrieval.search(s.door, s.db, x.query, scope=_scope(x), limit=x.limit or 10, now=s.now(),
                             resident=s.resident())
    return found.json()


def memory_recall(s: Session, x: a.MemoryRecall) -> dict[str, Any]:
    retrieval.require_query("memory_recall", x.query, argument="query", example='e.g. query: "checkout timeout"')
    return retrieval.recall(s.door, s.db, x.query, scope=_scope(x), budget=x.budget_chars or DEFAULT_BUDGET,
                            now=s.now()).json()


def memory_correct(s: Session, x: a.MemoryCorrect) -> dict[str, Any]:
    target = _path(s, x.target_path, "correct", "target_path")
    fields = {k: getattr(x, k) for k in _MEMORY_FIELDS}
    op = _op({**fields, "memory_type": x.memory_type or memories.target_type(s.door, target)},
             rename={"memory_type": "type"})
    return asdict(memories.correct(s.door, s.db, target, op, reason=x.reason, now=s.now()))


def memory_link(s: Session, x: a.MemoryLink) -> dict[str, Any]:
    src = _path(s, x.src_path, "link-src", "src_path")
    dst = _path(s, x.dst_path, "link-dst", "dst_path")
    return memories.link(s.door, s.db, src, x.rel, dst).json()


def memory_neighbors(s: Session, x: a.MemoryNeighbors) -> dict[str, Any]:
    path = _path(s, x.path, "neighbors", "path")
    return retrieval.neighbors(s.db, path, depth=x.depth or 1, rels=x.rels or ()).json()


def memory_archive(s: Session, x: a.MemoryArchive) -> dict[str, Any]:
    path = _path(s, x.path, "archive", "path")
    return asdict(memories.archive(s.door, s.db, path, reason=x.reason, now=s.now()))


def memory_reinforce(s: Session, x: a.MemoryReinforce) -> dict[str, Any]:
    paths = [_path(s, p, "reinforce", f"paths[{i}]") for i, p in enumerate(x.paths)]
    return retrieval.reinforce(s.db, paths, signal=x.signal or "positive", now=s.now(), argument="paths")


def memory_list(s: Session, x: a.MemoryList) -> dict[str, Any]:
    return memories.list_page(s.db, memory_type=x.memory_type, workspace=x.workspace, tag=x.tag, entity=x.entity,
                              para=x.para, include_archived=bool(x.include_archived), limit=x.limit or 50,
                              cursor=x.cursor)


def task_add(s: Session, x: a.TaskAdd) -> dict[str, Any]:
    path = _path(s, x.path, "write", "path") if x.path is not None else None
    fields = {k: getattr(x, k) for k in (*_MEMORY_FIELDS, "workspace", "status", "due")}
    op = _op({**fields, "path": path, "type": "task"}, rename={})
    return tasks.add(s.door, s.db, op, now=s.now(), hints=OP_HINTS)


def task_status(s: Session, x: a.TaskStatusArgs) -> dict[str, Any]:
    path = _path(s, x.path, "task-status", "path")
    return tasks.status_json(tasks.set_status(s.door, s.db, path, x.status, now=s.now(), reason=x.reason))


def task_list(s: Session, x: a.TaskList) -> dict[str, Any]:
    return tasks.page(s.db, statuses=x.status or (), workspace=x.workspace, limit=x.limit or 50, cursor=x.cursor)


def trace_search(s: Session, x: a.TraceSearch) -> dict[str, Any]:
    return traces.search(s.db, x.query, cwd=x.cwd, since=x.since, limit=x.limit or traces.SEARCH_LIMIT,
                         names=("cwd", "since"))[1]


def trace_links(s: Session, x: a.TraceLinks) -> dict[str, Any]:
    if (x.session_id is None) == (x.path is None):
        raise naming(UsageError("trace_links: give exactly one of session_id and path",
                                hint="pass session_id (from trace_search) or path (a memory)"), "session_id")
    session_id = traces.check_session_id(x.session_id, "session_id") if x.session_id is not None else None
    path = _path(s, x.path, "read", "path") if x.path is not None else None
    return traces.links(s.db, session_id=session_id, path=path, now=s.now())


def memory_status(s: Session, _x: a.MemoryStatus) -> dict[str, Any]:
    return status.memory_status(s.door, s.db)


_D = a.DATA_NOTE
TOOLS: tuple[Tool, ...] = (
    Tool("memory_write", "Store one new fact as one memory (one commit; an identical memory is found, not written "
         "twice). " + CORRECT_NOTE + " Give title, memory_type and claim (or body, or article_html). " + SLEEP_NOTE,
         a.MemoryWrite, memory_write, writes=True),
    Tool("memory_write_batch", "Store several memories as one commit; atomic unless continue_on_error. Each op is an "
         "apply line (title, type, claim|body|article_html, …). " + CORRECT_NOTE,
         a.MemoryWriteBatch, memory_write_batch, writes=True),
    Tool("memory_read", "Read one memory in full (title, gist, body, metas, links); counts as an access. " + _D,
         a.MemoryRead, memory_read),
    Tool("memory_search", "Hybrid search over the memories (lexical, vector, recency, salience fused), best first; "
         "archived and task memories only when asked. " + _D, a.MemorySearch, memory_search, read_only=True),
    Tool("memory_recall", "A budgeted recall pack for a question: arcs and memories disclosed in rank order, the "
         "rest as index lines. " + _D, a.MemoryRecall, memory_recall, read_only=True),
    Tool("memory_correct", "Replace a memory that is wrong or out of date: writes the new memory, archives the "
         "target and links both (one commit). Use this, not memory_write, when a fact changed. " + SLEEP_NOTE,
         a.MemoryCorrect, memory_correct, writes=True),
    Tool("memory_link", "Add a typed link between two memories (memory rels only; one commit when it changes the "
         "file).", a.MemoryLink, memory_link, writes=True),
    Tool("memory_neighbors", "Memories linked to a memory (authored and mined edges, both directions, 1-2 hops). "
         + _D, a.MemoryNeighbors, memory_neighbors, read_only=True),
    Tool("memory_archive", "Archive a memory that no longer holds and has no replacement (moves it under archive/; "
         "nothing is deleted). A replaced fact is memory_correct instead.", a.MemoryArchive, memory_archive,
         writes=True),
    Tool("memory_reinforce", "Record that memories served (positive), misled (negative) or were only used (neutral); "
         "a memory bumped in the last 900 s is cooled down.", a.MemoryReinforce, memory_reinforce),
    Tool("memory_list", "List memories in path order, one page at a time (tasks included). " + _D,
         a.MemoryList, memory_list, read_only=True),
    Tool("task_add", "Open a task (a memory of type task, one commit; never deduplicated).", a.TaskAdd, task_add,
         writes=True),
    Tool("task_status", "Move a task to todo, doing, blocked or done (one commit; done archives it; the same status "
         "changes nothing).", a.TaskStatusArgs, task_status, writes=True),
    Tool("task_list", "List tasks in path order: the open ones by default. " + _D, a.TaskList, task_list,
         read_only=True),
    Tool("trace_search", "Search the indexed agent sessions by first prompt and title. " + _D, a.TraceSearch,
         trace_search, read_only=True),
    Tool("trace_links", "The links between memories and agent sessions, of one session or of one memory.",
         a.TraceLinks, trace_links),
    Tool("memory_status", "The memory's health: HEAD, whether the index is fresh, counts by type, the embedder, the "
         "last sleep run. " + SLEEP_NOTE, a.MemoryStatus, memory_status, read_only=True),
)
"""Every tool, in the order ``tools/list`` shows them (names fixed by the spec digest §7 and issue 14)."""

BY_NAME: Mapping[str, Tool] = {t.name: t for t in TOOLS}
