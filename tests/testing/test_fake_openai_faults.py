"""The fake server's seeded random faults: the same seed gives the same faults whatever the
arrival order, a retry of a request draws again, and the shares follow the probabilities."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest

from empath_gate.testing import FakeOpenAIServer, Fault
from empath_gate.testing.fake_openai import RandomFaults

MIX = {
    "rate_limit": (0.2, Fault.rate_limit(retry_after=1)),
    "content_filter": (0.1, Fault.content_filter()),
}


def _post(server: FakeOpenAIServer, text: str) -> tuple[int, dict[str, Any], str | None]:
    """(status, JSON body, Retry-After header) of one chat request for ``fake-judge``."""
    body = {"model": "fake-judge", "messages": [{"role": "user", "content": text}]}
    req = urllib.request.Request(
        f"{server.base_url}/chat/completions", data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, json.loads(resp.read()), resp.headers.get("Retry-After")
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read()), exc.headers.get("Retry-After")


def _outcomes(texts: list[str], seed: int) -> dict[str, list[str]]:
    """text -> what each of its two sightings got (``ok`` or the fault's name)."""
    out: dict[str, list[str]] = {t: [] for t in texts}
    with FakeOpenAIServer() as server:
        server.on("fake-judge", "fine").random_faults("fake-judge", MIX, seed=seed)
        for text in [*texts, *texts]:
            status, body, retry_after = _post(server, text)
            if status == 429:
                assert retry_after == "1" and body["error"]["code"] == "rate_limit_exceeded"
                out[text].append("rate_limit")
            elif body["choices"][0]["finish_reason"] == "content_filter":
                out[text].append("content_filter")
            else:
                assert body["choices"][0]["message"]["content"] == "fine"
                out[text].append("ok")
        assert len(server.faults_served) == sum(o != "ok" for v in out.values() for o in v)
    return out


def test_seeded_faults_are_reproducible_in_any_order_and_a_retry_draws_again() -> None:
    texts = [f"request {i}" for i in range(200)]
    first = _outcomes(texts, seed=7)
    assert _outcomes(list(reversed(texts)), seed=7) == first  # same seed, other arrival order
    assert _outcomes(texts, seed=8) != first
    faulted = [o for v in first.values() for o in v if o != "ok"]
    assert 0.2 < len(faulted) / 400 < 0.4  # 30 % expected
    assert 0.5 < faulted.count("rate_limit") / len(faulted) < 0.85  # 2/3 expected
    # a retry (the second sighting of the same body) is a new draw: some faults heal
    assert any(v[0] != "ok" and v[1] == "ok" for v in first.values())
    with FakeOpenAIServer() as server:  # an empty mix turns faults off
        server.on("fake-judge", "fine").random_faults("fake-judge", MIX, seed=7)
        server.random_faults("fake-judge", {})
        assert all(_post(server, t)[0] == 200 for t in texts[:20])


def test_fault_probabilities_are_checked() -> None:
    with pytest.raises(ValueError, match="sum to"):
        RandomFaults({"a": (0.6, Fault.timeout()), "b": (0.6, Fault.malformed())})
    with pytest.raises(ValueError, match="outside"):
        RandomFaults({"a": (-0.1, Fault.timeout())})
