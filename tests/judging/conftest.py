"""Fixtures of the judging tests."""

from __future__ import annotations

import hashlib
from collections.abc import Iterator

import pytest
from judge_server import JudgeServer
from judging_support import build_instrument

from empath_gate.instrument.models import Instrument
from empath_gate.testing.fake_openai import FakeOpenAIServer


@pytest.fixture(scope="session")
def instrument() -> Instrument:
    return build_instrument()


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture()
def server(fake: FakeOpenAIServer, request: pytest.FixtureRequest) -> JudgeServer:
    digest = hashlib.sha256(request.node.nodeid.encode()).hexdigest()[:12]
    return JudgeServer(fake, f"judge-{digest}")
