"""Helpers of the ``empath-gate run``/``gate``/``merge`` tests. They reuse the plugin tests'
helpers (``tests/plugin/plugin_support.py``) on purpose: the CLI must produce what the plugin
produces."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "plugin"))

from plugin_support import environment, gate_env, program

from empath_gate.cli import main as cli_main
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import ScoringJudge

TINY_RUNS = 2
TINY = ("--suite", "tiny", "--suites-dir", "suites-team")


@dataclass
class Project:
    """A folder with the tiny team suite and callable bots, where the CLI runs in this process."""

    path: Path
    fake: FakeOpenAIServer
    cache_dir: Path
    seeds: dict[int, tuple[str, int]]

    def cli(self, *args: str, judge: ScoringJudge | None = None, tokens: int = 3000,
            env: dict[str, str] | None = None) -> int:
        """``empath-gate ARGS`` in this folder with the fake server's roles (``env`` overrides)."""
        program(self.fake, judge=judge or ScoringJudge(default=10, seeds=self.seeds))
        values = gate_env(self.fake, self.cache_dir, judge_tokens=tokens)
        values.update(env or {})
        with environment(values), pytest.MonkeyPatch.context() as mp:
            mp.chdir(self.path)
            mp.syspath_prepend(str(self.path))
            return cli_main(list(args))
