"""Text and JSON of the judge-validity reports (pure functions; the commands print them).

JSON documents (``--format json`` of ``empath-gate calibrate`` and ``agreement``) are one
object with ``command`` and ``kind``:

* ``gold``: ``inputs``, ``judge_model``, the :class:`~empath_gate.calibration.calibrate.CalibrationReport`
  fields (``pooled``, ``metrics``, ``inflated_vs_gold``, ``min_n``, ``unmatched_judge``,
  ``unmatched_gold``), ``n_resamples``, ``seed``;
* ``standard_vs_strict``: ``inputs``, the :class:`~empath_gate.calibration.calibrate.StrictReport`
  fields, and ``pairing`` (``null`` for a file of rows; for results files ``judge_model``,
  ``sources``, ``only_standard``, ``only_strict``, ``different_transcripts``);
* ``ordinal``: ``inputs``, ``shape`` (``results``, ``rejudgings``, ``interjudge-grid``,
  ``rows``), ``judges``, ``n_pairs``, ``pooled``, ``metrics`` (each with ``figures`` or a "too
  few" ``note``), ``published`` (or null), ``unmatched``, ``pairing`` (the
  :class:`~empath_gate.calibration.pairing.JudgingPairs` counts, or null), ``min_n``,
  ``n_resamples``, ``seed``;
* ``categorical``: ``inputs``, ``categories``, ``raters``, ``pairs`` (``rater_a``, ``rater_b``,
  ``n``, ``agreements``, ``agreement``, ``ac1``, ``left_out``), ``n_resamples``, ``seed``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tabulate import tabulate

from empath_gate.analysis.bootstrap import Estimate
from empath_gate.calibration.agreement import AgreementFigures, AgreementReport
from empath_gate.calibration.calibrate import CalibrationFigures, StrictReport
from empath_gate.calibration.pairing import JudgingPairs, RubricPairing
from empath_gate.calibration.studies import GoldStudy, OrdinalStudy, PreferenceStudy, StrictStudy

ORDINAL_ROWS: tuple[tuple[str, str], ...] = (
    ("exact", "exact agreement"),
    ("within_one", "within ±1"),
    ("mean_abs_diff", "mean absolute difference"),
    ("pearson", "Pearson r"),
    ("spearman", "Spearman rho"),
    ("kappa_quadratic", "Cohen's kappa (quadratic)"),
    ("krippendorff_alpha", "Krippendorff's alpha (ordinal)"),
)
"""The ordinal figures, in the order the tables show them, with their labels."""

PUBLISHED_KEYS = {"exact": "exact", "within_one": "within1", "mean_abs_diff": "mad", "pearson": "pearson_r"}
"""Keys of the peer release's own ``agreement`` block, by our figure names."""


def fmt_estimate(e: Estimate, digits: int = 3) -> tuple[str, str]:
    """``(value, "[low, high]")`` of an estimate; ``("n/a", note)`` when it is undefined."""
    if e.value is None:
        return "n/a", e.note or ""
    ci = (
        f"[{e.ci_low:.{digits}f}, {e.ci_high:.{digits}f}]"
        if e.ci_low is not None and e.ci_high is not None
        else ""
    )
    return f"{e.value:.{digits}f}", ci


# ----------------------------------------------------------------------------- judge vs gold


def gold_document(study: GoldStudy, *, inputs: Sequence[str], n_resamples: int, seed: int) -> dict[str, Any]:
    """The ``gold`` JSON document (module docstring)."""
    return {
        "command": "calibrate",
        "kind": "gold",
        "inputs": list(inputs),
        "judge_model": study.judge_model,
        **study.report.model_dump(mode="json"),
        "n_resamples": n_resamples,
        "seed": seed,
    }


def _gold_row(label: str, n: int, f: CalibrationFigures | None, note: str | None) -> list[Any]:
    if f is None:
        return [label, n, note or "too few", "", "", "", "", ""]
    b = f.bias
    ci = f"[{b.ci_low:+.2f}, {b.ci_high:+.2f}]" if b.ci_low is not None and b.ci_high is not None else ""
    rho = "n/a" if f.spearman is None else f"{f.spearman:.2f}"
    bias = "n/a" if b.value is None else f"{b.value:+.2f}"
    inflated = "yes" if f.inflated_vs_gold else "no"
    return [label, n, bias, ci, f"{f.mae:.2f}", f"{f.within_one:.0%}", rho, inflated]


