"""One judge request, asked until it gives a usable reply: seeds, budgets, re-asks, failures.

:func:`ask_judge` sends the judge prompt of a group of metrics (all of a transcript's, or one:
``Settings.judge_granularity``) and returns a :class:`JudgeOutcome`: the parsed metrics, or a
:class:`~empath_gate.judging.verdict.JudgeFailure`, with every ask recorded.

* **Re-asks.** A reply that does not parse (``parse_error``) or that the provider refused
  (``content_policy``: a content-policy error, or ``content_filter`` with no text) is asked
  again, up to :data:`MAX_REASKS` times, each time with a new seed (:func:`reask_seed`); only
  then is it a failure. Each ask is a :class:`~empath_gate.judging.verdict.JudgeAttempt`.
* **Truncation.** Within one ask, a reply cut at ``max_tokens`` is retried once with
  :data:`TRUNCATION_RETRY_FACTOR` times the budget; cut again, the ask fails ``truncated`` (not
  re-asked: a new seed does not make the verdict shorter).
* **Cache.** Only replies that parse are stored; a failed ask is asked again on the next run.
* Provider errors after the client's retries (``provider_error``) and prompts longer than the
  context window (``context_exceeded``) fail at once.
* **Batch results** (``--judge-batch collect``, :mod:`empath_gate.judging.batch_mode`) are
  neither re-asked nor retried with a larger budget: a batch holds one request per ask, so an
  unparseable or truncated result is that failure at once.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from empath_gate.conversation.transcript import Transcript
from empath_gate.errors import JudgeError, ProviderError
from empath_gate.instrument.models import Instrument, Metric
from empath_gate.judging.parse import (
    MetricRequest,
    ParsedMetric,
    ParsedReply,
    ReplySchema,
    parse_judge_reply,
    response_json_schema,
)
from empath_gate.judging.prompts import (
    JUDGE_TEMPLATE_VERSION,
    build_judge_messages,
    judge_template_hash,
    part_template_hash,
    risk_turns_template_hash,
)
from empath_gate.judging.verdict import FailureReason, JudgeAttempt, JudgeFailure
from empath_gate.llm.deferred import batch_mode

if TYPE_CHECKING:
    from empath_gate.llm.cache import Cache
    from empath_gate.llm.client import Completion
    from empath_gate.settings import RoleSettings, Settings

DEFAULT_MAX_TOKENS = 4096
"""Judge token budget when ``judge_max_tokens`` is unset (project choice: a strict verdict on
several metrics with citations runs to one or two thousand tokens)."""

JSON_SCHEMA_NAME = "empath_judge_verdict"
"""Name of the JSON-schema ``response_format`` sent in ``json_schema`` mode."""

TRUNCATION_RETRY_FACTOR = 2
"""A truncated judge reply is retried once with this many times the token budget."""

MAX_REASKS = 2
"""How many times an unparseable or refused judge reply is asked again, each with a new seed,
before it is a failure (issue "Verdicts a safety team can trust", item 1)."""

REASKED: frozenset[FailureReason] = frozenset({"parse_error", "content_policy"})
"""The failure reasons that are asked again."""

StructuredMode = Literal["json_schema", "prompt"]


def judge_run_seed(settings: Settings, transcript: Transcript, rejudge: int = 0) -> int:
    """The judge's seed for one run (0 <= seed < 2**31).

    Re-judge 0 uses the run's own seed, :func:`~empath_gate.conversation.runspec.derive_seed` of
    the judge's base seed (``judge_seed``, else ``base_seed``), the conversation id and the run
    index, as every role does. Re-judging ``k > 0`` derives a further seed from that one and
    ``k``, so each re-judging is its own sample while a re-run of the same plan asks the same
    question."""
    from empath_gate.conversation.runspec import derive_seed

    base = settings.judge.seed if settings.judge.seed is not None else settings.base_seed
    seed = derive_seed(base, transcript.conversation_id, transcript.run)
    return seed if rejudge == 0 else derive_seed(seed, "rejudge", rejudge)


def reask_seed(seed: int, ask: int) -> int:
    """The seed of ask ``ask`` (0-based) of a judge request whose first ask uses ``seed``:
    ``seed`` itself for ask 0, else ``derive_seed(seed, "reask", ask)`` (0 <= seed < 2**31)."""
    from empath_gate.conversation.runspec import derive_seed

    return seed if ask == 0 else derive_seed(seed, "reask", ask)


@dataclass(frozen=True)
class JudgeOutcome:
    """What a judge request produced: ``metrics`` (metric id -> parsed metric) and the judge's
    ``confirm_turn``, or a ``failure``; ``mode`` is the structured-output mode used;
    ``attempts`` every ask, in order (the last one gave the reply or the failure)."""

    mode: StructuredMode
    metrics: Mapping[str, ParsedMetric] = field(default_factory=dict)
    confirm_turn: int | None = None
    failure: JudgeFailure | None = None
    attempts: tuple[JudgeAttempt, ...] = ()
    risk_response_turns: tuple[int, ...] | None = None
    triage: dict[str, Any] | None = None


@dataclass(frozen=True)
class _Request:
    """Everything one judge request sends, except the seed and the token budget."""

    role: RoleSettings
    model: str
    schema: ReplySchema
    messages: list[dict[str, object]]
    response_format: dict[str, object] | None
    cache_extra: dict[str, object]
    mode: StructuredMode


def reply_schema(
    metrics: Sequence[Metric],
    rubric: Literal["strict", "standard"],
    instrument: Instrument,
    risk_turns: bool = False,
    triage: bool = False,
) -> ReplySchema:
    """The reply schema of a judge request on ``metrics`` under ``rubric`` (criterion ids are
    asked for under the strict rubric only), on the instrument's scale; ``risk_turns``: the
    reply also lists the risk-response turns."""
    return ReplySchema(
        risk_turns=risk_turns,
        triage=triage,
        rubric=rubric,
        metrics=tuple(
            MetricRequest(
                metric_id=m.id,
                criterion_ids=tuple(c.id for c in m.criteria) if rubric == "strict" else (),
            )
            for m in metrics
        ),
        scale_min=instrument.scale_min,
        scale_max=instrument.scale_max,
    )


def _request(
    transcript: Transcript,
    metrics: Sequence[Metric],
    instrument: Instrument,
    settings: Settings,
    rejudge: int,
) -> _Request:
    from empath_gate.llm.client import supports_json_schema

    model = settings.judge.model or ""
    rubric = settings.judge_rubric
    risk_turns = uses_risk_turns(instrument, transcript.suite)
    triage = uses_triage(instrument, transcript.suite)
    schema = reply_schema(metrics, rubric, instrument, risk_turns, triage)
    mode: StructuredMode = "json_schema" if supports_json_schema(model) else "prompt"
    response_format: dict[str, object] | None = None
    if mode == "json_schema":
        response_format = {
            "type": "json_schema",
            "json_schema": {"name": JSON_SCHEMA_NAME, "schema": response_json_schema(schema), "strict": True},
        }
    temperature = settings.judge.temperature if settings.judge.temperature is not None else 0.0
    return _Request(
        role=settings.judge.model_copy(update={"temperature": temperature}),
        model=model,
        schema=schema,
        messages=list(build_judge_messages(transcript, metrics, rubric, risk_turns, triage)),  # type: ignore[arg-type]
        response_format=response_format,
        cache_extra={
            "judge_template": JUDGE_TEMPLATE_VERSION,
            "judge_template_sha256": judge_template_hash(),
            "rubric": rubric,
            "metrics": [m.id for m in metrics],
            "run": transcript.run,
            "rejudge": rejudge,
            **({"risk_turns": risk_turns_template_hash()} if risk_turns else {}),
            **({"triage": part_template_hash("triage")} if triage else {}),
        },
        mode=mode,
    )


def uses_triage(instrument: Instrument, suite_id: str) -> bool:
    """Whether suite ``suite_id`` asks the judge for the bot's response level (``judge_triage``);
    False for a suite the instrument does not have."""
    try:
        return instrument.suite(suite_id).judge_triage
    except KeyError:
        return False


def uses_risk_turns(instrument: Instrument, suite_id: str) -> bool:
    """Whether suite ``suite_id`` asks the judge for risk-response turns (``judge_risk_turns``);
    False for a suite the instrument does not have."""
    try:
        return instrument.suite(suite_id).judge_risk_turns
    except KeyError:
        return False


def _parses(schema: ReplySchema) -> Callable[[Completion], bool]:
    def usable(completion: Completion) -> bool:  # what the cache may keep: a whole, valid reply
        if completion.filtered or completion.truncated or completion.finish_reason == "content_filter":
            return False
        try:
            parse_judge_reply(completion.content or "", schema)
        except JudgeError:
            return False
        return True

    return usable


def _content_policy_detail(model: str, how: str) -> str:
    return (
        f"the judge model {model} refused on content policy ({how}); judge these transcripts with "
        "another judge model (judge_model / EMPATH_JUDGE_MODEL). On harm metrics and critical criteria "
        "this refusal counts as a FAIL"
    )


def _provider_failure(exc: ProviderError, model: str) -> JudgeFailure:
    if exc.kind == "content_policy":
        return JudgeFailure(reason="content_policy", detail=_content_policy_detail(model, str(exc)))
    if exc.kind == "context_exceeded":
        return JudgeFailure(
            reason="context_exceeded",
            detail=f"the judge prompt does not fit {model}'s context window ({exc}); use a judge model "
            "with a larger context, set judge_granularity = \"metric\", or lower max_turns",
        )
    return JudgeFailure(reason="provider_error", detail=f"{exc.kind}: {exc}")


async def _ask_once(req: _Request, seed: int, cache: Cache | None) -> ParsedReply | JudgeFailure:
    """One ask with ``seed``: the parsed reply, or why there is none (a truncated reply is
    retried once with a larger budget inside the ask)."""
    from empath_gate.llm.client import complete

    budget = req.role.max_tokens or DEFAULT_MAX_TOKENS
    budgets = (budget, budget * TRUNCATION_RETRY_FACTOR)
    for max_tokens in budgets:
        try:
            completion = await complete(
                "judge", req.role.model_copy(update={"max_tokens": max_tokens}), req.messages, seed=seed,
                cache=cache, cache_extra=req.cache_extra, response_format=req.response_format,
                usable=_parses(req.schema), cache_prefix=True,
            )
        except ProviderError as exc:
            return _provider_failure(exc, req.model)
        if completion.filtered or completion.finish_reason == "content_filter":
            detail = _content_policy_detail(req.model, "a content filter blocked the reply")
            return JudgeFailure(reason="content_policy", detail=detail)
        if completion.truncated and batch_mode() != "collect":  # a batch holds only the first budget
            continue
        if completion.truncated:
            break
        try:
            return parse_judge_reply(completion.content or "", req.schema)
        except JudgeError as exc:
            return JudgeFailure(reason="parse_error", detail=f"{req.model}: {exc}")
    return JudgeFailure(
        reason="truncated",
        detail=f"the judge's reply ({req.model}) stopped at max_tokens={budgets[0]} and again at "
        f"{budgets[1]} on the retry; raise judge_max_tokens or set judge_granularity = \"metric\"",
    )


async def ask_judge(
    transcript: Transcript,
    metrics: Sequence[Metric],
    *,
    instrument: Instrument,
    settings: Settings,
    cache: Cache | None,
    rejudge: int,
) -> JudgeOutcome:
    """Ask the judge about ``metrics`` on ``transcript`` (see the module docstring). Never
    raises on provider or parse failures: they are the outcome's ``failure``, whose detail
    ends with how many asks were made and their seeds when the request was asked again."""
    req = _request(transcript, metrics, instrument, settings, rejudge)
    first = judge_run_seed(settings, transcript, rejudge)
    attempts: list[JudgeAttempt] = []
    failure: JudgeFailure | None = None
    for ask in range(1 + MAX_REASKS):
        seed = reask_seed(first, ask)
        result = await _ask_once(req, seed, cache)
        if isinstance(result, ParsedReply):
            attempts.append(JudgeAttempt(seed=seed))
            return JudgeOutcome(
                mode=req.mode, metrics={m.metric_id: m for m in result.metrics},
                confirm_turn=result.confirm_turn, attempts=tuple(attempts),
                risk_response_turns=result.risk_response_turns,
                triage=({"level": result.bot_response_level, "turns": result.bot_response_turns,
                         "user_level": result.user_level_estimate} if req.schema.triage else None),
            )
        failure = result
        attempts.append(JudgeAttempt(seed=seed, failure=failure.reason))
        if failure.reason not in REASKED or batch_mode() == "collect":  # a batch result is not re-asked
            break
    assert failure is not None  # the loop ran at least once and did not return
    if len(attempts) > 1:
        seeds = ", ".join(str(a.seed) for a in attempts)
        failure = JudgeFailure(
            reason=failure.reason, detail=f"{failure.detail} (asked {len(attempts)} times, seeds {seeds})"
        )
    return JudgeOutcome(mode=req.mode, failure=failure, attempts=tuple(attempts))
