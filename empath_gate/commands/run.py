"""``empath-gate run``: run a suite without pytest and write the same results file as the plugin.

Usage::

    empath-gate run --suite NAME [--suite ...] [--runs N] [--target T] [--system-prompt P]
                    [--auditor M] [--judge M] [--offline] [--suites-dir D]... [--thresholds P]
                    [--waivers P] [--baseline B] [--results P] [--fail-on threshold|regression|both|never]
                    [--max-cost USD] [--no-cache | --refresh-cache] [--shard K/N] [--dry-run]

Settings layer as for the plugin: ``[tool.empath-gate]`` in ``./pyproject.toml`` < ``EMPATH_*``
environment < these options. A ``py:module:function`` target is imported with the current
directory on ``sys.path`` (as ``python -m`` has it). The run is the plugin's own code path
(:meth:`empath_gate.pipeline.EmpathSession.run_all`: the same plan, engine, judge, statistics,
gate and artifacts: ``results.json``, ``diff.md`` and ``report.html``), then the terminal
summary is printed.

Exit status (DESIGN): 0 every test passed or was skipped, 1 the gate failed, 2 usage or
configuration error (bad option, unknown suite, expired waiver, a target that cannot be
loaded), 3 infrastructure error (provider unreachable, budget exhausted, judge failures over
the limit); when several apply, 2 > 3 > 1.

``--dry-run`` prints the plan size (conversations, runs, transcripts, tests, the most calls
each role can make) and a rough token and cost estimate per role (:func:`estimate`), makes no
model call and exits 0.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from empath_gate.cli import EXIT_GATE_FAILED, EXIT_INFRA, EXIT_PASS, EXIT_USAGE

FAIL_ON_VALUES = ("threshold", "regression", "both", "never")
"""``--fail-on`` choices: ``empath_gate.gate.FAIL_ON_VALUES`` (repeated so ``--help`` does not
import the statistics stack; a test keeps them equal)."""

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.pipeline import EmpathSession, Profile
    from empath_gate.plan import Plan
    from empath_gate.results import Results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate run`` (the plugin's ``--empath-*`` options without the prefix)."""
    parser.add_argument("--suite", action="append", required=True, metavar="NAME",
                        help="suite to run (repeatable), e.g. crisis, smoke, full")
    parser.add_argument("--runs", type=int, default=None, metavar="N", help="runs per conversation")
    parser.add_argument("--target", default=None, metavar="T",
                        help="py:pkg.mod:fn, an http(s) OpenAI-compatible URL, or a litellm model")
    parser.add_argument("--system-prompt", type=Path, default=None, metavar="PATH",
                        help="system-prompt file of a model target")
    parser.add_argument("--auditor", default=None, metavar="MODEL", help="auditor model (unset: scripted)")
    parser.add_argument("--judge", default=None, metavar="MODEL",
                        help="judge model (unset: deterministic criteria only)")
    parser.add_argument("--offline", action="store_true", default=None,
                        help="force the fallbacks: scripted auditor, criteria-only judge")
    parser.add_argument("--suites-dir", action="append", type=Path, default=None, metavar="DIR",
                        help="team suites directory layered on the shipped one (repeatable)")
    parser.add_argument("--thresholds", type=Path, default=None, metavar="PATH",
                        help="thresholds.yaml overriding the shipped one")
    parser.add_argument("--waivers", type=Path, default=None, metavar="PATH",
                        help="waivers.yaml (default: ./waivers.yaml if present)")
    parser.add_argument("--baseline", type=Path, default=None, metavar="PATH",
                        help="baseline results.json to compare with")
    parser.add_argument("--results", type=Path, default=None, metavar="PATH",
                        help="where to write results.json (default empath-results/results.json)")
    parser.add_argument("--fail-on", choices=FAIL_ON_VALUES, default=None,
                        help="which conditions fail the gate (default both)")
    parser.add_argument("--max-cost", type=float, default=None, metavar="USD",
                        help="stop starting transcripts past this many USD")
    cache = parser.add_mutually_exclusive_group()
    cache.add_argument("--no-cache", action="store_true", help="do not read or write the model cache")
    cache.add_argument("--refresh-cache", action="store_true",
                       help="ignore cached replies and overwrite them")
    parser.add_argument("--shard", default=None, metavar="K/N",
                        help="run shard K of N (a deterministic partition by conversation)")
    parser.add_argument("--dry-run", action="store_true",
                        help="print the plan size and a token/cost estimate; call no model")
    parser.add_argument("--pyproject", type=Path, default=Path("pyproject.toml"), metavar="PATH",
                        help="pyproject.toml holding [tool.empath-gate] (default ./pyproject.toml)")


