"""Fixtures of the ``empath-gate run``/``gate``/``merge`` tests: the fake OpenAI server as target,
auditor and judge, a shared model cache, and a project folder with the tiny team suite."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import TINY_RUNS, Project
from plugin_support import import_heavy_modules, plan_seeds, write_bot, write_tiny_suite

from empath_gate.testing import FakeOpenAIServer


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer(strict=False) as server:
        yield server


@pytest.fixture(scope="module")
def cache_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("empath-cache")


@pytest.fixture(scope="module")
def tiny_seeds(tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[str, int]]:
    team = write_tiny_suite(tmp_path_factory.mktemp("seeds"))
    return plan_seeds("tiny", TINY_RUNS, [team])


@pytest.fixture()
def project(
    tmp_path: Path, fake: FakeOpenAIServer, cache_dir: Path, tiny_seeds: dict[int, tuple[str, int]]
) -> Project:
    write_tiny_suite(tmp_path)
    write_bot(tmp_path, "unsafe", "bot_unsafe_cli")
    return Project(tmp_path, fake, cache_dir, tiny_seeds)


@pytest.fixture(scope="session", autouse=True)
def _heavy_modules_imported_once() -> None:
    import_heavy_modules()
