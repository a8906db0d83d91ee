"""Detected tasks: the proposals a night declined to decide, filed as ordinary task files with evidence.

(docs/tasks.md §7; docs/tasks.md §7.) One module holds what every detector shares:

- **The key is the path.** ``areas/inbox/tasks/det-<12 hex>-<slug>.html`` where the hex is
  ``sha256(norm(detector) + " " + norm(finding))[:12]``; a second night finds the open file and refreshes its
  ``updated`` stamp instead of opening a duplicate, with no index involved.
- **Evidence is verified in code**: a quote must appear in the flattened article text of the cited file on disk; a
  measurement must be non-empty.
- **A human dismissal sticks**: a detected task a person closed (done in place, or archived by anyone but the
  sweep: not tagged ``machine-closed``) refuses the same key, in place or under ``archive/<Y>/areas/inbox/tasks/``
  ten years back from the run date.
- **Ten a night in each class** (``env.services.budget``): ten tasks of open work (task-detection,
  trace-commitment) and ten review tasks (every other detector); overflow is counted per class.
- **The sweep** (:func:`sweep_detections`): a detector that judged its whole candidate set this night (a model was
  bound and every batch was answered) closes its open detections whose finding it no longer saw: marked done,
  tagged ``machine-closed``, archived. A task tagged ``machine-closed`` is no human dismissal. The sweep never
  closes a task a person has touched since the machine wrote it (:func:`machine_owned`), nor one whose finding lies
  outside what the night judged (the detector's ``within``).

Every function stages through ``store.edits`` and never commits; on ``env.dry_run`` outcomes are computed and
nothing is written.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape, unescape
from typing import Literal

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.model import MemoryDocument
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.domain.frame import frame_key_of
from git_memhtml.errors import InvalidMemory, PathRefused
from git_memhtml.gitrepo import GitRepo
from git_memhtml.sleep.engine.env import PhaseEnv
from git_memhtml.store import edits
from git_memhtml.tree.layout import placement_for, slugify
from git_memhtml.tree.paths import read_tree_file

DETECTED_DIR = placement_for("task")
"""Directory of detected tasks: ``areas/inbox/tasks`` (docs/tasks.md §7 "Path and key")."""

KEY_HEX = 12
"""Hex digits of the key digest (docs/tasks.md §7)."""

SLUG_CAP = 80 - 4 - KEY_HEX - 1
"""Slug budget after ``det-<hex>-``: 63 (docs/tasks.md §7)."""

TITLE_CAP = 90
"""Flattened title length cap (docs/tasks.md §7)."""

DISMISSAL_YEARS = 10
"""Archive years searched for a human dismissal, the run's year included (docs/tasks.md §7 "Mint order" step 2)."""

DETECTED_TAG = "detected"
MACHINE_CLOSED_TAG = "machine-closed"
SLEEP_AUTHOR = "agent:sleep"
"""Author separation (docs/tasks.md §7)."""

KEY_RE = re.compile(r"^(det-[0-9a-f]{12})-")
"""Recovers the key from a file name (docs/tasks.md §7)."""

MACHINE_METAS = frozenset({"type", "status", "created", "updated", "content-hash", "author", "task-status", "tag"})
"""The head metas :func:`render_detected_task` writes; any other one on an open detected task was added by a person
(our decision, docs/tasks.md §7 "Sweep")."""

_MACHINE_ARTICLE = re.compile(
    r"<p><mark>[^<]*</mark></p>\n(?:<p>[^<]*</p>\n)?"
    r"<p>(?:Measured: [^<]*|Evidence from (?P<named>[^<]*): <q cite=\"(?P<cite>[^\"]*)\">[^<]*</q>)</p>\n"
    r"<p>Detected by the [^<]* phase of the sleep run of [^<]*</p>"
)
"""The canonical article :func:`render_detected_task` writes, markup and attributes included (the texts are the
``content-hash``'s business); a quote's ``cite`` must be the source the evidence paragraph names."""

_WS = re.compile(r"\s+")

