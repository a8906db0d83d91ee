"""The fixture corpus is a pure, valid, rule-abiding function of the seed (docs/gate.md §8.1)."""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from functools import cache

from git_memhtml.document.parse import parse_memory
from git_memhtml.domain.merge import NEGATION_MARKERS, VARIANT_QUALIFIERS, tokenize
from git_memhtml.eval.corpus import EPOCH, FixtureCorpus, build_corpus, iso, js_round, letter_code
from git_memhtml.eval.rng import Mulberry32
from git_memhtml.eval.vocab import PEOPLE


@cache
def default_corpus() -> FixtureCorpus:
    return build_corpus()


def test_same_seed_gives_identical_bytes_and_other_seed_differs() -> None:
    a, b = default_corpus(), build_corpus(20260802, 200, 36)
    assert a.files == b.files
    assert a.access == b.access and a.probes == b.probes
    other = build_corpus(seed=7)
    assert other.files != a.files
    assert other.access != a.access


def test_every_file_parses_as_a_valid_memory_with_unique_article_hashes() -> None:
    corpus = default_corpus()
    hashes = set()
    for path, text in corpus.files.items():
        doc = parse_memory(text, path=path)  # raises InvalidMemory on any violation
        assert not doc.warnings, (path, doc.warnings)
        hashes.add(doc.content_hash)
    assert len(hashes) == len(corpus.files)


def test_shape_counts_people_archive_and_types() -> None:
    corpus = default_corpus()
    base = [p for p in corpus.files if not p.startswith(("archive/", "resources/people/"))
            and "/refuted-reading-" not in p and "/restated-quantity-" not in p and "/qualified-variant-" not in p]
    assert len(base) == 200
    for name in PEOPLE:
        doc = parse_memory(corpus.files[f"resources/people/{name}.html"])
        assert doc.memory_type == "semantic" and doc.entities == (f"person:{name}",)
    archived = [p for p in corpus.files if p.startswith("archive/2025/")]
    procedurals = sum(1 for i in range(200) if i % 9 == 2)
    assert len(archived) == (procedurals + 5) // 6
    for path in archived:
        doc = parse_memory(corpus.files[path])
        assert doc.status == "archived" and path.endswith("-earlier.html")
        live = doc.superseded_by
        assert live is not None
        live_doc = parse_memory(corpus.files[live.lstrip("/")])
        assert any(link.rel == "supersedes" and link.href == "/" + path for link in live_doc.links)


def test_directories_follow_the_type() -> None:
    expected = {"arc": "areas/arcs", "episodic": "projects/", "error_pattern": "projects/",
                "procedural": "areas/", "verdict": "areas/", "semantic": "resources/", "precedent": "resources/"}
    for path, text in default_corpus().files.items():
        if path.startswith(("archive/", "resources/people/")):
            continue
        doc = parse_memory(text)
        if doc.memory_type in expected:
            assert path.startswith(expected[doc.memory_type]), path


def test_body_text_is_affirmative_and_digit_free_and_unqualified() -> None:
    corpus = default_corpus()
    for path, text in corpus.files.items():
        if path.startswith("resources/people/"):
            continue
        doc = parse_memory(text)
        body = doc.body_text.replace(doc.gist, "")
        tokens = set(tokenize(body))
        assert not tokens & NEGATION_MARKERS, path
        assert not tokens & VARIANT_QUALIFIERS, path
        assert not re.search(r"\d", body), path
        assert len(re.findall(r"[.!?](?:\s|$)", " ".join(doc.body_text.split()))) >= 4  # claim + 3 sentences


def test_letter_codes_are_unique_and_prefixed() -> None:
    codes = [letter_code(n) for n in range(2000)]
    assert len(set(codes)) == len(codes)
    assert all(re.fullmatch(r"x[a-z]+", c) for c in codes)


def test_access_rows_follow_the_second_stream() -> None:
    corpus = default_corpus()
    paths = {r.path for r in corpus.access}
    control_paths = {c.path for p in corpus.probes for c in p.controls}
    assert not paths & control_paths
    assert not any(p.startswith(("archive/", "resources/people/")) for p in paths)
    stream = Mulberry32(corpus.seed ^ 0x5F3759DF)
    draws = [stream() for _ in range(corpus.size)]
    assert len(corpus.access) == sum(1 for j in draws if j <= 0.6)
    kept = iter(j for j in draws if j <= 0.6)
    for row in corpus.access:  # rows come in base-memory order
        j = next(kept)
        count = max(1, js_round(1 / (0.08 + j)))
        assert row.access_count == count
        assert row.reinforcement_count == min(count, int(6 * j))
        assert row.outcome_score == js_round(100 * j) / 100
        assert row.last_accessed_at == iso(EPOCH + timedelta(days=240 + int(20 * j)))
    # another seed gives another access plane
    assert build_corpus(seed=1).access != corpus.access


