"""Settings: [tool.empath-gate] < environment < options, errors that name their source."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from pydantic import SecretStr

from empath_gate.errors import ConfigError
from empath_gate.settings import KNOWN_KEYS, RoleSettings, Settings, load_settings


def pyproject(tmp_path: Path, body: str) -> Path:
    p = tmp_path / "pyproject.toml"
    p.write_text("[project]\nname = 'x'\n\n[tool.empath-gate]\n" + body, encoding="utf-8")
    return p


def test_defaults_without_file(tmp_path: Path) -> None:
    s = load_settings(pyproject=tmp_path / "missing.toml", env={})
    assert s == Settings()
    assert s.cache_dir == Path(".empath-cache") and s.cache_mode == "use"
    assert s.synthetic_header == "X-Empath-Synthetic"
    assert s.auditor.model is None and s.judge.temperature == 0.0
    assert s.target_kind is None


def test_precedence_file_env_overrides(tmp_path: Path) -> None:
    p = pyproject(
        tmp_path,
        """
target = "openai/gpt-4o-mini"
target_system_prompt = "prompts/system.md"
auditor_model = "openai/gpt-4o"
auditor_temperature = 0.9
judge_model = "anthropic/claude-3-5-haiku"
runs = 3
max_cost_usd = 5.0
target_extra = { top_p = 0.5 }
max_retries = 2
auditor_max_retries = 7
""",
    )
    env = {
        "EMPATH_AUDITOR_MODEL": "openai/gpt-4.1",
        "EMPATH_RUNS": "5",
        "EMPATH_CACHE_DIR": "/tmp/c",
        "EMPATH_JUDGE_API_BASE": "http://proxy:4000",
        "UNRELATED": "x",
    }
    s = load_settings(
        pyproject=p, env=env, overrides={"runs": 7, "judge_model": None, "cache_mode": "refresh"}
    )
    assert s.target == "openai/gpt-4o-mini" and s.target_kind == "model"
    assert s.target_system_prompt == tmp_path / "prompts/system.md"  # relative to the pyproject
    assert s.auditor.model == "openai/gpt-4.1"  # env beats file
    assert s.auditor.temperature == 0.9  # file value kept
    assert s.runs == 7  # option beats env
    assert s.judge.model == "anthropic/claude-3-5-haiku"  # None option ignored
    assert s.judge.api_base == "http://proxy:4000"
    assert s.cache_dir == Path("/tmp/c") and s.cache_mode == "refresh"
    assert s.max_cost_usd == 5.0
    assert s.target_role.extra == {"top_p": 0.5}
    assert (s.target_role.max_retries, s.judge.max_retries, s.auditor.max_retries) == (2, 2, 7)


def test_target_model_env_and_kinds() -> None:
    assert (
        load_settings(pyproject=None, env={"EMPATH_TARGET_MODEL": "py:bot.app:reply"}).target_kind
        == "callable"
    )
    assert (
        load_settings(pyproject=None, env={"EMPATH_TARGET": "https://bot.example/v1"}).target_kind == "http"
    )
    with pytest.raises(ConfigError, match="disagree"):
        load_settings(pyproject=None, env={"EMPATH_TARGET": "a/b", "EMPATH_TARGET_MODEL": "c/d"})
    with pytest.raises(ConfigError, match=r"py:package\.module:function"):
        load_settings(pyproject=None, env={"EMPATH_TARGET": "py:not valid"})


def test_scripted_auditor_spelling() -> None:
    assert load_settings(pyproject=None, env={"EMPATH_AUDITOR_MODEL": "scripted"}).auditor.model is None


def test_env_value_types(tmp_path: Path) -> None:
    env = {
        "EMPATH_OFFLINE": "yes",
        "EMPATH_STRICT_FAMILIES": "0",
        "EMPATH_BASE_SEED": "42",
        "EMPATH_JUDGE_EXTRA": '{"top_p": 1}',
        "EMPATH_SUITES_DIRS": os.pathsep.join(["a", "b"]),
        "EMPATH_TARGET_SEND_SEED": "false",
        "EMPATH_CONCURRENCY": "32",
    }
    s = load_settings(pyproject=None, env=env)
    assert s.offline is True and s.strict_families is False and s.base_seed == 42
    assert s.judge.extra == {"top_p": 1}
    assert s.suites_dirs == (Path("a"), Path("b"))
    assert s.target_role.send_seed is False and s.concurrency == 32


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"EMPATH_RUNS": "three"}, "environment variable EMPATH_RUNS"),
        ({"EMPATH_RUNS": "0"}, "environment variable EMPATH_RUNS"),
        ({"EMPATH_MAX_COST_USD": "-1"}, "EMPATH_MAX_COST_USD"),
        ({"EMPATH_CACHE_MODE": "sometimes"}, "EMPATH_CACHE_MODE"),
        ({"EMPATH_JUDGE_TEMPERATURE": "3"}, "EMPATH_JUDGE_TEMPERATURE"),
        ({"EMPATH_OFFLINE": "maybe"}, "EMPATH_OFFLINE"),
        ({"EMPATH_AUDITOR_EXTRA": "{not json"}, "EMPATH_AUDITOR_EXTRA"),
        ({"EMPATH_AUDITOR_EXTRA": '{"api_key": "x"}'}, "credential"),
        ({"EMPATH_JUDGE_EXTRA": '{"temperature": 1}'}, "setting of its own"),
        ({"EMPATH_SYNTHETIC_HEADER": "bad header"}, "EMPATH_SYNTHETIC_HEADER"),
    ],
)
def test_bad_env_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(pyproject=None, env=env)


def test_bad_file_values_name_the_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"\[tool.empath-gate\] key 'runs'"):
        load_settings(pyproject=pyproject(tmp_path, 'runs = "lots"\n'), env={})
    with pytest.raises(ConfigError, match="did you mean 'judge_model'"):
        load_settings(pyproject=pyproject(tmp_path, 'judge_modle = "x"\n'), env={})
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        load_settings(pyproject=pyproject(tmp_path, 'openai_api_key = "sk-x"\n'), env={})
    with pytest.raises(ConfigError, match="TOML"):
        load_settings(pyproject=pyproject(tmp_path, "runs = = 3\n"), env={})


def test_bad_option_names_the_option() -> None:
    with pytest.raises(ConfigError, match="option 'concurrency'"):
        load_settings(pyproject=None, env={}, overrides={"concurrency": "many"})
    with pytest.raises(ConfigError, match="unknown setting 'colour'"):
        load_settings(pyproject=None, env={}, overrides={"colour": "blue"})


def test_public_dict_has_no_key_and_no_url_credentials() -> None:
    planted = "sk-planted-0123456789"
    s = Settings(
        target="https://user:pw@bot.example/v1?token=abc",
        judge=RoleSettings(
            model="openai/gpt-4o",
            api_key=SecretStr(planted),
            api_base="https://u:p@proxy.example:8443/v1?key=zzz",
        ),
    )
    d = s.public_dict()
    text = repr(d) + s.model_dump_json()
    assert planted not in text and "pw@" not in repr(d) and "token=abc" not in repr(d)
    assert d["target"] == "https://bot.example/v1"
    assert d["roles"]["judge"]["api_base"] == "https://proxy.example:8443/v1"
    assert "api_key" not in d["roles"]["judge"]
    assert s.redacted() == d


def test_every_known_key_maps_to_an_env_var() -> None:
    for key in KNOWN_KEYS:
        env = {f"EMPATH_{key.upper()}": "1"}
        try:
            load_settings(pyproject=None, env=env)
        except ConfigError as exc:  # a wrong type is fine; the variable must be recognised
            assert f"EMPATH_{key.upper()}" in str(exc)