def settings_overrides(args: argparse.Namespace) -> dict[str, object]:
    """The option values as ``load_settings`` overrides (None: not given)."""
    overrides: dict[str, object] = {
        "target": args.target,
        "target_system_prompt": args.system_prompt,
        "auditor_model": args.auditor,
        "judge_model": args.judge,
        "thresholds": args.thresholds,
        "waivers": args.waivers,
        "baseline": args.baseline,
        "results": args.results,
        "fail_on": args.fail_on,
        "max_cost_usd": args.max_cost,
        "runs": args.runs,
        "offline": True if args.offline else None,
        "suites_dirs": list(args.suites_dir) if args.suites_dir else None,
    }
    if args.no_cache:
        overrides["cache_mode"] = "off"
    if args.refresh_cache:
        overrides["cache_mode"] = "refresh"
    return overrides


CLI_OPTION_NAMES: dict[str, str] = {
    "target": "--target", "target_system_prompt": "--system-prompt", "auditor_model": "--auditor",
    "judge_model": "--judge", "thresholds": "--thresholds", "waivers": "--waivers", "baseline": "--baseline",
    "results": "--results", "fail_on": "--fail-on", "max_cost_usd": "--max-cost", "runs": "--runs",
    "suites_dirs": "--suites-dir",
}
"""Settings key -> the ``run`` option that sets it."""


def build_session(args: argparse.Namespace) -> EmpathSession:
    """Settings (pyproject < environment < options) -> :class:`EmpathSession` (instrument,
    profile, plan, shard, baseline). Raises ConfigError/SuiteError for what a user must fix."""
    from empath_gate.config import load_settings
    from empath_gate.errors import ConfigError
    from empath_gate.pipeline import EmpathSession, name_options

    try:
        settings = load_settings(pyproject=args.pyproject, overrides=settings_overrides(args))
    except ConfigError as exc:  # name the option as typed (--max-cost), not the setting key
        raise ConfigError(name_options(str(exc), CLI_OPTION_NAMES)) from None
    if settings.target_kind == "callable" and os.getcwd() not in sys.path:
        # as ``python -m`` would: a ``py:module:function`` target may live in the project folder
        sys.path.insert(0, os.getcwd())
    suites = [s.strip() for v in args.suite for s in str(v).split(",") if s.strip()]
    return EmpathSession.create(settings, suites, shard=args.shard, run_token=uuid.uuid4().hex[:12])


def exit_code(results: Results) -> int:
    """The CLI exit status of a results document: 2 when it lists usage errors, else 3 when
    it lists infrastructure reasons or any test errored, else 1 when any test failed, else 0
    (precedence 2 > 3 > 1, as :meth:`empath_gate.gate.Decision.cli_exit_code`)."""
    s = results.summary
    if s.usage_errors:
        return EXIT_USAGE
    if s.infrastructure_reasons or s.counts.get("error", 0):
        return EXIT_INFRA
    if s.counts.get("failed", 0):
        return EXIT_GATE_FAILED
    return EXIT_PASS


def _progress(every_s: float = 2.0) -> Callable[[str], None]:
    """Print the engine's progress lines on stderr, at most one every ``every_s`` seconds."""
    last = [0.0]

    def report(line: str) -> None:
        now = time.monotonic()
        if now - last[0] >= every_s:
            last[0] = now
            text = line if line.startswith("empath-gate") else f"empath-gate: {line}"
            print(text, file=sys.stderr, flush=True)

    return report


