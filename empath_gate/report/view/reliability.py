"""Test-retest reliability per metric, read defensively from the results (pure)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from empath_gate.report.view.format import _num
from empath_gate.report.view.rows import MetricRow, metric_rows
from empath_gate.results import Results


@dataclass(frozen=True)
class ReliabilityRow:
    """Test-retest reliability of one metric: ``within_sd`` (pooled within-conversation SD,
    points), ``icc`` (ICC(1,1) across conversations), ``flip_rate`` (0-0.5),
    ``different_transcripts`` (share of conversations whose runs produced more than one
    distinct transcript, 0-1), ``judge_variance``/``generation_variance`` (points²) when the
    reliability analysis split them."""

    metric_id: str
    within_sd: float | None
    icc: float | None
    flip_rate: float | None
    different_transcripts: float | None
    judge_variance: float | None
    generation_variance: float | None


_ALIASES: dict[str, tuple[str, ...]] = {
    "within_sd": ("within_sd", "within_conversation_sd", "sd_within", "within_subject_sd"),
    "icc": ("icc", "icc_1_1", "icc11", "icc1"),
    "flip_rate": ("flip_rate", "mean_flip_rate"),
    "different_transcripts": (
        "different_transcripts",
        "transcripts_differed",
        "different_transcript_rate",
        "transcript_change_rate",
        "transcripts_differ",
        "share_different_transcripts",
    ),
    "judge_variance": ("judge_variance", "sigma2_judge", "var_judge", "judge_noise_variance"),
    "generation_variance": (
        "generation_variance",
        "sigma2_generation",
        "var_generation",
        "generation_noise_variance",
    ),
}


def _reliability_entries(reliability: Mapping[str, Any] | None) -> dict[str, Mapping[str, Any]]:
    """Accepts ``{"metrics": {id: {...}}}``, ``{"metrics": [{"metric_id": id, ...}]}``,
    ``{"per_metric": ...}`` or ``{id: {...}}``; anything else gives no entries."""
    if not isinstance(reliability, Mapping):
        return {}
    body: Any = reliability
    for key in ("metrics", "per_metric", "by_metric", "reliability"):
        if key in reliability:
            body = reliability[key]
            break
    out: dict[str, Mapping[str, Any]] = {}
    if isinstance(body, Mapping):
        for k, v in body.items():
            if isinstance(k, str) and isinstance(v, Mapping):
                out[k] = v
    elif isinstance(body, list):
        for v in body:
            if isinstance(v, Mapping):
                mid = v.get("metric_id") or v.get("metric")
                if isinstance(mid, str):
                    out[mid] = v
    return out


def _different_transcripts(results: Results) -> dict[str, float]:
    by_conv: dict[str, set[str]] = {}
    for r in results.records:
        if r.content_hash is not None:
            by_conv.setdefault(r.conversation_id, set()).add(r.content_hash)
    metrics_of: dict[str, set[str]] = {}
    for c in results.cells:
        metrics_of.setdefault(c.metric_id, set()).add(c.conversation_id)
    out: dict[str, float] = {}
    for m, convs in metrics_of.items():
        known = [c for c in convs if c in by_conv]
        if known:
            out[m] = sum(1 for c in known if len(by_conv[c]) > 1) / len(known)
    return out


def reliability_rows(results: Results, rows: Sequence[MetricRow] | None = None) -> list[ReliabilityRow]:
    """Reliability per metric: figures from ``results.reliability`` (any of the shapes
    :func:`_reliability_entries` accepts, unknown keys ignored), falling back to the metric
    statistics (within-conversation SD, flip rate) and the records' content hashes (different
    transcripts). Metrics with nothing to show are left out."""
    rows = metric_rows(results) if rows is None else rows
    entries = _reliability_entries(results.reliability)
    diff = _different_transcripts(results)
    out: list[ReliabilityRow] = []
    for r in rows:
        if r.n_judged == 0 and r.metric_id not in entries:
            continue
        e = entries.get(r.metric_id, {})
        out.append(
            ReliabilityRow(
                metric_id=r.metric_id,
                within_sd=_pick(e, "within_sd", r.within_sd),
                icc=_pick(e, "icc"),
                flip_rate=_pick(e, "flip_rate", r.flip_rate),
                different_transcripts=_pick(e, "different_transcripts", diff.get(r.metric_id)),
                judge_variance=_pick(e, "judge_variance"),
                generation_variance=_pick(e, "generation_variance"),
            )
        )
    return out


def _pick(entry: Mapping[str, Any], name: str, fallback: float | None = None) -> float | None:
    """The figure ``name`` of a reliability entry under its first alias present (``_ALIASES``),
    else ``fallback`` (also when that value is not a finite number)."""
    for alias in _ALIASES[name]:
        if alias in entry:
            value = _num(entry[alias])
            return fallback if value is None else value
    return fallback
