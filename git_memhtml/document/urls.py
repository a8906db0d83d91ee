"""URL-bearing attributes of a memory file and the schemes refused in them (docs/format.md §1.7 "nothing executes").

A memory is rendered as a page (``git memhtml serve``, any browser), so a URL that runs code when followed or
loaded is refused wherever a browser reads a URL: ``javascript:``, ``vbscript:`` and ``data:`` (a
``data:text/html`` link or an SVG ``data:`` image is a script) in every URL attribute, each entry of
``srcset``/``ping`` too, and ``<meta http-equiv="refresh">`` anywhere (a redirect, possibly to a script URL).
Values are compared after the parser decoded entities (``&#106;avascript:``, ``&colon;``), with every ASCII
whitespace/control character removed and case folded. That is a superset of the WHATWG URL parser, which
strips leading/trailing C0 controls and spaces and removes tab/LF/CR anywhere before reading the scheme
(``" Java&#9;Script:"`` is ``javascript:``), so no spelling a browser accepts gets through. The attribute list is
wider than what the allowlist admits (``action``, ``formaction``, ``data``, ``poster`` …) so that a refused element
still names its script URL. Our decision, docs/format.md.
"""

from __future__ import annotations

import re
from typing import Final

URL_ATTRIBUTES: Final[frozenset[str]] = frozenset(
    {
        "href", "src", "cite", "action", "formaction", "data", "poster", "background", "xlink:href", "codebase",
        "longdesc", "manifest", "icon", "lowsrc", "dynsrc", "profile", "classid", "archive", "itemtype",
    }
)
"""Attributes holding one URL (lower-case name; ``xlink:href`` outside SVG keeps its prefix, inside SVG the
parser namespaces it and it reads as ``href``)."""

URL_LIST_ATTRIBUTES: Final[dict[str, str]] = {"srcset": ",", "imagesrcset": ",", "ping": " "}
"""Attributes holding several URLs → their separator (``srcset`` candidates are comma-separated, ``ping`` is
space-separated; a candidate's width/density descriptor stays attached and does not hide the scheme)."""

REFUSED_SCHEMES: Final[tuple[str, ...]] = ("javascript:", "vbscript:", "data:")
"""Schemes refused in every URL attribute."""

_URL_NOISE: Final = re.compile(r"[\x00-\x20\x7f]+")


def normalised_url(value: str) -> str:
    """``value`` with every ASCII whitespace/control character removed, lower-cased (for scheme tests only)."""
    return _URL_NOISE.sub("", value).lower()


def refused_scheme(name: str, value: str) -> str | None:
    """The refused scheme (``"javascript:"``, ``"vbscript:"``, ``"data:"``) a URL attribute uses, else ``None``.

    Args:
        name: the attribute name, lower-case, namespace removed (``"href"``, ``"srcset"``, ``"xlink:href"``).
        value: the attribute value as parsed (entities decoded).
    """
    if name in URL_LIST_ATTRIBUTES:
        candidates = value.split(",") if URL_LIST_ATTRIBUTES[name] == "," else value.split()
    elif name in URL_ATTRIBUTES:
        candidates = [value]
    else:
        return None
    for candidate in candidates:
        url = normalised_url(candidate)
        for scheme in REFUSED_SCHEMES:
            if url.startswith(scheme):
                return scheme
    return None


def is_refresh(http_equiv: str | None) -> bool:
    """True when a ``<meta http-equiv>`` value is ``refresh`` (ASCII case-insensitive, surrounding space
    ignored)."""
    return http_equiv is not None and http_equiv.strip(" \t\n\f\r").lower() == "refresh"
