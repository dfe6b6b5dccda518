"""The cell model: one conversation x metric over its runs (:class:`CellStats`), its runs
(:class:`RunEntry`) and the transcript-id convention that names them."""

from __future__ import annotations

import re
from typing import Literal

from empath_gate.analysis.base import AnalysisModel

RunStatus = Literal["scored", "na", "criteria_only", "judge_failure", "missing"]
"""A run's state for one metric: the four verdict states, plus ``missing`` when the plan asked
for the run but no verdict exists (the transcript failed, was stopped by the budget, or was
never judged)."""

_TRANSCRIPT_ID = re.compile(r"^(?P<conversation>.+)-r(?P<run>\d+)$")


def parse_transcript_id(transcript_id: str) -> tuple[str, int]:
    """Split ``<conversation_id>-r<run>`` (the Transcript id convention) into
    ``(conversation_id, run)``; raises ValueError for any other shape."""
    m = _TRANSCRIPT_ID.match(transcript_id)
    if m is None:
        raise ValueError(f"transcript id {transcript_id!r} is not '<conversation_id>-r<run>'")
    return m.group("conversation"), int(m.group("run"))


class RunEntry(AnalysisModel):
    """One run of a cell (a view built on demand by :attr:`CellStats.runs`). ``run`` is the
    0-based run index; ``score`` is set only when ``status == "scored"`` (1-10, after the cap
    rule). ``critical_fail``: a critical criterion's effective state was FAIL.
    ``failure_reason``: the JudgeFailure reason; ``transcript_error``: why the transcript
    itself stopped (status ``error``/``budget``), ``None`` when it completed."""

    run: int
    status: RunStatus
    score: int | None = None
    critical_fail: bool = False
    failure_reason: str | None = None
    transcript_error: str | None = None


class CellStats(AnalysisModel):
    """Statistics of one conversation x metric over its runs.

    Per run, as parallel tuples in run order (:attr:`runs` joins them into :class:`RunEntry`
    views): ``run_ids`` (0-based run indices: every planned or observed run), ``statuses``,
    ``run_scores`` (the score or ``None``). Sparse per-run notes: ``failure_reasons``
    (``(run, JudgeFailure reason)``), ``transcript_errors`` (``(run, why the transcript
    stopped)``), ``critical_fail_runs`` (runs with a critical-criterion FAIL, any status),
    ``critical_judge_failures`` (runs whose verdict is a JudgeFailure on a ``critical`` metric
    or carrying a critical FAIL).

    Summary: ``scores`` (the judged scores in run order, 1-10); ``mean``, ``median``, ``min``,
    ``max``, ``range`` (max - min) over them, ``None`` when nothing was judged; ``sd``: sample
    SD (ddof = 1), ``None`` with fewer than 2 scores. Counts: ``n_runs``, ``n_judged``
    (scored), ``n_failures`` (judge_failure), ``n_na``, ``n_criteria_only``, ``n_missing``;
    ``n_pass``: judged runs with score >= ``min_mean``. ``flip_rate`` =
    ``min(n_pass, n_judged - n_pass) / n_judged`` (module docstring), 0-0.5, ``None`` when
    nothing was judged. ``min_mean`` and ``critical``: what the cell was computed with.
    """

    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    critical: bool = False
    min_mean: float
    run_ids: tuple[int, ...]
    statuses: tuple[RunStatus, ...]
    run_scores: tuple[int | None, ...]
    failure_reasons: tuple[tuple[int, str], ...] = ()
    transcript_errors: tuple[tuple[int, str], ...] = ()
    critical_fail_runs: tuple[int, ...] = ()
    critical_judge_failures: tuple[int, ...] = ()
    scores: tuple[int, ...]
    mean: float | None
    median: float | None
    min: int | None
    max: int | None
    range: int | None
    sd: float | None
    n_runs: int
    n_judged: int
    n_failures: int
    n_na: int
    n_criteria_only: int
    n_missing: int
    n_pass: int
    flip_rate: float | None

    @property
    def runs(self) -> tuple[RunEntry, ...]:
        """Every run as a :class:`RunEntry`, in run order."""
        reasons = dict(self.failure_reasons)
        errors = dict(self.transcript_errors)
        crit = set(self.critical_fail_runs)
        return tuple(
            RunEntry(run=r, status=st, score=sc, critical_fail=r in crit,
                     failure_reason=reasons.get(r), transcript_error=errors.get(r))
            for r, st, sc in zip(self.run_ids, self.statuses, self.run_scores, strict=True)
        )
