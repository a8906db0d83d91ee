"""LoCoMo → `git memhtml apply` stream converter (real inputs for import, retrieval and sleep benchmarks).

Reads the LoCoMo JSON described in docs/locomo.md (six conversations of Maharana et al., ACL 2024;
CC BY-NC 4.0, never copied into this repository) and writes one JSONL ``write`` op per observation or per dialogue
turn, in the shape ``git memhtml apply`` accepts (docs/store.md §5.2):

- ``type`` ``episodic``; ``workspace`` = the sample id (placement ``projects/<sample_id>/``, docs/layout.md §2.2);
- ``article_html``: the fact (or the turn's text) as the ``<mark>`` claim in the first ``<p>``; a second ``<p>``
  naming speaker and session with the session date as ``<time datetime="YYYY-MM-DDTHH:MM:00Z">`` (the event time,
  docs/format.md §1.4); for image turns a ``<p>`` with the image caption; a ``<dl><dt>dia_id</dt><dd>…</dd></dl>`` facet
  with one ``<dd>`` per dialogue id (the key the retrieval benchmark matches evidence on);
- ``entities`` ``["person:<speaker>"]``, ``tags`` ``["locomo", <sample_id>]``,
  ``turn_uuid`` ``"<sample_id>:<first dia_id>"``; a title unique within the conversation.

Usage::

    python bench/locomo.py convert --conversation conv-26 --units observations [--data FILE] [--out FILE]
    python bench/locomo.py convert --conversation all --units turns        # all six (3,435 turns)
    python bench/locomo.py all --units turns                               # the same
    python bench/locomo.py questions --conversation conv-26                # evidence-normalised questions
    python bench/locomo.py recall --units turns                            # recall@5/10/25/50 + MRR vs DRAGON

Output is deterministic: sessions in numeric order, observations in file order, one JSON object per line with
a fixed key order, UTF-8, ``\\n`` line ends.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import sys
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

from git_memhtml.errors import MemhtmlError, UsageError

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA = PROJECT_ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
"""Where the dataset lives beside the project (docs/locomo.md)."""

CATEGORIES: dict[int, str] = {
    1: "multi-hop",
    2: "temporal",
    3: "open-domain",
    4: "single-hop",
    5: "adversarial",
}
"""LoCoMo question categories as the dataset's own scorer numbers them (docs/locomo.md). The
paper's prose orders them differently; this mapping is the scorer's and is pinned here on purpose."""

DEFAULT_CONTEXT = 2
"""Preceding turns of the same session a turn memory carries in its ``<aside>`` (docs/retrieval-tuning.md)."""

Units = Literal["observations", "turns"]
UNITS: tuple[str, ...] = ("observations", "turns")

_DIA_ID = re.compile(r"^D(\d+):(\d+)$")
_REPAIRABLE = re.compile(r"^D\W*(\d+)\W+(\d+)$")
_SESSION_KEY = re.compile(r"^session_(\d+)$")
_OBSERVATION_KEY = re.compile(r"^session_(\d+)_observation$")
_SESSION_DATE = re.compile(r"^\s*(\d{1,2}):(\d{2})\s*([ap]m)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})\s*$", re.I)
_MONTHS = {
    name: index
    for index, name in enumerate(
        (
            "january",
            "february",
            "march",
            "april",
            "may",
            "june",
            "july",
            "august",
            "september",
            "october",
            "november",
            "december",
        ),
        start=1,
    )
}
_MONTH_NAMES = tuple(name.capitalize() for name in _MONTHS)


def parse_session_date(value: str) -> str:
    """Turn a LoCoMo session date (``"1:56 pm on 8 May, 2023"``) into ``"2023-05-08T13:56:00Z"``.

    The dataset carries no zone; the instant is written as UTC. ``12 am`` is hour 0, ``12 pm`` hour 12.

    Raises:
        UsageError: the string is not in that shape or names no real date.
    """
    match = _SESSION_DATE.match(value)
    month = _MONTHS.get(match.group(5).lower()) if match else None
    if match is None or month is None:
        raise UsageError(
            f"unreadable LoCoMo session date {value!r}",
            hint='expected "<h>:<mm> am|pm on <day> <Month>, <year>", e.g. "1:56 pm on 8 May, 2023"',
        )
    hour, minute = int(match.group(1)), int(match.group(2))
    if not 1 <= hour <= 12:
        raise UsageError(f"hour out of range in LoCoMo session date {value!r}", hint="use a 12-hour clock hour 1-12")
    hour = hour % 12 + (12 if match.group(3).lower() == "pm" else 0)
    try:
        moment = datetime(int(match.group(6)), month, int(match.group(4)), hour, minute)
    except ValueError as exc:
        raise UsageError(f"impossible LoCoMo session date {value!r}: {exc}", hint="fix the date in the data") from exc
    return moment.strftime("%Y-%m-%dT%H:%M:00Z")


def normalise_dia_ids(raw: str | Sequence[str], known: Iterable[str] | None = None) -> list[str]:
    """Split, repair and filter dialogue ids: ``"D8:6; D9:17"`` → ``["D8:6", "D9:17"]``.

    A string may hold several ids separated by ``;``, ``,`` or whitespace. A malformed id is repaired when its
    digits still say session and turn (``"D:11:26"`` → ``"D11:26"``); one that cannot be repaired (``"D"``) is
    skipped. With ``known`` (the conversation's turn ids), ids naming no turn are skipped too. Order is kept,
    duplicates dropped.
    """
    parts = [raw] if isinstance(raw, str) else list(raw)
    allowed = set(known) if known is not None else None
    out: list[str] = []
    for part in parts:
        for piece in re.split(r"[;,\s]+", str(part)):
            candidate = piece.strip()
            if not candidate:
                continue
            if not _DIA_ID.match(candidate):
                repaired = _REPAIRABLE.match(candidate)
                if repaired is None:
                    continue
                candidate = f"D{int(repaired.group(1))}:{int(repaired.group(2))}"
            if allowed is not None and candidate not in allowed:
                continue
            if candidate not in out:
                out.append(candidate)
    return out


def find_conversation(data: Sequence[Mapping[str, Any]], sample_id: str) -> Mapping[str, Any]:
    """Return the item of ``data`` whose ``sample_id`` is ``sample_id``.

    Raises:
        UsageError: no such conversation (the hint lists the ids present).
    """
    for item in data:
        if item.get("sample_id") == sample_id:
            return item
    ids = ", ".join(str(item.get("sample_id")) for item in data)
    raise UsageError(f"no LoCoMo conversation {sample_id!r}", hint=f"use one of: {ids} (or all)")


def sessions(conversation: Mapping[str, Any]) -> list[tuple[int, str, list[Mapping[str, Any]]]]:
    """``[(session number, ISO instant, turns)]`` of one conversation, in numeric session order."""
    numbers = sorted(int(m.group(1)) for key in conversation if (m := _SESSION_KEY.match(key)))
    out: list[tuple[int, str, list[Mapping[str, Any]]]] = []
    for number in numbers:
        turns = conversation[f"session_{number}"]
        if not isinstance(turns, list) or not turns:
            continue
        out.append((number, parse_session_date(conversation[f"session_{number}_date_time"]), turns))
    return out


def turn_ids(item: Mapping[str, Any]) -> list[str]:
    """Every ``dia_id`` of one conversation item, in session and turn order."""
    return [str(turn["dia_id"]) for _, _, turns in sessions(item["conversation"]) for turn in turns]


def load_questions(data: Sequence[Mapping[str, Any]], sample_id: str) -> list[tuple[str, list[str], int]]:
    """Questions of one conversation as ``[(question, evidence dia_ids, category)]``.

    Evidence goes through :func:`normalise_dia_ids` against the conversation's turn ids (``"D8:6; D9:17"`` → two
    ids; ``"D:11:26"`` → ``"D11:26"``; ``"D"`` and ids naming no turn dropped). Questions left without evidence
    are skipped (docs/locomo.md: 1,155 of 1,157 keep evidence). Categories: :data:`CATEGORIES`.

    Raises:
        UsageError: ``sample_id`` is not in ``data``.
    """
    item = find_conversation(data, sample_id)
    known = turn_ids(item)
    out: list[tuple[str, list[str], int]] = []
    for qa in item.get("qa", []):
        evidence = normalise_dia_ids(qa.get("evidence") or [], known)
        if evidence:
            out.append((str(qa["question"]), evidence, int(qa["category"])))
    return out


def _article(claim: str, context: str, iso: str, when: str, dia_ids: Sequence[str], extra: str | None,
             earlier: Sequence[tuple[str, str]] = ()) -> str:
    """Inner HTML of one memory's ``<article>``; every text is HTML-escaped. ``earlier`` = preceding
    ``(speaker, text)`` turns carried in an ``<aside>``."""
    esc = html.escape
    parts = [
        f"<p><mark>{esc(claim)}</mark></p>",
        f'<p>{esc(context)} <time datetime="{iso}">{esc(when)}</time>.</p>',
    ]
    if extra:
        parts.append(f"<p>{esc(extra)}</p>")
    if earlier:
        parts.append("<aside>" + "".join(f"<p>Earlier, {esc(s)} said: {esc(t)}</p>" for s, t in earlier) + "</aside>")
    parts.append("<dl><dt>dia_id</dt>" + "".join(f"<dd>{esc(d)}</dd>" for d in dia_ids) + "</dl>")
    return "".join(parts)


def _op(sample_id: str, title: str, speaker: str, article_html: str, dia_ids: Sequence[str]) -> dict[str, Any]:
    """One ``write`` op in a fixed key order."""
    return {
        "op": "write",
        "title": title,
        "type": "episodic",
        "article_html": article_html,
        "workspace": sample_id,
        "tags": ["locomo", sample_id],
        "entities": [f"person:{speaker}"],
        "turn_uuid": f"{sample_id}:{dia_ids[0]}",
    }


def observation_ops(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One op per observation of one conversation item (conv-26 → 184).

    Title ``"<speaker>, session <n>, observation <k>"`` (k counts the session's observations from 1, across
    speakers). Observations whose text is blank or whose ids all fail normalisation are skipped.
    """
    sample_id = str(item["sample_id"])
    conversation = item["conversation"]
    known = turn_ids(item)
    numbers = sorted(int(m.group(1)) for key in item["observation"] if (m := _OBSERVATION_KEY.match(key)))
    ops: list[dict[str, Any]] = []
    for number in numbers:
        when = str(conversation[f"session_{number}_date_time"])
        iso = parse_session_date(when)
        index = 0
        for speaker, facts in item["observation"][f"session_{number}_observation"].items():
            for fact in facts:
                text, raw_ids = str(fact[0]).strip(), fact[1]
                dia_ids = normalise_dia_ids(raw_ids, known)
                if not text or not dia_ids:
                    continue
                index += 1
                context = f"Observed of {speaker} in session {number},"
                article = _article(text, context, iso, when, dia_ids, None)
                title = f"{speaker}, session {number}, observation {index}"
                ops.append(_op(sample_id, title, speaker, article, dia_ids))
    return ops


