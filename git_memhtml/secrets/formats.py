"""Our own detection, only for the key formats detect-secrets 1.5 does not know, and the kind names.

detect-secrets' plugins are the detector (:mod:`git_memhtml.secrets.detect`); this module adds a pattern only
where its plugin set misses a format outright (docs/secrets.md "Formats we add"), each from the vendor's published
key shape:

- Encrypted PKCS#8 private keys (``-----BEGIN ENCRYPTED PRIVATE KEY-----``, RFC 7468 §11) and PuTTY version 3 key
  files (``PuTTY-User-Key-File-3:``, PuTTY 0.75); the PrivateKeyDetector lists neither header. The block is taken
  whole, as for its own headers.
- GitHub fine-grained personal access tokens, ``github_pat_`` + 22 + ``_`` + 59 characters (GitHub's token
  format announcement, 2022); the GitHubTokenDetector knows only ``ghp_/gho_/ghu_/ghs_/ghr_``.
- Google API keys, ``AIza`` + 35 characters (Google Cloud "API keys" docs); no plugin.
- Anthropic API keys, ``sk-ant-api03-`` / ``sk-ant-admin01-`` + a long url-safe tail (Anthropic console keys);
  no plugin.
- OpenAI project, service-account and admin keys, ``sk-proj-`` / ``sk-svcacct-`` / ``sk-admin-`` + a long url-safe
  tail (OpenAI's key prefixes since 2024); the OpenAIDetector needs 20 alphanumerics on both sides of its
  ``T3BlbkFJ`` marker, which a tail with ``-`` or ``_`` next to the marker does not have.
- npm access tokens outside an ``.npmrc`` line, ``npm_`` + 36 alphanumerics (npm's token format, 2021); the
  NpmDetector only matches ``//registry/:_authToken=`` lines.
- AWS secret access keys in the shared-credentials file form, ``aws_secret_access_key = <40 chars>`` unquoted
  (AWS CLI "Configuration and credential file settings"); the AWSKeyDetector needs the value quoted.

Every pattern is linear (no nested quantifiers, bounded repeats) and matches ASCII only.
"""

from __future__ import annotations

import re
from typing import Final

OWN_PATTERNS: Final[tuple[tuple[str, re.Pattern[str]], ...]] = (
    ("private-key", re.compile(r"(?:BEGIN ENCRYPTED PRIVATE KEY|PuTTY-User-Key-File-3)")),
    ("github-token", re.compile(r"(?<![A-Za-z0-9_])github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}(?![A-Za-z0-9])")),
    ("google-api-key", re.compile(r"(?<![A-Za-z0-9_-])AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9_-])")),
    ("anthropic-api-key", re.compile(r"(?<![A-Za-z0-9_-])sk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{32,256}")),
    ("openai-api-key", re.compile(r"(?<![A-Za-z0-9_-])sk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,400}")),
    ("npm-token", re.compile(r"(?<![A-Za-z0-9_])npm_[A-Za-z0-9]{36}(?![A-Za-z0-9])")),
    ("aws-secret-access-key",
     re.compile(r"(?i:aws_secret_access_key)[ \t]{0,8}[=:][ \t]{0,8}(?P<secret>[A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])")),
)
"""(kind, pattern) pairs; a pattern with a ``secret`` group redacts only that group (the key name stays); a
``private-key`` match is a header, extended to its whole block."""

KIND_OF_TYPE: Final[dict[str, str]] = {
    "AWS Access Key": "aws-access-key",
    "Artifactory Credentials": "artifactory-token",
    "Azure Storage Account access key": "azure-storage-key",
    "Basic Auth Credentials": "url-password",
    "Cloudant Credentials": "cloudant-credentials",
    "Discord Bot Token": "discord-bot-token",
    "GitHub Token": "github-token",
    "GitLab Token": "gitlab-token",
    "IBM Cloud IAM Key": "ibm-cloud-iam-key",
    "IBM COS HMAC Credentials": "ibm-cos-hmac",
    "JSON Web Token": "jwt",
    "Secret Keyword": "password-assignment",
    "Mailchimp Access Key": "mailchimp-key",
    "NPM tokens": "npm-token",
    "OpenAI Token": "openai-api-key",
    "Private Key": "private-key",
    "PyPI Token": "pypi-token",
    "SendGrid API Key": "sendgrid-api-key",
    "Slack Token": "slack-token",
    "SoftLayer Credentials": "softlayer-credentials",
    "Square OAuth Secret": "square-oauth-secret",
    "Stripe Access Key": "stripe-key",
    "Telegram Bot Token": "telegram-bot-token",
    "Twilio API Key": "twilio-key",
}
"""detect-secrets' ``secret_type`` strings (each plugin's class attribute, 1.5.0) → our kind names, the words in
``[redacted:<kind>]`` and in refusals. A type missing here (a newer plugin) becomes its lower-cased slug."""


_AWS_KEY_ID: Final = re.compile(r"(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}")


def kind_of(secret_type: str, value: str = "") -> str:
    """The kind name of a detect-secrets ``secret_type`` (:data:`KIND_OF_TYPE`, else a lower-case slug). The
    AWSKeyDetector reports key ids and quoted secret access keys under one type; ``value`` tells them apart."""
    if secret_type == "AWS Access Key" and value and not _AWS_KEY_ID.fullmatch(value):
        return "aws-secret-access-key"
    known = KIND_OF_TYPE.get(secret_type)
    if known is not None:
        return known
    return re.sub(r"[^a-z0-9]+", "-", secret_type.lower()).strip("-") or "secret"
