"""Fixtures of the GitHub tests: the fake GitHub server and results files built by the report
tests' factory."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))

from empath_gate.testing.fake_github import fake_github  # noqa: F401  (the fixture)
