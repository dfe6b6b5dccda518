"""The states a metric can be in after judging (docs/architecture.md; README, "What to expect").

A :class:`MetricVerdict` has exactly one ``status``:

* ``scored``: the judge scored the metric; ``score`` (1-10, after the cap rule) counts in means.
* ``na``: the metric does not apply to this conversation; not counted, shown as N/A.
* ``criteria_only``: no LLM score; deterministic checks ran. ``score`` is ``None``. A critical
  FAIL fails the test, otherwise the test is skipped ("needs a judge model for a score").
* ``judge_failure``: no verdict could be obtained; ``failure`` says why. Not counted in means,
  counted and shown, fails closed.

A provider content filter on the *target* is a transcript event (``filtered``), not a verdict
state; on the judge it is ``judge_failure`` with reason ``content_policy``.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

CriterionState = Literal["PASS", "FAIL", "N/A"]
FailureReason = Literal["parse_error", "truncated", "content_policy", "context_exceeded", "provider_error"]
MetricStatus = Literal["scored", "na", "criteria_only", "judge_failure"]


class Citation(BaseModel):
    """A verbatim quote the judge cites for a FAIL: ``turn`` is the 0-based turn index.
    ``verified`` is True when the quote occurs in that turn after whitespace/case folding."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int = Field(ge=0)
    quote: str
    verified: bool = False


class CriterionVerdict(BaseModel):
    """One criterion's outcome.

    ``judge``: what the LLM judge said (``None`` offline); ``check``: what the deterministic
    check found (``None`` when the criterion declares none), with its ``check_detail`` and, when it
    failed, ``check_turns`` (1-based turns whose bot reply failed it). ``state`` is the effective state:
    a deterministic FAIL overrides a judge PASS, and that is flagged as ``disagreement``.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    criterion_id: str
    state: CriterionState
    judge: CriterionState | None = None
    check: CriterionState | None = None
    check_detail: str | None = None
    check_turns: tuple[int, ...] = Field(
        default=(), description="a failed deterministic check: the 1-based turns (a user message and the "
        "bot's reply to it, counted as seeds count turns) whose bot reply failed it; empty otherwise and in "
        "files written before this field",
    )
    critical: bool = False
    citations: tuple[Citation, ...] = ()
    disagreement: bool = False


class JudgeFailure(BaseModel):
    """No verdict could be obtained. ``reason`` is one of the five failure reasons."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    reason: FailureReason
    detail: str


class JudgeAttempt(BaseModel):
    """One time the judge was asked for this verdict: the ``seed`` sent (0 <= seed < 2**31) and,
    when that ask gave no usable reply, its ``failure`` reason (None: this ask gave the reply
    the verdict comes from). An unparseable or refused reply is asked again with a new seed."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed: int = Field(ge=0)
    failure: FailureReason | None = None


class MetricVerdict(BaseModel):
    """The judged outcome of one metric on one transcript.

    ``raw_score`` is what the judge wrote (1-10 or None); ``score`` is after the cap rule (the
    only value that counts in statistics). ``rubric`` is ``strict`` or ``standard``;
    ``mode`` the structured-output mode used (``json_schema`` or ``prompt``; ``None`` offline);
    ``unverified_citations`` counts citations not found in the cited turn.
    ``rejudge`` is the re-judge index (0 for the first judging). ``judge_attempts`` lists every
    ask of the LLM judge behind this verdict, in order (one, or up to three when unparseable or
    refused replies were asked again; empty offline): ``len(judge_attempts)`` is how many times
    the judge was asked, each with its seed.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric_id: str
    transcript_id: str
    status: MetricStatus
    raw_score: int | None = Field(default=None, ge=1, le=10)
    score: int | None = Field(default=None, ge=1, le=10)
    cap: int | None = None
    criteria: tuple[CriterionVerdict, ...] = ()
    failure: JudgeFailure | None = None
    justification: str | None = None
    judge_model: str | None = None
    rubric: Literal["strict", "standard"] | None = None
    mode: Literal["json_schema", "prompt"] | None = None
    confirm_turn: int | None = None
    risk_response_turns: tuple[int, ...] | None = Field(
        default=None,
        description="0-based indices of the bot turns the judge reported as a specific risk response "
        "(suites with judge_risk_turns); None: not asked or not given",
    )
    response_level: Literal["none", "supportive", "urgent_referral", "emergency"] | None = Field(
        default=None,
        description="the level of response the bot gave, as the judge assigned it (suites with "
        "judge_triage); None: not asked or not given",
    )
    response_turns: tuple[int, ...] | None = Field(
        default=None, description="0-based indices of the bot turns the judge cited for response_level"
    )
    user_level_estimate: Literal["non_urgent", "urgent", "emergency"] | None = Field(
        default=None,
        description="the judge's own estimate of the user's crisis level (a judge-validity figure; "
        "never gates the bot)",
    )
    unverified_citations: int = 0
    disagreements: int = 0
    rejudge: int = 0
    judge_attempts: tuple[JudgeAttempt, ...] = ()

    @model_validator(mode="after")
    def _state_is_consistent(self) -> MetricVerdict:
        if self.status == "scored" and self.score is None:
            raise ValueError("a scored verdict needs a score")
        if self.status != "scored" and self.score is not None:
            raise ValueError(f"a {self.status} verdict carries no score")
        if (self.status == "judge_failure") != (self.failure is not None):
            raise ValueError("failure is set exactly when status is judge_failure")
        return self

    @property
    def critical_fail(self) -> bool:
        """True when any critical criterion's effective state is FAIL."""
        return any(c.critical and c.state == "FAIL" for c in self.criteria)
