"""Read the entries back out of generated artifacts: listings, the sitemap and the access sidecar (docs/design.md
§3.10).

The merge driver works on the three versions git hands it and never on the work tree (docs/git.md §2.3 #1), so
it needs each artifact's entries. The listing and sitemap bytes come from :mod:`git_memhtml.artifacts.listings`; a
parse is accepted only when re-rendering the parsed entries gives back the very same bytes, so a hand-edited or
foreign file is never "merged" into something else: the caller falls back to git's text merge.
"""

from __future__ import annotations

import html
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from git_memhtml.artifacts.listings import EPOCH, PublishRow, render_listing, render_sitemap
from git_memhtml.tree.layout import INDEX_NAME

_ROW = re.compile(
    r'^<tr><td><a href="([^"]*)">(.*?)</a></td><td>(.*?)</td><td>(.*?)</td><td>(.*?)</td></tr>$'
)
_SUBDIR = re.compile(r'^<li><a href="([^"]*)">(.*?)/</a></li>$')
_CLAIM = re.compile(r"^<p><mark>.* holds (\d+) memories\.</mark></p>$")
_UPDATED_META = re.compile(r'^<meta name="memhtml-updated" content="([^"]*)">$')
_TIME = re.compile(r'^<time datetime="[^"]*">(.*)</time>$')
_URL = re.compile(r"^<url><loc>(.*?)</loc><lastmod>(.*?)</lastmod></url>$")

ACCESS_KEYS: tuple[str, ...] = (
    "path", "accessCount", "reinforcementCount", "outcomeScore", "lastAccessedAt", "lastReinforcedAt", "updatedAt",
)
"""Key order of one sidecar line (docs/index.md §3.8; ``git_memhtml.index.access.export_access_jsonl``)."""


@dataclass(frozen=True)
class Listing:
    """The entries of one directory's ``index.html``: its rows (files directly in it), its sub-directories
    (repo-relative), the subtree total the claim states and the page's ``updated`` stamp."""

    directory: str
    rows: tuple[PublishRow, ...]
    subdirs: tuple[str, ...]
    total: int
    stamp: str


def _path_of(href: str) -> str:
    return unquote(html.unescape(href)).lstrip("/")


def parse_listing(data: bytes, directory: str) -> Listing | None:
    """The entries of a listing of ``directory`` (``""`` = root); an empty file is an empty listing.

    Returns ``None`` when ``data`` is not exactly what :func:`render_listing` renders for those entries.
    """
    if not data.strip():
        return Listing(directory, (), (), 0, EPOCH)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    rows: list[PublishRow] = []
    subdirs: list[str] = []
    total: int | None = None
    stamp = EPOCH
    for line in text.split("\n"):
        if match := _ROW.match(line):
            updated = match.group(4)
            timed = _TIME.match(updated)
            rows.append(PublishRow(
                _path_of(match.group(1)), html.unescape(match.group(2)), html.unescape(match.group(3)),
                html.unescape(timed.group(1) if timed else updated), html.unescape(match.group(5)),
            ))
        elif match := _SUBDIR.match(line):
            href = _path_of(match.group(1))
            subdirs.append(href[: -len("/" + INDEX_NAME)] if href.endswith("/" + INDEX_NAME) else href)
        elif match := _CLAIM.match(line):
            total = int(match.group(1))
        elif match := _UPDATED_META.match(line):
            stamp = html.unescape(match.group(1))
    if total is None:
        return None
    listing = Listing(directory, tuple(rows), tuple(subdirs), total, stamp)
    return listing if render(listing) == data else None


def render(listing: Listing) -> bytes:
    """The bytes of ``listing`` as :func:`git_memhtml.artifacts.listings.render_listing` writes them."""
    return render_listing(listing.directory, listing.rows, listing.subdirs, listing.total,
                          listing.stamp).encode("utf-8")


def parse_sitemap(data: bytes) -> dict[str, str] | None:
    """``{path: lastmod}`` of a sitemap; ``None`` unless re-rendering gives the same bytes. Empty → ``{}``."""
    if not data.strip():
        return {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    entries = {
        _path_of(m.group(1)): html.unescape(m.group(2)) for line in text.split("\n") if (m := _URL.match(line))
    }
    return entries if render_sitemap_entries(entries) == data else None


def render_sitemap_entries(entries: dict[str, str]) -> bytes:
    """The sitemap of ``{path: lastmod}`` exactly as publish renders it."""
    rows = [PublishRow(path, "", "", lastmod, "") for path, lastmod in entries.items()]
    return render_sitemap(rows).encode("utf-8")


def parse_access(data: bytes) -> dict[str, dict[str, Any]] | None:
    """``{path: row}`` of an access sidecar (one JSON object per line, each with a string ``path``).

    Returns ``None`` when a line is not such an object (the text merge then shows the damage).
    """
    rows: dict[str, dict[str, Any]] = {}
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    for line in text.split("\n"):  # \n only: JSON allows a raw U+2028 or U+0085 inside a string
        line = line.removesuffix("\r")
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError:
            return None
        if not isinstance(row, dict) or not isinstance(row.get("path"), str):
            return None
        rows[row["path"]] = row
    return rows


def render_access(rows: dict[str, dict[str, Any]]) -> bytes:
    """The sidecar of ``rows``: path order, :data:`ACCESS_KEYS` first (then any other key, sorted), compact JSON,
    one line each with a trailing newline; empty bytes when there are none (as ``export_access_jsonl``)."""
    lines = []
    for path in sorted(rows):
        row = rows[path]
        ordered = {key: row.get(key) for key in ACCESS_KEYS}
        ordered.update({key: row[key] for key in sorted(row) if key not in ACCESS_KEYS})
        lines.append(json.dumps(ordered, ensure_ascii=False, separators=(",", ":")) + "\n")
    return "".join(lines).encode("utf-8")