def gold_text(study: GoldStudy, *, results: str, gold: str) -> str:
    """The judge-vs-gold table: pooled, then per metric, then the inflated metrics."""
    report, judge_model = study.report, study.judge_model
    headers = ["metric", "n", "bias", "95% CI", "MAE", "within ±1", "Spearman", "inflated vs gold"]
    rows = [_gold_row("(pooled)", report.pooled.n, report.pooled, None)]
    rows += [_gold_row(m.metric_id, m.n, m.figures, m.note) for m in report.metrics]
    return "\n".join(
        [
            f"Judge {judge_model or 'unknown'} ({results}) against gold labels ({gold})",
            f"{report.pooled.n} pairs; unmatched: {report.unmatched_judge} judge scores, "
            f"{report.unmatched_gold} gold labels",
            tabulate(rows, headers=headers, disable_numparse=True),
            "",
            "inflated vs gold (lower bound of the bias >= 1 point): "
            f"{', '.join(report.inflated_vs_gold) or 'none'}",
        ]
    )


# ----------------------------------------------------------------------------- standard vs strict


def strict_document(study: StrictStudy, *, inputs: Sequence[str]) -> dict[str, Any]:
    """The ``standard_vs_strict`` JSON document (module docstring)."""
    pairing = study.pairing
    return {
        "command": "calibrate",
        "kind": "standard_vs_strict",
        "inputs": list(inputs),
        **study.report.model_dump(mode="json"),
        "pairing": None if pairing is None else pairing.model_dump(mode="json", exclude={"rows"}),
    }


def _strict_title(report: StrictReport, inputs: Sequence[str], pairing: RubricPairing | None) -> list[str]:
    if pairing is None:
        what = f"({', '.join(inputs)})"
    else:
        std, strict = (", ".join(pairing.sources[r]) for r in ("standard", "strict"))
        what = f"of judge {pairing.judge_model or 'unknown'} (standard: {std}; strict: {strict})"
    lines = [
        f"Standard vs strict rubric {what}; a metric is inflated when its mean drops by >= "
        f"{report.threshold:g} point under the strict rubric"
    ]
    if pairing is not None and (
        pairing.only_standard or pairing.only_strict or pairing.different_transcripts
    ):
        lines.append(
            f"not paired: {pairing.only_standard} judged under the standard rubric only, "
            f"{pairing.only_strict} under the strict rubric only, "
            f"{pairing.different_transcripts} transcripts with other text under the same id"
        )
    return lines


def strict_text(study: StrictStudy, *, inputs: Sequence[str]) -> str:
    """The standard-vs-strict table with both readings (all scores, scores in scale only)."""
    report, pairing = study.report, study.pairing
    inflated = {d.metric_id for d in report.inflated}
    in_scale = {d.metric_id: d for d in report.metrics_in_scale}
    rows = []
    for d in report.metrics:
        s = in_scale.get(d.metric_id)
        rows.append(
            [
                d.metric_id,
                d.n,
                f"{d.standard_mean:.2f}",
                f"{d.strict_mean:.2f}",
                f"{d.drop:+.2f}",
                "yes" if d.metric_id in inflated else "no",
                "" if s is None else f"{s.drop:+.2f} (n={s.n})",
            ]
        )
    low, high = report.scale
    headers = ["metric", "n", "standard", "strict", "drop", "inflated", f"drop, scores in {low}-{high} only"]
    lines = _strict_title(report, inputs, pairing)
    lines += [
        tabulate(rows, headers=headers, disable_numparse=True),
        "",
        f"inflated, scores read as they are: {report.inflated_count} metrics",
        f"inflated, leaving out {len(report.out_of_scale_rows)} rows with a score outside "
        f"{low}-{high}: {report.inflated_in_scale_count} metrics",
    ]
    for diff in report.differences:
        side = "only with every row" if diff.inflated_with_all_rows else "only without those rows"
        lines.append(f"  {diff.metric_id}: inflated {side}; rows: {', '.join(diff.rows)}")
    if report.left_out:
        lines.append(f"left out (error or missing score): {', '.join(report.left_out)}")
    return "\n".join(lines)


# ----------------------------------------------------------------------------- ordinal agreement


def ordinal_document(study: OrdinalStudy, *, inputs: Sequence[str]) -> dict[str, Any]:
    """The ``ordinal`` JSON document (module docstring)."""
    report, pairing, judges = study.report, study.pairing, study.judges
    unmatched = {"a": 0, "b": 0} if pairing is None else {"a": pairing.only_in_a, "b": pairing.only_in_b}
    return {
        "command": "agreement",
        "kind": "ordinal",
        "inputs": list(inputs),
        "shape": study.shape,
        "judges": None if judges is None else list(judges),
        "n_pairs": report.pooled.n,
        "pooled": report.pooled.model_dump(mode="json"),
        "metrics": [m.model_dump(mode="json") for m in report.metrics],
        "published": study.published,
        "unmatched": unmatched,
        "pairing": None if pairing is None else pairing.model_dump(mode="json", exclude={"pairs"}),
        "min_n": report.min_n,
        "n_resamples": report.n_resamples,
        "seed": report.seed,
    }