def day_text(iso: str) -> str:
    """``"2023-05-08T13:56:00Z"`` → ``"8 May 2023"`` (the words an agent writes for an event's day)."""
    moment = datetime.fromisoformat(iso.replace("Z", "+00:00"))
    return f"{moment.day} {_MONTH_NAMES[moment.month - 1]} {moment.year}"


def agent_observation_ops(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One ``write`` op per observation of one conversation item in the shape an agent writes a memory (issue 27):
    title = the observation, the observation as the ``<mark>``, the session date as the event time
    (``<time datetime>`` after the claim in its one paragraph, :func:`day_text`), type ``episodic``, one
    ``person:<speaker>`` entity, and the evidence dialogue ids in ``turn_uuid`` (``"<sample_id>:<id>[,<id>…]"``,
    ``"conv-26:D1:3,D1:5"``: provenance the recall harnesses read back, not text). No boilerplate paragraph, no
    facet, no tags, no workspace: :func:`observation_ops` is the converter's own shape, whose per-observation second
    paragraph ("Observed of <speaker> in session <n>") makes two speakers' memories read apart. Observations whose
    text is blank or whose ids all fail normalisation are skipped (as the converter does).
    """
    sample_id = str(item["sample_id"])
    known = turn_ids(item)
    numbers = sorted(int(m.group(1)) for key in item["observation"] if (m := _OBSERVATION_KEY.match(key)))
    ops: list[dict[str, Any]] = []
    for number in numbers:
        iso = parse_session_date(str(item["conversation"][f"session_{number}_date_time"]))
        for speaker, facts in item["observation"][f"session_{number}_observation"].items():
            for fact in facts:
                claim, dia_ids = str(fact[0]).strip(), normalise_dia_ids(fact[1], known)
                if not claim or not dia_ids:
                    continue
                article = (f"<p><mark>{html.escape(claim, quote=False)}</mark> "
                           f'<time datetime="{iso}">{day_text(iso)}</time></p>')
                ops.append({"op": "write", "title": claim, "type": "episodic", "article_html": article,
                            "entities": [f"person:{speaker}"], "turn_uuid": f"{sample_id}:{','.join(dia_ids)}"})
    return ops


def turn_ops(item: Mapping[str, Any], context: int = DEFAULT_CONTEXT) -> list[dict[str, Any]]:
    """One op per dialogue turn of one conversation item (conv-26 → 419).

    Title ``"<speaker>, <dia_id>"``; the claim is the turn's text (the image caption when the text is blank);
    an image turn gets a ``"<speaker> shared an image: <caption>"`` paragraph. With ``context`` > 0 the
    ``context`` turns before it in the same session are carried, oldest first, in an ``<aside>`` (one
    ``<p>Earlier, <speaker> said: <text></p>`` each): the claim stays the turn itself, the aside is what a
    reader needs to understand a reply such as "Yes, last week!" (docs/retrieval-tuning.md measures it).
    """
    sample_id = str(item["sample_id"])
    ops: list[dict[str, Any]] = []
    for number, iso, turns in sessions(item["conversation"]):
        when = str(item["conversation"][f"session_{number}_date_time"])
        spoken: list[tuple[str, str]] = []
        for turn in turns:
            speaker, dia_id = str(turn["speaker"]), str(turn["dia_id"])
            caption = str(turn.get("blip_caption") or "").strip()
            text = str(turn.get("text") or "").strip() or caption
            if not text:
                continue
            extra = f"{speaker} shared an image: {caption}" if caption else None
            said = f"{speaker} said this in session {number},"
            earlier = spoken[-context:] if context > 0 else []
            article = _article(text, said, iso, when, [dia_id], extra, earlier)
            ops.append(_op(sample_id, f"{speaker}, {dia_id}", speaker, article, [dia_id]))
            spoken.append((speaker, text))
    return ops


def convert(data: Sequence[Mapping[str, Any]], sample_id: str, units: str,
            context: int = DEFAULT_CONTEXT) -> list[dict[str, Any]]:
    """Ops of one conversation (``sample_id``) or of every conversation (``"all"``), per ``units``; ``context``
    preceding turns are carried by turn units (:func:`turn_ops`), observations ignore it.

    Raises:
        UsageError: unknown units or conversation.
    """
    if units not in UNITS:
        raise UsageError(f"unknown units {units!r}", hint="use --units observations or --units turns")
    items = list(data) if sample_id == "all" else [find_conversation(data, sample_id)]
    if units == "observations":
        return [op for item in items for op in observation_ops(item)]
    return [op for item in items for op in turn_ops(item, context)]


def load_data(path: Path = DEFAULT_DATA) -> list[dict[str, Any]]:
    """Read the LoCoMo JSON list at ``path``.

    Raises:
        UsageError: the file is absent or not a JSON list.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"LoCoMo data not found at {path}", hint="pass --data <locomo-dev.json>") from exc
    except json.JSONDecodeError as exc:
        raise UsageError(f"LoCoMo data at {path} is not JSON: {exc}", hint="pass the original file") from exc
    if not isinstance(data, list):
        raise UsageError(f"LoCoMo data at {path} is not a list", hint="pass the original locomo JSON list")
    return data


