"""Find and redact secret-shaped strings with detect-secrets' plugins (docs/secrets.md).

Shapes:
    ``find_secrets(text) -> list[Finding]``: sorted, non-overlapping ``[start, end)`` code-point spans of ``text``,
    each with a kind name (:mod:`git_memhtml.secrets.formats`). ``redact(text) -> Redaction``: ``text`` with each
    span replaced by ``[redacted:<kind>]``, the count of spans and the sorted distinct kinds.

How a text is scanned:
    1. Lone surrogates become U+FFFD in a same-length copy (detect-secrets hashes what it finds as UTF-8), so the
       spans index the caller's text unchanged.
    2. The text is cut into units at line ends, real (``\\n``, ``\\r``) or JSON-escaped (a literal backslash-n in a
       JSON string of a transcript line). A unit longer than :data:`WINDOW` is scanned in windows of that many code
       points overlapping by :data:`OVERLAP`, so one regex run never sees more than :data:`WINDOW` characters
       (every plugin's pattern is at worst quadratic in its input: this keeps the whole scan linear in the text).
    3. Units are pre-screened with every chosen plugin's own ``analyze_string`` (plain regex, no settings), many
       units joined per call (:data:`BLOCK`), then unit by unit inside a block that matched. Only
       a unit a plugin matched is confirmed through ``detect_secrets.core.scan.scan_line`` inside
       ``detect_secrets.settings.transient_settings`` (our plugin list and :data:`FILTERS`, detect-secrets' heuristic
       filters: UUIDs, sequential strings, ``${templated}`` and ``$VAR`` values, indirect references …), which restores
       the process-wide settings on exit; nothing is written to disk, no baseline is read.
    4. A confirmed value is located in its unit: by its plugin's own patterns (the whole match, or the captured
       group when the plugin captures the secret itself, e.g. the password of ``https://user:pw@host``), then
       extended right over ``[A-Za-z0-9_-]`` for token kinds so a key longer than the plugin's fixed-width
       pattern goes whole. A ``Private Key`` header extends to its ``-----END … -----`` line (or, when that is
       missing, over the base64 body that follows), across real or escaped newlines. The keyword plugin reports one
       value per pattern and line, so a unit with a keyword finding is rescanned with its findings masked, at most
       :data:`KEYWORD_ROUNDS` times.
    5. :data:`OWN_PATTERNS` add the formats no plugin knows.

Errors: none for any ``str`` (any code points, any size). Never logs, prints or raises with a secret's text.
"""

from __future__ import annotations

import bisect
import re
import sys
import threading
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Final

from git_memhtml.secrets.formats import OWN_PATTERNS, kind_of

PLUGINS: Final[tuple[str, ...]] = (
    "ArtifactoryDetector",
    "AWSKeyDetector",
    "AzureStorageKeyDetector",
    "BasicAuthDetector",
    "CloudantDetector",
    "DiscordBotTokenDetector",
    "GitHubTokenDetector",
    "GitLabTokenDetector",
    "IbmCloudIamDetector",
    "IbmCosHmacDetector",
    "JwtTokenDetector",
    "KeywordDetector",
    "MailchimpDetector",
    "NpmDetector",
    "OpenAIDetector",
    "PrivateKeyDetector",
    "PypiTokenDetector",
    "SendGridDetector",
    "SlackDetector",
    "SoftlayerDetector",
    "SquareOAuthDetector",
    "StripeDetector",
    "TelegramBotTokenDetector",
    "TwilioKeyDetector",
)
"""The detect-secrets 1.5 plugins we run: all but ``Base64HighEntropyString``, ``HexHighEntropyString`` (they flag
git SHAs, content hashes and ordinary words in adhoc scans) and ``IPPublicDetector`` (a server's address is a
fact, not a credential). The false-positive counts behind the choice are in docs/secrets.md."""

