"""The HTML report draws no chart, plot or table column without data, fits a 1280 px page,
names the 1-based turn of a failed deterministic check, and shows no baseline column when
there is no baseline (pure rendering: structural checks on the HTML)."""

from __future__ import annotations

import re

import pytest
from report_factory import build_results, candidate_scores, standard_pair

from empath_gate.report.html import dimension_bars_svg, metric_plot_svg, render_html
from empath_gate.report.html.assets import _CSS
from empath_gate.report.markdown import render_markdown
from empath_gate.report.view import reply_index, user_turn, worst_conversations
from empath_gate.results import Results

_DATA_MARK = re.compile(r'<circle|<rect[^>]*class="(?:alert|confirm)"|<title>(?:candidate|baseline) ')
"""What an SVG of the report draws for a datum: a run dot, a timeline mark, a mean bar."""


def offline(conv: str, metric: str, run: int) -> int | str:
    """Criteria-only everywhere (no judge model), one critical deterministic FAIL."""
    if metric == "crisis_resource_provision" and conv.startswith("overdose") and run == 0:
        return "co!"
    return "na" if metric == "sycophancy" else "co"


def _offline_results(detail: str = "expected es: turn 2 (reply) is en") -> Results:
    """An offline run whose failed check records turn 2 (message 3, the bot's reply in turn 2),
    as :func:`empath_gate.judging.checks.check_language_matches` writes it."""
    res = build_results(offline, judge_model=None, runs=1)
    doc = res.model_dump_json().replace('"replied in en","check_turns":[]', f'"{detail}","check_turns":[2]')
    return Results.model_validate_json(doc)


def _empty_svgs(html: str) -> list[str]:
    return [s for s in re.findall(r"<svg.*?</svg>", html, re.S) if not _DATA_MARK.search(s)]


def _empty_columns(html: str) -> list[str]:
    """Header texts of table columns whose every body cell is empty or a dash."""
    out = []
    for table in re.findall(r"<table.*?</table>", html, re.S):
        head = re.findall(r"<th[^>]*>(.*?)</th>", table.split("</thead>")[0], re.S)
        rows = [re.findall(r"<td[^>]*>(.*?)</td>", r, re.S)
                for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table.split("<tbody>")[1], re.S)]
        out += [t for i, t in enumerate(head) if rows and all(r[i].strip() in ("", "—") for r in rows)]
    return out


def test_offline_report_draws_no_empty_chart_or_column() -> None:
    html = render_html(_offline_results())
    assert _empty_svgs(html) == []
    assert "no data" not in html
    assert 'class="metric-plot"' not in html and 'class="dimension-bars"' not in html
    assert "Run scores per metric" not in html, "no heading over no plots"
    assert _empty_columns(html) == []
    assert 'id="dimensions"' in html and 'id="metrics"' in html, "the tables themselves stay"


def test_judged_report_draws_only_charts_with_data() -> None:
    base, cand = standard_pair()
    html = render_html(cand, baseline=base)
    assert _empty_svgs(html) == []
    scored = {c.metric_id for c in cand.cells if any(s is not None for s in c.run_scores)}
    drawn = set(re.findall(r'class="metric-plot" data-metric="([^"]+)"', html))
    assert drawn == scored and "language_consistency" not in drawn


def test_plot_without_scores_is_not_drawn() -> None:
    res = build_results()
    unscored = [c for c in res.cells if c.metric_id == "language_consistency"]
    assert unscored and all(s is None for c in unscored for s in c.run_scores)
    assert metric_plot_svg("language_consistency", unscored, [], 7.0) == ""
    assert metric_plot_svg("language_consistency", unscored, None, 7.0) == ""
    scored = [c for c in res.cells if c.metric_id == "crisis_detection"]
    alone = metric_plot_svg("crisis_detection", scored, None, 7.0)
    assert ">candidate<" in alone and ">baseline<" not in alone and "no data" not in alone
    assert dimension_bars_svg([("Crisis & safety", None, None)]) == ""
    bars = dimension_bars_svg([("Crisis & safety", None, 8.0), ("Conversational", None, None)])
    assert "Crisis &amp; safety" in bars and "Conversational" not in bars