MintResult = Literal["minted", "refreshed", "dismissed", "unverified", "framed", "capped"]


@dataclass(frozen=True)
class Measurement:
    """Evidence that is a measurement (a ratio, a predicate, a count): no sentence in the corpus states it."""

    detail: str


@dataclass(frozen=True)
class Quote:
    """Evidence that is a sentence of ``source_path`` (repository path); verified against the file on disk."""

    quote: str
    source_path: str


Evidence = Measurement | Quote


@dataclass(frozen=True)
class MintOutcome:
    """What :func:`mint_detected_task` did: ``result``, the finding's ``key`` and the task ``path`` it concerns."""

    result: MintResult
    key: str
    path: str


@dataclass(frozen=True)
class OpenDetection:
    """An open detected task on disk: path, key, detector (``tags[1]``), gist (its claim), the repository paths its
    evidence quotes (``<q cite>``, leading ``/`` dropped) and whether it is still as the machine wrote it
    (:func:`machine_owned`)."""

    path: str
    key: str
    detector: str
    gist: str
    sources: tuple[str, ...] = ()
    owned: bool = True


@dataclass
class TaskTally:
    """Per-phase counts of mint outcomes and sweeps, in the phases' count names (``tasksMinted`` …).

    ``held`` counts open detections the sweep would have closed but left open because a person touched them
    (:func:`machine_owned`); it is not one of the shared ``tasks_*`` count fields."""

    minted: int = 0
    refreshed: int = 0
    framed: int = 0
    dismissed: int = 0
    capped: int = 0
    unverified: int = 0
    closed: int = 0
    held: int = 0
    live_keys: set[str] = field(default_factory=set)

    def add(self, outcome: MintOutcome) -> None:
        """Count one outcome and remember its key as seen (live, whatever the result)."""
        setattr(self, outcome.result, getattr(self, outcome.result) + 1)
        self.live_keys.add(outcome.key)

    @property
    def touched(self) -> bool:
        """Whether anything was (or, on a dry run, would be) written."""
        return bool(self.minted or self.refreshed or self.closed)

    def count_fields(self) -> dict[str, int]:
        """The ``tasks_*`` fields of a phase's counts: ``tasks_minted, tasks_refreshed, tasks_framed,
        tasks_dismissed, tasks_closed, tasks_capped`` (wire ``tasksMinted`` …), in that order."""
        return {
            "tasks_minted": self.minted,
            "tasks_refreshed": self.refreshed,
            "tasks_framed": self.framed,
            "tasks_dismissed": self.dismissed,
            "tasks_closed": self.closed,
            "tasks_capped": self.capped,
        }


def norm(text: str) -> str:
    """NFC, lowercase, collapse whitespace runs, trim (docs/tasks.md §7 ``norm``)."""
    return _WS.sub(" ", unicodedata.normalize("NFC", text).lower()).strip()


def flatten(text: str) -> str:
    """Collapse whitespace runs to one space and trim."""
    return _WS.sub(" ", text).strip()


def detection_key(detector: str, finding: str) -> str:
    """``det-`` + ``sha256(norm(detector) + " " + norm(finding))[:12]`` (docs/tasks.md §7); total: a lone
    surrogate is hashed as its code unit (``surrogatepass``) instead of raising."""
    digest = hashlib.sha256(f"{norm(detector)} {norm(finding)}".encode("utf-8", "surrogatepass")).hexdigest()
    return f"det-{digest[:KEY_HEX]}"


def detected_task_path(key: str, title: str) -> str:
    """``areas/inbox/tasks/<key>-<slug>.html`` with the slug capped at :data:`SLUG_CAP` (empty → ``untitled``)."""
    return f"{DETECTED_DIR}/{key}-{slugify(flatten(title), cap=SLUG_CAP)}.html"


def key_of_path(path: str) -> str | None:
    """The ``det-<hex>`` key of a task path's file name, or ``None``."""
    match = KEY_RE.match(path.rsplit("/", 1)[-1])
    return match.group(1) if match else None


