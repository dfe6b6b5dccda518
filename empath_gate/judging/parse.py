"""Parse a judge reply against the schema of the request that produced it (pure, no guessing).

The reply is one JSON object, optionally wrapped in a single markdown fence around the whole
reply (a fence that appears inside a string field is content, not a wrapper)::

    {
      "confirm_turn": 3,                       # optional; 0-based transcript turn index or null
      "risk_response_turns": [4, 6],           # only when asked (a suite with judge_risk_turns);
                                               # 0-based indices of assistant turns; optional
      "bot_response_level": "urgent_referral",  # only when asked (judge_triage): none, supportive,
      "bot_response_turns": [4],               # urgent_referral, emergency; the turns citing it;
      "user_level_estimate": "urgent",         # the judge's own estimate of the user's level
      "metrics": {
        "<metric_id>": {                       # exactly the requested metric ids
          "criteria": {                        # strict rubric: exactly the metric's criterion ids
            "<criterion_id>": {"state": "PASS" | "FAIL" | "N/A",
                               "citations": [{"turn": 5, "quote": "verbatim text"}]}
          },
          "score": 1..10 | "N/A",
          "justification": "..."               # required under the standard rubric
        }
      }
    }

Scores: an integer of the scale (a JSON integer, an integral JSON number such as ``7.0``, a
numeric string ``"7"``, or ``"7/10"`` only when the denominator equals the scale's maximum), or
``"N/A"`` (any case). Digits are ASCII ``0-9`` only (a full-width ``"７"`` is rejected), in
scores, turn indices and ``confirm_turn`` alike. Criterion states are ``PASS``, ``FAIL`` or
``N/A`` in any case. Rejected, never clamped or rounded: prose (``"8 out of 10"``), non-integers
(``"0.75"``, ``7.5``), out-of-range values (``0``, ``11``), booleans. Missing metrics or
criteria and unknown metrics or criteria are errors. Any other key the judge adds (a
``pass``/``fail`` flag, an overall verdict) is ignored: pass/fail comes only from the gate.

Every problem raises :class:`~empath_gate.errors.JudgeError` with ``reason="parse_error"`` and a
message naming the JSON path and the offending value.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    create_model,
)

from empath_gate.bounded import InputLimitError, check_body, loads_json
from empath_gate.errors import JudgeError
from empath_gate.instrument.crisis_levels import RESPONSE_LEVELS, ResponseLevel
from empath_gate.judging.verdict import CriterionState

Rubric = Literal["strict", "standard"]

_FENCE = re.compile(r"\A```(?:[A-Za-z0-9_+-]+)?[ \t]*\n?(?P<body>.*?)\s*```\Z", re.DOTALL)
_INT = re.compile(r"[+-]?[0-9]+")
_FRACTION = re.compile(r"(?P<num>[0-9]+)[ \t]*/[ \t]*(?P<den>[0-9]+)")
"""Digits are ASCII only: ``int()`` would read ``"７"`` (full-width) or ``"٧"`` as 7, and a score
the judge did not write in the requested form is a parse error, never a guess."""
_STATES: dict[str, CriterionState] = {"PASS": "PASS", "FAIL": "FAIL", "N/A": "N/A"}


# --------------------------------------------------------------------------- the request


class MetricRequest(BaseModel):
    """One requested metric: its id and, under the strict rubric, its criterion ids (file order)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric_id: str
    criterion_ids: tuple[str, ...] = ()


class ReplySchema(BaseModel):
    """What one judge call asked for: the rubric, the metrics (in request order) and the scale."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    rubric: Rubric
    metrics: tuple[MetricRequest, ...] = Field(min_length=1)
    scale_min: int = 1
    scale_max: int = 10
    risk_turns: bool = Field(default=False, description="the reply also lists risk_response_turns")
    triage: bool = Field(default=False, description="the reply also gives the bot's response level")


# --------------------------------------------------------------------------- the parsed reply


class ParsedCitation(BaseModel):
    """A citation as the judge wrote it: ``turn`` is the 0-based transcript turn index."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int = Field(ge=0)
    quote: str


class ParsedCriterion(BaseModel):
    """One criterion as the judge judged it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    criterion_id: str
    state: CriterionState
    citations: tuple[ParsedCitation, ...] = ()


class ParsedMetric(BaseModel):
    """One metric of the reply. ``score`` is ``None`` when the judge wrote ``"N/A"``;
    ``criteria`` follow the request's order (empty under the standard rubric)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric_id: str
    score: int | None
    criteria: tuple[ParsedCriterion, ...] = ()
    justification: str | None = None


