"""The secret check of the write gates: a memory that would carry a detected secret is refused (docs/secrets.md).

:func:`refuse_secrets` runs on a memory's text as it would be stored (the render gate, the byte gate of edits and
the sleep landing rail). It scans the text, and its HTML-decoded form when it holds character references (an
attribute stores ``"`` as ``&quot;``), with :func:`git_memhtml.secrets.find_secrets`. The refusal names the file,
or the draft field that holds the secret, and the secret's kind, never its text.
"""

from __future__ import annotations

import dataclasses
import html
from collections.abc import Iterator
from typing import Final

from git_memhtml.errors import SecretInMemory
from git_memhtml.secrets import find_secrets

SECRET_HINT: Final[str] = ("remove the credential from the memory, or store a reference to where it lives "
                           "(e.g. \"the deploy key is in the team vault under deploy/prod\")")


def secret_kinds(text: str) -> tuple[str, ...]:
    """The sorted distinct kinds of the secrets in ``text`` or, when it holds ``&`` references, in its decoded
    form; ``()`` when there are none."""
    kinds = {f.kind for f in find_secrets(text)}
    if not kinds and "&" in text:
        kinds = {f.kind for f in find_secrets(html.unescape(text))}
    return tuple(sorted(kinds))


def _texts(value: object, name: str) -> Iterator[tuple[str, str]]:
    """(field name, text) of every string in a draft field (sequences and dataclasses such as ``Link`` opened)."""
    if isinstance(value, str):
        yield name, value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _texts(item, name)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for field in dataclasses.fields(value):
            yield from _texts(getattr(value, field.name), name)


def field_of_secret(draft: object) -> str | None:
    """The first field of ``draft`` (a dataclass such as ``MemoryDraft``) whose own text carries a secret."""
    if not dataclasses.is_dataclass(draft) or isinstance(draft, type):
        return None
    for field in dataclasses.fields(draft):
        for name, text in _texts(getattr(draft, field.name), field.name.replace("_", "-")):
            if secret_kinds(text):
                return name
    return None


def refuse_secrets(text: str, *, where: str, draft: object | None = None, path: str | None = None) -> None:
    """Raise when ``text`` (a memory as it would be stored) carries a detected secret.

    Args:
        text: the memory's text.
        where: what to name when no single field holds it (a path, ``rendered memory``).
        draft: the draft it was rendered from, to name the field that holds the secret.
        path: the repository path, when known (the error's ``path``).

    Raises:
        SecretInMemory: exit 2, naming the field or ``where`` and the kinds; nothing has been written.
    """
    kinds = secret_kinds(text)
    if not kinds:
        return
    field = field_of_secret(draft) if draft is not None else None
    subject = f"{where}: field {field}" if field else where
    noun = "a detected secret" if len(kinds) == 1 else "detected secrets"
    raise SecretInMemory(f"{subject} carries {noun} ({', '.join(kinds)}); nothing written",
                         kinds=kinds, hint=SECRET_HINT, path=path)
