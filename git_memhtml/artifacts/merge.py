"""Three-way merges of generated artifacts by their entries, symmetric and deterministic (docs/design.md §3.10).

Per entry key (a row's path, a sub-directory, a sidecar path) with versions base/ours/theirs: equal sides win;
a side equal to the base yields to the other (so an addition or a removal on one side is honoured); a removal
against a change keeps the change; two different changes take :func:`_newer_row` (listing/sitemap) or the
field-wise maximum (access rows, "merge by max like an import", docs/index.md §3.8 and its deviation 9). Rebase swaps
ours and theirs (docs/git.md §2.3 #4), so every pick is symmetric: the result never depends on the side.

A listing's subtree total is ``rows + (below_ours + below_theirs − below_base)`` where ``below`` counts memories
in sub-directories (the entries of a listing do not name them); the stamp is the newest merged row, or a side's
stamp when only its sub-directories explain it. Both can drift when the two sides add the same file in a
sub-directory, or remove the newest file below; the next publish regenerates them exactly.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from git_memhtml.artifacts.entries import (
    Listing,
    parse_access,
    parse_listing,
    parse_sitemap,
    render,
    render_access,
    render_sitemap_entries,
)
from git_memhtml.artifacts.listings import EPOCH, PublishRow
from git_memhtml.tree.layout import ACCESS_SIDECAR, INDEX_NAME, SITEMAP_PATH

_COUNTS = ("accessCount", "reinforcementCount")
_INSTANTS = ("lastAccessedAt", "lastReinforcedAt")

K = TypeVar("K")
V = TypeVar("V")


def merge3(base: Mapping[K, V], ours: Mapping[K, V], theirs: Mapping[K, V],
           pick: Callable[[V, V], V]) -> dict[K, V]:
    """Merge keyed entries three ways (rules in the module docstring); ``pick`` must be symmetric."""
    out: dict[K, V] = {}
    for key in set(base) | set(ours) | set(theirs):
        b, o, t = base.get(key), ours.get(key), theirs.get(key)
        if o == t or t == b:
            value = o
        elif o == b:
            value = t
        elif o is None or t is None:
            value = t if o is None else o
        else:
            value = pick(o, t)
        if value is not None:
            out[key] = value
    return out


def _newer_row(a: PublishRow, b: PublishRow) -> PublishRow:
    return max(a, b, key=lambda r: (r.updated_at, r.title, r.memory_type, r.gist))


def _newer(a: str, b: str) -> str:
    return max(a, b)


def _dir_of(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


def merge_listings(directory: str, base: Listing, ours: Listing, theirs: Listing) -> Listing:
    """The merged listing of ``directory`` (see the module docstring for total and stamp)."""
    rows = merge3({r.path: r for r in base.rows}, {r.path: r for r in ours.rows}, {r.path: r for r in theirs.rows},
                  _newer_row)
    subdirs = merge3(dict.fromkeys(base.subdirs, True), dict.fromkeys(ours.subdirs, True),
                     dict.fromkeys(theirs.subdirs, True), lambda a, b: a)

    def below(listing: Listing) -> int:
        return max(0, listing.total - len(listing.rows))

    below_total = max(0, below(ours) + below(theirs) - below(base)) if subdirs else 0
    ordered = tuple(rows[p] for p in sorted(rows))
    below_stamps = [side.stamp for side in (ours, theirs)
                    if subdirs and side.stamp > max((r.updated_at for r in side.rows), default="")]
    stamp = max([*below_stamps, *(r.updated_at for r in ordered)], default=EPOCH)
    return Listing(directory, ordered, tuple(sorted(subdirs)), len(ordered) + below_total, stamp)


def _merge_access_row(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    latest = max(a, b, key=lambda r: (str(r.get("updatedAt") or ""), float(r.get("outcomeScore") or 0)))
    out = dict(latest)
    for key in _COUNTS:
        out[key] = max(int(a.get(key) or 0), int(b.get(key) or 0))
    for key in _INSTANTS:
        values = [str(v) for v in (a.get(key), b.get(key)) if v]
        out[key] = max(values) if values else None
    return out


def artifact_kind(path: str) -> str | None:
    """``listing``, ``sitemap`` or ``access`` for a path the driver merges by entries, else ``None``."""
    name = path.rsplit("/", 1)[-1]
    if name == INDEX_NAME:
        return "listing"
    if name == SITEMAP_PATH:
        return "sitemap"
    if path == ACCESS_SIDECAR or path.endswith("/" + ACCESS_SIDECAR):
        return "access"
    return None


def merge_artifact(path: str, base: bytes, ours: bytes, theirs: bytes) -> bytes | None:
    """The merged bytes of generated artifact ``path`` from its three versions, or ``None`` when ``path`` is not
    a generated artifact or one version does not parse as one (the caller then does a text merge)."""
    kind = artifact_kind(path)
    if kind == "listing":
        directory = _dir_of(path)
        parsed = [parse_listing(data, directory) for data in (base, ours, theirs)]
        if parsed[0] is None or parsed[1] is None or parsed[2] is None:
            return None
        return render(merge_listings(directory, parsed[0], parsed[1], parsed[2]))
    if kind == "sitemap":
        maps = [parse_sitemap(data) for data in (base, ours, theirs)]
        if maps[0] is None or maps[1] is None or maps[2] is None:
            return None
        return render_sitemap_entries(merge3(maps[0], maps[1], maps[2], _newer))
    if kind == "access":
        rows = [parse_access(data) for data in (base, ours, theirs)]
        if rows[0] is None or rows[1] is None or rows[2] is None:
            return None
        return render_access(merge3(rows[0], rows[1], rows[2], _merge_access_row))
    return None
