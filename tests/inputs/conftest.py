"""Each test starts with no configured input limits (loading settings elsewhere sets them)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from empath_gate import bounded


@pytest.fixture(autouse=True)
def _limits_from_the_environment() -> Iterator[None]:
    bounded.configure_limits(None)
    yield
    bounded.configure_limits(None)
