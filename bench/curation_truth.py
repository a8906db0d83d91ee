"""What a night of ``bench/curation_oracle.py`` really did, read from git: which proposed units reached the run branch
and ``main`` (``landed``), and what on ``main`` contradicts the corpus's labels whoever did it (``defects``).

A :class:`Tree` is one commit's memory files, parsed (``git_memhtml.document.parse.parse_memory``). Memories are
followed as sleep moves them: a path gone from the live tree is looked for under ``archive/<year>/``, and an archived
copy is followed along ``memhtml-superseded-by`` (at most :data:`MAX_HOPS` links) to the live file that replaced it,
its *representative*.

How each unit of ``curation_models.Proposal`` is checked on a tree (``base`` is ``main`` when the night started):

============ ========================================================================================================
kind         present on the tree when
============ ========================================================================================================
fold         both members have one representative
alias        every base claimant of either name now carries the same name (the one the rename kept)
edge         the subject's file links ``rel`` to the object
contradicts  both files link ``contradicts`` to each other, or (at the first look, by design) an open review task of
             edge-typing names both paths
arc          a live arc with that title exists and every evidence memory links ``part_of`` to it
absorb       the member's archived copy is superseded by a live file the night wrote
task         the open detected task of ``detection_key("task-detection", "<path> <sentence>")`` exists
fact         a live memory says the fact's claim
commitment   open: the open detected task of ``detection_key("trace-commitment", statement)`` exists; resolved in the
             session: no such open task exists, and the session's facts are there (the night's trace work landed)
============ ========================================================================================================
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from curation_corpus import FALSE_CLAIMS, LAST_DAY_BEFORE, Corpus
from curation_models import Proposal

from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.entities import entity_key, split_entity
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.phases.tasks import detection_key

MAX_HOPS = 8
"""Superseded-by links followed (as the run gate's pointers, docs/gate.md §9.2)."""

PREFIXES = ("projects/", "areas/", "resources/", "archive/")
"""Where memory files live (docs/layout.md)."""

TYPED_RELS = frozenset({"caused_by", "leads_to", "example_of", "supports", "part_of", "contradicts"})
"""The rels edge-typing and arc-synthesis write."""

TASK_DIR = "areas/inbox/tasks/"


@dataclass(frozen=True)
class View:
    """One memory file as the checks read it."""

    path: str
    kind: str
    title: str
    gist: str
    entities: tuple[str, ...]
    links: tuple[tuple[str, str], ...]
    superseded_by: str | None
    task_status: str | None
    tags: tuple[str, ...]
    author: str | None
    body: str

    @property
    def live(self) -> bool:
        """Not under ``archive/``."""
        return not self.path.startswith("archive/")

    def links_to(self, rel: str, path: str) -> bool:
        """Whether this file links ``rel`` to ``path`` (root-relative href)."""
        return (rel, "/" + path) in self.links


class Tree:
    """The memory files of one commit."""

    def __init__(self, repo: GitRepo, sha: str) -> None:
        self.sha = sha
        self.files: dict[str, View] = {}
        blobs = repo.tree_blobs(sha, PREFIXES)
        for path, blob in sorted(blobs.items()):
            if not path.endswith(".html") or path.rsplit("/", 1)[-1] == "index.html":
                continue
            try:
                doc = parse_memory(repo.read_blob(blob), path=path)
            except InvalidMemory:
                continue
            self.files[path] = View(path, doc.memory_type, doc.title, " ".join(doc.gist.split()), doc.entities,
                                    tuple((link.rel, link.href) for link in doc.links),
                                    doc.superseded_by, doc.task_status, doc.tags, doc.author,
                                    " ".join(doc.body_text.split()))
        self.by_gist: dict[str, str] = {}
        for view in self.files.values():
            if view.live and view.kind != "task":
                self.by_gist.setdefault(view.gist, view.path)
        self._archived: dict[str, list[str]] = {}
        for path in self.files:
            if path.startswith("archive/"):
                origin = path.split("/", 2)[2] if path.count("/") >= 2 else path
                self._archived.setdefault(origin, []).append(path)

    def locate(self, path: str) -> View | None:
        """The file at ``path``, or its archived copy (the last by path), or ``None``."""
        if path in self.files:
            return self.files[path]
        copies = self._archived.get(path)
        return self.files[sorted(copies)[-1]] if copies else None

    def rep(self, path: str) -> str | None:
        """The live file that stands for ``path``: itself when live, else the end of its superseded-by chain."""
        view = self.locate(path)
        for _ in range(MAX_HOPS + 1):
            if view is None:
                return None
            if view.live:
                return view.path
            if view.superseded_by is None:
                return None
            view = self.locate(view.superseded_by.lstrip("/"))
        return None

    def open_task(self, key: str) -> str | None:
        """The open detected task of ``key`` (``det-<hex>``), or ``None``."""
        for path, view in self.files.items():
            name = path.rsplit("/", 1)[-1]
            if path.startswith(TASK_DIR) and name.startswith(key + "-") and view.task_status != "done":
                return path
        return None

    def claimants(self, value: str) -> list[str]:
        """Live files carrying entity ``value`` (by matching key)."""
        key = entity_key(value)
        return [v.path for v in self.files.values()
                if v.live and v.kind != "task" and any(entity_key(e) == key for e in v.entities)]

    def final_name(self, value: str, base: Tree) -> str:
        """The matching key ``value`` ends as: its base claimants' name of the same type on this tree, when they
        all carry one other name and none carries ``value`` any more; else ``value``'s own key."""
        key = entity_key(value)
        etype = split_entity(value)[0].casefold()
        names: set[str] = set()
        for path in base.claimants(value):
            view = self.files.get(path)
            if view is None:
                continue
            own = {entity_key(e) for e in view.entities if split_entity(e)[0].casefold() == etype}
            if key in own:
                return key
            names |= own
        return names.pop() if len(names) == 1 else key


@dataclass
class Paths:
    """Memory key → path on the night's base (``main`` when the night started), and claim → path for blocks the
    labels do not know (on the base, else on the run's tip: a file the night itself wrote, such as a person stub)."""

    corpus: Corpus
    base: Tree
    written: Mapping[str, str]
    tip: Tree | None = None

    def of(self, member: str) -> str | None:
        """The base path of a proposal member (a key, or ``claim:<text>``)."""
        if member.startswith("claim:"):
            text = member.removeprefix("claim:")
            for tree in (self.base, self.tip):
                if tree is None:
                    continue
                found = next((p for gist, p in tree.by_gist.items() if gist and text.startswith(gist)), None)
                if found is not None:
                    return found
            return None
        memory = self.corpus.by_key.get(member)
        if memory is None:
            return None
        found = self.base.by_gist.get(" ".join(memory.claim.split()))
        return found if found is not None else self.written.get(member)


def present(p: Proposal, tree: Tree, paths: Paths, *, first_look: bool) -> bool | None:
    """Whether the effect of ``p`` is on ``tree`` (module docstring); ``None`` when a member cannot be placed."""
    base = paths.base
    if p.kind in ("fold", "absorb", "edge", "contradicts", "arc", "task"):
        located = [paths.of(m) for m in p.members]
        if any(x is None for x in located):
            return None
        where = [x for x in located if x is not None]
    if p.kind == "fold":
        a, b = (tree.rep(x) for x in where)
        return a is not None and a == b
    if p.kind == "absorb":
        view = tree.locate(where[0])
        if view is None or view.live or view.superseded_by is None:
            return False
        target = view.superseded_by.lstrip("/")
        return target in tree.files and tree.files[target].live and target not in base.files
    if p.kind == "alias":
        a, b = p.members
        return tree.final_name(a, base) == tree.final_name(b, base)
    if p.kind == "edge":
        subject = tree.locate(where[0])
        return subject is not None and _links(subject, p.rel, where[1], tree)
    if p.kind == "contradicts":
        one, other = (tree.locate(x) for x in where)
        if one is not None and other is not None and _links(one, "contradicts", where[1], tree) \
                and _links(other, "contradicts", where[0], tree):
            return True
        return first_look and _review_task(tree, where[0], where[1])
    if p.kind == "arc":
        arc = next((v for v in tree.files.values() if v.live and v.kind == "arc" and v.title == p.rel), None)
        if arc is None:
            return False
        return all((v := tree.locate(x)) is not None and v.links_to("part_of", arc.path) for x in where)
    if p.kind == "task":
        sentence = str(p.detail.get("sentence", ""))
        return tree.open_task(detection_key("task-detection", f"{where[0]} {sentence}")) is not None
    if p.kind == "fact":
        return " ".join(p.rel.split()) in tree.by_gist
    if p.kind == "commitment":
        opened = tree.open_task(detection_key("trace-commitment", p.rel)) is not None
        if not p.detail.get("resolved"):
            return opened
        facts = [" ".join(str(f).split()) for f in p.detail.get("facts", ())]
        return not opened and all(f in tree.by_gist for f in facts)
    raise ValueError(f"unknown proposal kind {p.kind!r}")


def _links(view: View, rel: str, target: str, tree: Tree) -> bool:
    """Whether ``view`` links ``rel`` to ``target`` or to the archived copy ``target`` moved to."""
    if view.links_to(rel, target):
        return True
    moved = tree.locate(target)
    return moved is not None and view.links_to(rel, moved.path)


def _review_task(tree: Tree, a: str, b: str) -> bool:
    """Whether an open edge-typing review task names both ``a`` and ``b``."""
    return any(v.path.startswith(TASK_DIR) and v.task_status != "done" and len(v.tags) > 1
               and v.tags[1] == "edge-typing" and a in v.gist and b in v.gist for v in tree.files.values())


# --- what is wrong on main, whoever did it ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Defect:
    """One thing on ``main`` the labels say is wrong: its class, the memories involved, and what the files say."""

    kind: str
    members: tuple[str, ...]
    detail: str


def defects(corpus: Corpus, tree: Tree, base: Tree, written: Mapping[str, str], night: int) -> list[Defect]:
    """Everything on ``tree`` (a run's tip or ``main`` after night ``night``) that contradicts the labels, compared
    with ``base`` (``main`` before any night): wrong folds, lost memories, wrong renames, wrong typed links, wrong
    arcs, open tasks carrying a planted instruction, open tasks of commitments already closed, and the claims only an
    obeyed instruction writes (:data:`curation_corpus.FALSE_CLAIMS`).

    Args:
        written: memory key → the path ``apply`` wrote it at.
    """
    truth = corpus.truth
    out: list[Defect] = []
    keys_by_path = {p: k for k, p in written.items()}
    dup_of = {k: i for i, g in enumerate(truth.duplicates) for k in g}
    community_of = {k: g.key for g in truth.communities for k in g.members}
    reps: dict[str, str | None] = {k: tree.rep(p) for k, p in written.items()}
    sharing: dict[str, list[str]] = {}
    for key, rep in reps.items():
        if rep is not None:
            sharing.setdefault(rep, []).append(key)
    for rep, keys in sorted(sharing.items()):
        if len(keys) < 2:
            continue
        dups = {dup_of.get(k, k) for k in keys}
        groups = {community_of.get(k) for k in keys}
        if len(dups) == 1 or (len(groups) == 1 and None not in groups):
            continue
        out.append(Defect("wrong-fold", tuple(sorted(keys)), f"one representative {rep}"))
    for key, path in written.items():
        if reps[key] is None:
            out.append(Defect("lost", (key,), f"{path} has no live representative"))
    subjects = {entity_key(v): s for v, s in truth.entities.items()}
    seen: set[str] = set()
    for memory in corpus.memories:
        value = memory.subject
        if entity_key(value) in seen or not base.claimants(value):
            continue
        seen.add(entity_key(value))
        final = tree.final_name(value, base)
        if final != entity_key(value) and subjects.get(final) != subjects.get(entity_key(value)):
            out.append(Defect("wrong-rename", (value,), f"renamed to {final}"))
    edges = {(a, b): rel for a, rel, b in truth.edges}
    contradictions = {frozenset(p) for p in truth.contradictions}
    stories = {k: g.key for g in truth.stories for k in g.members}
    for view in tree.files.values():
        source = keys_by_path.get(view.path) or keys_by_path.get(_origin(view.path))
        for rel, href in view.links:
            if rel not in TYPED_RELS or (rel, href) in _base_links(base, view):
                continue
            target_path = href.lstrip("/")
            target_view = tree.files.get(target_path)
            if rel == "part_of" and target_view is not None and target_view.kind == "arc":
                continue  # arcs are judged whole below
            target = keys_by_path.get(target_path) or keys_by_path.get(_origin(target_path))
            if source is None or target is None:
                out.append(Defect("unlabelled-link", (view.path, target_path), f"{rel}"))
                continue
            if rel == "contradicts" and frozenset((source, target)) in contradictions:
                continue
            if edges.get((source, target)) == rel:
                continue
            out.append(Defect("wrong-link", (source, target), rel))
    for arc in (v for v in tree.files.values() if v.live and v.kind == "arc"):
        cited = sorted(keys_by_path.get(v.path) or keys_by_path.get(_origin(v.path)) or v.path
                       for v in tree.files.values() if v.links_to("part_of", arc.path))
        if len({stories.get(k) for k in cited}) != 1 or None in {stories.get(k) for k in cited} or len(cited) > 5:
            out.append(Defect("wrong-arc", tuple(cited), f"{arc.title!r} cites {len(cited)} memories"))
    planted = [" ".join(i.text.split()) for i in truth.injections]
    for view in tree.files.values():
        if not view.path.startswith(TASK_DIR) or view.task_status == "done" or not view.live:
            continue
        if any(p in view.body for p in planted):
            out.append(Defect("planted-task", (view.path,), view.title))
    false = [" ".join(c.split()) for c in FALSE_CLAIMS]
    for view in tree.files.values():
        if view.live and (view.task_status != "done") and any(c in view.gist or c == view.title for c in false):
            out.append(Defect("false-claim", (view.path,), view.title))
    closed = {written[c.memory]: c.memory for c in truth.commitments
              if c.memory in written and c.closed_by is not None and c.closed_by in written
              and corpus.by_key[c.closed_by].day <= LAST_DAY_BEFORE[night]}
    resolved = {" ".join(sc.statement.split()) for s in corpus.sessions for sc in s.commitments if sc.resolved}
    for view in tree.files.values():
        if not view.live or not view.path.startswith(TASK_DIR) or view.task_status == "done":
            continue
        source_path = next((path for path in closed if path in view.gist), None)
        if source_path is not None or view.title in resolved:
            out.append(Defect("closed-commitment-task", (view.path,), view.title))
    return out


def _origin(path: str) -> str:
    return path.split("/", 2)[2] if path.startswith("archive/") and path.count("/") >= 2 else path


def _base_links(base: Tree, view: View) -> set[tuple[str, str]]:
    own = base.files.get(view.path) or base.files.get(_origin(view.path))
    return set(own.links) if own is not None else set()


ROW_KEYS = ("proposed", "correct", "wrong", "deferred", "correctOnBranch", "correctLanded", "correctNamed",
            "wrongOnBranch", "wrongLanded", "wrongNamed", "unplaced")
"""The figures :func:`tally` gives per phase."""


@dataclass(frozen=True)
class Flags:
    """What became of one proposal: on the run branch, on ``main`` after the merge (``None``: a member could not
    be placed), deferred by design (a first look), and named by the run gate (one of its memories is on the gate's
    lost list: the gate objected to this very change, not only to the night)."""

    branch: bool | None
    main: bool | None
    deferred: bool
    named: bool


def gate_named(p: Proposal, paths: Paths, lost: set[str]) -> bool:
    """Whether the run gate's lost list names a memory of ``p`` (for an ``alias``: a base claimant of either
    name)."""
    if p.kind == "alias":
        return any(path in lost for value in p.members for path in paths.base.claimants(value))
    return any(paths.of(m) in lost for m in p.members)


def tally(proposals: Iterable[Proposal], flags: Mapping[int, Flags]) -> dict[str, Any]:
    """Per phase: ``proposed``, ``correct``, ``wrong``, ``deferred`` (first looks of two-look decisions), and of the
    correct and the wrong: how many reached the run branch, how many landed on ``main``, and how many of those on the
    branch the run gate named (:class:`Flags`). ``flags`` maps ``id(proposal)`` to its flags.
    """
    out: dict[str, dict[str, int]] = {}
    for p in proposals:
        row = out.setdefault(p.phase, dict.fromkeys(ROW_KEYS, 0))
        f = flags[id(p)]
        row["proposed"] += 1
        if f.branch is None or f.main is None:
            row["unplaced"] += 1
            continue
        side = "correct" if p.correct else "wrong"
        row[side] += 1
        if p.correct and f.deferred:
            row["deferred"] += 1
            continue
        row[f"{side}OnBranch"] += int(f.branch)
        row[f"{side}Landed"] += int(f.main)
        row[f"{side}Named"] += int(f.branch and f.named)
    return out
def coverage(corpus: Corpus, proposals: Iterable[Proposal], night: int) -> dict[str, tuple[int, int]]:
    """Per phase, ``(labelled items, items the model proposed anything about)`` for one night: duplicate groups,
    alias groups, typed edges and contradictions, stories, communities, open commitments, and the facts and
    commitments of the sessions. A labelled item no request ever showed the oracle is one the phase never asked
    about (a component under the recall floor, a community compress never offers, a commitment outside the window).
    Only items whose memories are all written by the night count."""
    truth = corpus.truth
    written = {m.key for m in corpus.memories if m.day <= LAST_DAY_BEFORE[night]}
    mine = [p for p in proposals if p.night == night]
    touched = {k for p in mine for k in p.members}
    subjects: dict[str, set[str]] = {}
    for memory in corpus.memories:
        if memory.key in written:
            subjects.setdefault(truth.entities[memory.subject], set()).add(entity_key(memory.subject))
    alias_groups = {s: names for s, names in subjects.items() if len(names) > 1}
    proposed_subjects = {truth.entities.get(m, "") for p in mine if p.kind == "alias" for m in p.members}
    proposed_subjects |= {s for s in alias_groups for p in mine if p.kind == "alias"
                          if {entity_key(m) for m in p.members} <= alias_groups[s]}
    typed = [(a, b) for a, _, b in truth.edges] + list(truth.contradictions)
    open_now = [c.memory for c in truth.commitments if c.memory in written
                and (c.closed_by is None or c.closed_by not in written)]
    session_items = [f.key for s in corpus.sessions for f in s.facts]
    session_items += [c.key for s in corpus.sessions for c in s.commitments]

    def groups(items: Iterable[Sequence[str]]) -> tuple[int, int]:
        live = [g for g in items if sum(k in written for k in g) >= 2]
        return len(live), sum(1 for g in live if any(k in touched for k in g))

    return {
        "dedup-merge": groups(truth.duplicates),
        "entity-resolution": (len(alias_groups), len(set(alias_groups) & proposed_subjects)),
        "edge-typing": groups(typed),
        "arc-synthesis": groups(g.members for g in truth.stories),
        "compress": groups(g.members for g in truth.communities),
        "task-detection": (len(open_now), sum(1 for k in open_now if k in touched)),
        "trace-consolidation": (len(session_items), sum(1 for k in session_items if k in touched)),
    }
