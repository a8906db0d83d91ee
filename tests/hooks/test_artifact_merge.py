"""Entry parsers and the three-way entry merge of generated artifacts (pure; no git)."""

from __future__ import annotations

import json
from pathlib import Path

from git_memhtml.artifacts.entries import parse_access, parse_listing, parse_sitemap
from git_memhtml.artifacts.listings import PublishRow, render_artifacts
from git_memhtml.artifacts.merge import artifact_kind, merge3, merge_artifact

A = PublishRow("areas/ops/a.html", 'Alpha & <"quotes">', "semantic", "2026-01-01T00:00:00Z", "gist of 'a'")
B = PublishRow("areas/ops/b.html", "Beta", "episodic", "2026-01-03T00:00:00Z", "gist b")
C = PublishRow("areas/ops/c.html", "Gamma", "semantic", "2026-01-02T00:00:00Z", "gist c")
D = PublishRow("areas/ops/deep/d.html", "Delta", "semantic", "2026-01-04T00:00:00Z", "gist d")


def _art(*rows: PublishRow) -> dict[str, bytes]:
    return render_artifacts(list(rows))


def test_listing_and_sitemap_parse_back_to_the_same_bytes() -> None:
    art = _art(A, B, D)
    listing = parse_listing(art["areas/ops/index.html"], "areas/ops")
    assert listing is not None
    assert listing.rows == (A, B) and listing.subdirs == ("areas/ops/deep",) and listing.total == 3
    assert parse_sitemap(art["sitemap.xml"]) == {A.path: A.updated_at, B.path: B.updated_at, D.path: D.updated_at}
    edited = art["areas/ops/index.html"].replace(b"<tbody>", b"<tbody>\n<!-- hand edit -->")
    assert parse_listing(edited, "areas/ops") is None


def test_both_sides_additions_merge_to_exactly_what_publish_renders() -> None:
    base, ours, theirs, both = _art(A), _art(A, B), _art(A, C, D), _art(A, B, C, D)
    for path in ("areas/ops/index.html", "areas/index.html", "index.html", "sitemap.xml"):
        merged = merge_artifact(path, base.get(path, b""), ours[path], theirs[path])
        assert merged == both[path], path
        assert merge_artifact(path, base.get(path, b""), theirs[path], ours[path]) == merged  # symmetric


def test_a_removal_on_one_side_is_honoured() -> None:
    base, ours, theirs = _art(A, B), _art(A), _art(A, B, C)
    merged = merge_artifact("areas/ops/index.html", base["areas/ops/index.html"], ours["areas/ops/index.html"],
                            theirs["areas/ops/index.html"])
    assert merged == _art(A, C)["areas/ops/index.html"]


def test_foreign_paths_and_unparseable_versions_are_left_to_a_text_merge() -> None:
    assert artifact_kind("areas/ops/notes.html") is None
    assert merge_artifact("areas/ops/notes.html", b"", b"a", b"b") is None
    assert merge_artifact("areas/ops/index.html", b"", b"<p>hand written</p>", _art(A)["areas/ops/index.html"]) \
        is None


def _row(path: str, count: int, reinforced: int, score: float, accessed: str, updated: str) -> dict[str, object]:
    return {"path": path, "accessCount": count, "reinforcementCount": reinforced, "outcomeScore": score,
            "lastAccessedAt": accessed, "lastReinforcedAt": None, "updatedAt": updated}


def _jsonl(*rows: dict[str, object]) -> bytes:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()


def test_access_rows_merge_by_maximum_and_newest_score() -> None:
    base = _jsonl(_row("a.html", 2, 0, 0, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
                  _row("gone.html", 1, 0, 0, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"))
    ours = _jsonl(_row("a.html", 5, 1, 0.3, "2026-01-05T00:00:00Z", "2026-01-05T00:00:00Z"))
    theirs = _jsonl(_row("a.html", 3, 2, -0.3, "2026-01-07T00:00:00Z", "2026-01-07T00:00:00Z"),
                    _row("gone.html", 1, 0, 0, "2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z"),
                    _row("new.html", 1, 0, 0, "2026-01-02T00:00:00Z", "2026-01-02T00:00:00Z"))
    merged = merge_artifact(".memhtml/state/access.jsonl", base, ours, theirs)
    assert merged == merge_artifact(".memhtml/state/access.jsonl", base, theirs, ours)
    rows = parse_access(merged or b"")
    assert rows is not None and sorted(rows) == ["a.html", "new.html"]  # gone.html: removed by ours, unchanged
    assert rows["a.html"]["accessCount"] == 5 and rows["a.html"]["reinforcementCount"] == 2
    assert rows["a.html"]["outcomeScore"] == -0.3 and rows["a.html"]["lastAccessedAt"] == "2026-01-07T00:00:00Z"


def test_merge3_prefers_a_change_over_a_removal() -> None:
    assert merge3({"k": 1}, {}, {"k": 2}, max) == {"k": 2}
    assert merge3({"k": 1}, {"k": 3}, {"k": 2}, max) == {"k": 3}


def test_driver_writes_the_entry_merge_into_ours_and_text_merges_the_rest(tmp_path: Path) -> None:
    from git_memhtml.hooks.merge_driver import CLEAN, CONFLICT, run_merge_driver

    base, ours, theirs = _art(A), _art(A, B), _art(A, C)
    files: dict[str, Path] = {}
    for name, art in (("O", base), ("A", ours), ("B", theirs)):
        files[name] = tmp_path / name
        files[name].write_bytes(art["areas/ops/index.html"])
    assert run_merge_driver(files["O"], files["A"], files["B"], "areas/ops/index.html") == CLEAN
    assert files["A"].read_bytes() == _art(A, B, C)["areas/ops/index.html"]
    for name, text in (("O", "one\ntwo\n"), ("A", "one\nmine\n"), ("B", "one\ntheirs\n")):
        files[name].write_text(text)
    assert run_merge_driver(files["O"], files["A"], files["B"], "areas/ops/notes.txt") == CONFLICT
    assert "<<<<<<< ours:areas/ops/notes.txt" in files["A"].read_text()


def test_access_rows_split_on_newline_only() -> None:
    """A path holding U+2028 or NEL is one row, not a broken line that sends the merge to text."""
    data = ('{"path":"areas/a\u2028b.html","accessCount":1}\n'
            '{"path":"areas/c\u0085d.html","accessCount":2}\r\n').encode()
    rows = parse_access(data)
    assert rows is not None and sorted(rows) == ["areas/a\u2028b.html", "areas/c\u0085d.html"]
