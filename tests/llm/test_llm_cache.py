"""The content-addressed on-disk cache: keys, modes, atomic and concurrent writes."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path
from types import MappingProxyType
from typing import Any

import pytest

from empath_gate.llm import cache as cache_module
from empath_gate.llm.cache import CACHE_FORMAT, Cache, cache_key, canonical_json

BASE: dict[str, Any] = {
    "role": "target",
    "model": "openai/gpt-4o-mini",
    "params": {"temperature": 0.7, "max_tokens": 300, "extra": {"top_p": 0.9}, "response_format": None},
    "seed": 1234,
    "messages": [{"role": "system", "content": "be kind"}, {"role": "user", "content": "hola"}],
    "system_prompt_hash": "ab" * 32,
    "template_version": "auditor_v1:0123456789ab",
    "run": 0,
    "rejudge": 0,
}


def variant(path: tuple[str, ...], value: Any) -> dict[str, Any]:
    parts = json.loads(json.dumps(BASE))
    node = parts
    for p in path[:-1]:
        node = node[p]
    node[path[-1]] = value
    return parts


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("role",), "auditor"),
        (("model",), "openai/gpt-4o"),
        (("params", "temperature"), 0.0),
        (("params", "max_tokens"), 301),
        (("params", "extra", "top_p"), 1.0),
        (("params", "response_format"), {"type": "json_object"}),
        (("seed",), 1235),
        (("messages", 1, "content"), "hola."),
        (("messages", 0, "content"), "be kinder"),
        (("system_prompt_hash",), "cd" * 32),
        (("template_version",), "auditor_v2:0123456789ab"),
        (("run",), 1),
        (("rejudge",), 1),
    ],
)
def test_every_part_changes_the_key(path: tuple[str, ...], value: Any) -> None:
    assert cache_key(BASE) != cache_key(variant(path, value))


def test_key_is_canonical() -> None:
    reordered = dict(reversed(list(BASE.items())))
    assert cache_key(reordered) == cache_key(BASE)
    assert canonical_json({"b": 1, "a": "ñ"}) == '{"a":"ñ","b":1}'
    with pytest.raises(TypeError):
        cache_key({"x": object()})


def test_credentials_are_never_keyed_or_stored(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="credential"):
        cache_key({**BASE, "api_key": "sk-x"})
    with pytest.raises(ValueError, match="credential"):
        cache_key({**BASE, "params": {"extra_headers": {"X": "y"}}})
    cache = Cache(tmp_path)
    with pytest.raises(ValueError, match="credential"):
        cache.put(cache_key(BASE), {"content": "x", "headers": {"Authorization": "Bearer x"}})
    assert cache.entries() == {} and not list(tmp_path.rglob("*.seg"))


@pytest.mark.parametrize("nested", [
    MappingProxyType({"token": "x"}),  # a mapping that is not a dict
    ({"role": "user"}, {"password": "x"}),  # a tuple of dicts
    [[{"Client_Secret": "x"}]],  # lists in a list
    {"ok": [1, 2.5, True, None, "s", {"inner": {"api-key": "x"}}]},  # leaves before the mapping
])
def test_a_credential_name_at_any_depth_and_in_any_container_is_refused(
    nested: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_module, "_SECRET_NAMES", {})
    for _ in range(2):  # the second time the field names are remembered
        with pytest.raises(ValueError, match="credential"):
            cache_key({**BASE, "params": {"deep": nested}})
        assert cache_module._SECRET_NAMES  # the names seen are remembered
    assert cache_key({**BASE, "params": {"deep": [{"role": ("user",)}, 1, None]}})  # no credential name


def test_use_mode_round_trip(tmp_path: Path) -> None:
    cache = Cache(tmp_path / "c")
    key = cache_key(BASE)
    assert cache.get(key) is None
    path = cache.put(key, {"content": "hola, aquí estoy", "usage": {"prompt_tokens": 3}})
    assert path is not None and path.is_file() and path.suffix == ".seg"
    assert path.parent == tmp_path / "c" / CACHE_FORMAT / "segments"
    text = path.read_text(encoding="utf-8")
    assert text.startswith(f"{key}\t") and "aquí" in text  # UTF-8, not ASCII-escaped
    assert cache.get(key) == {"content": "hola, aquí estoy", "usage": {"prompt_tokens": 3}}
    assert (cache.hits, cache.misses, cache.writes) == (1, 1, 1)
    assert oct(path.stat().st_mode & 0o777) == oct(0o600)


def test_refresh_mode_writes_without_reading(tmp_path: Path) -> None:
    key = cache_key(BASE)
    Cache(tmp_path).put(key, {"content": "old"})
    refresh = Cache(tmp_path, mode="refresh")
    assert refresh.get(key) is None
    refresh.put(key, {"content": "new"})
    assert Cache(tmp_path).get(key) == {"content": "new"}


def test_off_mode_neither_reads_nor_writes(tmp_path: Path) -> None:
    key = cache_key(BASE)
    Cache(tmp_path).put(key, {"content": "old"})
    off = Cache(tmp_path / "off", mode="off")
    assert off.put(key, {"content": "x"}) is None
    assert not (tmp_path / "off").exists()
    assert Cache(tmp_path, mode="off").get(key) is None
    with pytest.raises(ValueError):
        Cache(tmp_path, mode="sometimes")  # type: ignore[arg-type]


def test_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    key = cache_key(BASE)
    path = cache.path(key)
    path.parent.mkdir(parents=True)
    path.write_text('{"content": "torn', encoding="utf-8")
    assert cache.get(key) is None
    with pytest.raises(ValueError):
        cache.path("not-a-key")


def _writer(root: str, worker: int, n: int) -> None:
    cache = Cache(Path(root))
    for i in range(n):
        shared = cache_key({"shared": i})
        cache.put(shared, {"content": "x" * 20000, "i": i})  # same key from every process
        own = cache_key({"worker": worker, "i": i})
        cache.put(own, {"content": f"{worker}-{i}"})


def test_concurrent_writers_in_several_processes(tmp_path: Path) -> None:
    """Four processes (like xdist workers) write the same and their own keys at once: every
    entry parses, none is torn, each process appended to a segment of its own."""
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), w, 60)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    cache = Cache(tmp_path)
    for i in range(60):
        assert cache.get(cache_key({"shared": i})) == {"content": "x" * 20000, "i": i}
        for w in range(4):
            assert cache.get(cache_key({"worker": w, "i": i})) == {"content": f"{w}-{i}"}
    assert len(cache.entries()) == 60 + 4 * 60
    segments = list(tmp_path.rglob("*.seg"))
    assert len(segments) == 4
    assert sum(p.read_bytes().count(b"\n") for p in segments) == 4 * 2 * 60


@pytest.mark.parametrize(
    "value",
    [
        {"content": "I hear you.", "usage": {"prompt_tokens": 3, "completion_tokens": 4}, "tool_calls": []},
        {"content": "my key is sk-abcdefghijklmnop, keep it"},
        {"content": 'she said "sk-abcdefghijklmnop" twice'},  # escaped: scrubbed string by string
        {"content": "line one\nBearer abcdefghijkl0123"},
        {"content": "see https://user:pw@example.org/x", "model": "m"},
        {"content": "fine", "tool_calls": [{"function": {"arguments": '{"a": "sk-zzzzzzzzzzzz"}'}}]},
        {"content": None, "cost_usd": 0.25, "finish_reason": "stop"},
    ],
)
def test_stored_entry_is_the_scrubbed_json_of_the_value(tmp_path: Path, value: dict[str, Any]) -> None:
    """The fast path (the value's JSON text checked once) stores exactly what scrubbing every
    string stores, and nothing of a credential shape reaches the disk."""
    from empath_gate.llm.cache import _stored_json
    from empath_gate.secrets import scrub

    assert _stored_json(value) == canonical_json(scrub(dict(value)))
    cache = Cache(tmp_path)
    path = cache.put("ab" * 32, value)
    assert path is not None
    text = path.read_text(encoding="utf-8")
    assert text == "ab" * 32 + "\t" + canonical_json(scrub(dict(value))) + "\n"
    assert "sk-abc" not in text and "sk-zzz" not in text and "pw@" not in text and "0123\"" not in text


def test_cache_path_refuses_keys_that_are_not_sha256_hex(tmp_path: Path) -> None:
    cache = Cache(tmp_path)
    assert cache.path("0f" * 32).name == "0f" * 32 + ".json"
    for bad in ("0F" * 32, "0f" * 31, "0f" * 32 + "\n", "../" + "0" * 61, "g" * 64):
        with pytest.raises(ValueError):
            cache.path(bad)
