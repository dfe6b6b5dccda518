"""Helpers of the plugin and CLI integration tests: a tiny team suite, a callable test bot, the
environment that points a run at the fake server, and results comparison."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from empath_gate.instrument.loader import load_instrument, shipped_paths
from empath_gate.plan import build_plan
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import (
    JUDGE_MODEL,
    ScoringJudge,
    ScriptAuditor,
    TargetBot,
    install,
    role_env,
    seed_table,
)

TINY_SEEDS = (
    "cs-detect-mx-dormir-no-despertar", "cs-resource-us-dv-borrowed-phone", "tq-mx-entrevista-nervios",
)
TINY_SUITE = f"""\
suites:
  - id: tiny
    label: Tiny
    description: Three conversations (two crisis seeds, one everyday seed) for integration tests.
    seeds:
      ids: [{", ".join(TINY_SEEDS)}]
    metrics: primary
    personas:
      mode: hash
    runs: 2
    max_turns: 4
"""
"""A team suite: two critical crisis metrics (es-MX and en-US) and one everyday metric (es-MX)."""

BOT_MODULE = '''\
"""A callable target for the tests: replies chosen by the scenario bot, no model."""
from empath_gate.testing.scenarios import compose_reply, guess_locale

BEHAVIOUR = "{behaviour}"


def reply(messages, conversation_id):
    users = [m["content"] for m in messages if m["role"] == "user"]
    return compose_reply(BEHAVIOUR, guess_locale(" ".join(users)), len(users) - 1)
'''

ENV_CLEARED = ("CI", "PYTEST_ADDOPTS", "GITHUB_SHA", "PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT",
               *(k for k in os.environ if k.startswith("EMPATH_")))
"""Variables a run must not inherit from the machine running the tests (CI=true would demand
models; a developer's own EMPATH_* settings would change the plan; the pytest-xdist worker of
the outer test run is not the inner run's)."""


def write_tiny_suite(folder: Path) -> Path:
    """Write the tiny team suite into ``folder/suites-team`` and return that directory."""
    team = folder / "suites-team"
    team.mkdir(parents=True, exist_ok=True)
    (team / "suites.yaml").write_text(TINY_SUITE, encoding="utf-8")
    return team


def write_bot(folder: Path, behaviour: str = "safe", name: str = "bot") -> str:
    """Write the callable bot module ``name.py`` into ``folder``; returns its target spec."""
    (folder / f"{name}.py").write_text(BOT_MODULE.format(behaviour=behaviour), encoding="utf-8")
    return f"py:{name}:reply"


def write_thresholds(path: Path, replacements: Mapping[str, str]) -> Path:
    """A copy of the shipped thresholds.yaml with each ``old`` text replaced by ``new``."""
    _, shipped = shipped_paths()
    text = shipped.read_text(encoding="utf-8")
    for old, new in replacements.items():
        assert old in text, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return path


def plan_seeds(suite: str, runs: int, extra_dirs: Sequence[Path] = ()) -> dict[int, tuple[str, int]]:
    """The judge's seed -> (conversation, run) table of a suite."""
    plan = build_plan(load_instrument(extra_dirs=extra_dirs), [suite], runs=runs)
    return seed_table([c.conversation_id for c in plan.conversations], runs)


def gate_env(
    server: FakeOpenAIServer,
    cache_dir: Path,
    *,
    judge_tokens: int = 2000,
    target: str | None = "http",
    auditor: bool = True,
    judge: bool = True,
) -> dict[str, str]:
    """Environment of a run against ``server`` with a shared cache. ``judge_tokens`` is the
    judge's max_tokens: part of the judge's cache key, so each judge scenario gets its own
    cached replies while target and auditor replies stay warm."""
    env = role_env(server, target=target if target in ("http", "model") else None,  # type: ignore[arg-type]
                   auditor=auditor, judge=judge)
    env["EMPATH_CACHE_DIR"] = str(cache_dir)
    if judge:
        env["EMPATH_JUDGE_MAX_TOKENS"] = str(judge_tokens)
    if target not in (None, "http", "model"):
        env["EMPATH_TARGET"] = target
    return env


@contextmanager
def environment(values: Mapping[str, str]) -> Iterator[None]:
    """Set ``values`` (and clear :data:`ENV_CLEARED`) for the duration of the block."""
    with pytest.MonkeyPatch.context() as mp:
        for key in ENV_CLEARED:
            mp.delenv(key, raising=False)
        for key, value in values.items():
            mp.setenv(key, value)
        yield


def program(
    server: FakeOpenAIServer, *, judge: ScoringJudge | None = None, bot: TargetBot | None = None
) -> None:
    """(Re)program the server's target, auditor and judge."""
    install(server, target=bot or TargetBot("safe"), auditor=ScriptAuditor(), judge=judge)


def run_pytest(
    cwd: Path, args: Sequence[str], env: Mapping[str, str], timeout: float = 300
) -> tuple[int, str]:
    """``python -m pytest ARGS`` in ``cwd`` with ``env`` over a cleaned environment; (exit, output)."""
    full = {k: v for k, v in os.environ.items() if k not in ENV_CLEARED}
    full.update(env)
    p = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout, check=False,
    )
    return p.returncode, p.stdout + p.stderr


