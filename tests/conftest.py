"""Every test starts with no configured input limits: loading settings sets them for the whole
process (`bounded.configure_limits`), and a later test would read them instead of its environment."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from empath_gate import bounded


@pytest.fixture(autouse=True)
def _limits_from_the_environment() -> Iterator[None]:
    bounded.configure_limits(None)
    yield
    bounded.configure_limits(None)
