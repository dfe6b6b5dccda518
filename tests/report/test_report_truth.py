"""The report tells the truth: the Threshold column under every fail_on setting, the header's
critical metrics, the number of failed tests (markdown, HTML and terminal), and one turn
numbering (1-based, as seeds count turns) wherever a turn is shown."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_factory import baseline_scores, build_results, candidate_scores, standard_pair, write_transcripts

from empath_gate.gate.decide import FAIL_ON_VALUES, FailOn
from empath_gate.report.html import render_html
from empath_gate.report.markdown import render_markdown
from empath_gate.report.terminal import render_terminal
from empath_gate.report.view import metric_rows, overall_verdict, turn_label, turns_text, user_turn
from empath_gate.results import Results


def metric_table(markdown: str) -> dict[str, list[str]]:
    """metric id -> the cells of its row in the "By metric" table."""
    table = markdown.split("#### By metric", 1)[1].split("\n\n", 2)[1]
    out = {}
    for line in table.splitlines()[2:]:
        cells = [c.strip() for c in line.strip("|").split("|")]
        out[re.findall(r"`([a-z_]+)`", cells[1])[0]] = cells
    return out


@pytest.fixture(scope="module")
def base() -> Results:
    return build_results(baseline_scores, git_sha="base123")


@pytest.mark.parametrize("fail_on", FAIL_ON_VALUES)
def test_threshold_column_never_claims_a_threshold_that_failed(base: Results, fail_on: FailOn) -> None:
    cand = build_results(candidate_scores, baseline=base, fail_on=fail_on)
    table = metric_table(render_markdown(cand, baseline=base, metric_labels={}))
    for cell in cand.cells:
        if cell.mean is not None and cell.mean < cell.min_mean:
            threshold = table[cell.metric_id][9]
            assert "✅" not in threshold and "min\\_mean" in threshold, (fail_on, cell.metric_id, threshold)
    assert table["harmful_response"][9] == "✅ mean ≥ 8", "a metric that met every threshold says so"


def test_threshold_column_under_fail_on_regression(base: Results) -> None:
    """The issue's case: a mean below min_mean passes under fail_on regression, and the
    Threshold column says the threshold failed without gating."""
    cand = build_results(candidate_scores, baseline=base, fail_on="regression")
    rows = {r.metric_id: r for r in metric_rows(cand, base)}
    syc = rows["sycophancy"]
    assert syc.status == "passed" and syc.candidate_mean == pytest.approx(17 / 3)
    table = metric_table(render_markdown(cand, baseline=base, metric_labels={}))
    assert table["sycophancy"][9] == "⚠️ 3/4 below threshold (min\\_mean), not gated (fail-on: regression)"
    assert table["crisis_detection"][9].startswith(
        "⚠️ 4/4 below threshold (min\\_mean, min\\_run, max\\_range)"
    )
    assert "not gated" not in table["crisis_detection"][10], "the regression gated under fail_on regression"
    html = render_html(cand, baseline=base, transcripts={})
    row = re.search(r'<tr class="metric" data-metric="sycophancy".*?</tr>', html)
    assert row is not None
    assert "3/4 below threshold (min_mean), not gated (fail-on: regression)" in row.group(0)
    assert "✅" not in row.group(0) and "mean ≥" not in row.group(0)


def test_regression_column_under_fail_on_threshold(base: Results) -> None:
    cand = build_results(candidate_scores, baseline=base, fail_on="threshold")
    table = metric_table(render_markdown(cand, baseline=base, metric_labels={}))
    assert table["crisis_detection"][10] == (
        "🔻 **regressed** (not non-inferior, not gated (fail-on: threshold))"
    )
    assert table["crisis_detection"][9].startswith("❌ 4/4 fail (min\\_mean")


def test_regression_only_failure_is_not_a_threshold_failure(base: Results) -> None:
    """A cell that fails only because it regressed shows its thresholds as met."""

    def scores(conv: str, metric: str, run: int) -> int | str:
        if metric == "crisis_detection":
            return (8, 8, 9)[run]
        return baseline_scores(conv, metric, run)

    cand = build_results(scores, baseline=base)
    rows = {r.metric_id: r for r in metric_rows(cand, base)}
    assert rows["crisis_detection"].status == "failed"
    assert rows["crisis_detection"].failed_conditions == ("regression",)
    cells = metric_table(render_markdown(cand, baseline=base, metric_labels={}))["crisis_detection"]
    assert cells[9] == "✅ mean ≥ 8" and "regressed" in cells[10]


def failed_and_errored(conv: str, metric: str, run: int) -> int | str:
    """crisis_detection fails on one conversation; harmful_response has a missing run."""
    if metric == "crisis_detection" and conv.startswith("overdose"):
        return (3, 4, 5)[run]
    if metric == "harmful_response" and conv.startswith("lonely") and run == 1:
        return "skip"
    return 9 if metric != "language_consistency" else 8


def test_critical_metrics_failing_lists_only_failed_cells() -> None:
    res = build_results(failed_and_errored)
    v = overall_verdict(res)
    assert v.status == "infrastructure_error"
    assert v.critical_failing == ("crisis_detection",) and v.failing_metrics == ("crisis_detection",)
    assert v.critical_errored == ("harmful_response",)
    md = render_markdown(res, metric_labels={})
    counts_line = md.splitlines()[3]
    assert "**critical metrics failing:** `crisis_detection` ·" in counts_line
    assert "**critical metrics with errors:** `harmful_response`" in counts_line
    html = render_html(res, transcripts={})
    assert "<strong>Critical metrics failing:</strong> <code>crisis_detection</code></div>" in html
    assert "<strong>Critical metrics with errors:</strong> <code>harmful_response</code></div>" in html
    infra = build_results(lambda c, m, r: "skip" if c.startswith("lonely") and r == 2 else 9)
    assert overall_verdict(infra).critical_failing == ()
    assert "critical metrics failing" not in render_markdown(infra, metric_labels={})
    terminal = render_terminal(res)
    assert "failing: crisis_detection, incomplete: harmful_response" in terminal  # a run missing, no error


def summary_counts(text: str, pattern: str) -> list[int]:
    return [int(n) for n in re.findall(pattern, text)]


@pytest.mark.parametrize(
    "scores",
    [candidate_scores, failed_and_errored, lambda c, m, r: "skip" if c.startswith("lonely") and r else 9],
)
def test_why_tests_failed_counts_the_failed_tests(base: Results, scores: object) -> None:
    res = build_results(scores, baseline=base)  # type: ignore[arg-type]
    counts = overall_verdict(res).counts
    md = render_markdown(res, baseline=base, metric_labels={})
    html = render_html(res, baseline=base, transcripts={})
    for text in (md, html):
        for title, status in (("Why tests failed", "failed"), ("Why tests errored", "error"),
                              ("Waived tests", "xfail")):
            found = summary_counts(text, rf"<summary>{title} \((\d+)\)</summary>")
            assert found == ([counts[status]] if counts[status] else []), (title, found)
    failed_block = ""
    if counts["failed"]:
        failed_block = md.split("<summary>Why tests failed", 1)[1].split("</details>", 1)[0]
    assert failed_block.count("\n- `") == counts["failed"], "one line per failed test"


def test_not_gated_conditions_are_listed(base: Results) -> None:
    cand = build_results(candidate_scores, baseline=base, fail_on="never")
    md = render_markdown(cand, baseline=base, metric_labels={})
    assert overall_verdict(cand).counts["failed"] == 0 and "Why tests failed" not in md
    m = re.search(r"<summary>Failed conditions not gated \(fail-on: never\) \((\d+)\)</summary>", md)
    assert m is not None and int(m.group(1)) == sum(1 for d in cand.decisions if d.advisories)
    assert "`overdose-question-es-luis-crisis_detection`: crisis\\_detection: mean 5.67" in md


def test_turns_are_counted_from_one_as_seeds_count_them() -> None:
    assert [user_turn(i) for i in range(6)] == [1, 1, 2, 2, 3, 3]
    assert turn_label(3) == "turn 2 (reply)" and turn_label(4) == "turn 3 (user)"
    assert turns_text([3, 3, 4]) == "turns 2 (reply), 3 (user)" and turns_text([]) == ""
    with pytest.raises(ValueError):
        user_turn(-1)


def test_html_shows_one_turn_numbering(tmp_path: Path) -> None:
    """Transcript viewer, citations and the worst-conversation table all show 1-based turns:
    six messages are turns 1-3, and the judge's citation of message 3 is turn 2's reply."""
    base, cand = standard_pair()
    write_transcripts(cand, tmp_path)
    html = render_html(cand, baseline=base, base_dir=tmp_path)
    shown = [int(n) for n in re.findall(r"\bturns? (\d+)", re.sub(r"<[^>]+>", " ", html))]
    assert shown and min(shown) == 1 and max(shown) == 3, sorted(set(shown))
    assert "turn 1 · user (auditor)" in html and "turn 3 · assistant (target)" in html
    assert "· turn 2 (reply)</li>" in html, "the verdict table's citation"
    assert "<td class=num>2 (reply)</td>" in html, "the worst-conversation table"
    assert 'data-index="3" data-turn="2"' in html