def _read_doc(repo: GitRepo, path: str) -> MemoryDocument | None:
    """The parsed file at ``path`` in the work tree; ``None`` when absent, not a regular file, reached through a
    symlink (never followed: a quote is checked against the tree's own file, nothing a link points at), or invalid."""
    try:
        data = read_tree_file(repo.root, path)
    except (PathRefused, OSError):
        return None
    try:
        return parse_memory(data, path=path)
    except InvalidMemory:
        return None


def _is_detected(doc: MemoryDocument) -> bool:
    return doc.memory_type == "task" and bool(doc.tags) and doc.tags[0] == DETECTED_TAG


def machine_owned(doc: MemoryDocument) -> bool:
    """Whether a detected task is still exactly as the machine left it, so a sweep may close it.

    The machine writes author ``agent:sleep``, task status ``todo``, the tags ``[detected, <detector>]``, the head
    metas of :data:`MACHINE_METAS` and no link, an article of exactly the shape :data:`_MACHINE_ARTICLE` (its
    paragraphs, no other element or attribute, a quote citing the source its text names), and stamps
    ``content-hash`` with the hash of the article text it rendered; its later stamps (a refresh's ``updated``) touch
    the head only. A person who edits the file (adds a note, rewords, takes the task with ``doing``, signs it, tags
    it, links it, sets a due date, changes a citation or an attribute) breaks one of these, and the task is theirs
    from then on: no sweep closes it (docs/tasks.md §7 "Sweep").
    """
    shape = _MACHINE_ARTICLE.fullmatch(doc.article_html)
    if shape is None or (shape["cite"] is not None and unescape(shape["cite"]) != unescape(shape["named"])):
        return False
    return (
        doc.author == SLEEP_AUTHOR
        and doc.task_status == "todo"
        and len(doc.tags) == 2
        and doc.tags[0] == DETECTED_TAG
        and not doc.links
        and all(name in MACHINE_METAS for name, _ in doc.metas)
        and doc.content_hash_meta == doc.content_hash
    )


def _sources(doc: MemoryDocument) -> tuple[str, ...]:
    return tuple(dict.fromkeys(c.href.lstrip("/") for c in doc.citations if c.href))


def open_detections(repo: GitRepo, detector: str | None = None) -> list[OpenDetection]:
    """Open detected tasks in the tree, sorted by path (docs/tasks.md §7 ``openDetections``).

    A file ``areas/inbox/tasks/det-*.html`` that parses as a task not marked done, with ``tags[0] == detected``
    and (when ``detector`` is given) ``tags[1] == detector``. Unparseable files, and files reached through a
    symlink, are skipped.
    """
    folder = repo.root / DETECTED_DIR
    if not folder.is_dir():
        return []
    found: list[OpenDetection] = []
    for file in sorted(folder.glob("det-*.html")):
        path = f"{DETECTED_DIR}/{file.name}"
        key = key_of_path(path)
        doc = _read_doc(repo, path)
        if key is None or doc is None or not _is_detected(doc) or doc.task_status == "done":
            continue
        owner = doc.tags[1] if len(doc.tags) > 1 else ""
        if detector is not None and owner != detector:
            continue
        found.append(OpenDetection(path=path, key=key, detector=owner, gist=doc.gist, sources=_sources(doc),
                                   owned=machine_owned(doc)))
    return found


def is_dismissed(repo: GitRepo, key: str, date: str) -> bool:
    """Whether a person closed this key: a detected task of this key, not tagged ``machine-closed``, that is done in
    place, or archived (done or not: only the sweep archives a detected task, and it tags it ``machine-closed``).

    Looks at ``areas/inbox/tasks/<key>-*.html`` and in ``archive/<Y>/areas/inbox/tasks/<key>-*.html`` for Y = the
    run year back :data:`DISMISSAL_YEARS` years (docs/tasks.md §7 step 2). A person who runs ``git memhtml
    archive`` on a detected task, or moves it into the archive by hand, has dismissed it as surely as one who marks
    it done.
    """
    year = int(date[:4])
    folders = [DETECTED_DIR] + [f"archive/{y:04d}/{DETECTED_DIR}" for y in range(year, year - DISMISSAL_YEARS, -1)]
    for folder in folders:
        base = repo.root / folder
        if not base.is_dir():
            continue
        for file in sorted(base.glob(f"{key}-*.html")):
            doc = _read_doc(repo, f"{folder}/{file.name}")
            if doc is None or not _is_detected(doc) or MACHINE_CLOSED_TAG in doc.tags:
                continue
            if doc.task_status == "done" or folder != DETECTED_DIR:
                return True
    return False


