"""Every format of our corpus is found, redacted whole, counted and named: plain, JSON-escaped and JSON in JSON.

Table-driven over :data:`tests.secrets.corpus.CORPUS` (one row per key format) × :data:`ENCODINGS` (how a
transcript holds the line). "Redacted whole" means the output keeps no run of 8 or more characters of the secret
(in the encoding the text uses), so a detector that stops at a fixed-width prefix, a first PEM line or a group
label fails the row.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import pytest

from git_memhtml.secrets import Finding, find_secrets, redact
from tests.secrets.corpus import CORPUS, Sample

MIN_RUN = 8
"""The longest run of a secret's characters a redacted text may keep is ``MIN_RUN - 1`` (issue 13 item 4)."""


def _plain(text: str) -> str:
    return text


def _json(text: str) -> str:
    return json.dumps({"type": "tool_result", "content": text})


def _json_in_json(text: str) -> str:
    return json.dumps({"message": {"content": json.dumps({"stdout": text})}})


ENCODINGS: list[tuple[str, Callable[[str], str]]] = [("plain", _plain), ("json", _json),
                                                     ("json-in-json", _json_in_json)]


def keeps_a_run(text: str, secret: str, n: int = MIN_RUN) -> bool:
    """Whether ``text`` holds any ``n``-character substring of ``secret``."""
    return any(secret[i:i + n] in text for i in range(len(secret) - n + 1))


def encoded_secret(encode: Callable[[str], str], secret: str) -> str:
    """The secret as ``encode`` writes it inside a string (JSON escapes a newline as ``\\n``)."""
    if encode is _plain:
        return secret
    if encode is _json:
        return json.dumps(secret)[1:-1]
    return json.dumps(json.dumps(secret)[1:-1])[1:-1]


def test_the_corpus_has_every_listed_format() -> None:
    names = {s.name for s in CORPUS}
    assert len(CORPUS) >= 20 and len(names) == len(CORPUS)
    for needed in ("aws-access-key-id", "aws-secret-quoted", "github-classic", "github-fine-grained", "github-oauth",
                   "gitlab-pat", "slack-bot", "slack-user", "slack-webhook", "stripe-live", "google-api-key",
                   "openai-legacy", "openai-project", "anthropic", "jwt", "npm-token", "pypi-token", "sendgrid",
                   "twilio-api-key", "azure-storage", "discord-bot", "telegram-bot", "pem-rsa", "pem-ec",
                   "pem-openssh", "pem-encrypted-pkcs8", "putty-v3", "url-password", "password-assignment"):
        assert needed in names


@pytest.mark.parametrize("sample", CORPUS, ids=[s.name for s in CORPUS])
@pytest.mark.parametrize(("encoding", "encode"), ENCODINGS, ids=[e[0] for e in ENCODINGS])
def test_each_format_is_found_redacted_whole_counted_and_named(sample: Sample, encoding: str,
                                                               encode: Callable[[str], str]) -> None:
    text = encode(sample.line)
    secret = encoded_secret(encode, sample.secret)
    assert secret in text
    findings = find_secrets(text)
    assert [f.kind for f in findings] == [sample.kind]
    at = text.index(secret)
    assert findings[0].start <= at and at + len(secret) <= findings[0].end, "the span covers the whole secret"
    result = redact(text)
    assert result.count == 1 and result.kinds == (sample.kind,)
    assert f"[redacted:{sample.kind}]" in result.text
    assert not keeps_a_run(result.text, secret) and not keeps_a_run(result.text, sample.secret)
    assert redact(result.text).count == 0, "a redacted text redacts to itself"


def test_url_credentials_keep_scheme_user_and_host() -> None:
    sample = next(s for s in CORPUS if s.name == "url-password")
    assert redact(sample.line).text == "psql postgres://deploy:[redacted:url-password]@db.internal:5432/app"


def test_a_pem_block_goes_whole_from_begin_to_end_and_the_text_around_stays() -> None:
    sample = next(s for s in CORPUS if s.name == "pem-ec")
    assert redact(sample.line).text == "the key file:\n[redacted:private-key]\nkeep it safe"
    escaped = _json(sample.line)
    assert redact(escaped).text == _json("the key file:\n[redacted:private-key]\nkeep it safe")


def test_a_pem_block_without_its_end_line_loses_its_whole_body() -> None:
    sample = next(s for s in CORPUS if s.name == "pem-rsa")
    cut = sample.secret.rsplit("\n-----END", 1)[0]  # a transcript truncated mid-key
    body_line = cut.splitlines()[3]
    for text in (f"output:\n{cut}", _json(f"output:\n{cut}")):
        result = redact(text)
        assert result.count == 1 and body_line[:MIN_RUN] not in result.text and "output:" in result.text


