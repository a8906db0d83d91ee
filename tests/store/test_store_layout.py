"""Placement, slugs with ordinals, and the archive algebra (docs/layout.md §2.2–2.4)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from git_memhtml.index.project import path_facts
from git_memhtml.tree.layout import (
    archive_path_for,
    filename_stem,
    free_path,
    is_indexable,
    is_valid_memory_path,
    normalize_path,
    placement_for,
    slugify,
    unarchive_path,
)


def test_slugify_folds_accents_case_and_runs_and_caps_at_80() -> None:
    assert slugify("Crème  Brûlée: the (best) one!") == "creme-brulee-the-best-one"
    assert slugify("---") == "untitled"
    long = slugify("word " * 40)
    assert len(long) <= 80 and not long.endswith("-")


def test_placement_rules_in_order() -> None:
    assert placement_for("semantic", path="areas/ops/x.html") == "areas/ops"
    assert placement_for("semantic", path="../etc/x.html") == "areas/inbox"  # invalid explicit path ignored
    assert placement_for("arc") == "areas/arcs"
    assert placement_for("task", workspace="Checkout V2") == "projects/checkout-v2/tasks"
    assert placement_for("task") == "areas/inbox/tasks"
    assert placement_for("semantic", workspace="w") == "projects/w"
    assert placement_for("episodic", workspace="w", tags=["t"]) == "projects/w"
    assert placement_for("procedural", tags=["", "Run Books"]) == "resources/run-books"
    assert placement_for("episodic", tags=["t"]) == "areas/inbox"


def test_episodic_files_get_the_write_date_prefix_outside_the_slug_budget() -> None:
    assert filename_stem("Deploy failed", "episodic", date="2026-11-30T10:00:00Z") == "20261130-deploy-failed"
    assert filename_stem("Deploy failed", "semantic", date="2026-11-30T10:00:00Z") == "deploy-failed"


def test_free_path_takes_ordinals_and_keeps_the_suffix_inside_80() -> None:
    taken = {"areas/inbox/x.html", "areas/inbox/x-2.html"}
    assert free_path("areas/inbox", "x", taken.__contains__) == "areas/inbox/x-3.html"
    stem = "a" * 80
    found = free_path("areas/inbox", stem, {f"areas/inbox/{stem}.html"}.__contains__)
    assert found == f"areas/inbox/{'a' * 78}-2.html"
    assert free_path("d", "x", lambda _: True) is None


def test_archive_algebra_is_invertible() -> None:
    path = "projects/w/x.html"
    archived = archive_path_for(path, 2026)
    assert archived == "archive/2026/projects/w/x.html"
    assert unarchive_path(archived) == path
    assert unarchive_path(path) == path
    assert path_facts(archived).workspace == "w"


def test_memory_paths() -> None:
    assert normalize_path("//areas//x.html/") == "areas/x.html"
    assert is_valid_memory_path("areas/x.html")
    for bad in ("x.html", "areas/../x.html", "areas/./x.html", "other/x.html", "areas/x.txt", "areas/index.html"):
        assert not is_valid_memory_path(bad), bad
    assert not is_indexable("resources/sitemap.xml")


def test_a_fact_about_a_person_is_filed_as_a_fact_not_as_the_person(tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """``resources/people/`` holds person files; a fact naming a person goes where any fact goes, through the real
    write and apply doors (issue 27; docs/layout.md §2.2). An explicit path is still honoured."""
    root = tmp_path / "memory"
    assert main(["init", str(root)]) == 0
    capsys.readouterr()
    claim = "Caroline went to an LGBTQ support group on 7 May 2023."
    assert main(["-C", str(root), "write", "--type", "semantic", "--title", claim, "--claim", claim,
                 "--entity", "person:Caroline", "--json"]) == 0
    written = json.loads(capsys.readouterr().out)["data"]["path"]
    assert written.startswith("areas/inbox/")
    ops = [{"op": "write", "title": "Melanie paints sunsets", "type": "semantic", "claim": "Melanie paints sunsets.",
            "entities": ["person:Melanie"], "tags": ["hobbies"]},
           {"op": "write", "title": "Melanie", "type": "semantic", "claim": "Melanie is Caroline's friend.",
            "entities": ["person:Melanie"], "path": "resources/people/melanie.html"}]
    stream = tmp_path / "ops.jsonl"
    stream.write_text("\n".join(json.dumps(op) for op in ops) + "\n", encoding="utf-8")
    assert main(["-C", str(root), "apply", "--file", str(stream)]) == 0
    people = sorted(p.name for p in (root / "resources/people").glob("*.html"))
    assert people == ["melanie.html"]
    assert (root / "resources/hobbies/melanie-paints-sunsets.html").is_file()