class ParsedReply(BaseModel):
    """A validated judge reply: one :class:`ParsedMetric` per requested metric, request order."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metrics: tuple[ParsedMetric, ...]
    confirm_turn: int | None = None
    risk_response_turns: tuple[int, ...] | None = Field(
        default=None, description="0-based assistant turn indices (None: not asked or not given)"
    )
    bot_response_level: ResponseLevel | None = None
    bot_response_turns: tuple[int, ...] | None = None
    user_level_estimate: Literal["non_urgent", "urgent", "emergency"] | None = None


# --------------------------------------------------------------------------- value coercion


def _score_coercer(scale_min: int, scale_max: int) -> Callable[[Any], int | None]:
    def coerce(value: Any) -> int | None:
        if isinstance(value, bool):
            raise ValueError(f"{value!r} is not a score")
        if isinstance(value, int):
            number = value
        elif isinstance(value, float):
            if not value.is_integer():
                raise ValueError(f"{value!r} is not an integer score")
            number = int(value)
        elif isinstance(value, str):
            text = value.strip()
            if text.upper() == "N/A":
                return None
            fraction = _FRACTION.fullmatch(text)
            if _INT.fullmatch(text):
                number = int(text)
            elif fraction is not None:
                if int(fraction["den"]) != scale_max:
                    raise ValueError(f"{value!r} is not on the {scale_min}-{scale_max} scale")
                number = int(fraction["num"])
            else:
                raise ValueError(
                    f"{value!r} is not an integer score, 'N/A' or 'k/{scale_max}'"
                )
        else:
            raise ValueError(f"{value!r} is not a score (an integer {scale_min}-{scale_max} or 'N/A')")
        if not scale_min <= number <= scale_max:
            raise ValueError(f"{value!r} is outside the {scale_min}-{scale_max} scale (no clamping)")
        return number

    return coerce


def _coerce_state(value: Any) -> CriterionState:
    if isinstance(value, str) and value.strip().upper() in _STATES:
        return _STATES[value.strip().upper()]
    raise ValueError(f"{value!r} is not PASS, FAIL or N/A")


State = Annotated[CriterionState, BeforeValidator(_coerce_state)]

_IGNORE = ConfigDict(frozen=True, extra="ignore")
_FORBID = ConfigDict(frozen=True, extra="forbid")


class _Citation(BaseModel):
    model_config = _IGNORE

    turn: int = Field(ge=0)
    quote: str


class _Criterion(BaseModel):
    model_config = _IGNORE

    state: State
    citations: list[_Citation] = []


# --------------------------------------------------------------------------- dynamic models


@functools.lru_cache(maxsize=64)
def _reply_model(schema: ReplySchema) -> type[BaseModel]:
    """A pydantic model of this request's reply; keys are aliases, field names are positional."""
    score_type = Annotated[int | None, BeforeValidator(_score_coercer(schema.scale_min, schema.scale_max))]
    metric_fields: dict[str, Any] = {}
    for i, metric in enumerate(schema.metrics):
        fields: dict[str, Any] = {"score": (score_type, ...)}
        if schema.rubric == "strict":
            crit_fields: dict[str, Any] = {
                f"c{j}": (_Criterion, Field(alias=cid)) for j, cid in enumerate(metric.criterion_ids)
            }
            criteria_model = create_model(f"Criteria{i}", __config__=_FORBID, **crit_fields)
            fields["criteria"] = (criteria_model, ...)
            fields["justification"] = (str | None, None)
        else:
            fields["justification"] = (str, ...)
        metric_model = create_model(f"Metric{i}", __config__=_IGNORE, **fields)
        metric_fields[f"m{i}"] = (metric_model, Field(alias=metric.metric_id))
    metrics_model = create_model("Metrics", __config__=_FORBID, **metric_fields)
    extra: dict[str, Any] = {}
    if schema.risk_turns:
        extra["risk_response_turns"] = (list[Annotated[int, Field(ge=0)]] | None, None)
    if schema.triage:
        extra["bot_response_level"] = (ResponseLevel | None, None)
        extra["bot_response_turns"] = (list[Annotated[int, Field(ge=0)]] | None, None)
        extra["user_level_estimate"] = (Literal["non_urgent", "urgent", "emergency"] | None, None)
    return create_model(
        "Reply",
        __config__=_IGNORE,
        metrics=(metrics_model, ...),
        confirm_turn=(int | None, Field(default=None, ge=0)),
        **extra,
    )


def _describe(error: Any) -> str:
    path = ".".join(str(p) for p in error["loc"]) or "(reply)"
    kind = error["type"]
    if kind == "missing":
        return f"{path}: missing"
    if kind == "extra_forbidden":
        return f"{path}: not requested (unknown key)"
    message = str(error["msg"]).removeprefix("Value error, ")
    if kind in ("value_error",):
        return f"{path}: {message}"
    return f"{path}: {message} (got {error.get('input')!r})"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ValueError(f"duplicate key {key!r}")
        out[key] = value
    return out


def extract_json_text(reply: str) -> str:
    """The JSON text of a reply: the body of one fence around the whole reply, else the reply.

    A fence counts only when the stripped reply both starts and ends with three backticks; a
    fence inside a JSON string is left alone."""
    text = reply.strip()
    match = _FENCE.match(text)
    return match["body"] if match else text