def run(args: argparse.Namespace) -> int:
    """Run the plan (or print its size with ``--dry-run``); returns the exit status."""
    session = build_session(args)
    if args.dry_run:
        print(render_estimate(estimate(session.plan, session.instrument, session.profile)), end="")
        return EXIT_PASS
    for line in session.header_lines():
        print(line)
    results = session.run_all(reporter=_progress())
    if results is None:
        if session.error is None:
            print("empath-gate run: no transcript was produced", file=sys.stderr)
            return EXIT_INFRA
        print(f"empath-gate run: {session.error}", file=sys.stderr)
        return EXIT_USAGE if session.error_kind == "usage" else EXIT_INFRA
    for line in session.summary_lines():
        print(line)
    return exit_code(results)


# --------------------------------------------------------------------------- --dry-run estimate

USER_TURN_TOKENS = 60
"""Assumed tokens of one user message (help-seekers write one to four short sentences; the
shipped seed scripts average about 30 words, ~40 tokens, so 60 leaves room for an LLM auditor)."""
TARGET_REPLY_TOKENS = 150
"""Assumed tokens of one target reply when ``target_max_tokens`` is unset (a supportive reply
of a short paragraph); with a cap, the smaller of the two."""
SYSTEM_PROMPT_TOKENS = 400
"""Assumed tokens of a target system prompt when its file size is unknown (4 characters per
token otherwise)."""
AUDITOR_PROMPT_TOKENS = 1100
"""Tokens of the auditor's system prompt (template ~450 words plus persona, instruction and
script, measured on the shipped seeds at about 4 characters per token)."""
JUDGE_PROMPT_TOKENS = 900
"""Tokens of the judge's fixed prompt (system message, rubric, answer-format preamble)."""
JUDGE_METRIC_TOKENS = 450
"""Prompt tokens per judged metric (definition, bands, criteria, its answer skeleton)."""
JUDGE_REPLY_TOKENS_PER_METRIC = 350
"""Completion tokens per judged metric under the strict rubric (criteria states, citations,
score, justification)."""
CHARS_PER_TOKEN = 4
"""Rule of thumb for English and Spanish text with GPT-style tokenizers."""


@dataclass(frozen=True)
class RoleEstimate:
    """One role's share of a plan: ``calls`` expected, ``max_calls`` the most it can make
    (retries of broken auditor replies and truncated judge replies included, provider retries
    not), tokens expected, ``cost_usd`` from litellm's cost map (None: unpriced or no model)."""

    role: str
    model: str | None
    calls: int
    max_calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None


@dataclass(frozen=True)
class PlanEstimate:
    """The plan size and the per-role estimate printed by ``--dry-run``."""

    suites: tuple[str, ...]
    shard: str | None
    conversations: int
    runs: int
    transcripts: int
    tests: int
    roles: tuple[RoleEstimate, ...]


def _history_tokens(turns: int, reply: int, first: int) -> int:
    """Prompt tokens summed over ``turns`` calls whose k-th (0-based) call carries ``first``
    plus k previous exchanges of (user + reply) tokens: the dialogue grows every turn."""
    exchange = USER_TURN_TOKENS + reply
    return turns * first + exchange * turns * (turns - 1) // 2