def test_tables_fit_the_page() -> None:
    """Every table is held to the page width (1280 px at most): wider content scrolls inside
    the table, and long ids (conversation ids, metric ids in headers) wrap anywhere."""
    css = re.sub(r"\s*\n\s*", "", _CSS)
    body = re.search(r"(?:^|})body\{([^}]*)\}", css)
    assert body is not None and "max-width:1280px" in body.group(1)
    table = re.search(r"(?:^|})table\{([^}]*)\}", css)
    assert table is not None
    for decl in ("max-width:100%", "overflow-x:auto", "display:block"):
        assert decl in table.group(1).split(";"), decl
    cells = re.search(r"(?:^|})th,td\{([^}]*)\}", css)
    assert cells is not None and "overflow-wrap:break-word" in cells.group(1).split(";"), "a long word wraps"
    ids = re.search(r"(?:^|})th code\{([^}]*)\}", css)
    assert ids is not None and "overflow-wrap:anywhere" in ids.group(1).split(";"), "header ids wrap anywhere"
    html = render_html(_offline_results())
    fixed = re.search(r"<(?:table|td|th)[^>]*\s(?:width|style)=", html)
    assert fixed is None, "no fixed width overrides the sheet"


def test_reply_index_is_where_a_check_turn_points() -> None:
    assert [reply_index(t) for t in (1, 2, 4)] == [1, 3, 7]
    assert all(user_turn(reply_index(t)) == t for t in range(1, 30))
    with pytest.raises(ValueError):
        reply_index(0)


def test_deterministic_failure_carries_its_turn() -> None:
    res = _offline_results()
    worst = worst_conversations(res, 5)
    entry = next(e for e in worst if e.metric_id == "crisis_resource_provision")
    assert entry.criterion_id == "same_language" and entry.turns == (3,)
    html = render_html(res)
    worst_html = html.split('id="worst"')[1].split("</section>")[0]
    row = next(r for r in re.findall(r"<tr>(.*?)</tr>", worst_html) if "crisis_resource_provision" in r)
    assert "<td class=num>2 (reply)</td>" in row
    assert "same_language: FAIL (critical) — expected es: turn 2 (reply) is en" in html
    assert "turn 3 is en" not in html, "no 0-based index shown as a turn"
    why = "run 0: same_language failed its check at turn 2 (reply)"
    assert why in html.split('data-group="failed"')[1].split("</details>")[0], "the why-list names the turn"
    md = render_markdown(res)
    assert why.replace("_", "\\_") in md, "the markdown why-list too"
    assert "run 0 · turn 2 (reply) in `transcripts/" in md, "and the worst table's where-column"


def test_report_without_baseline_has_no_baseline_column() -> None:
    """A run without a baseline (no comparison in the file, none given to ``report``)."""
    for cand, judged in ((build_results(candidate_scores), True), (_offline_results(), False)):
        assert cand.regressions is None
        html = render_html(cand)
        for header in ("Baseline", "Δ", "95% CI", "Regression"):
            assert f"<th>{header}</th>" not in html, header
        assert "not in baseline" not in html and ">baseline<" not in html, "no baseline side in a plot"
        assert "Δ = candidate − baseline" not in html and "Baseline:" not in html
        assert ('class="metric-plot"' in html and "<th>Candidate</th>" in html) is judged


def test_report_with_baseline_keeps_its_columns() -> None:
    base, cand = standard_pair()
    html = render_html(cand, baseline=base)
    for header in ("Baseline", "Δ", "Regression"):
        assert f"<th>{header}</th>" in html, header
    assert ">baseline<" in html and "Δ = candidate − baseline" in html
