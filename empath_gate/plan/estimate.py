"""The ``--dry-run`` estimate: calls and tokens per role for a plan, priced from litellm's local
cost map (the embedded ``local/`` model at $0, as the run prices it), with no model call.

Tokens are counted with the same offline tokenizer the budget uses (:mod:`empath_gate.llm.tokens`:
tiktoken's ``cl100k_base`` as bundled with litellm)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from empath_gate.conversation.transcript import Transcript
    from empath_gate.instrument.models import Instrument
    from empath_gate.plan.build import Plan, PlanConversation
    from empath_gate.settings.profile import Profile

END_TOKENS = 5
"""Completion tokens of the LLM auditor's closing reply (its end token)."""
TARGET_REPLY_TOKENS = 150
"""Assumed tokens of one target reply when ``target_max_tokens`` is unset (a supportive reply
of a short paragraph); with a cap, the smaller of the two."""
SYSTEM_PROMPT_TOKENS = 400
"""Assumed tokens of a model target's system prompt when its file cannot be read."""
UNSCRIPTED_USER_TURN = "x " * 40
"""Stand-in for one user message of a seed without a script (``auditor: llm``): about 40
tokens, a short chat message; such a conversation is assumed to use all its ``max_turns``."""
FEELING_WRAPPER_TOKENS = 15
"""Completion tokens the LLM auditor adds around each message: the ``{"message": ...,
"feeling_0_100": N}`` object (:mod:`empath_gate.conversation.feeling`)."""
JUDGE_REPLY_TOKENS_PER_METRIC = 350
"""Completion tokens per judged metric under the strict rubric (criteria states, citations,
score, justification)."""


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


@dataclass
class _Tally:
    calls: int = 0
    max_calls: int = 0
    prompt: int = 0
    completion: int = 0


def _skeleton(conv: PlanConversation, users: Sequence[str]) -> Transcript:
    """A transcript of ``conv`` with the known user turns and empty target replies (what the
    judge prompt holds apart from the replies' text)."""
    from empath_gate.conversation.transcript import Transcript, Turn

    turns = []
    for k, text in enumerate(users):
        turns.append(Turn(index=2 * k, role="user", content=text, source="script"))
        turns.append(Turn(index=2 * k + 1, role="assistant", content="", source="target"))
    return Transcript(
        suite=conv.suite, seed_id=conv.seed_id, persona_id=conv.persona_id, locale="", run=0,
        conversation_id=conv.conversation_id, transcript_id=f"{conv.conversation_id}-r0", target="",
        auditor="", max_turns=conv.max_turns, turns=tuple(turns),
    )


def _conversation(
    conv: PlanConversation, instrument: Instrument, profile: Profile, *, system: int, reply: int
) -> tuple[_Tally, _Tally, _Tally]:
    """(target, auditor, judge) calls and tokens of one run of ``conv`` (see :func:`estimate`)."""
    from empath_gate.conversation.auditor import AUDITOR_RETRIES, START_TEXT, render_prompt
    from empath_gate.instrument.variants import script_variant
    from empath_gate.judging.judge_call import (
        MAX_REASKS,
        TRUNCATION_RETRY_FACTOR,
        uses_risk_turns,
        uses_triage,
    )
    from empath_gate.judging.prompts import build_judge_messages
    from empath_gate.llm.tokens import MESSAGE_OVERHEAD_TOKENS as OVER
    from empath_gate.llm.tokens import count_tokens, message_tokens

    s = profile.settings
    seed, persona = instrument.seed(conv.seed_id), instrument.persona(conv.persona_id)
    script = script_variant(seed, persona, instrument.behaviours).turns  # the script, as the persona says it
    users = list(script[: conv.max_turns]) if script else [UNSCRIPTED_USER_TURN] * conv.max_turns
    user_tokens = [count_tokens(u) + OVER for u in users]
    target, auditor, judge = _Tally(), _Tally(), _Tally()
    history = 0  # tokens of the dialogue before the current user turn
    for k, u in enumerate(user_tokens):
        target.prompt += (system + OVER if system else 0) + history + u
        target.completion += reply
        if not profile.scripted_auditor:
            auditor.prompt += count_tokens(render_prompt(seed, persona, turn=k + 1, max_turns=conv.max_turns,
                                                         behaviours=instrument.behaviours))
            auditor.prompt += count_tokens(START_TEXT) + 2 * OVER + history
            auditor.completion += u - OVER + FEELING_WRAPPER_TOKENS
        history += u + reply + OVER
    target.calls = target.max_calls = len(users)
    if not profile.scripted_auditor:
        ends = len(users) < conv.max_turns  # the auditor ends with its end token before max_turns
        auditor.calls = len(users) + ends
        auditor.max_calls = (1 + AUDITOR_RETRIES) * conv.max_turns
        if ends:
            turn = len(users) + 1
            auditor.prompt += count_tokens(render_prompt(seed, persona, turn=turn, max_turns=conv.max_turns,
                                                         behaviours=instrument.behaviours))
            auditor.prompt += count_tokens(START_TEXT) + 2 * OVER + history
            auditor.completion += END_TOKENS
    if not profile.criteria_only and s.judge.model and conv.metric_ids:
        metrics = [instrument.metric(m) for m in conv.metric_ids]
        groups = [metrics] if s.judge_granularity == "transcript" else [[m] for m in metrics]
        skeleton = _skeleton(conv, users)
        risk_turns = uses_risk_turns(instrument, conv.suite)  # a longer prompt, no extra call
        triage = uses_triage(instrument, conv.suite)  # likewise
        for group in groups:
            messages = build_judge_messages(skeleton, group, s.judge_rubric, risk_turns, triage)
            judge.prompt += message_tokens(messages)
            judge.prompt += len(users) * reply
        judge.calls = len(groups)
        judge.max_calls = len(groups) * TRUNCATION_RETRY_FACTOR * (1 + MAX_REASKS)
        judge.completion = len(metrics) * JUDGE_REPLY_TOKENS_PER_METRIC
    if not profile.criteria_only and s.judge.model and s.dynamics_annotator == "judge":
        _add_annotation(judge, conv, users, reply, instrument)
    return target, auditor, judge