def dumps_jsonl(rows: Iterable[Mapping[str, Any]]) -> str:
    """Rows as JSON lines (key order kept, non-ASCII kept, ``\\n`` after every line)."""
    return "".join(json.dumps(row, ensure_ascii=False, separators=(",", ":")) + "\n" for row in rows)


def _question_rows(data: Sequence[Mapping[str, Any]], sample_id: str) -> list[dict[str, Any]]:
    ids = [str(item["sample_id"]) for item in data] if sample_id == "all" else [sample_id]
    return [
        {"sample_id": sid, "question": q, "evidence": ev, "category": cat, "category_name": CATEGORIES.get(cat)}
        for sid in ids
        for q, ev, cat in load_questions(data, sid)
    ]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="locomo.py", description="LoCoMo → git memhtml apply stream")
    sub = parser.add_subparsers(dest="command", required=True)
    convert_p = sub.add_parser("convert", help="one conversation (or all) → apply JSONL")
    convert_p.add_argument("--conversation", required=True, help="sample id, e.g. conv-26, or all")
    all_p = sub.add_parser("all", help="all conversations → apply JSONL")
    questions_p = sub.add_parser("questions", help="evidence-normalised questions as JSONL")
    questions_p.add_argument("--conversation", default="all", help="sample id or all (default)")
    recall_p = sub.add_parser("recall", help="import, search every question, report recall@k and MRR")
    recall_p.add_argument("--conversation", default="all", help="sample id or all (default)")
    recall_p.add_argument("--embed", choices=("wordllama", "fake", "off"), default="wordllama")
    recall_p.add_argument("--weights", default=None, help="fts,vector,recency,salience (default: the embedder's)")
    recall_p.add_argument("--mmr", type=float, default=None, help="apply MMR with this lambda (default: off)")
    recall_p.add_argument("--json", action="store_true", help="one JSON object instead of the table")
    for p in (convert_p, all_p, recall_p):
        p.add_argument("--units", choices=UNITS, default="observations" if p is not recall_p else "turns")
        p.add_argument("--context", type=int, default=DEFAULT_CONTEXT, help="preceding turns a turn carries")
    for p in (convert_p, all_p, questions_p, recall_p):
        p.add_argument("--data", type=Path, default=DEFAULT_DATA, help=f"LoCoMo JSON (default {DEFAULT_DATA})")
        p.add_argument("--out", type=Path, default=None, help="write here instead of stdout")
    return parser


