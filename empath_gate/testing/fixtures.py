"""pytest fixtures of empath-gate's test helpers.

Enable them in a ``conftest.py``::

    pytest_plugins = ["empath_gate.testing.fixtures"]

then::

    def test_bot_gets_a_crisis_turn(fake_openai):
        fake_openai.script("fake-target", "I'm here with you. In Mexico you can call Línea de la Vida.")
        settings = fake_openai.role_settings("fake-target")   # litellm -> this server, dummy key
        ...
        assert fake_openai.requests[0].last_user.startswith("...")

The fixture starts a :class:`~empath_gate.testing.FakeOpenAIServer` per test and stops it at
teardown, failing the test when the server saw misuse (an exhausted script, a request for a
model with no programmed reply).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from empath_gate.testing.fake_openai import FakeOpenAIServer


@pytest.fixture
def fake_openai() -> Iterator[FakeOpenAIServer]:
    """A started FakeOpenAIServer (``base_url``, ``requests``, ``script``, ``on``); checked at teardown."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.close()
    server.check()
