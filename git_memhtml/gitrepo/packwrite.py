"""A batch's blobs written as one pack file (docs/store.md "How a commit is built").

libgit2 writes each blob as a loose object: an existence check that misses and so re-scans ``objects/pack/``, a
temporary file, a rename, about nine ``openat`` and seven ``stat`` calls per blob. For a batch we build the pack
stream here (pack-format(5), version 2, every object whole, no deltas) and hand it to one ``git index-pack --stdin``,
which checks every object, writes the ``.idx`` and moves both files into ``objects/pack/`` by rename, so a process
killed meanwhile leaves at most a temporary file and never a half pack; the objects are unreachable until a commit
names them.
"""

from __future__ import annotations

import hashlib
import struct
import zlib
from collections.abc import Iterable, Sequence

PACK_MIN_BLOBS = 32
"""Batches with fewer blobs are written loose: every pack is one more file each object look-up may search until
``git gc`` repacks (``gc.autoPackLimit`` is 50 packs), so one-file writes keep libgit2's loose objects. Our
choice: at 32 blobs the loose writes cost about as much as the ``git index-pack`` child (docs/store.md)."""

_OBJ_BLOB = 3
"""Object type number of a blob in a pack entry header (pack-format(5) "Object types")."""


def hash_name(object_format: str | None) -> str:
    """The hashlib name of a repository's object format (``extensions.objectFormat``; unset means sha1)."""
    return "sha256" if (object_format or "sha1").strip().lower() == "sha256" else "sha1"


def blob_id(data: bytes, algorithm: str) -> str:
    """The git object id (hex) of a blob holding ``data``: the hash of ``b"blob <size>\\0" + data``."""
    digest = hashlib.new(algorithm)
    digest.update(b"blob %d\0" % len(data))
    digest.update(data)
    return digest.hexdigest()


def _entry_header(kind: int, size: int) -> bytes:
    """A pack entry header: type and size, 4 bits of size in the first byte then 7 per byte, little-endian, the
    high bit saying another byte follows (pack-format(5) "Pack file")."""
    out = bytearray()
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def pack_stream(blobs: Sequence[bytes], algorithm: str) -> bytes:
    """A version-2 pack holding ``blobs`` (each a whole, zlib-deflated object; duplicates must be removed by the
    caller), ending with the ``algorithm`` hash of everything before it."""
    parts: list[bytes] = [b"PACK", struct.pack(">II", 2, len(blobs))]
    for data in blobs:
        parts.append(_entry_header(_OBJ_BLOB, len(data)))
        parts.append(zlib.compress(data))
    body = b"".join(parts)
    return body + hashlib.new(algorithm, body).digest()


def distinct_blobs(blobs: Iterable[bytes], algorithm: str) -> tuple[list[str], dict[str, bytes]]:
    """``(id of each blob in order, {id: bytes} once per distinct blob)``."""
    ids: list[str] = []
    unique: dict[str, bytes] = {}
    for data in blobs:
        oid = blob_id(data, algorithm)
        ids.append(oid)
        unique.setdefault(oid, data)
    return ids, unique