def read_json(path: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return data


TIME_KEYS = frozenset({"started_at", "ended_at"})
COUNT_KEYS = frozenset({"calls", "cache_hits", "by_role", "cost_usd", "unpriced_calls", "known_usd",
                        "cache_saved_usd", "batch_calls", "batch_saved_usd"})
"""The call counts and costs of a results document (metadata.cost and every record): they
depend on what the cache held, which differs between a cold run and a warm one."""


def _strip(value: Any, drop: frozenset[str] = TIME_KEYS) -> Any:
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            if k in drop:
                continue
            if k == "transcript_path" and isinstance(v, str):
                v = Path(v).name
            out[k] = _strip(v, drop)
        return out
    if isinstance(value, list):
        return [_strip(v, drop) for v in value]
    return value


def comparable(doc: Mapping[str, Any], *, counts: bool = True) -> dict[str, Any]:
    """A results document without timestamps (at any depth), with transcript paths reduced to
    file names (a merged file points into the shards' folders); ``counts=False`` also drops the
    call counts and costs (:data:`COUNT_KEYS`), for documents made on different cache states."""
    stripped: dict[str, Any] = _strip(dict(doc), TIME_KEYS if counts else TIME_KEYS | COUNT_KEYS)
    return stripped


def verdict_scores(doc: Mapping[str, Any], metric: str) -> dict[str, list[int | None]]:
    """conversation id -> the run scores of ``metric`` in a results document."""
    return {c["conversation_id"]: c["run_scores"] for c in doc["cells"] if c["metric_id"] == metric}


def decisions(doc: Mapping[str, Any]) -> dict[str, str]:
    """test id -> gate status."""
    return {f'{d["seed_id"]}-{d["persona_id"]}-{d["metric_id"]}': d["status"] for d in doc["decisions"]}


# --------------------------------------------------------------------------- smoke runs

SMOKE_RUNS = 3
BASE_JUDGE_TOKENS = 2000
"""Judge max_tokens of the all-10 judge scenario (each judge scenario has its own value, so its
replies are cached apart while the transcripts stay warm)."""


@dataclass
class SmokeRun:
    """One finished run: its folder, exit status, output and results document."""

    folder: Path
    rc: int
    output: str
    results: dict[str, Any]
    target_calls: dict[str | None, int]


def smoke_run(
    fake: FakeOpenAIServer,
    cache_dir: Path,
    folder: Path,
    judge: ScoringJudge,
    judge_tokens: int,
    *args: str,
) -> SmokeRun:
    """``pytest --empath-suite smoke --empath-runs 3 ARGS`` in a new process in ``folder``."""
    bot = TargetBot("safe")
    program(fake, judge=judge, bot=bot)
    folder.mkdir(parents=True, exist_ok=True)
    rc, out = run_pytest(
        folder,
        ["--empath-suite", "smoke", "--empath-runs", str(SMOKE_RUNS), *args],
        gate_env(fake, cache_dir, judge_tokens=judge_tokens),
    )
    path = folder / "empath-results" / "results.json"
    assert path.is_file(), out
    return SmokeRun(folder, rc, out, read_json(path), dict(bot.calls))


def inline_run(
    pytester: pytest.Pytester,
    fake: FakeOpenAIServer,
    env: Mapping[str, str],
    *args: str,
    judge: ScoringJudge | None = None,
    bot: TargetBot | None = None,
    name: str = "empath-results",
) -> SmokeRun:
    """``pytest ARGS --empath-results NAME/results.json`` in this process (pytester's in-process
    run: no interpreter start, no second litellm import), with ``env`` set for the run."""
    bot = bot or TargetBot("safe")
    program(fake, judge=judge, bot=bot)
    with environment(env):
        result = pytester.runpytest(*args, "--empath-results", f"{name}/results.json")
    out = "\n".join(result.outlines + result.errlines)
    path = pytester.path / name / "results.json"
    doc = read_json(path) if path.is_file() else {}
    return SmokeRun(pytester.path / name, int(result.ret), out, doc, dict(bot.calls))


def import_heavy_modules() -> None:
    """Import what a run imports lazily (litellm through the client, the language detector,
    statistics, reports) before the first in-process run: pytester restores ``sys.modules``
    after each in-process run, which would otherwise re-import them every time."""
    import empath_gate.conversation.engine
    import empath_gate.judging.language
    import empath_gate.judging.llm_judge
    import empath_gate.report.html
    import empath_gate.report.markdown
    import empath_gate.report.terminal
    import empath_gate.run
    import empath_gate.runner  # noqa: F401
    from empath_gate.llm.client import supports_json_schema

    supports_json_schema("gpt-4o-mini")  # imports litellm


__all__ = [
    "BASE_JUDGE_TOKENS",
    "JUDGE_MODEL",
    "SMOKE_RUNS",
    "TINY_SEEDS",
    "SmokeRun",
    "comparable",
    "decisions",
    "environment",
    "gate_env",
    "import_heavy_modules",
    "inline_run",
    "plan_seeds",
    "program",
    "read_json",
    "run_pytest",
    "smoke_run",
    "verdict_scores",
    "write_bot",
    "write_thresholds",
    "write_tiny_suite",
]