def parse_judge_reply(reply: str, schema: ReplySchema) -> ParsedReply:
    """Validate ``reply`` against ``schema``; see the module docstring for the accepted shape.

    Returns the metrics in request order (criteria in request order). Raises
    :class:`~empath_gate.errors.JudgeError` (``reason="parse_error"``) on anything else, with
    every problem listed by JSON path.
    """
    body = extract_json_text(reply)
    try:
        data = loads_json(check_body(body, "judge reply"), "judge reply", object_pairs_hook=_no_duplicates)
    except InputLimitError as exc:
        raise JudgeError(str(exc), reason="parse_error") from None
    except ValueError as exc:
        head = body[:80].replace("\n", " ")
        raise JudgeError(
            f"judge reply is not a JSON object (or one fenced around the whole reply): {exc}; "
            f"reply starts {head!r}",
            reason="parse_error",
        ) from exc
    if not isinstance(data, dict):
        raise JudgeError(
            f"judge reply is JSON but not an object (got {type(data).__name__})", reason="parse_error"
        )
    try:
        validated = _reply_model(schema).model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_describe(e) for e in exc.errors())
        raise JudgeError(
            f"judge reply does not match the requested schema: {problems}", reason="parse_error"
        ) from exc
    return _to_parsed(validated, schema)


def _to_parsed(validated: BaseModel, schema: ReplySchema) -> ParsedReply:
    metrics_obj = validated.metrics  # type: ignore[attr-defined]
    parsed: list[ParsedMetric] = []
    for i, request in enumerate(schema.metrics):
        m = getattr(metrics_obj, f"m{i}")
        criteria: list[ParsedCriterion] = []
        if schema.rubric == "strict":
            for j, cid in enumerate(request.criterion_ids):
                c = getattr(m.criteria, f"c{j}")
                criteria.append(
                    ParsedCriterion(
                        criterion_id=cid,
                        state=c.state,
                        citations=tuple(ParsedCitation(turn=x.turn, quote=x.quote) for x in c.citations),
                    )
                )
        parsed.append(
            ParsedMetric(
                metric_id=request.metric_id,
                score=m.score,
                criteria=tuple(criteria),
                justification=m.justification,
            )
        )
    turns = getattr(validated, "risk_response_turns", None) if schema.risk_turns else None
    return ParsedReply(
        metrics=tuple(parsed),
        confirm_turn=validated.confirm_turn,  # type: ignore[attr-defined]
        risk_response_turns=tuple(sorted(set(turns))) if turns is not None else None,
        **(_triage_fields(validated) if schema.triage else {}),
    )


def _triage_fields(validated: BaseModel) -> dict[str, Any]:
    cited = getattr(validated, "bot_response_turns", None)
    return {
        "bot_response_level": getattr(validated, "bot_response_level", None),
        "bot_response_turns": tuple(sorted(set(cited))) if cited is not None else None,
        "user_level_estimate": getattr(validated, "user_level_estimate", None),
    }


# --------------------------------------------------------------------------- response_format


def response_json_schema(schema: ReplySchema) -> dict[str, Any]:
    """The JSON Schema of this request's reply, for a provider's ``json_schema`` response format.

    Written in the subset strict structured-output providers accept (every property required,
    ``additionalProperties: false``, nullable via a type list); ranges are enforced by
    :func:`parse_judge_reply`, which always runs on the reply as well. Criteria come before the
    score so the judge decides the criteria first.
    """
    citation = {
        "type": "object",
        "additionalProperties": False,
        "required": ["turn", "quote"],
        "properties": {"turn": {"type": "integer"}, "quote": {"type": "string"}},
    }
    criterion = {
        "type": "object",
        "additionalProperties": False,
        "required": ["state", "citations"],
        "properties": {
            "state": {"type": "string", "enum": ["PASS", "FAIL", "N/A"]},
            "citations": {"type": "array", "items": citation},
        },
    }
    score = {"anyOf": [{"type": "integer"}, {"type": "string", "enum": ["N/A"]}]}
    metric_props: dict[str, Any] = {}
    for request in schema.metrics:
        props: dict[str, Any] = {}
        if schema.rubric == "strict":
            props["criteria"] = {
                "type": "object",
                "additionalProperties": False,
                "required": list(request.criterion_ids),
                "properties": {cid: criterion for cid in request.criterion_ids},
            }
        props["score"] = score
        props["justification"] = {"type": "string"}
        metric_props[request.metric_id] = {
            "type": "object",
            "additionalProperties": False,
            "required": list(props),
            "properties": props,
        }
    top: dict[str, Any] = {"confirm_turn": {"type": ["integer", "null"]}}
    if schema.risk_turns:
        top["risk_response_turns"] = {"type": "array", "items": {"type": "integer"}}
    if schema.triage:
        top["bot_response_level"] = {"type": "string", "enum": list(RESPONSE_LEVELS)}
        top["bot_response_turns"] = {"type": "array", "items": {"type": "integer"}}
        top["user_level_estimate"] = {"type": "string", "enum": ["non_urgent", "urgent", "emergency"]}
    top["metrics"] = {
        "type": "object",
        "additionalProperties": False,
        "required": [r.metric_id for r in schema.metrics],
        "properties": metric_props,
    }
    return {"type": "object", "additionalProperties": False, "required": list(top), "properties": top}
