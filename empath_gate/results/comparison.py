"""A results document against a baseline (pure): the regression module's view of a document,
each suite's comparison (its metrics, and the paired tests of its gated dynamics shares, which
join the suite's false-discovery family: :func:`dynamics_side_tests`), and one report of several
suites' comparisons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from empath_gate.analysis.regression import BaselineView, RegressionReport, SideTest
    from empath_gate.analysis.stats import CellStats
    from empath_gate.instrument.models import Thresholds
    from empath_gate.results.model import Results


def baseline_view(
    results: Results,
    cells: Sequence[CellStats] | None = None,
    aliases: dict[str, str] | None = None,
    suite: str | None = None,
) -> BaselineView:
    """The regression module's view of a results document (metadata, cell statistics and each
    metric's dimension); ``aliases`` renames older conversation ids to current ones (a baseline
    made before persona assignment changed still pairs); ``suite``: the suite compared, whose
    content hashes (if the file records them) decide comparability."""
    from empath_gate.analysis.regression import BaselineView, RunMetadata

    md = results.metadata
    chosen = tuple(results.cells if cells is None else cells)
    if aliases:
        chosen = tuple(
            c.model_copy(update={"conversation_id": aliases[c.conversation_id]})
            if c.conversation_id in aliases
            else c
            for c in chosen
        )
    return BaselineView(
        metadata=RunMetadata(
            run_count=md.runs,
            instrument_version=md.instrument_version,
            judge_model=md.judge.model,
            judge_template_hash=md.judge.template_hash,
            fixed_script=md.auditor == "scripted",
            label=md.git_sha,
            suite_hashes=md.suite_hashes.get(suite) if suite is not None else None,
        ),
        cells=chosen,
        dimensions={i.metric_id: i.dimension for i in results.items},
    )


def suite_regressions(
    results: Results, cells: Sequence[CellStats], baseline: Results, thresholds: Thresholds
) -> dict[str, RegressionReport]:
    """The comparison of each suite's cells with the baseline's (thresholds resolved per suite)."""
    from empath_gate.analysis.regression import compare

    conv_suite = {i.conversation_id: i.suite for i in results.items}
    out: dict[str, RegressionReport] = {}
    for suite in results.metadata.suites:
        mine = [c for c in cells if conv_suite.get(c.conversation_id) == suite]
        side = dynamics_side_tests(results, baseline, suite, thresholds)
        if mine or side:
            aliases = results.gate.aliases.get(suite) if results.gate is not None else None
            out[suite] = compare(
                baseline_view(results, mine, suite=suite),
                baseline_view(baseline, aliases=aliases, suite=suite),
                thresholds,
                suite_id=suite,
                side_tests=side,
            )
    return out


def combine_reports(reports: Sequence[RegressionReport]) -> RegressionReport | None:
    """One report of several suites' comparisons (metrics and cells concatenated in suite order;
    comparable only when every suite's is)."""
    if not reports:
        return None
    if len(reports) == 1:
        return reports[0]
    first = reports[0]

    def union(name: str) -> tuple[Any, ...]:
        seen: list[Any] = []
        for r in reports:
            seen.extend(x for x in getattr(r, name) if x not in seen)
        return tuple(seen)

    return first.model_copy(
        update={
            "comparable": all(r.comparable for r in reports),
            "reasons": union("reasons"),
            "metrics": tuple(m for r in reports for m in r.metrics),
            "cells": tuple(c for r in reports for c in r.cells),
            "added_conversations": union("added_conversations"),
            "removed_conversations": union("removed_conversations"),
            "added_metrics": union("added_metrics"),
            "removed_metrics": union("removed_metrics"),
            "side_tests": tuple(t for r in reports for t in r.side_tests),
        }
    )


def dynamics_side_tests(
    results: Results, baseline: Results, suite: str, thresholds: Thresholds
) -> list[SideTest]:
    """The paired tests of ``suite``'s gated dynamics shares against ``baseline``
    (:func:`empath_gate.analysis.dynamics.paired.paired_share_test` on
    :func:`empath_gate.results.dynamics.conversation_outcomes`, conversation ids renamed by the
    gate inputs' aliases), one per dynamics check whose limit ``thresholds`` set, only when both
    runs had an LLM auditor (with fixed scripts the user side does not depend on the bot). When
    the two runs' dynamics annotators differ (kind or version, e.g. ``offline-6`` against
    ``offline-7``), the shapes are not comparable: each test has no p-value and says so in
    ``detection`` (never gated on the change; the limit alone decides). Test
    id ``<suite>::<check>``; information: the runs with a shape on both sides of the paired
    conversations."""
    from empath_gate.analysis.dynamics.paired import MIN_PAIRED, paired_share_test
    from empath_gate.analysis.regression import SideTest
    from empath_gate.results.dynamics import (
        SHARE_CHECKS,
        annotator_versions,
        conversation_outcome_counts,
        scripted,
    )

    if scripted(results) or scripted(baseline):
        return []
    aliases = (results.gate.aliases.get(suite) if results.gate is not None else None) or {}
    mine, theirs = annotator_versions(results, suite), annotator_versions(baseline, suite)
    apart = None
    if mine and theirs and mine != theirs:  # another annotator reads other shapes: not comparable
        apart = (f"not comparable: the dynamics annotator differs (baseline {', '.join(sorted(theirs))}; "
                 f"this run {', '.join(sorted(mine))})")
    out: list[SideTest] = []
    for check, (shape, worse) in SHARE_CHECKS.items():
        if thresholds.dynamics_limit(suite, check) is None:
            continue
        if apart is not None:
            out.append(SideTest(test_id=f"{suite}::{check}", paired=0, p_value=None, min_p=None,
                                information=0.0, detection=apart))
            continue
        cur = conversation_outcome_counts(results, suite, shape)
        base = {aliases.get(k, k): v for k, v in conversation_outcome_counts(baseline, suite, shape).items()}
        test = paired_share_test({k: h / n for k, (h, n) in cur.items()},
                                 {k: h / n for k, (h, n) in base.items()}, worse)
        shared = set(cur) & set(base)
        out.append(SideTest(
            test_id=f"{suite}::{check}", paired=test.paired, p_value=test.p_value, min_p=test.min_p,
            information=float(sum(cur[k][1] + base[k][1] for k in shared)), mean_change=test.mean_change,
            detection=None if test.p_value is not None else (
                f"cannot detect a change ({test.paired} paired conversations, fewer than {MIN_PAIRED})"),
        ))
    return out
