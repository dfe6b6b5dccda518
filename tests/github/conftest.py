"""Fixtures of the GitHub tests: the fake GitHub server, results files built by the report
tests' factory and the plugin tests' tiny team suite (for running the Action's steps)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))

from empath_gate.testing.fake_github import fake_github  # noqa: F401  (the fixture)
