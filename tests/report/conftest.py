"""Fixtures of the report tests: a (baseline, candidate) pair built through the real
statistics, gate and regression code."""

from __future__ import annotations

import pytest
from report_factory import standard_pair

from empath_gate.results import Results


@pytest.fixture(scope="session")
def pair() -> tuple[Results, Results]:
    return standard_pair()
