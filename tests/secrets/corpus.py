"""Our corpus of fake secrets in real key formats, made from each vendor's published shape with random characters.

Nothing here is a real key: every value is drawn from ``random.Random(seed)`` at import, in the documented length and
alphabet, so a detector that knows the format finds it and no service accepts it. Each :class:`Sample` is one line
of text as a session transcript would hold it (a shell command, a config line, a chat sentence) with the secret's
exact text beside it, and the kind :func:`git_memhtml.secrets.find_secrets` must name.
"""

from __future__ import annotations

import base64
import json
import random
import string
from dataclasses import dataclass

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "-_"
B64 = ALNUM + "+/"
UPPER_B32 = string.ascii_uppercase + "234567"
HEX = "0123456789abcdef"


@dataclass(frozen=True)
class Sample:
    """One fake secret in context.

    Attributes:
        name: the row id (the format).
        kind: the kind name the detector must report.
        line: the text holding it.
        secret: the exact characters that must not survive redaction.
    """

    name: str
    kind: str
    line: str
    secret: str

    def __repr__(self) -> str:  # pytest ids and failure output: never the secret
        return f"Sample({self.name})"


def _draw(rng: random.Random, alphabet: str, n: int) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _jwt(rng: random.Random) -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    claims = {"sub": _draw(rng, string.digits, 10), "name": "Test User", "iat": 1767225600}
    payload = _b64url(json.dumps(claims).encode())
    return f"{header}.{payload}.{_b64url(rng.randbytes(32))}"


def _pem(rng: random.Random, label: str, body_bytes: int) -> str:
    body = base64.b64encode(rng.randbytes(body_bytes)).decode("ascii")
    lines = [body[i:i + 64] for i in range(0, len(body), 64)]
    return f"-----BEGIN {label}-----\n" + "\n".join(lines) + f"\n-----END {label}-----"


def _openssh(rng: random.Random) -> str:
    raw = b"openssh-key-v1\x00" + rng.randbytes(300)
    body = base64.b64encode(raw).decode("ascii")
    lines = [body[i:i + 70] for i in range(0, len(body), 70)]
    return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END OPENSSH PRIVATE KEY-----"


def _putty(rng: random.Random) -> str:
    """A PuTTY version 3 key file (PuTTY 0.75 format: header lines, base64 public and private blobs, a MAC)."""
    public = base64.b64encode(rng.randbytes(51)).decode("ascii")
    private = base64.b64encode(rng.randbytes(48)).decode("ascii")
    return ("PuTTY-User-Key-File-3: ecdsa-sha2-nistp256\nEncryption: none\nComment: ops@example\nPublic-Lines: 2\n"
            f"{public[:64]}\n{public[64:]}\nPrivate-Lines: 1\n{private}\nPrivate-MAC: {rng.randbytes(32).hex()}")