FILTERS: Final[tuple[str, ...]] = tuple(f"detect_secrets.filters.heuristic.{name}" for name in (
    "is_sequential_string",
    "is_potential_uuid",
    "is_likely_id_string",
    "is_templated_secret",
    "is_prefixed_with_dollar_sign",
    "is_indirect_reference",
    "is_not_alphanumeric_string",
))
"""The detect-secrets filters a value must pass: its default heuristic ones that judge the value itself. Left out:
``allowlist.is_line_allowlisted`` (a ``pragma: allowlist secret`` comment beside a key in a transcript does not make
it safe to commit), and the file-name filters (lock files, swagger files, non-text extensions) that mean nothing
for a text; ``is_invalid_file`` is always configured and ``scan_line`` turns it off."""

WINDOW: Final[int] = 4096
"""Longest stretch (code points) one plugin regex sees; longer units are scanned in overlapping windows."""

OVERLAP: Final[int] = 1024
"""Overlap of consecutive windows: any secret up to this long lies whole inside one window. The longest format
we know on one line is a JWT with claims (a few hundred characters); a PEM body spans lines and is handled by its
header."""

KEYWORD_ROUNDS: Final[int] = 4
"""Rescans of a unit with a ``password = "…"`` finding (the keyword plugin reports one value per pattern)."""

PEM_REACH: Final[int] = 65536
"""How far (code points) after a private-key header its ``-----END`` line is looked for; an RSA 8192 key in PEM
is under 7 KiB, so the bound only stops a runaway search."""

BLOCK: Final[int] = 65536
"""Code points of units pre-screened in one call, joined by :data:`_JOIN`. A plugin pattern that matches in a unit
matches in the joined block too (none is anchored other than by a line start or end, which the separator gives),
so a block no plugin matches holds no unit any plugin matches; a block that matches is screened unit by unit."""

_JOIN: Final[str] = "\n\x0b\n"
"""Between units of a block: a newline ends every ``.``/``\\s``-bounded run, the vertical tab ends the keyword
plugin's value class (``[^\\v'"]``), so no pattern's run reaches across units and a block costs what its units do."""

JSON_LEVELS: Final[int] = 2
"""JSON string escapes are decoded up to this many times per unit: a transcript line is JSON, and a tool's output
quoted in it is often JSON again (``{\\"password\\": \\"…\\"}``), which plugin patterns only see decoded."""

_JSON_ESCAPE: Final = re.compile(r'\\(?:u[0-9a-fA-F]{4}|["\\/bfnrt])')
_JSON_SIMPLE: Final[dict[str, str]] = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r",
                                       "t": "\t"}
_UNIT_BREAK: Final = re.compile(r"\r\n|\r|\n|\\r\\n|\\n|\\r")
_SURROGATE: Final = re.compile("[\ud800-\udfff]")
_TOKEN_TAIL: Final = re.compile(r"[A-Za-z0-9_-]*")
_PEM_END: Final = re.compile(
    r"-----END[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----|Private-MAC: [0-9a-fA-F]{40,128}"
)
_PEM_BREAK: Final[str] = r"(?:\r\n|\r|\n|\\r\\n|\\n|\\\\r\\\\n|\\\\n)"
_PEM_BODY: Final = re.compile(
    rf"[^\r\n\\]{{0,200}}(?:{_PEM_BREAK}(?:[A-Za-z0-9+/=]{{16,}}|[A-Za-z0-9+/]{{2,}}={{1,2}}"
    rf"|[A-Za-z][A-Za-z0-9-]{{0,40}}: [^\r\n\\]{{0,200}})){{0,2048}}"
)
"""What follows a private-key header whose end line is missing: lines (real line ends, or escaped once or twice) of
base64 (16 or more characters, or a shorter last line with its ``=`` padding) or of ``Name: value`` headers
(``Proc-Type: 4,ENCRYPTED``, PuTTY's ``Encryption: none``), up to the first other line; the rest of the header's
own line (its dashes, PuTTY's key type) comes first."""
_GROUP_IS_SECRET_MIN: Final[int] = 8
"""A captured group this long or longer that equals the reported value is the secret itself (a password, an npm
token); a shorter one is a label (GitHub's ``ghp``), and the whole match is the secret."""
_NO_TAIL_KINDS: Final[frozenset[str]] = frozenset({"url-password", "password-assignment", "private-key"})

