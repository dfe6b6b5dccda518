"""Fixtures of the judging tests."""

from __future__ import annotations

import pytest
from judging_support import build_instrument

from empath_gate.instrument.models import Instrument


@pytest.fixture(scope="session")
def instrument() -> Instrument:
    return build_instrument()
