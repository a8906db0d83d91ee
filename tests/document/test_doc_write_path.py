"""The write path parses each file once (issue 12 item 2): the render gate's html5lib parse gives the verdict, the
content hash and the document; ``apply`` reads no blob and asks the index once for the whole batch; its output is
byte for byte what the three-parse render produced; progress is reported per op."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

import html5lib.html5parser
import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.hash import content_hash
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.serialize import canonical_article_html, serialize_memory
from git_memhtml.document.template import prose_markup, render_checked, render_memory, unrepresentable
from git_memhtml.document.wellformed import check_memory_bytes
from git_memhtml.errors import InvalidMemory
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.memories import HashHolders
from git_memhtml.store.ops import WriteOp
from git_memhtml.store.writer import apply_batch
from tests.document.test_doc_fast_parser import generated_article

NOW = "2026-11-30T10:00:00Z"


def _render_article(claim: str, body: Sequence[str]) -> str:
    return canonical_article_html(prose_markup(claim, body))


@pytest.fixture
def html5lib_parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """How many html5lib tree constructions ran (documents and fragments): the real parser, counted."""
    count = [0]
    real = html5lib.html5parser.HTMLParser._parse

    def counted(self: object, *args: object, **kwargs: object) -> object:
        count[0] += 1
        return real(self, *args, **kwargs)

    monkeypatch.setattr(html5lib.html5parser.HTMLParser, "_parse", counted)
    yield count


def _ops(n: int) -> list[WriteOp]:
    return [WriteOp.from_json({"title": f"Fact {i}", "type": "semantic",
                               "body": f"Service {i} deploys on day {i}.\n\nIt rolls back in {i} minutes."})
            for i in range(n)]


class Recorder:
    """A real :class:`~git_memhtml.progress.Progress` that records what it was told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, int]] = []

    def stage(self, label: str, total: int) -> None:
        self.events.append((label, total))

    def advance(self, done: int = 1) -> None:
        self.events.append(("+", done))

    def close(self) -> None:
        self.events.append(("close", 0))


def test_apply_parses_each_file_once_and_asks_the_index_once(tmp_path: Path, html5lib_parses: list[int]) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    asked: list[Sequence[str]] = []

    def many(hashes: Sequence[str]) -> HashHolders:
        asked.append(list(hashes))
        return HashHolders({}, repo.head_sha(), frozenset())

    def one(_: str) -> None:
        raise AssertionError("the per-op lookup must not run when the batch lookup is given")

    progress = Recorder()
    html5lib_parses[0] = 0
    result = apply_batch(repo, _ops(25), now=NOW, dedupe=one, dedupe_view=many, progress=progress)
    assert result.ok and result.summary["written"] == 25
    assert html5lib_parses[0] == 25  # one parse per file: the validator's
    assert len(asked) == 1 and len(asked[0]) == 25
    assert progress.events.count(("+", 1)) == 50 and ("rendering", 25) in progress.events
    assert ("placing", 25) in progress.events and progress.events[-1] == ("close", 0)


@pytest.mark.parametrize(("article", "parses"), [
    ("<p><mark>Fact {i} holds.</mark> Seen on day {i}.</p>\n<ul><li>one</li></ul>", 2),
    ("<P><MARK>Fact {i} holds.</MARK> Seen<ul><li>one</ul>", 2),
])
def test_article_html_ops_parse_the_fragment_and_the_file(tmp_path: Path, html5lib_parses: list[int], article: str,
                                                    parses: int) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    ops = [WriteOp.from_json({"title": f"F{i}", "type": "semantic", "article_html": article.format(i=i)})
           for i in range(10)]
    html5lib_parses[0] = 0
    result = apply_batch(repo, ops, now=NOW, dedupe_view=lambda _: HashHolders({}, repo.head_sha(), frozenset()))
    assert result.ok and result.summary["written"] == 10
    assert html5lib_parses[0] == 10 * parses


