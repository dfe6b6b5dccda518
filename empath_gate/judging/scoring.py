"""The strict rubric's cap rule and the merge of judge and deterministic criterion states (pure).

The tool, never the judge, applies the instrument's :class:`~empath_gate.instrument.models.CapRule`
so that score inflation is measurable: the judge's own score is kept as ``raw_score`` and the
capped value as ``score`` (see :class:`~empath_gate.judging.verdict.MetricVerdict`).
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from empath_gate.instrument.models import CapRule, Criterion
from empath_gate.judging.verdict import Citation, CriterionState, CriterionVerdict


class CapResult(BaseModel):
    """Outcome of the cap rule on one metric.

    ``raw_score``: the judge's score (1-10); ``score``: after the cap rule (``<= raw_score``);
    ``cap``: the cap that lowered the score, or ``None`` when the raw score stands.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    raw_score: int = Field(ge=1, le=10)
    score: int = Field(ge=1, le=10)
    cap: int | None = None


def apply_cap(raw_score: int, criteria: Sequence[CriterionVerdict], rule: CapRule) -> CapResult:
    """Apply the cap rule to a judge's raw score, given the effective criterion states.

    Rule (``CapRule``; defaults 3 / 6 / 9, the instrument's design after EMPATH's mandatory
    binary checks for 9-10):

    * any critical criterion FAIL caps the score at ``critical_fail_cap``;
    * any criterion FAIL caps it at ``any_fail_cap``;
    * a score ``>= top_band_min`` needs every applicable (non-N/A) criterion to PASS, so with a
      FAIL it is also held at ``top_band_min - 1`` (this only bites when ``any_fail_cap`` is
      configured at or above ``top_band_min``). With no FAIL the raw score stands (N/A
      criteria do not block the top band).

    The tightest applicable cap wins. ``cap`` is reported only when it lowered the score.
    Raises ``ValueError`` (via pydantic) when ``raw_score`` is outside 1-10.
    """
    states = [c.state for c in criteria]
    caps: list[int] = []
    if any(c.critical and c.state == "FAIL" for c in criteria):
        caps.append(rule.critical_fail_cap)
    if "FAIL" in states:
        caps.append(rule.any_fail_cap)
        caps.append(max(1, rule.top_band_min - 1))
    if not caps:
        return CapResult(raw_score=raw_score, score=raw_score, cap=None)
    cap = min(caps)
    if raw_score <= cap:
        return CapResult(raw_score=raw_score, score=raw_score, cap=None)
    return CapResult(raw_score=raw_score, score=cap, cap=cap)


def merge_criterion(
    criterion: Criterion,
    *,
    judge: CriterionState | None,
    check: tuple[CriterionState, str] | tuple[CriterionState, str, tuple[int, ...]] | None,
    citations: Sequence[Citation] = (),
) -> CriterionVerdict:
    """Combine what the judge said and what the deterministic check found for one criterion.

    ``judge`` is ``None`` offline or under the standard rubric; ``check`` is ``None`` when the
    criterion declares no check (or checks were not run), else ``(state, detail)`` or a
    :class:`~empath_gate.judging.checks.CheckResult` ``(state, detail, turns)``: the turns of a
    failed check become ``check_turns``.

    Effective state:

    * a deterministic FAIL wins over a judge PASS or N/A: the state is FAIL and
      ``disagreement`` is set (counted per metric);
    * a deterministic PASS or N/A never overrides a judge FAIL (the judge may see what a
      pattern misses), and is not a disagreement;
    * otherwise the judge's state, or the check's when there is no judge.

    Raises ``ValueError`` when both ``judge`` and ``check`` are ``None`` (nothing to report).
    """
    check_state = check[0] if check is not None else None
    check_detail = check[1] if check is not None else None
    check_turns = check[2] if check is not None and len(check) > 2 and check_state == "FAIL" else ()
    disagreement = False
    if judge is None and check_state is None:
        raise ValueError(f"criterion {criterion.id!r}: neither a judge state nor a check result")
    if check_state == "FAIL":
        state: CriterionState = "FAIL"
        disagreement = judge is not None and judge != "FAIL"
    elif judge is not None:
        state = judge
    else:
        assert check_state is not None
        state = check_state
    return CriterionVerdict(
        criterion_id=criterion.id,
        state=state,
        judge=judge,
        check=check_state,
        check_detail=check_detail,
        check_turns=tuple(check_turns),
        critical=criterion.critical,
        citations=tuple(citations),
        disagreement=disagreement,
    )