def _add_annotation(judge: _Tally, conv: PlanConversation, users: Sequence[str], reply: int,
                    instrument: Instrument) -> None:
    """The LLM annotator's call on one transcript (``dynamics_annotator = "judge"``): one more
    judge call, its prompt (template, label set, the known user turns and the assumed replies)
    and :data:`~empath_gate.turns.llm_annotator.REPLY_TOKENS_PER_TURN` per turn."""
    from empath_gate.judging.judge_call import MAX_REASKS, TRUNCATION_RETRY_FACTOR
    from empath_gate.llm.tokens import message_tokens
    from empath_gate.turns.annotate_prompt import build_annotate_messages
    from empath_gate.turns.labelset import label_set
    from empath_gate.turns.llm_annotator import REPLY_TOKENS_PER_TURN
    from empath_gate.turns.model import Dialogue, DialogueTurn

    turns = tuple(t for u in users for t in (DialogueTurn(role="user", text=u),
                                             DialogueTurn(role="assistant", text="")))
    dialogue = Dialogue(conversation_id=conv.conversation_id, locale=conv.locale, turns=turns)
    judge.prompt += message_tokens(build_annotate_messages(dialogue, label_set(instrument), conv.locale))
    judge.prompt += len(users) * reply
    judge.calls += 1
    judge.max_calls += TRUNCATION_RETRY_FACTOR * (1 + MAX_REASKS)
    judge.completion += len(turns) * REPLY_TOKENS_PER_TURN


def estimate(plan: Plan, instrument: Instrument, profile: Profile) -> PlanEstimate:
    """Calls and tokens per role for ``plan`` under ``profile`` on a cold cache (pure apart from
    reading the system-prompt file and pricing through litellm's local cost map).

    Calls: the target answers each user turn: the seed's script as the persona says it, at most
    ``max_turns`` (fixed-script mode replays it; the LLM auditor is given it as the arc to follow,
    so it is assumed to end with its end token once the script is played out, one call more,
    when that comes before ``max_turns``). The judge makes one call per complete transcript
    (``judge_granularity = "transcript"``) or one per metric, plus one per transcript for the LLM
    annotator when ``dynamics_annotator = "judge"``. In fixed-script mode the count is
    exact on a cold cache when no judge reply is asked again. ``max_calls`` adds the auditor's
    reminders, the judge's truncation retries and re-asks (provider retries are not counted).

    Tokens are counted with the offline tokenizer (:mod:`empath_gate.llm.tokens`) on every text
    known before the run: system prompt, script lines, auditor and judge prompts, plus message
    overheads; what the models will write is assumed: :data:`TARGET_REPLY_TOKENS` per target
    reply (or ``target_max_tokens``), the script line per auditor turn (plus
    :data:`FEELING_WRAPPER_TOKENS`), and
    :data:`JUDGE_REPLY_TOKENS_PER_METRIC` per judged metric.
    """
    from empath_gate.llm.client import estimate_cost
    from empath_gate.llm.tokens import count_tokens

    s = profile.settings
    reply = min(TARGET_REPLY_TOKENS, s.target_role.max_tokens or TARGET_REPLY_TOKENS)
    system = 0
    if s.target_kind == "model":
        system = SYSTEM_PROMPT_TOKENS
        if s.target_system_prompt is not None:
            try:
                system = count_tokens(Path(s.target_system_prompt).read_text(encoding="utf-8"))
            except (OSError, UnicodeDecodeError):
                system = SYSTEM_PROMPT_TOKENS
    totals = {role: _Tally() for role in ("target", "auditor", "judge")}
    for conv in plan.conversations:
        if conv.skip is not None:  # this profile cannot run it: no call
            continue
        for name, t in zip(totals, _conversation(conv, instrument, profile, system=system, reply=reply),
                           strict=True):
            acc = totals[name]
            acc.calls += t.calls * plan.runs
            acc.max_calls += t.max_calls * plan.runs
            acc.prompt += t.prompt * plan.runs
            acc.completion += t.completion * plan.runs

    def role(name: str, model: str | None, priced_model: str | None) -> RoleEstimate:
        t = totals[name]
        cost = None
        if priced_model and (t.prompt or t.completion):
            cost = estimate_cost(priced_model, t.prompt, t.completion)
        return RoleEstimate(name, model, t.calls, t.max_calls, t.prompt, t.completion, cost)

    scripted = profile.scripted_auditor
    judge_model = None if profile.criteria_only else s.judge.model
    auditor_model = None if scripted else s.auditor.model
    roles = (
        role("target", s.target, s.target if s.target_kind == "model" else None),
        role("auditor", auditor_model, auditor_model),
        role("judge", judge_model, judge_model),
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
    lines.append(f"  estimated cost: ~${total:.2f}{note} (a cold cache; reply lengths assumed, see "
                 "empath_gate.plan.estimate; cache hits cost nothing)")
    lines.append("  no model was called")
    return "\n".join(lines) + "\n"