def test_apply_dedupes_a_batch_against_committed_holders(tmp_path: Path) -> None:
    init_repo(tmp_path / "memory")
    repo = GitRepo.discover(tmp_path / "memory")
    first = apply_batch(repo, _ops(3), now=NOW, dedupe=lambda _: None)
    holders = {parse_memory((repo.root / p).read_bytes()).content_hash: [p] for p in first.written}
    head = repo.head_sha()
    again = apply_batch(repo, _ops(4), now=NOW, dedupe_view=lambda hs: HashHolders(
        {h: tuple(holders[h]) for h in hs if h in holders}, head, frozenset()))
    assert [r.deduped for r in again.results] == [True, True, True, False]
    assert [r.existing_path for r in again.results[:3]] == list(first.written)


def _old_render(draft: MemoryDraft) -> str:
    """The render of before issue 12: canonicalise, hash the fragment, serialize (re-canonicalising)."""
    bad = [problem for name, value in draft.texts() if (problem := unrepresentable(name, value))]
    if bad:
        raise InvalidMemory("unrepresentable", violations=bad)
    if draft.memory_type == "task" and draft.task_status is None:
        draft = replace(draft, task_status="todo")
    article = (canonical_article_html(draft.article_html) if draft.article_html
               else _render_article(draft.claim or "", draft.body))
    metas = [("created", NOW), ("updated", NOW), ("content-hash", content_hash(article)), *draft.head_metas()]
    return serialize_memory(title=" ".join(draft.title.split()), metas=metas, links=draft.links, article_html=article)


DRAFTS = [
    MemoryDraft(title="A", memory_type="semantic", claim="Deploys roll back.", body=("Measured on the ALB.",)),
    MemoryDraft(title="CR", memory_type="semantic", claim="Line\r\nbreaks.", body=("a\rb", "c\r\n\r\nd")),
    MemoryDraft(title="Code", memory_type="procedural", claim="Run it.", body=("```py\nx = 1 < 2 & 3\n```",)),
    MemoryDraft(title="Esc", memory_type="semantic", claim="<b>not markup</b> & more", body=("\u00a0nbsp\u00a0",)),
    MemoryDraft(title="Task", memory_type="task", claim="Ship it."),
    MemoryDraft(title="Html", memory_type="semantic",
                article_html="<P><MARK>Claim</MARK> <em>x</p><dl><dt>k<dd>v</dl><table><tr><td>t</table>"),
]


@pytest.mark.parametrize("draft", DRAFTS, ids=[d.title for d in DRAFTS])
def test_render_is_byte_identical_to_the_three_parse_render(draft: MemoryDraft) -> None:
    rendered = render_checked(draft, now=NOW)
    assert rendered.text == _old_render(draft)
    assert rendered.document == parse_memory(rendered.text, fast=False)
    assert rendered.document.content_hash == rendered.document.content_hash_meta


def _old_gate(text: str) -> tuple[str, ...]:
    """The verdict of the old render gate: ``parse_memory``'s violations, else ``check_memory_bytes``'s."""
    try:
        parse_memory(text, fast=False)
    except InvalidMemory as exc:
        return tuple(exc.violations)
    return tuple(check_memory_bytes(text.encode("utf-8")).violations)


@pytest.mark.parametrize("seed", range(400))
def test_render_of_generated_articles_matches_the_old_render(seed: int) -> None:
    draft = MemoryDraft(title=f"G{seed}", memory_type="semantic", article_html=generated_article(seed))
    try:
        old = _old_render(draft)
    except InvalidMemory as exc:
        with pytest.raises(InvalidMemory) as caught:
            render_memory(draft, now=NOW)
        assert caught.value.violations == exc.violations
        return
    refused = _old_gate(old)
    if refused:
        with pytest.raises(InvalidMemory) as caught:
            render_memory(draft, now=NOW)
        assert tuple(caught.value.violations) == refused
    else:
        assert render_memory(draft, now=NOW) == old


def test_render_refusals_keep_their_messages() -> None:
    bad = MemoryDraft(title="T", memory_type="semantic", article_html="<p>no mark</p>")
    with pytest.raises(InvalidMemory) as caught:
        render_memory(bad, now=NOW)
    assert caught.value.message.startswith("rendered memory is invalid: ")
