"""The ``--dry-run`` estimate: calls and tokens per role for a plan, priced from litellm's local
cost map, with no model call."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan.build import Plan
    from empath_gate.settings.profile import Profile

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
                 "empath_gate.plan.estimate; cache hits cost nothing)")
    lines.append("  no model was called")
    return "\n".join(lines) + "\n"