def test_jitter_rules_on_metas() -> None:
    corpus = default_corpus()
    rng = Mulberry32(corpus.seed)
    draws = [rng() for _ in range(corpus.size)]
    by_index = {}
    for path, text in corpus.files.items():
        doc = parse_memory(text)
        if doc.title.startswith(("Refuted", "Restated", "Qualified")) or doc.status == "archived":
            continue
        if path.startswith("resources/people/"):
            continue
        by_index[int(doc.title.rsplit(" ", 1)[1])] = doc
    assert sorted(by_index) == list(range(corpus.size))
    for i, doc in by_index.items():
        j = draws[i]
        created = datetime.fromisoformat(doc.created.replace("Z", "+00:00"))
        updated = datetime.fromisoformat(doc.updated.replace("Z", "+00:00"))
        assert created == EPOCH + timedelta(days=30 + i % 240)
        assert (updated - created) == (timedelta(days=3) if j > 0.7 else timedelta(0))
        assert doc.confidence == round(0.6 + js_round(40 * j) / 100, 2)
        assert doc.importance == 1 + int(10 * j)
        assert any(e.startswith("person:") for e in doc.entities) == (j > 0.8)
        assert (doc.valid_until is not None) == (j > 0.9)
        assert (doc.session_id is not None) == (i % 17 == 0)


def test_edges_part_of_next_twelve_and_authored_by() -> None:
    corpus = default_corpus()
    rels = ("relates_to", "caused_by", "leads_to", "example_of", "supports", "laterally_related", "contradicts")
    docs = {}
    for path, text in corpus.files.items():
        doc = parse_memory(text)
        if (path.startswith(("archive/", "resources/people/"))
                or doc.title.startswith(("Refuted", "Restated", "Qualified"))):
            if doc.title.startswith(("Refuted", "Restated", "Qualified")):
                assert doc.links == ()  # controls carry no links
            continue
        docs[int(doc.title.rsplit(" ", 1)[1])] = (path, doc)
    for i, (_path, doc) in docs.items():
        later_path = docs[(i + 12) % corpus.size][0]
        assert any(l.rel == rels[i % 7] and l.href == "/" + later_path for l in doc.links)
        assert any(l.rel == "part_of" and l.href.startswith("/areas/arcs/") for l in doc.links) == (i % 4 == 0)
        assert any(l.rel == "authored_by" for l in doc.links) == (i % 11 == 0)
        has_person = any(e.startswith("person:") for e in doc.entities)
        assert any(l.rel == "about_person" for l in doc.links) == has_person


def test_vocabulary_is_digit_free_marker_free_and_unqualified() -> None:
    from git_memhtml.eval.vocab import CLAIM_TEMPLATES, SCOPES, TOPICS

    words = list(SCOPES) + list(PEOPLE)
    for topic in TOPICS:
        words += [topic.workspace, topic.anchor, *topic.nouns, *(w for pair in topic.verbs for w in pair)]
    words += [re.sub(r"\{\w+\}", " ", t) for t in CLAIM_TEMPLATES.values()]
    tokens = set(tokenize(" ".join(words)))
    assert not tokens & NEGATION_MARKERS
    assert not tokens & VARIANT_QUALIFIERS
    assert not any(ch.isdigit() for w in words for ch in w)
    assert len(SCOPES) == 23 and len(TOPICS) == 12 and len(set(SCOPES)) == 23


def test_targets_are_strided_picks_of_live_procedural_and_semantic_memories() -> None:
    corpus = build_corpus(size=400, probes=10)
    candidates = [i for i in range(400) if i % 9 in (1, 2)]  # semantic, procedural
    stride = len(candidates) // 10
    picked = [int(p.target_title.rsplit(" ", 1)[1]) for p in corpus.probes]
    assert picked == candidates[::stride][:10]
    assert stride > 1