_NEEDS: Final[dict[str, str]] = {"NpmDetector": "/:_authToken="}
"""Plugin → a literal every one of its patterns requires (read off the pattern, detect-secrets 1.5): the npm
pattern ``//.+/:_authToken=…`` backtracks over the whole unit from every ``//`` (quadratic in a unit dense with
slashes, 0.05 MiB/s on ``//a/`` repeated), so it runs only where its literal occurs."""

_LOCK: Final = threading.Lock()


@dataclass(frozen=True, slots=True)
class Finding:
    """One secret-shaped span of a text: ``text[start:end]`` is the secret. Holds no text of its own, so its repr,
    str and any log or error built from it never carry the secret.

    Attributes:
        kind: the kind name (``github-token``, ``private-key``, ``url-password`` …; formats.KIND_OF_TYPE).
        start: first code point of the span (0-based index into the scanned ``str``).
        end: one past the last code point.
    """

    kind: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Redaction:
    """A text with its secrets replaced.

    Attributes:
        text: the input with each finding's span replaced by ``[redacted:<kind>]``.
        count: how many spans were replaced (the figure a phase adds to its counts).
        kinds: the distinct kinds replaced, sorted.
    """

    text: str
    count: int
    kinds: tuple[str, ...]

    def __repr__(self) -> str:
        return f"Redaction(count={self.count}, kinds={self.kinds!r}, chars={len(self.text)})"


class _Engine:
    """detect-secrets loaded once: the plugin instances (for the pre-screen) and the settings to confirm with."""

    def __init__(self) -> None:
        with warnings.catch_warnings():  # its logger module turns warnings capture on at import: restored on exit
            from detect_secrets.core.scan import scan_line  # noqa: PLC0415 - 140 ms of imports, only when scanning
            from detect_secrets.plugins.keyword import DENYLIST_REGEX  # noqa: PLC0415
            from detect_secrets.settings import get_plugins, transient_settings  # noqa: PLC0415

        self.scan_line = scan_line
        self.transient_settings = transient_settings
        self.config: dict[str, Any] = {"plugins_used": [{"name": name} for name in PLUGINS],
                                       "filters_used": [{"path": path} for path in FILTERS]}
        with _LOCK, transient_settings(self.config):
            self.plugins: tuple[Any, ...] = tuple(get_plugins())
        self.by_type: dict[str, Any] = {plugin.secret_type: plugin for plugin in self.plugins}
        self.keyword = self.by_type.get("Secret Keyword")
        self.keyword_words = re.compile(DENYLIST_REGEX, re.IGNORECASE)
        self.needs: dict[int, str] = {id(p): _NEEDS[type(p).__name__] for p in self.plugins
                                      if type(p).__name__ in _NEEDS}

    def screened(self, unit: str) -> bool:
        """Whether any plugin's own pattern matches ``unit`` (a superset of what ``scan_line`` confirms). The keyword
        plugin runs five patterns that each begin with its keyword alternation; it is skipped when that alternation
        (the plugin's own ``DENYLIST_REGEX``) is absent, which costs one search instead of five; a plugin of
        :data:`_NEEDS` is skipped when its literal is absent."""
        for plugin in self.plugins:
            if plugin is self.keyword and self.keyword_words.search(unit) is None:
                continue
            literal = self.needs.get(id(plugin))
            if literal is not None and literal not in unit:
                continue
            for _ in plugin.analyze_string(unit):
                return True
        return False

    def confirm(self, units: Sequence[str]) -> list[list[tuple[str, str]]]:
        """``scan_line`` over each unit under our transient settings: per unit, (secret_type, value) pairs."""
        out: list[list[tuple[str, str]]] = []
        seen: dict[str, list[tuple[str, str]]] = {}  # a repeated line (a log, a pasted block) is scanned once
        with _LOCK, self.transient_settings(self.config):
            for unit in units:
                if unit not in seen:
                    seen[unit] = sorted({(s.type, s.secret_value) for s in self.scan_line(unit) if s.secret_value})
                out.append(seen[unit])
        return out