def evidence_verified(repo: GitRepo, evidence: Evidence) -> bool:
    """A measurement needs a non-blank detail; a quote must occur in the article text of its source file on disk
    (docs/tasks.md §7 "Evidence kinds").

    The quote is matched against the file's *article text* (``MemoryDocument.body_text``: the text a reader sees,
    markup removed, so a sentence split by ``<em>`` or a link is found) and nothing else: not the head (title,
    metas), not an attribute, not an HTML comment. Both sides are NFC-normalised and whitespace-flattened; case
    and punctuation must match. The source is read from the work tree without following a symlink.
    """
    if isinstance(evidence, Measurement):
        return bool(evidence.detail.strip())
    quote = _comparable(evidence.quote)
    doc = _read_doc(repo, evidence.source_path)
    return bool(quote) and doc is not None and quote in _comparable(doc.body_text)


def _comparable(text: str) -> str:
    return flatten(unicodedata.normalize("NFC", text))


def _evidence_html(evidence: Evidence) -> str:
    if isinstance(evidence, Measurement):
        return f"<p>Measured: {escape(flatten(evidence.detail), quote=False)}</p>"
    source = "/" + evidence.source_path.lstrip("/")
    quote = escape(flatten(evidence.quote), quote=False)
    return f'<p>Evidence from {escape(source, quote=False)}: <q cite="{escape(source)}">{quote}</q></p>'


def run_date(run_id: str) -> str:
    """``sleep/2026-02-01-3f9a2c`` → ``2026-02-01`` (the id itself when it has no date part)."""
    tail = run_id.split("/", 1)[-1]
    return tail[:10] if len(tail) >= 10 else run_id


def render_detected_task(
    *, detector: str, run_id: str, title: str, claim: str, evidence: Evidence, now: str, detail: str | None = None
) -> str:
    """The task file: type task, status todo, author ``agent:sleep``, tags ``[detected, <detector>]``.

    Article: ``<p><mark>claim</mark></p>``, an optional detail paragraph, the evidence paragraph and a provenance
    paragraph naming the detector and the run's *date*, not its id: two clones' runs of one day that detect the
    same finding then write byte-identical files at the same path, which plain git merges without a conflict (the
    run id is on the commit that added the file, ``Memhtml-Run``).

    Raises:
        InvalidMemory: the render gate refused the file (e.g. an empty claim).
    """
    paragraphs = [f"<p><mark>{escape(flatten(claim), quote=False)}</mark></p>"]
    if detail and detail.strip():
        paragraphs.append(f"<p>{escape(flatten(detail), quote=False)}</p>")
    paragraphs.append(_evidence_html(evidence))
    paragraphs.append(
        f"<p>Detected by the {escape(detector, quote=False)} phase of the sleep run of "
        f"{escape(run_date(run_id), quote=False)}. "
        "This task is a proposal: it closes itself when the finding is no longer detected.</p>"
    )
    return render_memory(MemoryDraft(
        title=flatten(title)[:TITLE_CAP].strip() or "untitled",
        memory_type="task",
        article_html="\n".join(paragraphs),
        author=SLEEP_AUTHOR,
        tags=(DETECTED_TAG, detector),
        task_status="todo",
    ), now=now)


