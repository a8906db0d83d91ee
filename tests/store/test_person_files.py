"""What a person file is, and what a stub is: the one rule of ``tree/people.py`` (issue 27; docs/layout.md §2.5).

The folder is never evidence: the same bytes are, or are not, a person file under ``resources/people/`` and under
any other folder.
"""

from __future__ import annotations

import pytest

from git_memhtml.document.draft import MemoryDraft
from git_memhtml.document.parse import parse_memory
from git_memhtml.document.template import render_memory
from git_memhtml.sleep.phases.person_links import render_person
from git_memhtml.tree.people import alias_group, is_stub, person_file_of, person_file_subject

AT = "2026-01-01T00:00:00Z"
FOLDERS = ("resources/people", "areas/inbox", "archive/2025/resources/people", "projects/web")


def _file(title: str, claim: str, *, entities: tuple[str, ...] = (), aliases: tuple[str, ...] = (),
          memory_type: str = "semantic") -> str:
    return render_memory(MemoryDraft(title=title, memory_type=memory_type, claim=claim, entities=entities,
                                     aliases=aliases), now=AT)


CASES = [
    # (file name, title, claim, entities, aliases, type, subject)
    ("caroline.html", "Caroline", "Caroline appears in this agent's memory.", ("person:Caroline",), (), "semantic",
     "Caroline"),
    ("caroline-is-a-counselor.html", "Caroline is a counselor", "Caroline is a counselor.", ("person:Caroline",),
     (), "semantic", None),
    ("priya.html", "Priya Raman", "Priya Raman leads SRE.", ("person:Priya Raman",), ("Priya",), "semantic",
     "Priya Raman"),
    ("priya-raman.html", "SRE lead", "Priya Raman leads SRE.", ("person:Priya Raman", "person:Bo"), (), "semantic",
     "Priya Raman"),
    ("priya-raman-2.html", "SRE lead", "Priya Raman leads SRE.", ("person:Priya Raman",), (), "semantic",
     "Priya Raman"),
    ("laith.html", "Laith runs infra", "Laith Al-Saadoon runs infra.", ("person:Laith Al-Saadoon",), ("laith",),
     "semantic", "Laith Al-Saadoon"),
    ("offsite.html", "Offsite planning", "Anna and Bo planned the offsite.", ("person:Anna", "person:Bo"),
     ("Annie",), "semantic", None),
    ("anna.html", "Anna", "Call Anna.", ("person:Anna",), (), "task", None),
    ("anna.html", "Anna", "Anna's year.", ("person:Anna",), (), "arc", None),
    ("dana.html", "Dana", "Dana is a contractor.", (), (), "semantic", None),
    ("priya-raman-\u00b2.html", "SRE lead", "Priya Raman leads SRE.", ("person:Priya Raman",), (), "semantic", None),
    ("priya-raman-1001.html", "SRE lead", "Priya Raman leads SRE.", ("person:Priya Raman",), (), "semantic", None),
]


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize(("name", "title", "claim", "entities", "aliases", "kind", "subject"), CASES)
def test_a_person_file_is_what_it_says_in_any_folder(folder: str, name: str, title: str, claim: str,
                                                     entities: tuple[str, ...], aliases: tuple[str, ...], kind: str,
                                                     subject: str | None) -> None:
    path = f"{folder}/{name}"
    persons = [e.split(":", 1)[1] for e in entities]
    assert person_file_subject(path, title, kind, persons, declares_aliases=bool(aliases)) == subject
    html = _file(title, claim, entities=entities, aliases=aliases, memory_type=kind)
    assert person_file_of(path, title, html) == subject


def test_the_minted_file_is_a_stub_and_a_person_file() -> None:
    html = render_person("Caroline", AT)
    doc = parse_memory(html.encode(), path="resources/people/caroline.html")
    assert person_file_of("resources/people/caroline.html", doc.title, html) == "Caroline"
    assert is_stub(doc.title, doc.body_text, ["Caroline"])


@pytest.mark.parametrize(("title", "body", "persons", "stub"), [
    ("Caroline", "Caroline appears in this agent's memory.", ["Caroline"], True),
    ("Caroline", "  caroline APPEARS in this agent's   memory. ", ["Caroline"], True),
    ("Caroline", "Caroline appears in this agent's memory.", ["Caroline M."], True),  # the entity was renamed
    ("Caroline", "Caroline", ["Caroline"], True),
    ("Caroline", "Caroline appears in this agent's memory. She is a counselor.", ["Caroline"], False),
    ("Caroline is a counselor.", "Caroline is a counselor.", ["Caroline"], False),  # title = claim: a fact
    ("Services", "Services appears in this agent's memory.", [], False),  # names no person
    ("Melanie", "Caroline appears in this agent's memory.", ["Melanie"], False),
])
def test_a_stub_says_nothing_but_that_someone_exists(title: str, body: str, persons: list[str], stub: bool) -> None:
    assert is_stub(title, body, persons) is stub


def test_alias_group_reads_only_person_files() -> None:
    anchor = _file("Priya Raman", "Priya Raman leads SRE.", entities=("person:Priya Raman",), aliases=("Priya",))
    fact = _file("Offsite", "Anna and Bo planned it.", entities=("person:Anna", "person:Bo"), aliases=("Annie",))
    for folder in FOLDERS:
        assert alias_group(f"{folder}/priya-raman.html", anchor.encode()) == ("priya", "priya raman")
        assert alias_group(f"{folder}/offsite.html", fact.encode()) is None
    assert alias_group("areas/x.html", b"not html at all memhtml-alias") is None