def _pooled_table(f: AgreementFigures, published: dict[str, float] | None) -> str:
    headers = ["statistic", "value", "95% CI"] + (["published"] if published else [])
    rows = []
    for key, label in ORDINAL_ROWS:
        value, ci = fmt_estimate(getattr(f, key))
        if key == "exact":
            value += f" ({f.exact_count}/{f.n})"
        if key == "within_one":
            value += f" ({f.within_one_count}/{f.n})"
        row = [label, value, ci]
        if published:
            pub = published.get(PUBLISHED_KEYS.get(key, ""))
            row.append("" if pub is None else f"{pub:.4f}")
        rows.append(row)
    return tabulate(rows, headers=headers, disable_numparse=True)


def _metric_table(report: AgreementReport) -> str:
    headers = ["metric", "n", "exact", "within ±1", "MAD", "Pearson", "Spearman", "kappa_w", "alpha"]
    rows: list[list[str]] = []
    for m in report.metrics:
        if m.figures is None:
            rows.append([m.metric_id, str(m.n), m.note or "too few", "", "", "", "", "", ""])
            continue
        f = m.figures
        rows.append([m.metric_id, str(m.n)] + [fmt_estimate(getattr(f, k), 2)[0] for k, _ in ORDINAL_ROWS])
    return tabulate(rows, headers=headers, disable_numparse=True)


def _ordinal_title(study: OrdinalStudy, inputs: Sequence[str]) -> str:
    """The first line of an ordinal agreement: what is compared with what."""
    pairing = study.pairing
    if pairing is None:
        return f"Agreement between the paired scores of {inputs[0]} ({study.shape})"
    if pairing.kind == "rejudgings":
        indices = ", ".join(str(k) for k in pairing.indices)
        return (
            f"Agreement of judge {pairing.judges[0] or 'unknown'} with itself: its judgings of the same "
            f"transcripts at re-judge indices {indices}, in {' and '.join(inputs)} (every pair of "
            "judgings of a transcript x metric; the bootstrap resamples transcript x metric)"
        )
    ja, jb = (j or "unknown" for j in pairing.judges)
    return f"Agreement between {inputs[0]} (judge {ja}) and {inputs[1]} (judge {jb})"


def _pairing_lines(pairing: JudgingPairs | None) -> list[str]:
    if pairing is None:
        return []
    lines = []
    if pairing.only_in_a or pairing.only_in_b:
        lines.append(
            f"unmatched: {pairing.only_in_a} only in the first, {pairing.only_in_b} only in the second"
        )
    if pairing.kind == "rejudgings":
        lines.append(
            f"{pairing.judgings} scored judgings; {pairing.unpaired} transcript x metric with one "
            f"judging only; {pairing.judge_failures} judge failures left out"
        )
    if pairing.different_transcripts:
        lines.append(
            f"not paired: {pairing.different_transcripts} transcript ids hold other text in each file"
        )
    return lines


def ordinal_text(study: OrdinalStudy, *, inputs: Sequence[str]) -> str:
    """What is compared, pooled figures with intervals (and the published ones), then the
    per-metric table."""
    report, pairing, published = study.report, study.pairing, study.published
    title = _ordinal_title(study, inputs)
    units = f" ({report.pooled.units} resampled units)" if report.pooled.units is not None else ""
    lines = [
        title,
        f"{report.pooled.n} pairs{units}; bootstrap {report.n_resamples} resamples, seed {report.seed}",
    ]
    lines += _pairing_lines(pairing)
    lines += [
        "",
        _pooled_table(report.pooled, published),
        "",
        f"per metric (figures need n >= {report.min_n}):",
        _metric_table(report),
    ]
    return "\n".join(lines)


# ----------------------------------------------------------------------------- categorical


def categorical_document(
    study: PreferenceStudy, *, inputs: Sequence[str], n_resamples: int, seed: int
) -> dict[str, Any]:
    """The ``categorical`` JSON document (module docstring)."""
    prefs, results = study.preferences, study.pairs
    return {
        "command": "agreement",
        "kind": "categorical",
        "inputs": list(inputs),
        "categories": list(prefs.categories),
        "raters": list(prefs.raters),
        "pairs": [r.model_dump(mode="json", exclude={"items"}) for r in results],
        "n_resamples": n_resamples,
        "seed": seed,
    }


def categorical_text(study: PreferenceStudy, *, source: str) -> str:
    """Gwet's AC1 for every pair of raters, one row each."""
    prefs, results = study.preferences, study.pairs
    rows = []
    for r in results:
        value, ci = fmt_estimate(r.ac1, 2)
        share = "n/a" if r.agreement is None else f"{r.agreement:.0%}"
        rows.append([r.rater_a, r.rater_b, r.n, f"{share} ({r.agreements}/{r.n})", value, ci, r.left_out])
    headers = ["rater", "rater", "n", "agreement", "AC1", "95% CI", "left out"]
    return "\n".join(
        [
            f"Gwet's AC1 on preferences in {source} (categories: {', '.join(prefs.categories)}; "
            "entries without an A/B preference, or a tie, left out)",
            tabulate(rows, headers=headers, disable_numparse=True),
        ]
    )
