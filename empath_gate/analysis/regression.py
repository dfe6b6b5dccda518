"""Candidate vs baseline, honest about run-to-run noise.

With 3-5 runs per cell a per-cell test has almost no power and many cells raise false alarms,
so the unit of comparison is the **conversation** (seed x persona):

1. Per metric, each conversation present (and judged) on both sides gives one paired
   difference ``d_i = mean(candidate runs) - mean(baseline runs)``. In fixed-script mode (the
   user side is identical run by run, both sides flagged ``fixed_script``) runs are paired by
   index instead: ``d_i`` is the mean over runs judged on both sides of
   ``candidate[r] - baseline[r]``; a conversation with no such run is left out of the test.
2. **Effect** = mean of the ``d_i``. Its 95 % interval is a cluster (conversation) bootstrap:
   :data:`~empath_gate.analysis.bootstrap.DEFAULT_RESAMPLES` resamples of the conversations
   with replacement, percentile interval, RNG seeded with
   :data:`~empath_gate.analysis.bootstrap.DEFAULT_SEED`. ``se`` is the SD of the bootstrap
   means. When the differences take few distinct values (scores are integers), each
   resample's count of every value is drawn as Multinomial(n, shares): the same resampling
   distribution, at a cost that does not grow with the number of conversations.
3. **p-value**: two-sided sign-flip permutation test of the paired differences (a permutation
   test stratified by conversation: under "no change" each conversation's difference is as
   likely to have either sign). Exact over all ``2^n`` sign patterns when ``2^n`` is at most the
   resample count, otherwise Monte-Carlo with the same count and seed,
   ``p = (1 + #{|mean*| >= |mean|}) / (B + 1)`` (Phipson & Smyth 2010, Stat Appl Genet Mol
   Biol 9:39); with few distinct values the number of flipped copies of each value is drawn
   as Binomial(count, 1/2), again the same distribution.
4. **False discovery rate**: Benjamini-Hochberg across the metrics that have a p-value, at
   ``Thresholds.alpha`` (Benjamini & Hochberg 1995, JRSS B 57:289-300;
   ``scipy.stats.false_discovery_control``). A metric is ``flagged`` when its adjusted p <=
   alpha **and** its effect is negative (a drop; improvements are never flagged).
5. **Critical metrics use non-inferiority**: they pass only when the interval's lower bound is
   above ``-max_drop`` (strictly). With fewer than 2 paired conversations no interval exists;
   the point estimate is then compared instead (effect >= ``-max_drop`` passes) and
   ``note`` says so.
6. **Minimum detectable drop** ``mdd = (z_{1-alpha/2} + z_{0.80}) * se``: the true drop this plan
   would detect with 80 % power in a two-sided test at ``alpha`` (normal approximation,
   before the FDR adjustment, which only raises it). "No regression" with an MDD of 2.5 points
   means drops under 2.5 points could pass unseen.

``regressed`` is the gating outcome: ``not non_inferior`` for critical metrics, ``flagged`` for
the others; always False when the two runs are not comparable (different run count,
instrument version, judge model or judge template hash: ``comparable=False`` with the
reasons). Conversations and metrics present on one side only are listed, never failed.
Per conversation x metric, :class:`CellChange` gives the descriptive change (no test) that
feeds the worst-conversations list.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
from scipy import stats as sps

from empath_gate.analysis.base import AnalysisModel, paused_gc
from empath_gate.analysis.bootstrap import (
    DEFAULT_RESAMPLES,
    DEFAULT_SEED,
    FloatArray,
    percentile_interval,
)
from empath_gate.analysis.stats import CellStats
from empath_gate.instrument.models import Thresholds

POWER = 0.80
"""Power behind the minimum detectable drop (the conventional 80 %, Cohen 1988)."""


class RunMetadata(AnalysisModel):
    """What makes two runs comparable. ``run_count``: N runs per conversation;
    ``instrument_version``: semver of the instrument; ``judge_model`` and
    ``judge_template_hash``: the judge and its prompt template; ``fixed_script``: the user side
    was scripted (identical run by run), which allows pairing by run; ``label``: free text
    for reports (e.g. a git sha)."""

    run_count: int
    instrument_version: str | None = None
    judge_model: str | None = None
    judge_template_hash: str | None = None
    fixed_script: bool = False
    label: str | None = None


class BaselineView(AnalysisModel):
    """One side of a comparison (the baseline or the candidate): its metadata and its cell
    statistics (first judgings, as :func:`~empath_gate.analysis.stats.compute_all_cell_stats`
    makes them)."""

    metadata: RunMetadata
    cells: tuple[CellStats, ...]


class CellChange(AnalysisModel):
    """Descriptive change of one conversation x metric (no test): ``change`` =
    ``candidate_mean - baseline_mean`` on the 1-10 scale, ``None`` when a side has no judged
    run."""

    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    baseline_mean: float | None
    candidate_mean: float | None
    change: float | None


class MetricRegression(AnalysisModel):
    """The comparison of one metric (see the module docstring for every field's method).

    ``n_conversations``: paired conversations in the test; ``effect``, ``ci_low``, ``ci_high``,
    ``se``, ``mdd``: points on the 1-10 scale (candidate - baseline; negative = drop);
    ``p_value``/``p_adjusted``: two-sided, raw and Benjamini-Hochberg adjusted.
    ``non_inferior`` is set for critical metrics only. ``note`` explains missing figures.
    """

    metric_id: str
    critical: bool
    n_conversations: int
    baseline_mean: float | None
    candidate_mean: float | None
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    p_value: float | None
    p_adjusted: float | None
    flagged: bool
    max_drop: float
    non_inferior: bool | None
    regressed: bool
    mdd: float | None
    note: str | None = None


class RegressionReport(AnalysisModel):
    """The whole comparison. ``metrics``: the metrics present on both sides, in the
    candidate's order; ``cells``: the cells present on both sides, in the candidate's order.
    The added/removed lists (present on one side only: listed, never failed) are sorted.
    ``reasons`` says why the sides are not ``comparable`` (then nothing ``regressed``)."""

    comparable: bool
    reasons: tuple[str, ...]
    alpha: float
    n_resamples: int
    seed: int
    paired_by_run: bool
    metrics: tuple[MetricRegression, ...]
    cells: tuple[CellChange, ...]
    added_conversations: tuple[str, ...]
    removed_conversations: tuple[str, ...]
    added_metrics: tuple[str, ...]
    removed_metrics: tuple[str, ...]

    def metric(self, metric_id: str) -> MetricRegression | None:
        """The comparison of one metric, ``None`` when it was not compared."""
        for m in self.metrics:
            if m.metric_id == metric_id:
                return m
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


class PairedResult(AnalysisModel):
    """Output of :func:`paired_difference_test` on ``n`` paired differences."""

    n: int
    effect: float | None
    ci_low: float | None
    ci_high: float | None
    se: float | None
    p_value: float | None
    mdd: float | None


_CHUNK = 2_000_000
"""Resampled values held in memory at once (resamples x units) on the per-unit path."""


def _grouped(d: FloatArray) -> tuple[FloatArray, npt.NDArray[np.int64]] | None:
    """Distinct values and their counts when there are few of them (scores are integers, so a
    conversation's mean difference takes few values), else None."""
    values, counts = np.unique(d, return_counts=True)
    if values.size * 4 > d.size:
        return None
    return values, counts.astype(np.int64)


def _bootstrap_means(d: FloatArray, *, n_resamples: int, seed: int) -> FloatArray:
    """Means of ``n_resamples`` resamples (with replacement) of ``d``. With few distinct values
    the counts of each value in a resample are drawn directly, Multinomial(n, shares) (the same
    distribution as drawing n indices, in O(resamples x distinct values)); otherwise indices are
    drawn in chunks."""
    n = d.size
    rng = np.random.default_rng(seed)
    grouped = _grouped(d)
    if grouped is not None:
        values, counts = grouped
        draws = rng.multinomial(n, counts / n, size=n_resamples)
        out: FloatArray = draws @ values / n
        return out
    step = max(1, _CHUNK // n)
    parts = [
        d[rng.integers(0, n, size=(min(step, n_resamples - i), n))].mean(axis=1)
        for i in range(0, n_resamples, step)
    ]
    return np.concatenate(parts)


def _sign_flip_p(d: FloatArray, *, n_resamples: int, seed: int) -> float:
    observed = abs(float(d.mean()))
    n = d.size
    tol = 1e-12
    if 2**n <= n_resamples:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
        means = np.abs(signs @ d / n)
        return float(np.mean(means >= observed - tol))
    rng = np.random.default_rng(seed)
    grouped = _grouped(d)
    if grouped is not None:
        # flipping each of the m_k copies of value v_k: sum = v_k * (m_k - 2 * Binomial(m_k, 1/2))
        values, counts = grouped
        negatives = rng.binomial(counts, 0.5, size=(n_resamples, counts.size))
        means = np.abs((counts - 2 * negatives) @ values / n)
    else:
        step = max(1, _CHUNK // n)
        means = np.concatenate(
            [
                np.abs((1.0 - 2.0 * rng.integers(0, 2, size=(min(step, n_resamples - i), n))) @ d / n)
                for i in range(0, n_resamples, step)
            ]
        )
    return float((1 + np.sum(means >= observed - tol)) / (n_resamples + 1))


def paired_difference_test(
    diffs: Sequence[float] | FloatArray,
    *,
    alpha: float = 0.05,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PairedResult:
    """Cluster bootstrap interval, sign-flip p-value and minimum detectable drop of paired
    per-conversation differences (module docstring). ``diffs``: one value per conversation,
    candidate - baseline. With 0 differences every figure is ``None``; with 1, only the effect.
    """
    d = np.asarray(diffs, dtype=np.float64)
    n = int(d.size)
    if n == 0:
        return PairedResult(n=0, effect=None, ci_low=None, ci_high=None, se=None, p_value=None, mdd=None)
    effect = float(d.mean())
    if n < 2:
        return PairedResult(n=n, effect=effect, ci_low=None, ci_high=None, se=None, p_value=None, mdd=None)
    boot = _bootstrap_means(d, n_resamples=n_resamples, seed=seed)
    interval = percentile_interval(boot)
    se = float(boot.std(ddof=1))
    z = float(sps.norm.ppf(1 - alpha / 2) + sps.norm.ppf(POWER))
    return PairedResult(
        n=n,
        effect=effect,
        ci_low=None if interval is None else interval[0],
        ci_high=None if interval is None else interval[1],
        se=se,
        p_value=_sign_flip_p(d, n_resamples=n_resamples, seed=seed),
        mdd=z * se,
    )


def comparability(candidate: RunMetadata, baseline: RunMetadata) -> tuple[str, ...]:
    """Reasons the two runs are not comparable (empty when they are): run count, instrument
    version, judge model and judge template hash must be equal (an unknown value on one side
    counts as different)."""
    reasons: list[str] = []
    pairs = (
        ("run count", candidate.run_count, baseline.run_count),
        ("instrument version", candidate.instrument_version, baseline.instrument_version),
        ("judge model", candidate.judge_model, baseline.judge_model),
        ("judge template hash", candidate.judge_template_hash, baseline.judge_template_hash),
    )
    for name, c, b in pairs:
        if c != b:
            reasons.append(
                f"{name} differs: candidate {c if c is not None else 'unknown'}, "
                f"baseline {b if b is not None else 'unknown'}"
            )
    return tuple(reasons)


def _run_paired_diff(c: CellStats, b: CellStats) -> float | None:
    base = {r: sc for r, sc in zip(b.run_ids, b.run_scores, strict=True) if sc is not None}
    diffs = [
        sc - base[r] for r, sc in zip(c.run_ids, c.run_scores, strict=True) if sc is not None and r in base
    ]
    return sum(diffs) / len(diffs) if diffs else None


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def compare(
    candidate: BaselineView,
    baseline: BaselineView,
    thresholds: Thresholds,
    *,
    suite_id: str | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> RegressionReport:
    """Compare a candidate with a baseline per metric (module docstring).

    Thresholds supply ``alpha`` (FDR level) and, per metric resolved for ``suite_id``,
    ``critical`` and ``max_drop``. Pure and deterministic for a given seed. Raises ValueError
    when a side holds two cells for the same conversation x metric.
    """
    with paused_gc():
        return _compare(
            candidate, baseline, thresholds, suite_id=suite_id, n_resamples=n_resamples, seed=seed
        )


def _compare(
    candidate: BaselineView,
    baseline: BaselineView,
    thresholds: Thresholds,
    *,
    suite_id: str | None,
    n_resamples: int,
    seed: int,
) -> RegressionReport:
    reasons = comparability(candidate.metadata, baseline.metadata)
    comparable = not reasons
    by_run = candidate.metadata.fixed_script and baseline.metadata.fixed_script
    alpha = thresholds.alpha

    def index(view: BaselineView, side: str) -> dict[tuple[str, str], CellStats]:
        out: dict[tuple[str, str], CellStats] = {}
        for c in view.cells:
            key = (c.conversation_id, c.metric_id)
            if key in out:
                raise ValueError(f"{side}: two cells for {key[0]} / {key[1]}")
            out[key] = c
        return out

    cand, base = index(candidate, "candidate"), index(baseline, "baseline")
    cand_convs = dict.fromkeys(c.conversation_id for c in candidate.cells)
    base_convs = dict.fromkeys(c.conversation_id for c in baseline.cells)
    cand_metrics = list(dict.fromkeys(c.metric_id for c in candidate.cells))
    base_metrics = list(dict.fromkeys(c.metric_id for c in baseline.cells))

    shared = [m for m in cand_metrics if m in base_metrics]
    paired: dict[str, tuple[list[float], list[float], list[float]]] = {m: ([], [], []) for m in shared}
    changes: list[CellChange] = []
    for key, c in cand.items():
        b = base.get(key)
        if b is None:
            continue
        change = None if c.mean is None or b.mean is None else c.mean - b.mean
        changes.append(
            CellChange.trusted(
                conversation_id=c.conversation_id,
                seed_id=c.seed_id,
                persona_id=c.persona_id,
                metric_id=c.metric_id,
                baseline_mean=b.mean,
                candidate_mean=c.mean,
                change=change,
            )
        )
        if c.mean is None or b.mean is None:
            continue
        d = _run_paired_diff(c, b) if by_run else change
        if d is None:
            continue
        diffs_m, c_m, b_m = paired[key[1]]
        diffs_m.append(d)
        c_m.append(c.mean)
        b_m.append(b.mean)
    results: list[dict[str, object]] = []
    for metric in shared:
        t = thresholds.resolve(metric, suite_id)
        diffs, c_means, b_means = paired[metric]
        res = paired_difference_test(diffs, alpha=alpha, n_resamples=n_resamples, seed=seed)
        note: str | None = None
        non_inferior: bool | None = None
        if res.n == 0:
            note = "no conversation judged on both sides"
        elif res.n < 2:
            note = "one paired conversation: no interval or test; the point estimate is shown"
        if t.critical and res.effect is not None:
            if res.ci_low is not None:
                non_inferior = res.ci_low > -t.max_drop
            else:
                non_inferior = res.effect >= -t.max_drop
                note = "; ".join(x for x in (note, "non-inferiority judged on the point estimate") if x)
        results.append(
            {
                "metric_id": metric,
                "critical": t.critical,
                "n_conversations": res.n,
                "baseline_mean": _mean(b_means),
                "candidate_mean": _mean(c_means),
                "effect": res.effect,
                "ci_low": res.ci_low,
                "ci_high": res.ci_high,
                "se": res.se,
                "p_value": res.p_value,
                "max_drop": t.max_drop,
                "non_inferior": non_inferior,
                "mdd": res.mdd,
                "note": note,
            }
        )

    with_p = [i for i, r in enumerate(results) if r["p_value"] is not None]
    adjusted: dict[int, float] = {}
    if with_p:
        raw = np.array([results[i]["p_value"] for i in with_p], dtype=np.float64)
        adj = sps.false_discovery_control(raw, method="bh")
        adjusted = {i: float(a) for i, a in zip(with_p, np.atleast_1d(adj), strict=True)}

    metrics: list[MetricRegression] = []
    for i, r in enumerate(results):
        p_adj = adjusted.get(i)
        effect = r["effect"]
        flagged = p_adj is not None and p_adj <= alpha and isinstance(effect, float) and effect < 0
        critical = bool(r["critical"])
        regressed = comparable and ((r["non_inferior"] is False) if critical else flagged)
        metrics.append(
            MetricRegression.model_validate(
                {**r, "p_adjusted": p_adj, "flagged": flagged, "regressed": regressed}
            )
        )

    return RegressionReport(
        comparable=comparable,
        reasons=reasons,
        alpha=alpha,
        n_resamples=n_resamples,
        seed=seed,
        paired_by_run=by_run,
        metrics=tuple(metrics),
        cells=tuple(changes),
        added_conversations=tuple(sorted(c for c in cand_convs if c not in base_convs)),
        removed_conversations=tuple(sorted(c for c in base_convs if c not in cand_convs)),
        added_metrics=tuple(sorted(m for m in cand_metrics if m not in base_metrics)),
        removed_metrics=tuple(sorted(m for m in base_metrics if m not in cand_metrics)),
    )