def estimate(plan: Plan, instrument: Instrument, profile: Profile) -> PlanEstimate:
    """Calls and tokens per role for ``plan`` under ``profile`` (pure apart from reading the
    system-prompt file's size and pricing through litellm's local cost map).

    Turns per transcript: the conversation's ``max_turns``, and with the scripted auditor no
    more than the seed's script. Per turn the target gets the system prompt and the dialogue
    so far; the LLM auditor gets its prompt and the dialogue, plus one last call that ends
    the conversation; the judge makes one call per transcript (``judge_granularity =
    "transcript"``) or one per metric, with the whole dialogue. Constants above.
    """
    from empath_gate.llm.client import estimate_cost

    s = profile.settings
    reply = min(TARGET_REPLY_TOKENS, s.target_role.max_tokens or TARGET_REPLY_TOKENS)
    system = SYSTEM_PROMPT_TOKENS
    if s.target_system_prompt is not None and s.target_kind == "model":
        try:
            system = max(1, Path(s.target_system_prompt).stat().st_size // CHARS_PER_TOKEN)
        except OSError:
            system = SYSTEM_PROMPT_TOKENS
    if s.target_kind != "model":
        system = 0
    scripted = profile.scripted_auditor
    judge_model = None if profile.criteria_only else s.judge.model
    per_metric = s.judge_granularity == "metric"
    t_calls = t_prompt = t_completion = 0
    a_calls = a_max = a_prompt = a_completion = 0
    j_calls = j_max = j_prompt = j_completion = 0
    for conv in plan.conversations:
        turns = conv.max_turns
        if scripted:
            turns = min(turns, len(instrument.seed(conv.seed_id).script))
        runs = plan.runs
        t_calls += turns * runs
        t_prompt += runs * _history_tokens(turns, reply, system + USER_TURN_TOKENS)
        t_completion += runs * turns * reply
        if not scripted:
            a_calls += (turns + 1) * runs
            a_max += 2 * (turns + 1) * runs
            a_prompt += runs * _history_tokens(turns + 1, reply, AUDITOR_PROMPT_TOKENS)
            a_completion += runs * (turns + 1) * USER_TURN_TOKENS
        if judge_model:
            n_metrics = len(conv.metric_ids)
            calls = n_metrics if per_metric else 1
            dialogue = turns * (USER_TURN_TOKENS + reply)
            j_calls += calls * runs
            j_max += 2 * calls * runs
            j_prompt += runs * (calls * (JUDGE_PROMPT_TOKENS + dialogue) + n_metrics * JUDGE_METRIC_TOKENS)
            j_completion += runs * n_metrics * JUDGE_REPLY_TOKENS_PER_METRIC

    def priced(model: str | None, prompt: int, completion: int) -> float | None:
        if not model or (prompt == 0 and completion == 0):
            return None
        return estimate_cost(model, prompt, completion)

    target_model = s.target if s.target_kind == "model" else None
    roles = (
        RoleEstimate("target", s.target, t_calls, t_calls, t_prompt, t_completion,
                     priced(target_model, t_prompt, t_completion)),
        RoleEstimate("auditor", None if scripted else s.auditor.model, a_calls, a_max, a_prompt, a_completion,
                     priced(None if scripted else s.auditor.model, a_prompt, a_completion)),
        RoleEstimate("judge", judge_model, j_calls, j_max, j_prompt, j_completion,
                     priced(judge_model, j_prompt, j_completion)),
    )
    return PlanEstimate(
        suites=plan.suites,
        shard=str(plan.shard) if plan.shard else None,
        conversations=len(plan.conversations),
        runs=plan.runs,
        transcripts=len(plan.transcripts),
        tests=len(plan.items),
        roles=roles,
    )


def render_estimate(est: PlanEstimate) -> str:
    """The ``--dry-run`` text: plan size, then one line per role, then the total."""
    shard = f" (shard {est.shard})" if est.shard else ""
    lines = [
        f"empath-gate run --dry-run: suites {', '.join(est.suites)}{shard}",
        f"  plan: {est.conversations} conversations x {est.runs} runs = {est.transcripts} transcripts, "
        f"{est.tests} tests",
    ]
    total = 0.0
    unpriced: list[str] = []
    for r in est.roles:
        who = r.model or ("scripted (no model)" if r.role == "auditor" else
                          "criteria only (no model)" if r.role == "judge" else "none")
        if r.calls == 0 and r.max_calls == 0 and r.role != "target":
            lines.append(f"  {r.role:<8} {who}: no model calls")
            continue
        if r.cost_usd is not None:
            cost = f"~${r.cost_usd:.2f}"
            total += r.cost_usd
        else:
            cost = "price unknown"
            unpriced.append(r.role)
        lines.append(
            f"  {r.role:<8} {who}: {r.calls} calls (at most {r.max_calls}), "
            f"~{r.prompt_tokens:,} prompt + ~{r.completion_tokens:,} completion tokens, {cost}"
        )
    note = f" + unpriced roles: {', '.join(unpriced)}" if unpriced else ""
    lines.append(f"  estimated cost: ~${total:.2f}{note} (rough: assumed tokens per turn, see "
                 "empath_gate.commands.run; cache hits cost nothing)")
    lines.append("  no model was called")
    return "\n".join(lines) + "\n"
