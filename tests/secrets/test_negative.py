"""What memories legitimately hold is not flagged by the chosen plugin set (docs/secrets.md "Plugins").

One row per class of look-alike: content identifiers (git SHAs, sha256 digests, UUIDs, image digests), encoded
ordinary text, URLs without credentials, words about passwords, templated and indirect values, addresses. Then the
real corpora: every LoCoMo turn and the demo corpus, read from where they live (skipped when absent).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import uuid
from pathlib import Path

import pytest

from git_memhtml.secrets import find_secrets, redact

ROOT = Path(__file__).resolve().parents[2]
LOCOMO = ROOT.parent / "shared" / "data" / "locomo" / "locomo-dev.json"
DEMO = ROOT / "git_memhtml" / "resources" / "demo" / "memories.jsonl"

_rng = random.Random(13)
_SHA1 = hashlib.sha1(b"a commit").hexdigest()
_SHA256 = hashlib.sha256(b"a memory").hexdigest()

NEGATIVE: list[tuple[str, str]] = [
    ("git sha", f"fixed in commit {_SHA1} on main"),
    ("short sha", f"see {_SHA1[:12]} and {_SHA1[:7]}"),
    ("git log line", f"{_SHA1} Merge h/ident: identifiers in a query rank their exact holders first"),
    ("sha256 hex", f"sha256 of the tarball is {_SHA256}"),
    ("content-hash meta", f'<meta name="memhtml-content-hash" content="sha256:{_SHA256}">'),
    ("image digest", f"image: registry.example.com/api@sha256:{_SHA256}"),
    ("uuid", f"session {uuid.UUID(int=_rng.getrandbits(128), version=4)} ended"),
    ("transcript ids", f'{{"uuid": "{uuid.UUID(int=_rng.getrandbits(128), version=4)}", '
                       f'"parentUuid": "{uuid.UUID(int=_rng.getrandbits(128), version=4)}"}}'),
    ("base64 of prose", base64.b64encode(b"The deploy ran at noon and the cache was warm again after.").decode()),
    ("url without credentials", "docs at https://docs.example.com/guide/install?lang=en#step-2"),
    ("url with a user only", "clone ssh://git@github.com/acme/api.git"),
    ("email address", "mail priya.raman@example.com about the rota"),
    ("password in prose", "Priya reset her password yesterday and the secret santa list is up."),
    ("password flag without value", "run `mysql -u root -p` and type the password when asked"),
    ("templated value", 'password = "${DB_PASSWORD}"'),
    ("indirect reference", "password = get_password_from_vault()"),
    ("env reference", 'api_key = os.environ["API_KEY"]'),
    ("placeholder", 'password = "<your password here>"'),
    ("public ip", "the load balancer answers on 203.0.113.54 and 198.51.100.7"),
    ("semver and ids", "v1.2.3, INC-10423, web01, PR #4412, ticket ABC-1234"),
    ("memory path", "areas/inbox/2026-01-15-deploy-key-rotation.html"),
    ("pem public key", "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----"),
    ("certificate", "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIU\n-----END CERTIFICATE-----"),
]


@pytest.mark.parametrize(("label", "text"), NEGATIVE, ids=[r[0] for r in NEGATIVE])
def test_look_alikes_are_not_flagged(label: str, text: str) -> None:
    assert find_secrets(text) == [], label
    assert find_secrets(json.dumps({"text": text})) == [], label
    assert redact(text).text == text


def _locomo_texts() -> list[str]:
    out: list[str] = []
    for sample in json.loads(LOCOMO.read_text(encoding="utf-8")):
        for key, value in sample["conversation"].items():
            if key.startswith("session_") and isinstance(value, list):
                out.extend(str(turn.get("text", "")) for turn in value)
    return out


@pytest.mark.skipif(not LOCOMO.is_file(), reason="../shared/data/locomo is not beside the project")
def test_no_locomo_turn_is_flagged() -> None:
    turns = _locomo_texts()
    assert len(turns) > 1000
    assert find_secrets("\n".join(turns)) == []


def test_the_demo_corpus_is_not_flagged() -> None:
    assert find_secrets(DEMO.read_text(encoding="utf-8")) == []
