"""The secrets module: which values and shapes are secrets, and how they leave text and data."""

from __future__ import annotations

import json

import pytest

from empath_gate.errors import ConfigError
from empath_gate.secrets import (
    PLACEHOLDER,
    environment_secrets,
    header_secrets,
    is_credential_variable,
    redact,
    redact_url,
    register,
    scrub,
    url_userinfo,
)
from empath_gate.settings import load_settings


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("OPENAI_API_KEY", True), ("GITHUB_TOKEN", True), ("DB_PASSWORD", True), ("MY_SECRET", True),
        ("AWS_CREDENTIALS", True), ("EMPATH_TARGET_HEADER_X_TEAM", True), ("PROXY_AUTH", True),
        ("SSH_AUTH_SOCK", False), ("XAUTHORITY", False), ("HOME", False), ("GIT_AUTHOR_NAME", False),
        ("PWD", False),
    ],
)
def test_credential_variable_names(name: str, expected: bool) -> None:
    assert is_credential_variable(name) is expected


def test_environment_secrets_take_header_values_and_credential_variables_of_8_chars() -> None:
    env = {
        "EMPATH_TARGET_HEADERS": json.dumps({"X-Team": "teamvalue123", "Authorization": "Bearer tok12345678",
                                             "X-Short": "short"}),
        "EMPATH_TARGET_HEADER_X_SESSION": "session-value-9",
        "SERVICE_TOKEN": "svc-token-abc",
        "SHORT_KEY": "1234567",
        "HOME": "/home/someone",
    }
    found = set(environment_secrets(env))
    assert {"teamvalue123", "Bearer tok12345678", "tok12345678", "session-value-9", "svc-token-abc"} <= found
    assert "short" not in found and "1234567" not in found and "/home/someone" not in found
    assert environment_secrets({"EMPATH_TARGET_HEADERS": "{not json"}) == ["{not json"]
    assert header_secrets("Token abcdefgh12") == ["Token abcdefgh12", "abcdefgh12"]


def test_registered_values_and_shapes_leave_text() -> None:
    register(["registered-canary-77"])
    text = (
        "echo registered-canary-77; Authorization: Bearer abcdefghijkl; Basic dXNlcjpwYXNz; "
        "Token Zm9vYmFyMTIz; key sk-proj-abcdef123456; AIzaSyA1234567890abcdefghijklm; "
        "url https://me:pw@host.example/p?x=1&api_key=QQQQ&token=TTTT&sig=SSSS#f; "
        '{"api_key": "hunter22", "password": "hunter33"}'
    )
    out = redact(text)
    for secret in ("registered-canary-77", "abcdefghijkl", "dXNlcjpwYXNz", "Zm9vYmFyMTIz", "sk-proj",
                   "AIzaSy", "me:pw", "QQQQ", "TTTT", "SSSS", "hunter22", "hunter33"):
        assert secret not in out, secret
    assert "https://<redacted>@host.example/p?x=1&api_key=<redacted>&token=<redacted>&sig=<redacted>#f" in out
    assert '{"api_key": "<redacted>", "password": "<redacted>"}' in out
    # ordinary words after the scheme names are not credentials
    for plain in ("offered basic reassurance", "a token budget", "max_tokens: 2000", "the secret: nobody"):
        assert redact(plain) == plain


def test_scrub_walks_json_data_and_redact_url_drops_credentials() -> None:
    register(["scrub-canary-1234"])
    data = {"a": ["x scrub-canary-1234", 3, None], "scrub-canary-1234": {"b": "ok"}}
    assert scrub(data) == {"a": [f"x {PLACEHOLDER}", 3, None], PLACEHOLDER: {"b": "ok"}}
    assert redact_url("https://u:p@h.example:8443/v1?api_key=k#x") == "https://h.example:8443/v1"
    assert redact_url("openai/gpt-4o") == "openai/gpt-4o"
    assert url_userinfo("http://u:p@h/v1") and url_userinfo("http://u@h/v1") and not url_userinfo("http://h/v1")


@pytest.mark.parametrize("key", ["EMPATH_TARGET", "EMPATH_JUDGE_API_BASE"])
def test_user_info_in_a_url_setting_is_a_configuration_error(key: str) -> None:
    value = "http://alice:s3cretpass@host.example/v1"
    with pytest.raises(ConfigError) as err:
        load_settings(pyproject=None, env={key: value, "EMPATH_JUDGE_MODEL": "openai/j"})
    msg = str(err.value)
    assert key in msg and "user-info" in msg and "http://host.example/v1" in msg
    assert "s3cretpass" not in msg and "alice" not in msg


def test_loading_settings_registers_the_environment_secrets() -> None:
    load_settings(pyproject=None, env={"EMPATH_TARGET_HEADER_X_LOADED": "loaded-header-42"})
    assert redact("body: loaded-header-42") == f"body: {PLACEHOLDER}"