def test_every_secret_of_a_text_is_counted_and_the_kinds_are_sorted_distinct() -> None:
    text = "\n".join(s.line for s in CORPUS)
    result = redact(text)
    assert result.count == len(CORPUS)
    assert result.kinds == tuple(sorted({s.kind for s in CORPUS}))
    for sample in CORPUS:
        assert not keeps_a_run(result.text, sample.secret)


def test_two_password_assignments_on_one_line_both_go() -> None:
    text = 'db_password = "Zq9xK2mW7pLr" and api_secret = "Hn4vB8cT1sQe"'
    result = redact(text)
    assert result.count == 2
    assert "Zq9xK2mW" not in result.text and "Hn4vB8cT" not in result.text


def test_a_finding_and_a_redaction_never_show_the_secret() -> None:
    sample = next(s for s in CORPUS if s.name == "github-classic")
    findings = find_secrets(sample.line)
    result = redact(sample.line)
    for shown in (repr(findings), str(findings), repr(result), str(result), repr(sample)):
        assert not keeps_a_run(shown, sample.secret)
    assert findings == [Finding(kind="github-token", start=findings[0].start, end=findings[0].end)]


def test_lone_surrogates_and_other_scripts_keep_their_positions() -> None:
    sample = next(s for s in CORPUS if s.name == "github-oauth")
    text = "\ud800 日本語 \udfff " + sample.line + " émoji \U0001f511 \ud83d"
    findings = find_secrets(text)
    assert len(findings) == 1 and text[findings[0].start:findings[0].end] == sample.secret
    result = redact(text)
    assert result.text.startswith("\ud800 日本語 \udfff ") and result.text.endswith(" émoji \U0001f511 \ud83d")


@pytest.mark.parametrize("text", ["", "\n", "\\n\\n", "\\", "\\u12", "-----BEGIN", "\x00" * 10, "a" * 5000],
                         ids=["empty", "newline", "escaped-newlines", "backslash", "short-escape", "half-header",
                              "nuls", "long-word"])
def test_edge_inputs_find_nothing_and_stay_unchanged(text: str) -> None:
    assert find_secrets(text) == []
    assert redact(text).text == text


def test_a_secret_across_a_long_line_window_boundary_is_found() -> None:
    """Lines longer than the window are scanned in overlapping windows (detect.WINDOW/OVERLAP)."""
    from git_memhtml.secrets.detect import OVERLAP, WINDOW

    sample = next(s for s in CORPUS if s.name == "sendgrid")
    step = WINDOW - OVERLAP
    for before in (step - 20, WINDOW - 10, 2 * step - 5):
        text = "x" * before + " " + sample.secret + " " + "y" * 9000
        result = redact(text)
        assert result.count == 1 and not keeps_a_run(result.text, sample.secret), before


def test_detect_secrets_settings_other_callers_see_are_untouched() -> None:
    """Our scan runs in transient settings: the process-wide plugin list is what it was before and after."""
    from detect_secrets.settings import get_settings, transient_settings

    with transient_settings({"plugins_used": [{"name": "Base64HighEntropyString", "limit": 4.5}]}):
        before = get_settings().json()
        assert redact(CORPUS[0].line).count == 1
        assert get_settings().json() == before


def test_the_first_scan_leaves_warnings_and_logging_as_they_were() -> None:
    """detect-secrets' import turns warnings capture on; a fresh process's first scan puts it back."""
    import subprocess
    import sys

    code = ("import logging, warnings\n"
            "before = warnings.showwarning\n"
            "from git_memhtml.secrets import redact\n"
            "assert redact('id AKIA' + 'B' * 16).count == 1\n"
            "assert warnings.showwarning is before\n"
            "assert logging.getLogger().handlers == []\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("sample", CORPUS[:6], ids=[s.name for s in CORPUS[:6]])
def test_an_allowlist_pragma_beside_a_key_does_not_hide_it(sample: Sample) -> None:
    """detect-secrets skips lines with ``pragma: allowlist secret``; a transcript's copy of such a line still holds
    a key that must not be committed (detect.FILTERS leaves that filter out)."""
    for line in (f"{sample.line}  # pragma: allowlist secret", f"// pragma: allowlist nextline secret\n{sample.line}"):
        result = redact(line)
        assert result.count == 1 and not keeps_a_run(result.text, sample.secret)


def test_two_adjacent_key_blocks_are_two_findings() -> None:
    first = next(s for s in CORPUS if s.name == "pem-pkcs8").secret
    second = next(s for s in CORPUS if s.name == "pem-encrypted-pkcs8").secret
    for text in (f"{first}\n{second}", f"{first}{second}", _json(f"{first}\n{second}")):
        result = redact(text)
        assert result.count == 2 and result.kinds == ("private-key",)
        assert not keeps_a_run(result.text, first) and not keeps_a_run(result.text, second)