_engine: _Engine | None = None


def _get_engine() -> _Engine:
    global _engine
    if _engine is None:
        _engine = _Engine()
    return _engine


def _units(text: str) -> Iterator[tuple[int, int]]:
    """``[start, end)`` of each line (real or JSON-escaped line ends), long lines cut into overlapping windows."""
    start = 0
    for brk in _UNIT_BREAK.finditer(text):
        yield from _windows(start, brk.start())
        start = brk.end()
    yield from _windows(start, len(text))


def _windows(start: int, end: int) -> Iterator[tuple[int, int]]:
    if end - start <= WINDOW:
        if end > start:
            yield start, end
        return
    step = WINDOW - OVERLAP
    at = start
    while True:
        yield at, min(at + WINDOW, end)
        if at + WINDOW >= end:
            return
        at += step


def _value_spans(plugin: Any, unit: str, value: str) -> list[tuple[int, int]]:
    """Where ``value`` (a plugin's reported secret) sits in ``unit``, as found by the plugin's own patterns."""
    spans: list[tuple[int, int]] = []
    for pattern in getattr(plugin, "denylist", ()):
        for m in pattern.finditer(unit):
            if m.group(0) == value:
                spans.append(m.span(0))
                continue
            groups = [g for g in range(1, (pattern.groups or 0) + 1) if m.group(g) == value]
            if not groups:
                continue
            g = groups[0]
            if len(value) >= _GROUP_IS_SECRET_MIN or plugin.secret_type == "Basic Auth Credentials":
                spans.append(m.span(g))
            else:
                spans.append(m.span(0))
    if spans:
        return spans
    # Plugins with their own analyze_string (the keyword plugin): every occurrence not inside a longer word.
    at = unit.find(value)
    while at >= 0 and value:
        end = at + len(value)
        before = unit[at - 1] if at > 0 else " "
        after = unit[end] if end < len(unit) else " "
        if not (before.isalnum() and value[0].isalnum()) and not (after.isalnum() and value[-1].isalnum()):
            spans.append((at, end))
        at = unit.find(value, end)
    return spans


