"""What the reply cache keys on and keeps, end to end through the client and the fake server:
the role's endpoint, non-secret request headers, the local model's weights; only usable replies
are stored; entries of the old key format are ignored with one line saying how many."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from empath_gate.llm import cache as cache_mod
from empath_gate.llm import local
from empath_gate.llm.cache import CACHE_FORMAT, Cache, old_format_entries
from empath_gate.llm.client import Completion, complete
from empath_gate.llm.keying import endpoint_identity, header_identity, is_secret_header
from empath_gate.settings import RoleSettings
from empath_gate.testing import FakeOpenAIServer, Fault

M = "same-name"
MSGS: list[dict[str, Any]] = [{"role": "user", "content": "hola"}]


def call(rs: RoleSettings, cache: Cache | None, *, role: str = "target", **kw: Any) -> Completion:
    return asyncio.run(complete(role, rs, MSGS, seed=7, cache=cache, cache_extra={"run": 0}, **kw))


def entries(root: Path) -> dict[str, dict[str, Any]]:
    return Cache(root).entries()


def files(root: Path) -> list[Path]:
    found = sorted(p for p in root.rglob("*") if p.is_file())
    assert found, f"nothing written under {root}"
    return found


# --------------------------------------------------------------------------- the endpoint


def test_another_server_under_the_same_model_name_misses_the_cache(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(M, "reply of server A")
    cache = Cache(tmp_path)
    assert call(fake_openai.role_settings(M), cache).content == "reply of server A"
    with FakeOpenAIServer() as other:
        other.on(M, "reply of server B")
        c = call(other.role_settings(M), cache)
        assert (c.cache, c.content) == ("miss", "reply of server B")
        assert len(other.requests) == 1
    again = call(fake_openai.role_settings(M), cache)
    assert (again.cache, again.content) == ("hit", "reply of server A")
    assert len(fake_openai.requests) == 1


def test_endpoint_identity_keeps_what_names_the_endpoint_and_drops_credentials() -> None:
    plain = endpoint_identity("https://bot.example:8443/v1")
    assert plain == "https://bot.example:8443/v1"
    assert endpoint_identity("https://user:pw@Bot.Example:8443/v1/") == plain
    assert endpoint_identity("https://bot.example:8443/v1?api-key=s3cret&token=t") == plain
    with_deployment = endpoint_identity("https://bot.example:8443/v1?deployment=a&api_key=x")
    assert with_deployment is not None and with_deployment.startswith(plain + "?deployment=sha256:")
    assert "x" not in with_deployment.split("?")[1].replace("sha256:", "").strip("0123456789abcdef=")
    assert with_deployment != endpoint_identity("https://bot.example:8443/v1?deployment=b")
    assert endpoint_identity(None) is None and endpoint_identity("") is None


# --------------------------------------------------------------------------- request headers


def test_headers_key_by_name_and_value_digest_credentials_left_out(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.on(M, lambda req: "first tenant" if req.headers.get("x-tenant") == "north" else "second")
    rs = fake_openai.role_settings(M)
    cache = Cache(tmp_path)
    first = call(rs, cache, headers={"X-Tenant": "north", "Authorization": "Bearer secret-one-123"})
    assert (first.cache, first.content) == ("miss", "first tenant")
    # another credential reaches the same deployment: the cached reply stands
    same = call(rs, cache, headers={"X-Tenant": "north", "Authorization": "Bearer secret-two-456"})
    assert same.cache == "hit"
    # another tenant is another bot
    other = call(rs, cache, headers={"X-Tenant": "south", "Authorization": "Bearer secret-one-123"})
    assert (other.cache, other.content) == ("miss", "second")
    assert call(rs, cache, headers={"X-Tenant": "north", "X-Extra": "1"}).cache == "miss"
    assert len(entries(tmp_path)) == 3
    for path in files(tmp_path):
        text = path.read_text(encoding="utf-8")
        assert "secret-one" not in text and "secret-two" not in text and "north" not in text


def test_header_identity_and_secret_names() -> None:
    ident = header_identity({"X-Tenant": "a", "Authorization": "b", "Cookie": "c", "X-Api-Key": "d",
                             "Ocp-Apim-Subscription-Key": "e", "X-Session-Token": "f"})
    assert list(ident) == ["x-tenant"] and len(ident["x-tenant"]) == 64
    assert not is_secret_header("X-Empath-Conversation-Id") and is_secret_header("x-amz-signature")


# --------------------------------------------------------------------------- local weights


def test_local_model_weights_are_in_the_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    weights = tmp_path / "model.gguf"
    weights.write_bytes(b"weights one")
    calls: list[str] = []

    def fake_chat(model: str, messages: list[dict[str, Any]], **kw: Any) -> dict[str, Any]:
        calls.append(model)
        return {"content": f"local reply {len(calls)}", "finish_reason": "stop"}

    monkeypatch.setattr(local, "gguf_path", lambda name="smollm2": weights)
    monkeypatch.setattr(local, "chat", fake_chat)
    rs = RoleSettings(model="local/smollm2", retry_base_delay_s=0.01)
    cache = Cache(tmp_path / "cache")
    assert call(rs, cache).cache == "miss"
    assert call(rs, cache).cache == "hit"
    weights.write_bytes(b"weights two, another model under the same name")
    c = call(rs, cache)
    assert (c.cache, c.content, len(calls)) == ("miss", "local reply 2", 2)


# --------------------------------------------------------------------------- usable replies only


def test_an_unusable_reply_is_returned_but_never_stored(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.script(M, "not what I asked for", "now right")
    rs = fake_openai.role_settings(M)
    cache = Cache(tmp_path)

    def usable(c: Completion) -> bool:
        return c.content == "now right"

    bad = call(rs, cache, role="judge", usable=usable)
    assert bad.content == "not what I asked for" and not entries(tmp_path)
    good = call(rs, cache, role="judge", usable=usable)
    assert (good.content, good.cache) == ("now right", "miss") and len(entries(tmp_path)) == 1
    assert call(rs, cache, role="judge", usable=usable).cache == "hit"
    assert len(fake_openai.requests) == 2


def test_a_stored_entry_the_caller_cannot_use_is_asked_again(
    fake_openai: FakeOpenAIServer, tmp_path: Path
) -> None:
    fake_openai.script(M, "stale", "fresh")
    rs = fake_openai.role_settings(M)
    cache = Cache(tmp_path)
    assert call(rs, cache, role="judge").content == "stale"  # stored: no rule given
    c = call(rs, cache, role="judge", usable=lambda c: c.content != "stale")
    assert (c.content, c.cache, cache.hits, cache.misses) == ("fresh", "miss", 0, 2)
    assert call(rs, cache, role="judge").content == "fresh"  # the entry was overwritten


@pytest.mark.parametrize(("role", "stored"), [("target", True), ("auditor", False), ("judge", False)])
def test_content_filter_is_cached_only_on_the_target(
    fake_openai: FakeOpenAIServer, tmp_path: Path, role: str, stored: bool
) -> None:
    fake_openai.script(M, Fault.content_filter(), "unfiltered")
    rs = fake_openai.role_settings(M)
    cache = Cache(tmp_path)
    assert call(rs, cache, role=role).filtered
    again = call(rs, cache, role=role)
    # the target's filter is evidence of its behaviour; on the auditor or judge it is a failure
    assert (again.cache, again.filtered) == (("hit", True) if stored else ("miss", False))


# --------------------------------------------------------------------------- the old key format


def _plant_old_entries(root: Path, n: int) -> None:
    for i in range(n):
        shard = root / "v1" / f"{i:02x}"
        shard.mkdir(parents=True, exist_ok=True)
        (shard / f"{i:064x}.json").write_text(json.dumps({"content": "old"}), encoding="utf-8")


def test_old_format_entries_are_ignored_with_one_line(fake_openai: FakeOpenAIServer, tmp_path: Path) -> None:
    _plant_old_entries(tmp_path, 3)
    assert old_format_entries(tmp_path) == 3
    lines: list[str] = []
    cache = Cache(tmp_path, notice=lines.append)
    assert cache.old_entries == 3
    assert lines == [cache_mod.old_format_line(tmp_path, 3)]
    assert "ignoring 3 entries in an old key format" in lines[0] and str(tmp_path / CACHE_FORMAT) in lines[0]
    Cache(tmp_path, notice=lines.append)  # a second cache on the same root says nothing more
    assert len(lines) == 1
    fake_openai.on(M, "new")
    assert call(fake_openai.role_settings(M), cache).cache == "miss"  # never read
    assert old_format_entries(tmp_path) == 3 and len(entries(tmp_path)) == 1


def test_no_line_without_old_entries_and_stderr_by_default(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines: list[str] = []
    Cache(tmp_path / "empty", notice=lines.append)
    Cache(tmp_path / "off", mode="off", notice=lines.append)
    assert lines == []
    _plant_old_entries(tmp_path / "old", 2)
    Cache(tmp_path / "old")
    assert capsys.readouterr().err.count("ignoring 2 entries in an old key format") == 1