def build(seed: int = 20261202) -> list[Sample]:
    """The corpus (deterministic in ``seed``): 31 samples, each format once."""
    rng = random.Random(seed)
    out: list[Sample] = []

    def add(name: str, kind: str, template: str, secret: str) -> None:
        out.append(Sample(name, kind, template.replace("{}", secret), secret))

    add("aws-access-key-id", "aws-access-key", "export AWS_ACCESS_KEY_ID={}", "AKIA" + _draw(rng, UPPER_B32, 16))
    add("aws-secret-quoted", "aws-secret-access-key", 'client = boto3.client("s3", aws_secret_access_key="{}")',
        _draw(rng, B64, 40))
    add("aws-secret-credentials-file", "aws-secret-access-key", "aws_secret_access_key = {}", _draw(rng, B64, 40))
    add("github-classic", "github-token", "git remote set-url origin https://{}@github.com/acme/api.git",
        "ghp_" + _draw(rng, ALNUM, 36))
    add("github-fine-grained", "github-token", "GH_TOKEN={} gh pr list",
        "github_pat_" + _draw(rng, ALNUM, 22) + "_" + _draw(rng, ALNUM, 59))
    add("github-oauth", "github-token", "the oauth token is {} for the bot", "gho_" + _draw(rng, ALNUM, 36))
    add("gitlab-pat", "gitlab-token", "curl --header 'PRIVATE-TOKEN: {}' https://gitlab.example.com/api/v4/projects",
        "glpat-" + _draw(rng, URLSAFE, 20))
    add("slack-bot", "slack-token", "SLACK_BOT_TOKEN={}",
        f"xoxb-{_draw(rng, string.digits, 12)}-{_draw(rng, string.digits, 13)}-{_draw(rng, ALNUM, 24)}")
    add("slack-user", "slack-token", "use {} to post as me",
        f"xoxp-{_draw(rng, string.digits, 12)}-{_draw(rng, string.digits, 12)}-{_draw(rng, string.digits, 13)}-"
        + _draw(rng, HEX, 32))
    add("slack-webhook", "slack-token", "curl -X POST -d @msg.json https://hooks.slack.com/services/{}",
        f"T{_draw(rng, string.ascii_uppercase + string.digits, 8)}/"
        f"B{_draw(rng, string.ascii_uppercase + string.digits, 10)}/{_draw(rng, ALNUM, 24)}")
    add("stripe-live", "stripe-key", "Stripe.api_key = {}", "sk_live_" + _draw(rng, ALNUM, 99))
    add("google-api-key", "google-api-key", "https://maps.googleapis.com/maps/api/geocode/json?key={}",
        "AIza" + _draw(rng, URLSAFE, 35))
    add("openai-legacy", "openai-api-key", "OPENAI_API_KEY={}",
        "sk-" + _draw(rng, ALNUM, 20) + "T3BlbkFJ" + _draw(rng, ALNUM, 20))
    add("openai-project", "openai-api-key", "openai.api_key = {}",
        "sk-proj-" + _draw(rng, URLSAFE, 74) + "T3BlbkFJ" + _draw(rng, URLSAFE, 74))
    add("anthropic", "anthropic-api-key", "ANTHROPIC_API_KEY={} claude",
        "sk-ant-api03-" + _draw(rng, URLSAFE, 93) + "AA")
    add("jwt", "jwt", "Authorization: Bearer {}", _jwt(rng))
    add("npm-token", "npm-token", "npm config set //registry.npmjs.org/:_authToken {}", "npm_" + _draw(rng, ALNUM, 36))
    add("pypi-token", "pypi-token", "twine upload -p {} dist/*",
        "pypi-AgEIcHlwaS5vcmc" + _draw(rng, URLSAFE, 140))
    add("sendgrid", "sendgrid-api-key", "SENDGRID_API_KEY={}",
        "SG." + _draw(rng, URLSAFE, 22) + "." + _draw(rng, URLSAFE, 43))
    add("twilio-api-key", "twilio-key", "twilio api key {} was rotated", "SK" + _draw(rng, HEX, 32))
    add("azure-storage", "azure-storage-key",
        "DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey={};EndpointSuffix=core.windows.net",
        _draw(rng, B64, 86) + "==")
    add("discord-bot", "discord-bot-token", "client.run({})".replace("{}", '"{}"'),
        rng.choice("MNO") + _draw(rng, URLSAFE, 23) + "." + _draw(rng, URLSAFE, 6) + "." + _draw(rng, URLSAFE, 27))
    add("telegram-bot", "telegram-bot-token", "https://api.telegram.org/bot{}/getMe",
        _draw(rng, string.digits, 10) + ":" + _draw(rng, URLSAFE, 35))
    add("pem-rsa", "private-key", "cat id_rsa\n{}\n", _pem(rng, "RSA PRIVATE KEY", 600))
    add("pem-ec", "private-key", "the key file:\n{}\nkeep it safe", _pem(rng, "EC PRIVATE KEY", 120))
    add("pem-pkcs8", "private-key", "{}", _pem(rng, "PRIVATE KEY", 400))
    add("pem-openssh", "private-key", "$ cat ~/.ssh/id_ed25519\n{}\n", _openssh(rng))
    add("pem-encrypted-pkcs8", "private-key", "{}", _pem(rng, "ENCRYPTED PRIVATE KEY", 400))
    add("putty-v3", "private-key", "key.ppk:\n{}\n", _putty(rng))
    add("url-password", "url-password", "psql postgres://deploy:{}@db.internal:5432/app", _draw(rng, ALNUM, 16))
    add("password-assignment", "password-assignment", 'DB_PASSWORD = "{}"', _draw(rng, ALNUM + "!#%", 14))
    return out


CORPUS: list[Sample] = build()
"""The samples every table in tests/secrets/ runs over."""
