"""Settings are checked by a plain table (``config.FIELDS``), not pydantic (issue 12 item 4): each row is one value
from one source, accepted (converted) or refused naming the key, the source and a hint."""

from __future__ import annotations

import dataclasses

import pytest

from git_memhtml.config import FIELDS, KEYS, Settings, resolve_settings
from git_memhtml.errors import ConfigError

ACCEPTED = [
    ("embed_dim", " 256 ", 256),
    ("embed_dim", "1", 1),
    ("weight_fts", "2.5", 2.5),
    ("weight_vector", "0", 0.0),
    ("mmr_lambda", "1", 1.0),
    ("embed", "FAKE", "fake"),
    ("llm", " Anthropic ", "anthropic"),
    ("embed_key_env", "MY_KEY_1", "MY_KEY_1"),
    ("lock_timeout", "0", 0.0),
    ("gate_max_lost", "1000000", 1_000_000),
    ("hooks", "0", "0"),
    ("llm_attempts", "10", 10),
    ("weight_recency", ".5", 0.5),
    ("embed_timeout", "2e1", 20.0),
    ("embed_batch", "+8", 8),
    ("llm_max_prompt", " 8192 ", 8192),
    ("llm_max_prompt", "1000", 1000),
    ("llm_max_prompt", "2000000", 2_000_000),
]
"""``(key, raw value from MEMHTML_<KEY>, the value the settings hold)``."""

REFUSED = [
    ("embed_dim", "0"),
    ("embed_dim", "1.5"),
    ("embed_dim", "ten"),
    ("embed_batch", "-3"),
    ("weight_fts", "inf"),
    ("weight_fts", "nan"),
    ("weight_fts", "100.5"),
    ("weight_salience", "-0.1"),
    ("mmr_lambda", "1.01"),
    ("embed", "bogus"),
    ("llm", "gpt"),
    ("hooks", "2"),
    ("embed_timeout", "0"),
    ("llm_timeout", "3601"),
    ("llm_attempts", "11"),
    ("lock_timeout", "-1"),
    ("gate_max_lost", "1e3"),
    ("embed_key_env", "sk-secret-value"),
    ("lock_timeout", "1_000"),
    ("embed_dim", "\u0663"),  # ARABIC-INDIC DIGIT THREE: int() takes it, a config value must not
    ("embed_dim", "0x10"),
    ("embed_dim", "1 0"),
    ("embed_dim", "9" * 5000),
    ("weight_fts", "infinity"),
    ("weight_fts", "1e400"),
    ("llm_key_env", "has space"),
    ("llm_max_prompt", "999"),  # below the largest fixed part of a shipped request
    ("llm_max_prompt", "2000001"),
    ("llm_max_prompt", "4k"),
    ("llm_max_prompt", "4e3"),
    ("llm_max_prompt", "4000.5"),
    ("llm_max_prompt", "-4000"),
    ("llm_max_prompt", "99999999999999999999"),  # an integer too long to read: "must be ≤ 2000000", not "an integer"
]
"""``(key, raw value)`` that must be refused."""


def _env(key: str, raw: str) -> dict[str, str]:
    return {"MEMHTML_" + key.upper(): raw}


@pytest.mark.parametrize(("key", "raw", "want"), ACCEPTED, ids=[f"{r[0]}={r[1]!r}" for r in ACCEPTED])
def test_a_valid_value_is_converted(key: str, raw: str, want: object) -> None:
    resolved = resolve_settings(git_config=lambda _: None, env=_env(key, raw))
    got = getattr(resolved.settings, key)
    assert got == want and type(got) is type(want)
    assert resolved.sources[key] == "env"


@pytest.mark.parametrize(("key", "raw"), REFUSED, ids=[f"{r[0]}={r[1]!r}" for r in REFUSED])
@pytest.mark.parametrize("source", ["env", "git-config"])
def test_an_invalid_value_is_refused_naming_key_source_and_hint(key: str, raw: str, source: str) -> None:
    git = {"memhtml." + key.replace("_", ""): raw} if source == "git-config" else {}
    env = _env(key, raw) if source == "env" else {}
    with pytest.raises(ConfigError) as err:
        resolve_settings(git_config=git.get, env=env)
    message = err.value.message
    named = "memhtml." + key.replace("_", "") if source == "git-config" else "MEMHTML_" + key.upper()
    assert f"invalid setting {named}=" in message and f"(from {source})" in message  # the name the user set
    assert err.value.hint and err.value.exit_code == 2
    if key.endswith("key_env"):
        assert raw not in message + err.value.hint  # a key pasted in the wrong place is never echoed


def test_an_integer_too_long_to_read_names_the_bound_it_breaks() -> None:
    """A new user (issue 27): ``git config memhtml.llmmaxprompt 99999999999999999999`` was told "must be an
    integer"."""
    for raw, reason in (("99999999999999999999", "must be ≤"), ("-99999999999999999999", "must be ≥")):
        with pytest.raises(ConfigError) as err:
            resolve_settings(git_config={"memhtml.llmmaxprompt": raw}.get, env={})
        assert reason in err.value.message and "integer" not in err.value.message


def test_a_flag_gives_typed_values_and_a_bool_is_no_number() -> None:
    resolved = resolve_settings(git_config=lambda _: None, env={}, flags={"weight_fts": 3, "embed_dim": 8.0})
    assert resolved.settings.weight_fts == 3.0 and resolved.settings.embed_dim == 8
    with pytest.raises(ConfigError, match="weight_fts"):
        resolve_settings(git_config=lambda _: None, env={}, flags={"weight_fts": True})


def test_defaults_pass_their_own_checks_and_every_key_is_listed() -> None:
    defaults = Settings()
    assert [f.name for f in dataclasses.fields(Settings)] == list(FIELDS) == list(KEYS)
    assert defaults.embed == "wordllama" and defaults.llm_url is None and defaults.llm_attempts == 4
    assert defaults.llm_max_prompt == 4000  # Ollama's usual context (llm/defaults.py)
    with pytest.raises(ValueError, match="mmr_lambda"):
        Settings(mmr_lambda=2.0)
