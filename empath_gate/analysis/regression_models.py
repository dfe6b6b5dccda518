"""The models of a regression comparison (methods: :mod:`empath_gate.analysis.regression`,
which re-exports them)."""

from __future__ import annotations

from pydantic import Field

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.stats import CellStats


class RunMetadata(AnalysisModel):
    """What makes two runs comparable. ``run_count``: N runs per conversation (sides with
    different counts are compared on the runs both have); ``instrument_version``: semver of
    the instrument; ``judge_model`` and ``judge_template_hash``: the judge and its prompt
    template; ``fixed_script``: the user side was scripted (identical run by run), which allows
    pairing by run; ``label``: free text for reports (e.g. a git sha). ``suite_hashes``: part
    -> sha256 of what the compared suite uses (:mod:`empath_gate.results.suite_hash`); with
    them on both sides, comparability is decided per suite; ``None`` (an older results file)
    falls back to the instrument-level rule."""

    run_count: int
    instrument_version: str | None = None
    judge_model: str | None = None
    judge_template_hash: str | None = None
    fixed_script: bool = False
    label: str | None = None
    suite_hashes: dict[str, str] | None = None


class BaselineView(AnalysisModel):
    """One side of a comparison (the baseline or the candidate): its metadata, its cell
    statistics (first judgings, as :func:`~empath_gate.analysis.stats.compute_all_cell_stats`
    makes them) and the dimension of each metric (metric id -> dimension id, e.g. from the
    results' items), which decides the pools; a metric without a dimension is never pooled."""

    metadata: RunMetadata
    cells: tuple[CellStats, ...]
    dimensions: dict[str, str] = Field(default_factory=dict)


class CellChange(AnalysisModel):
    """Descriptive change of one conversation x metric (no test), on the runs both sides have:
    ``change`` = ``candidate_mean - baseline_mean`` on the 1-10 scale, ``None`` when a side has
    no judged run among them."""

    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    baseline_mean: float | None
    candidate_mean: float | None
    change: float | None


class _TestFields(AnalysisModel):
    """Figures shared by a metric's and a pooled dimension's test (module docstring).

    ``n_conversations``: conversations in the test; ``n_runs``: run replicates (run pairs in
    fixed-script mode, else runs on both sides); ``effect``, ``ci_low``, ``ci_high``, ``se``,
    ``mdd``: points on the 1-10 scale (candidate - baseline; negative = drop); ``df``: the
    standard error's degrees of freedom; ``p_value``: one-sided (a drop), exact permutation
    test; ``min_p``: the smallest p-value these runs could give; ``p_adjusted``: weighted
    Benjamini-Hochberg, set for tests in the family only (``in_family``), with their
    ``weight`` (mean 1 over the family). ``detection``: what this test can detect, in words,
    for reports to show verbatim. ``note`` explains missing figures.
    """

    n_conversations: int
    n_runs: int
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    df: float | None
    p_value: float | None
    min_p: float | None
    p_adjusted: float | None
    weight: float | None
    in_family: bool
    flagged: bool
    mdd: float | None
    detection: str
    note: str | None = None


class MetricRegression(_TestFields):
    """The comparison of one metric. ``dimension``: its dimension when known;
    ``baseline_mean``/``candidate_mean``: means over the paired conversations of each side's
    mean on the shared runs; ``non_inferior``: set for critical metrics only; ``pooled_in``:
    the dimension whose pooled test stands for this metric (too small to test alone);
    ``regressed``: the gating outcome (module docstring)."""

    metric_id: str
    critical: bool
    dimension: str | None = None
    baseline_mean: float | None
    candidate_mean: float | None
    max_drop: float
    non_inferior: bool | None
    pooled_in: str | None = None
    regressed: bool


class DimensionRegression(_TestFields):
    """The pooled test of a dimension's too-small non-critical metrics (``metric_ids``), on
    each run's dimension score (the mean of the pooled metrics judged in that run)."""

    dimension_id: str
    metric_ids: tuple[str, ...]