class _PemBlocks:
    """Whole private-key blocks of one text. The ``-----END`` lines are found in one pass over the text (on the first
    header), and a header inside a block already found is not extended again, so a text dense with headers costs
    one pass, not one :data:`PEM_REACH` search per header."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.ends: list[tuple[int, int]] | None = None
        self.covered = (-1, -1)

    def span(self, header_start: int, header_end: int) -> tuple[int, int]:
        """The whole block whose ``BEGIN … PRIVATE KEY`` words are ``text[header_start:header_end]``: from its
        dashes to the first end line within :data:`PEM_REACH`, else over the base64 body after the header."""
        if self.covered[0] <= header_start < self.covered[1]:
            return self.covered
        text = self.text
        if self.ends is None:
            self.ends = [m.span() for m in _PEM_END.finditer(text)]
        start = header_start - 5 if text.startswith("-----", max(0, header_start - 5)) and header_start >= 5 \
            else header_start  # the header's own five dashes, never the end line of a block just before it
        k = bisect.bisect_left(self.ends, (header_end, -1))
        if k < len(self.ends) and self.ends[k][0] <= header_end + PEM_REACH:
            end = self.ends[k][1]
        else:
            body = _PEM_BODY.match(text, header_end)
            end = max(body.end() if body is not None else header_end, header_end)
        self.covered = (start, end)
        return start, end


class _View:
    """One scanned unit: its text, and how a position in it maps back to the scanned text.

    A plain unit is ``clean[offset:offset + len(text)]``. A decoded unit is a plain one with its JSON string escapes
    (``\\"``, ``\\\\``, ``\\/``, ``\\t``, ``\\uXXXX`` …) decoded once or twice (a JSON document quoted inside a
    transcript's JSON line): ``marks`` are (position in text, position in clean) pairs at every escape and at
    the plain run after it, and between marks the mapping is one to one.
    """

    __slots__ = ("marks", "offset", "text")

    def __init__(self, text: str, offset: int, marks: list[tuple[int, int]] | None = None) -> None:
        self.text = text
        self.offset = offset
        self.marks = marks

    def raw(self, position: int) -> int:
        """The position in the scanned text of ``position`` in :attr:`text` (a span end maps to an end)."""
        if self.marks is None:
            return self.offset + position
        k = bisect.bisect_right(self.marks, (position, sys.maxsize)) - 1
        here, there = self.marks[k]
        return there + (position - here)


def _decoded(view: _View) -> _View | None:
    """``view`` with its JSON string escapes decoded once (``None`` when it has none)."""
    text = view.text
    if "\\" not in text:
        return None
    parts: list[str] = []
    marks: list[tuple[int, int]] = []
    at = 0
    out = 0
    for m in _JSON_ESCAPE.finditer(text):
        if m.start() > at:
            marks.extend(_plain_marks(view, at, m.start(), out))
            parts.append(text[at:m.start()])
            out += m.start() - at
        token = m.group(0)
        marks.append((out, view.raw(m.start())))
        if token[1] == "u":
            char = chr(int(token[2:], 16))
            parts.append("\ufffd" if "\ud800" <= char <= "\udfff" else char)
        else:
            parts.append(_JSON_SIMPLE[token[1]])
        out += 1
        at = m.end()
    if not marks:
        return None
    marks.extend(_plain_marks(view, at, max(at, len(text)), out))
    parts.append(text[at:])
    return _View("".join(parts), 0, marks)


def _plain_marks(view: _View, lo: int, hi: int, out: int) -> list[tuple[int, int]]:
    """Marks for ``view.text[lo:hi]`` copied to position ``out`` of a decoded text: one at ``lo``, and one at each
    mark of ``view`` inside the run (where ``view`` itself stops mapping one to one)."""
    marks = [(out, view.raw(lo))]
    if view.marks is not None:
        k = bisect.bisect_right(view.marks, (lo, sys.maxsize))
        while k < len(view.marks) and view.marks[k][0] < hi:
            marks.append((out + view.marks[k][0] - lo, view.marks[k][1]))
            k += 1
    return marks


def _views(clean: str) -> Iterator[_View]:
    """Each unit of ``clean`` as it stands, then decoded once and twice when it holds JSON escapes."""
    for a, b in _units(clean):
        view: _View | None = _View(clean[a:b], a)
        for _ in range(JSON_LEVELS + 1):
            if view is None:
                break
            yield view
            view = _decoded(view)


def _blocks(views: Iterator[_View]) -> Iterator[list[_View]]:
    """Consecutive views grouped up to :data:`BLOCK` code points, for one pre-screen call per group."""
    block: list[_View] = []
    size = 0
    for view in views:
        if block and size + len(view.text) > BLOCK:
            yield block
            block, size = [], 0
        block.append(view)
        size += len(view.text) + len(_JOIN)
    if block:
        yield block


def _scan(clean: str) -> list[tuple[int, int, str]]:
    """Raw (start, end, kind) spans of ``clean`` (surrogate-free), overlapping and unsorted."""
    engine = _get_engine()
    found: list[tuple[int, int, str]] = []
    pem = _PemBlocks(clean)
    pending = [(view, view.text) for block in _blocks(_views(clean))
               if engine.screened(_JOIN.join(v.text for v in block))
               for view in block if engine.screened(view.text)]
    for _ in range(KEYWORD_ROUNDS + 1):
        if not pending:
            break
        results = engine.confirm([unit for _, unit in pending])
        again: list[tuple[_View, str]] = []
        for (view, unit), pairs in zip(pending, results):
            masked = unit
            keyword = False
            for secret_type, value in pairs:
                plugin = engine.by_type.get(secret_type)
                kind = kind_of(secret_type, value)
                for s, e in _value_spans(plugin, unit, value):
                    if kind == "private-key":
                        found.append((*pem.span(view.raw(s), view.raw(e)), kind))
                        continue
                    if kind not in _NO_TAIL_KINDS:
                        tail = _TOKEN_TAIL.match(unit, e)
                        e = tail.end() if tail is not None else e
                    found.append((view.raw(s), view.raw(e), kind))
                    if secret_type == "Secret Keyword":
                        keyword = True
                        masked = masked[:s] + "*" * (e - s) + masked[e:]
            if keyword and masked != unit:
                again.append((view, masked))
        pending = again
    for kind, pattern in OWN_PATTERNS:  # linear, and none reaches across a line end
        for m in pattern.finditer(clean):
            if kind == "private-key":
                found.append((*pem.span(*m.span(0)), kind))
                continue
            found.append((*(m.span("secret") if "secret" in pattern.groupindex else m.span(0)), kind))
    return found


def find_secrets(text: str) -> list[Finding]:
    """Every secret-shaped span of ``text``: sorted by start, overlapping spans merged (the kind of the longest).

    Args:
        text: any ``str`` (lone surrogates, any script, megabytes); positions are indices into it.

    Returns:
        Findings in text order; ``[]`` for a text with none.
    """
    if not text:
        return []
    clean = _SURROGATE.sub("\ufffd", text)
    raw = sorted(_scan(clean), key=lambda f: (f[0], -(f[1] - f[0]), f[2] == "password-assignment", f[2]))
    merged: list[list[Any]] = []
    for start, end, kind in raw:
        if end <= start:
            continue
        if merged and start < merged[-1][1]:
            last = merged[-1]
            if end - start > last[1] - last[0]:
                last[2] = kind
            last[1] = max(last[1], end)
            continue
        merged.append([start, end, kind])
    return [Finding(kind=str(k), start=int(s), end=int(e)) for s, e, k in merged]


REDACT_PASSES: Final[int] = 3
"""Times :func:`redact` rescans its own output. A removed block can join what a line end kept apart (a quote opened
before a key block and closed after it becomes one ``password = "…"``), so the output is scanned again until
nothing is found; three passes end every case the fuzzing of tests/secrets found (two were needed at most)."""


def _replace(text: str, findings: Sequence[Finding]) -> str:
    parts: list[str] = []
    at = 0
    for f in findings:
        parts.append(text[at:f.start])
        parts.append(f"[redacted:{f.kind}]")
        at = f.end
    parts.append(text[at:])
    return "".join(parts)


def redact(text: str) -> Redaction:
    """``text`` with every finding of :func:`find_secrets` replaced by ``[redacted:<kind>]``, then its own output
    rescanned (at most :data:`REDACT_PASSES` passes in all, only when a pass replaced something).

    Returns:
        :class:`Redaction` (``count`` 0 and ``text`` unchanged when nothing was found); ``count`` adds up every
        pass. Redacting the result again finds nothing: the placeholder matches no plugin.
    """
    count = 0
    kinds: set[str] = set()
    for _ in range(REDACT_PASSES):
        findings = find_secrets(text)
        if not findings:
            break
        text = _replace(text, findings)
        count += len(findings)
        kinds.update(f.kind for f in findings)
    return Redaction(text=text, count=count, kinds=tuple(sorted(kinds)))
