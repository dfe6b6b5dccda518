"""Fixtures of the model-client tests: the public ``fake_openai`` fixture."""

from collections.abc import Iterator

import pytest

from empath_gate.llm import loop
from empath_gate.testing.fixtures import fake_openai

__all__ = ["fake_openai"]


@pytest.fixture(autouse=True)
def cold_providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts with no provider warm (:data:`empath_gate.llm.loop._warmed`), so where a
    request is built does not depend on which tests ran before."""
    monkeypatch.setattr(loop, "_warmed", set())
    yield
