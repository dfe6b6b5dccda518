"""Message normalisation per provider (pure)."""

from __future__ import annotations

import enum

import pytest

from empath_gate.llm.normalize import OPENING_USER_TEXT, ProviderRules, normalize_messages, rules_for


def m(role: str, content: object) -> dict[str, object]:
    return {"role": role, "content": content}


def test_merges_consecutive_same_role_turns() -> None:
    out = normalize_messages(
        [m("user", "a"), m("user", "b"), m("assistant", "c"), m("assistant", "d")], ProviderRules()
    )
    assert list(out.messages) == [m("user", "a\n\nb"), m("assistant", "c\n\nd")]
    assert out.changes == ("merged",)
    assert not out.system_folded


def test_never_sends_empty_content_and_merges_around_it() -> None:
    # a filtered (empty) assistant reply between two user turns disappears; the users merge
    msgs = [
        m("system", "sys"),
        m("user", "first"),
        m("assistant", ""),
        m("user", "second"),
        m("assistant", None),
        m("user", "   "),
    ]
    out = normalize_messages(msgs, ProviderRules())
    assert list(out.messages) == [m("system", "sys"), m("user", "first\n\nsecond")]
    assert out.changes == ("dropped_empty", "merged")
    assert all(str(x["content"]).strip() for x in out.messages)


def test_tool_call_messages_without_content_are_kept() -> None:
    call = {"role": "assistant", "content": None, "tool_calls": [{"id": "1"}]}
    out = normalize_messages([m("user", "hi"), call], ProviderRules())
    assert out.messages[1]["tool_calls"] == [{"id": "1"}]


def test_folds_system_into_first_user_turn_when_role_rejected() -> None:
    msgs = [m("system", "You are kind."), m("user", "hello"), m("assistant", "hi"), m("user", "bye")]
    out = normalize_messages(msgs, ProviderRules(system_role=False))
    assert out.system_folded
    assert list(out.messages) == [m("user", "You are kind.\n\nhello"), m("assistant", "hi"), m("user", "bye")]
    assert "system_folded" in out.changes
    # the input is not mutated
    assert msgs[1] == m("user", "hello")


def test_fold_without_user_turn_creates_one() -> None:
    out = normalize_messages([m("system", "rules")], ProviderRules(system_role=False))
    assert list(out.messages) == [m("user", "rules")]
    assert out.system_folded


def test_system_kept_when_supported() -> None:
    out = normalize_messages([m("system", "s"), m("user", "u")], ProviderRules(system_role=True))
    assert not out.system_folded
    assert out.messages[0] == m("system", "s")


def test_adds_opening_user_turn_where_required() -> None:
    msgs = [m("system", "s"), m("assistant", "Hi, I'm the bot."), m("user", "hey")]
    out = normalize_messages(msgs, ProviderRules(user_first=True))
    assert list(out.messages) == [
        m("system", "s"),
        m("user", OPENING_USER_TEXT),
        m("assistant", "Hi, I'm the bot."),
        m("user", "hey"),
    ]
    assert "opening_user" in out.changes
    not_required = normalize_messages(msgs, ProviderRules(user_first=False))
    assert not_required.messages[1]["role"] == "assistant"


def test_everything_empty_is_an_error() -> None:
    with pytest.raises(ValueError, match="no message left"):
        normalize_messages([m("user", ""), m("assistant", None)], ProviderRules())


def test_field_names_must_be_strings_and_come_back_plain() -> None:
    class Field(str, enum.Enum):
        ROLE = "role"
        CONTENT = "content"

    with pytest.raises(ValueError, match="message 0: every field name must be a string"):
        normalize_messages([{"role": "user", "content": "hi", 1: "x"}], ProviderRules())
    out = normalize_messages([{Field.ROLE: "user", Field.CONTENT: "hi"}], ProviderRules()).messages
    assert out == ({"role": "user", "content": "hi"},)
    assert [type(k) for k in out[0]] == [str, str]
    given = m("user", "hi")
    assert normalize_messages([given], ProviderRules()).messages[0] is not given  # never the caller's dict


@pytest.mark.parametrize(
    ("model", "override", "system_role", "user_first"),
    [
        ("openai/gpt-4o-mini", None, True, False),
        ("anthropic/claude-3-5-haiku", None, True, True),
        ("gemini/gemini-2.0-flash", None, True, True),
        ("openai/o1-mini", None, False, False),
        ("gemini/gemma-3-27b-it", None, False, True),
        ("openai/fake-target", False, False, False),
        ("openai/o1-preview", True, True, False),
        ("openai/claude-3-5-haiku", None, True, True),
        (None, None, True, False),
    ],
)
def test_provider_rules(
    model: str | None, override: bool | None, system_role: bool, user_first: bool
) -> None:
    rules = rules_for(model, system_role=override)
    assert (rules.system_role, rules.user_first) == (system_role, user_first)