class SideTest(AnalysisModel):
    """A test besides the metrics that joins a suite's false-discovery family: the paired test
    of a dynamics share (:mod:`empath_gate.analysis.dynamics.paired`). ``test_id``: the suite
    check it belongs to (``<suite>::<check>``); ``paired`` conversations; ``p_value``: one-sided
    toward worse and ``min_p``: the smallest p these pairs could give (both ``None``: too few
    pairs, the test cannot detect and stays out of the family); ``information``: the run
    replicates it rests on (transcripts with a shape on both sides of the paired
    conversations), its weight's base as a metric's runs are; ``detection``: why it cannot
    detect, else ``None``."""

    test_id: str
    paired: int
    p_value: float | None
    min_p: float | None
    information: float
    mean_change: float | None = None
    detection: str | None = None


class SideTestResult(SideTest):
    """A :class:`SideTest` after the family was chosen: ``in_family`` (Tarone's rule on
    ``min_p``), ``p_adjusted`` and ``weight`` (weighted Benjamini-Hochberg with the suite's metric
    tests; ``None`` outside the family) and ``flagged`` (adjusted p at or under ``alpha``)."""

    in_family: bool
    p_adjusted: float | None
    weight: float | None
    flagged: bool


class RegressionReport(AnalysisModel):
    """The whole comparison. ``metrics``: the metrics present on both sides, in the
    candidate's order; ``dimensions``: the pooled dimension tests; ``cells``: the cells present
    on both sides, in the candidate's order. ``shared_runs``: the run count compared when the
    sides' run counts differ (``None`` when equal). ``family_size`` and ``family_level``: the
    tests in the false-discovery-rate family and the level their smallest p-value had to
    reach (Tarone's ``alpha / K``). ``undetectable``: non-critical metrics on which no
    regression can be detected, alone or pooled. The added/removed lists (present on one side
    only: listed, never failed) are sorted. ``reasons`` says why the sides are not
    ``comparable`` (then nothing ``regressed``); ``comparability_note``: why comparability was
    decided by the instrument-level rule (a side without per-suite content hashes), else None.
    ``side_tests``: the tests besides the metrics that joined the family (the dynamics shares),
    counted in ``family_size`` when in the family."""

    comparable: bool
    reasons: tuple[str, ...]
    comparability_note: str | None = None
    alpha: float
    paired_by_run: bool
    shared_runs: int | None = None
    family_size: int
    family_level: float
    metrics: tuple[MetricRegression, ...]
    dimensions: tuple[DimensionRegression, ...] = ()
    cells: tuple[CellChange, ...]
    added_conversations: tuple[str, ...]
    removed_conversations: tuple[str, ...]
    added_metrics: tuple[str, ...]
    removed_metrics: tuple[str, ...]
    undetectable: tuple[str, ...] = ()
    side_tests: tuple[SideTestResult, ...] = ()

    def side_test(self, test_id: str) -> SideTestResult | None:
        """The result of one side test (``<suite>::<check>``), ``None`` when it was not run."""
        return next((t for t in self.side_tests if t.test_id == test_id), None)

    def metric(self, metric_id: str) -> MetricRegression | None:
        """The comparison of one metric, ``None`` when it was not compared."""
        for m in self.metrics:
            if m.metric_id == metric_id:
                return m
        return None

    def dimension(self, dimension_id: str) -> DimensionRegression | None:
        """The pooled test of one dimension, ``None`` when it was not pooled."""
        for d in self.dimensions:
            if d.dimension_id == dimension_id:
                return d
        return None

    def change(self, conversation_id: str, metric_id: str) -> CellChange | None:
        """The descriptive change of one cell, ``None`` when the cell is on one side only."""
        for c in self.cells:
            if c.conversation_id == conversation_id and c.metric_id == metric_id:
                return c
        return None

    def worst(self, n: int = 10) -> tuple[CellChange, ...]:
        """The ``n`` cells with the largest drops (most negative change first; ties by
        conversation then metric id); cells without a change are left out."""
        scored = [c for c in self.cells if c.change is not None]
        scored.sort(key=lambda c: (c.change, c.conversation_id, c.metric_id))
        return tuple(scored[:n])
