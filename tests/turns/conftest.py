"""Fixtures of the turn layer's tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from empath_gate.turns.user_fitted import rules_only


@pytest.fixture
def offline_rules() -> Iterator[None]:
    """The offline annotator's rules alone, without the fitted word table (rules ``offline-7``,
    :mod:`empath_gate.turns.user_fitted`): for tests that pin what the rules give a user turn."""
    with rules_only():
        yield