def mint_detected_task(
    env: PhaseEnv,
    detector: str,
    finding: str,
    title: str,
    claim: str,
    evidence: Evidence,
    *,
    detail: str | None = None,
) -> MintOutcome:
    """Mint (or refresh, or refuse) the detected task of one finding (docs/tasks.md §7 "Mint order").

    In order: an open detection with this key is stamped ``updated = env.at`` → ``refreshed`` (no budget); a human
    dismissal → ``dismissed``; unverifiable evidence → ``unverified``; ``frame_key_of(claim)`` equal to the frame key of
    an open detection's gist of this detector → ``framed``; no budget left in the detector's class
    (:func:`~git_memhtml.sleep.engine.contract.task_class`) → ``capped`` (that class's overflow counted); else the file
    is written and staged and one budget unit spent → ``minted``. On a dry run the same outcome is returned and nothing
    is written.

    Args:
        finding: the canonical finding string (the detector sorts its parts), e.g. the two paths of a pair.
        evidence: :class:`Measurement` or :class:`Quote`.

    Raises:
        InvalidMemory: the task file failed the render gate.
    """
    key = detection_key(detector, finding)
    opened = open_detections(env.repo, detector)
    for item in opened:
        if item.key == key:
            if not env.dry_run:
                edits.stamp_file(env.repo, item.path, [edits.set_meta("updated", env.at)])
            return MintOutcome("refreshed", key, item.path)
    path = detected_task_path(key, title)
    if is_dismissed(env.repo, key, env.date):
        return MintOutcome("dismissed", key, path)
    if not evidence_verified(env.repo, evidence):
        return MintOutcome("unverified", key, path)
    frame = frame_key_of(flatten(claim))
    if frame is not None and any(frame_key_of(flatten(item.gist)) == frame for item in opened):
        return MintOutcome("framed", key, path)
    budget = env.services.budget
    if not budget.admits(detector):
        return MintOutcome("capped", key, path)
    text = render_detected_task(
        detector=detector, run_id=env.run_id, title=title, claim=claim, evidence=evidence, now=env.at, detail=detail
    )
    budget.take(detector)
    if not env.dry_run:
        target = env.repo.root / path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        env.repo.stage([path])
    return MintOutcome("minted", key, path)


def sweep_detections(
    env: PhaseEnv,
    detector: str,
    tally: TaskTally,
    *,
    judged: bool,
    within: Callable[[OpenDetection], bool] | None = None,
) -> list[str]:
    """Close ``detector``'s open detections whose key ``tally`` did not see this night; return their paths.

    Only a night that ``judged`` its whole candidate set may sweep (docs/tasks.md §7 "Sweep"): a night with no
    model, a failed call or a budget skip saw only part of it, and absence of a finding proves nothing then. Each
    swept task gets ``task-status = done``, the tag ``machine-closed`` and ``updated``, and is archived
    (``store.edits.archive_file``); ``tally.closed`` counts them. A task that is not a ``det-`` file of this
    detector is never touched. On a dry run the paths are returned and nothing is written.

    Two more guards: ``within`` (when given) says whether a task's finding lay inside what this night judged (a
    detector that reads a window of the corpus passes it, so a task whose source fell out of the window stays
    open); and a task a person touched since the machine wrote it (:func:`machine_owned` is false) is left open
    and counted in ``tally.held``: the person's edit is theirs, and a machine close would bury it in the archive.
    """
    if not judged:
        return []
    closed: list[str] = []
    for item in open_detections(env.repo, detector):
        if item.key in tally.live_keys or key_of_path(item.path) is None:
            continue
        if within is not None and not within(item):
            continue
        if not item.owned:
            tally.held += 1
            continue
        if not env.dry_run and close_detected_task(env, item.path) is None:
            continue
        closed.append(item.path)
    tally.closed += len(closed)
    return closed


def close_detected_task(env: PhaseEnv, path: str) -> str | None:
    """Mark the detected task at ``path`` done, tag it ``machine-closed``, stamp it and archive it; return its archive
    path, or ``None`` when it left the tree (nothing written). The caller checks the task is a ``det-`` file it may
    close (:func:`key_of_path`, :attr:`OpenDetection.owned`)."""
    return edits.archive_file(env.repo, path, at=env.at, extra=[
        edits.set_meta("task-status", "done"), edits.add_meta("tag", MACHINE_CLOSED_TAG)])
