"""``memhtml.llm*``: resolution through the sources, defaults that follow the dialect, and every refusal naming its
setting with a hint; the key read from the variable ``memhtml.llmkeyenv`` names, never shown."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from git_memhtml.config import ResolvedSettings, llm_defaults, llm_key_env, llm_settings, resolve_settings
from git_memhtml.errors import ConfigError
from git_memhtml.llm.client import HttpModelClient, LlmSettings


def resolved(env: Mapping[str, str] | None = None, git: Mapping[str, str] | None = None,
             flags: Mapping[str, object | None] | None = None) -> ResolvedSettings:
    return resolve_settings(git_config=lambda k: (git or {}).get(k), env=env or {}, flags=flags)


def test_off_by_default_binds_nothing() -> None:
    r = resolved()
    assert r.settings.llm == "off" and llm_settings(r.settings, key="sk-x") is None
    assert llm_defaults(r.settings) == {"llm_url": None, "llm_key_env": None} and llm_key_env(r.settings) is None


@pytest.mark.parametrize(("dialect", "url", "key_env", "endpoint"), [
    ("openai", "https://api.openai.com/v1", "OPENAI_API_KEY", "https://api.openai.com/v1/chat/completions"),
    ("anthropic", "https://api.anthropic.com", "ANTHROPIC_API_KEY", "https://api.anthropic.com/v1/messages")])
def test_url_and_key_variable_default_by_dialect(dialect: str, url: str, key_env: str, endpoint: str) -> None:
    r = resolved(git={"memhtml.llm": dialect, "memhtml.llmmodel": "m"})
    bound = llm_settings(r.settings, key="sk-1")
    assert bound == LlmSettings(dialect, url, "m", key="sk-1", key_env=key_env)  # type: ignore[arg-type]
    assert bound is not None and bound.endpoint == endpoint and bound.timeout == 120.0 and bound.max_attempts == 4
    assert "sk-1" not in repr(bound) and "sk-1" not in HttpModelClient(bound).describe()


def test_sources_stack_git_config_then_env_then_flag() -> None:
    r = resolved(git={"memhtml.llm": "anthropic", "memhtml.llmurl": "http://127.0.0.1:1", "memhtml.llmmodel": "a",
                      "memhtml.llmtimeout": "5", "memhtml.llmkeyenv": "MY_KEY"},
                 env={"MEMHTML_LLM": "OpenAI", "MEMHTML_LLM_MODEL": "b", "MEMHTML_LLM_ATTEMPTS": "2"},
                 flags={"llm_model": "c", "llm_url": None})
    s = r.settings
    assert (s.llm, s.llm_url, s.llm_model, s.llm_timeout, s.llm_key_env, s.llm_attempts) == (
        "openai", "http://127.0.0.1:1", "c", 5.0, "MY_KEY", 2)
    assert (r.sources["llm"], r.sources["llm_url"], r.sources["llm_model"], r.sources["llm_attempts"]) == (
        "env", "git-config", "flag", "env")
    assert llm_key_env(s) == "MY_KEY"


BAD_VALUES: list[tuple[str, Mapping[str, str], str]] = [
    ("unknown dialect", {"MEMHTML_LLM": "gemini"}, "MEMHTML_LLM="),  # named as the user set it (issue 27)
    ("zero timeout", {"MEMHTML_LLM_TIMEOUT": "0"}, "MEMHTML_LLM_TIMEOUT"),
    ("text timeout", {"MEMHTML_LLM_TIMEOUT": "soon"}, "MEMHTML_LLM_TIMEOUT"),
    ("no attempts", {"MEMHTML_LLM_ATTEMPTS": "0"}, "MEMHTML_LLM_ATTEMPTS"),
    ("a key in llmkeyenv", {"MEMHTML_LLM_KEY_ENV": "sk-live-abc123-not-a-name"}, "MEMHTML_LLM_KEY_ENV"),
]


@pytest.mark.parametrize(("label", "env", "named"), BAD_VALUES, ids=[r[0] for r in BAD_VALUES])
def test_bad_values_are_refused_naming_the_setting(label: str, env: Mapping[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as err:
        resolved(env=env)
    assert named in err.value.message and err.value.hint and err.value.exit_code == 2
    assert "sk-live-abc123" not in err.value.message + str(err.value.hint)


BINDING: list[tuple[str, Mapping[str, str], str | None, str]] = [
    ("no model", {"memhtml.llm": "openai"}, "sk", "memhtml.llmmodel"),
    ("not http", {"memhtml.llm": "openai", "memhtml.llmmodel": "m", "memhtml.llmurl": "ftp://host/v1"}, "sk",
     "memhtml.llmurl"),
    ("no host", {"memhtml.llm": "openai", "memhtml.llmmodel": "m", "memhtml.llmurl": "http:///v1"}, "sk",
     "memhtml.llmurl"),
    ("bad port", {"memhtml.llm": "openai", "memhtml.llmmodel": "m", "memhtml.llmurl": "http://h:99999/v1"}, "sk",
     "memhtml.llmurl"),
    ("query", {"memhtml.llm": "openai", "memhtml.llmmodel": "m", "memhtml.llmurl": "http://h/v1?key=x"}, "sk",
     "memhtml.llmurl"),
    ("credentials", {"memhtml.llm": "anthropic", "memhtml.llmmodel": "m",
                     "memhtml.llmurl": "https://user:sk-pw-999@h"}, "sk", "memhtml.llmurl"),
    ("public server, no key", {"memhtml.llm": "openai", "memhtml.llmmodel": "m"}, None, "$OPENAI_API_KEY"),
    ("named variable empty", {"memhtml.llm": "anthropic", "memhtml.llmmodel": "m", "memhtml.llmkeyenv": "K2"}, "",
     "$K2"),
]


@pytest.mark.parametrize(("label", "git", "key", "named"), BINDING, ids=[r[0] for r in BINDING])
def test_a_binding_that_cannot_work_is_refused_with_a_hint(label: str, git: Mapping[str, str], key: str | None,
                                                          named: str) -> None:
    with pytest.raises(ConfigError) as err:
        llm_settings(resolved(git=git).settings, key=key)
    assert named in err.value.message and err.value.hint
    assert "sk-pw-999" not in err.value.message + str(err.value.hint)


@pytest.mark.parametrize("url", ["http://localhost:11434/v1", "http://127.0.0.1:8080", "http://[::1]:8000/v1",
                                 "http://192.168.1.20:11434/v1", "http://10.0.0.5:8000/v1", "http://gpu.localhost/v1"])
def test_a_local_server_needs_no_key_and_gets_no_auth_header(url: str) -> None:
    bound = llm_settings(resolved(git={"memhtml.llm": "openai", "memhtml.llmmodel": "q", "memhtml.llmurl": url})
                         .settings, key=None)
    assert bound is not None and bound.key is None and bound.url == url


@pytest.mark.parametrize("key", ["sk-abc\nEVIL", "sk-é-key", "sk two parts", "sk-\x00nul"])
def test_a_key_no_header_can_carry_is_refused_without_showing_it(key: str) -> None:
    s = resolved(git={"memhtml.llm": "openai", "memhtml.llmmodel": "m"}).settings
    with pytest.raises(ConfigError) as err:
        llm_settings(s, key=key)
    assert "$OPENAI_API_KEY" in err.value.message and err.value.hint
    assert key not in err.value.message + str(err.value.hint) and "sk" not in err.value.message


def test_surrounding_whitespace_is_not_part_of_the_key() -> None:
    s = resolved(git={"memhtml.llm": "openai", "memhtml.llmmodel": "m"}).settings
    bound = llm_settings(s, key="  sk-from-a-file\n")
    assert bound is not None and bound.key == "sk-from-a-file"
    with pytest.raises(ConfigError, match="holds no API key"):
        llm_settings(s, key=" \n ")
