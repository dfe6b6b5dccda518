"""Fixtures of the plugin integration tests: one fake OpenAI server (target, auditor and judge)
and one model cache for the session, and the cold smoke run the other smoke runs reuse."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from plugin_support import (
    BASE_JUDGE_TOKENS,
    SMOKE_RUNS,
    SmokeRun,
    import_heavy_modules,
    plan_seeds,
    smoke_run,
)

from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import ScoringJudge


@pytest.fixture(scope="session")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(strict=False) as server:
        yield server


@pytest.fixture(scope="session")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("empath-cache")


@pytest.fixture(scope="session")
def smoke_seeds() -> dict[int, tuple[str, int]]:
    return plan_seeds("smoke", SMOKE_RUNS)


@pytest.fixture(scope="session")
def smoke_cold(
    fake: FakeOpenAIServer,
    cache_dir: Path,
    smoke_seeds: dict[int, tuple[str, int]],
    tmp_path_factory: pytest.TempPathFactory,
) -> SmokeRun:
    """The first (cold-cache) smoke run, under ``-n 2 --dist load``, judged 10 everywhere."""
    folder = tmp_path_factory.mktemp("smoke-cold")
    judge = ScoringJudge(default=10, seeds=smoke_seeds)
    return smoke_run(fake, cache_dir, folder, judge, BASE_JUDGE_TOKENS, "-n", "2", "--dist", "load")


@pytest.fixture(scope="session", autouse=True)
def _heavy_modules_imported_once() -> None:
    import_heavy_modules()
