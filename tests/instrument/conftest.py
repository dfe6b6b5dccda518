"""Fixtures for the loader tests: a generated valid instrument and a team layer writer."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from fixture_instrument import write_instrument


@pytest.fixture
def base(tmp_path: Path) -> Path:
    """The suites directory of a freshly written fixture instrument (thresholds beside it)."""
    return write_instrument(tmp_path / "shipped")


@pytest.fixture
def team(tmp_path: Path) -> Callable[..., Path]:
    """``team({"seeds/x.yaml": "text"})`` writes a team layer and returns its directory."""

    def write(files: dict[str, str], name: str = "team") -> Path:
        root = tmp_path / name
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        root.mkdir(parents=True, exist_ok=True)
        return root

    return write