def run(argv: Sequence[str]) -> str:
    """Parse ``argv`` and return the JSONL text the command produces (pure apart from reading ``--data``).

    Raises:
        UsageError: bad conversation, units or data file.
    """
    args = _parser().parse_args(list(argv))
    data = load_data(args.data)
    if args.command == "questions":
        return dumps_jsonl(_question_rows(data, args.conversation))
    if args.context < 0:
        raise UsageError(f"--context must be 0 or more, got {args.context}", hint="pass --context 0, 1, 2 …")
    if args.command == "recall":
        return _recall(data, args)
    sample_id = "all" if args.command == "all" else args.conversation
    return dumps_jsonl(convert(data, sample_id, args.units, args.context))


def _recall(data: Sequence[Mapping[str, Any]], args: argparse.Namespace) -> str:
    """Run ``recall`` (bench/locomo_recall.py) and return its table or JSON."""
    import tempfile  # noqa: PLC0415

    bench = str(Path(__file__).resolve().parent)
    if bench not in sys.path:
        sys.path.insert(0, bench)
    import locomo_recall  # noqa: PLC0415

    from git_memhtml.index.retrieval import ArmWeights  # noqa: PLC0415

    weights = None
    if args.weights:
        try:
            fts, vector, recency, salience = (float(v) for v in args.weights.split(","))
        except ValueError as exc:
            raise UsageError(
                f"bad --weights {args.weights!r}", hint="give four numbers: fts,vector,recency,salience"
            ) from exc
        weights = ArmWeights(fts=fts, vector=vector, recency=recency, salience=salience)
    ids = [str(item["sample_id"]) for item in data] if args.conversation == "all" else [args.conversation]
    for sample_id in ids:
        find_conversation(data, sample_id)
    with tempfile.TemporaryDirectory(prefix="memhtml-locomo-") as folder:
        report = locomo_recall.run_recall(sys.modules[__name__], data, ids, units=args.units, embed=args.embed,
                                          context=args.context, weights=weights, workdir=Path(folder),
                                          mmr_lambda=args.mmr)
    render = locomo_recall.report_json if args.json else locomo_recall.render_report
    return str(render(report, CATEGORIES))


def main(argv: Sequence[str] | None = None) -> int:
    """Script entry: run and write to ``--out`` or stdout; a :class:`MemhtmlError` prints message and hint to
    stderr and returns 2."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        text = run(arguments)
    except MemhtmlError as exc:
        sys.stderr.write(f"error: {exc.message}\n" + (f"hint: {exc.hint}\n" if exc.hint else ""))
        return exc.exit_code
    out = _parser().parse_args(arguments).out
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
