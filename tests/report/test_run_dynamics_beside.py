"""The run report's dynamics: the units a failed critical criterion points at listed with the
risky interventions (results and HTML, linked to their transcripts), each transcript's user
valence trajectory drawn beside it, and the seeker's own feeling as a third signal."""

from __future__ import annotations

import re

from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.judging.verdict import Citation, CriterionVerdict, MetricVerdict
from empath_gate.report.html import render_html
from empath_gate.report.html.dynamics_svg import valence_line_svg
from empath_gate.report.markdown.dynamics import dynamics_lines
from empath_gate.results.dynamics import failed_critical_messages, results_dynamics
from empath_gate.results.model import Results, ResultsMetadata, RunRecord
from empath_gate.turns.model import TurnLabel, TurnLabels

SAD, CALM = ("sadness_grief", -0.6), ("relief_calm", 0.5)


def _labels(tid: str, user: list[tuple[str, float]]) -> TurnLabels:
    out = []
    for k, (lab, v) in enumerate(user):
        out.append(TurnLabel(turn=2 * k, role="user", label=lab, intensity=2, valence=v))
        out.append(TurnLabel(turn=2 * k + 1, role="assistant", label="concern", intensity=1, valence=0.2,
                             strategy="question" if k else "providing_suggestions"))
    return TurnLabels(conversation_id=tid, annotator="offline", version="t", labels=tuple(out))


def _verdict(tid: str, *, cite: int | None = None, check_turns: tuple[int, ...] = ()) -> MetricVerdict:
    crit = CriterionVerdict(
        criterion_id="gives_resource", state="FAIL", critical=True, check="FAIL" if check_turns else None,
        check_detail="no crisis line" if check_turns else None, check_turns=check_turns,
        citations=(Citation(turn=cite, quote="Try a walk"),) if cite is not None else (),
        judge="FAIL" if cite is not None else None,
    )
    minor = CriterionVerdict(criterion_id="warm", state="FAIL", critical=False,
                             citations=(Citation(turn=3, quote="x"),), judge="FAIL")
    return MetricVerdict(metric_id="crisis_resource_provision", transcript_id=tid, status="scored", score=3,
                         raw_score=3, criteria=(crit, minor))


def _results(feelings: tuple[int | None, ...] = ()) -> Results:
    recs = []
    for i, verdict in enumerate((_verdict("a-r0", cite=1), _verdict("b-r0", check_turns=(2,)))):
        tid = f"{'ab'[i]}-r0"
        recs.append(RunRecord(
            transcript_id=tid, conversation_id=tid[:-3], suite="s", seed_id=tid[:-3], persona_id="p",
            locale="en-US", run=0, status="complete", n_turns=6, annotation=_labels(tid, [SAD, SAD, CALM]),
            verdicts=(verdict,), feelings=feelings, transcript_path=f"transcripts/s/{tid}.jsonl",
        ))
    md = ResultsMetadata(tool_version="0", instrument_version="0", suites=("s",), plan_id="p", runs=1,
                         target="t", auditor="openai/fake-auditor", started_at="2026-01-01T00:00:00+00:00")
    res = Results(metadata=md, records=tuple(recs))
    return res.model_copy(update={"dynamics": results_dynamics(res)})


def _transcript(tid: str) -> Transcript:
    texts = ["I'm so sad", "Try a walk", "still sad", "What happened?", "a bit calmer", "Good to hear"]
    return Transcript(
        suite="s", seed_id=tid[:-3], persona_id="p", locale="en-US", run=0, conversation_id=tid[:-3],
        transcript_id=tid, target="t", auditor="openai/fake-auditor", max_turns=3,
        turns=tuple(Turn(index=i, role="user" if i % 2 == 0 else "assistant", content=x,
                         source="auditor" if i % 2 == 0 else "target") for i, x in enumerate(texts)),
    )


def test_units_followed_by_a_failed_critical_criterion_join_the_risky_interventions() -> None:
    res = _results()
    assert failed_critical_messages(res.records[0]) == {1: ["crisis_resource_provision/gives_resource"]}
    assert failed_critical_messages(res.records[1]) == {3: ["crisis_resource_provision/gives_resource"]}
    [d] = res.dynamics
    crit = [r for r in d.risky if r.kind == "failed_critical_criterion"]
    assert [(r.conversation_id, r.bot_message, r.user_before, r.user_after) for r in crit] == [
        ("a-r0", 2, 1, 3), ("b-r0", 4, 3, 5)]  # the judge's citation; the check's turn 2 reply
    assert crit[0].strategy == "providing_suggestions" and crit[0].criteria == (
        "crisis_resource_provision/gives_resource",)
    html = render_html(res, transcripts={r.transcript_id: _transcript(r.transcript_id) for r in res.records})
    table = html.split('class="risky-table"')[1].split("</table>")[0]
    row = next(r for r in re.findall(r"<tr[^>]*>(.*?)</tr>", table) if "a-r0" in r and "critical" in r)
    assert 'href="#t-a-r0"' in row and "message 2 (turn 1, reply)" in row
    assert "crisis_resource_provision/gives_resource" in row and "message 3 (turn 2, user)" in row
    assert 'id="t-a-r0"' in html, "the link has a target"
    assert "2 units followed by a failed critical criterion" in dynamics_lines(res)[0]


def test_each_transcript_has_its_trajectory_beside_it() -> None:
    res = _results()
    html = render_html(res, transcripts={r.transcript_id: _transcript(r.transcript_id) for r in res.records})
    body = html.split('id="t-a-r0"')[1].split("</details>")[0]
    aside = body.split('<aside class="beside">')[1].split("</aside>")[0]
    chart = re.search(r'<svg[^>]*class="trajectory".*?</svg>', aside, re.S)
    assert chart is not None and chart.group(0).count("<circle") == 3, "one dot per user message"
    assert 'class="feeling"' not in chart.group(0), "no feeling recorded, no feeling line"
    assert body.index('<div class="turns">') < body.index('<aside class="beside">')
    assert "<script" not in chart.group(0)
    # no labels: no chart, no aside; no user message: no chart
    unlabelled = tuple(r.model_copy(update={"annotation": None}) for r in res.records)
    bare = res.model_copy(update={"records": unlabelled, "dynamics": ()})
    page = render_html(bare, transcripts={r.transcript_id: _transcript(r.transcript_id) for r in res.records})
    assert 'class="trajectory"' not in page and '<aside class="beside">' not in page
    assert valence_line_svg([]) == ""


def test_the_seekers_own_feeling_is_a_third_signal() -> None:
    res = _results(feelings=(20, 30, 80))
    [d] = res.dynamics
    t = d.trajectories[0]
    assert t.feeling is not None and t.feeling.messages == 3 and t.feeling.shape == "recovering"
    assert t.feeling.points[0] == 20.0 and t.feeling.points[-1] == 80.0
    assert d.feeling_shapes["recovering"] == 2 and d.feeling_agreement is not None and d.feeling_agreement > 0
    html = render_html(res, transcripts={r.transcript_id: _transcript(r.transcript_id) for r in res.records})
    assert 'class="plot feeling-plot"' in html and "own feeling 0-100 (n = 2" in html
    chart = html.split('id="t-a-r0"')[1].split("</aside>")[0]
    assert 'class="feeling"' in chart and "own feeling 80/100" in chart
    assert "own feeling shapes recovering 2" in dynamics_lines(res)[0]
    # a run without feelings has none of it
    plain = _results()
    assert plain.dynamics[0].feeling_shapes == {} and 'feeling-plot' not in render_html(plain)


def test_the_dynamics_section_fits_a_1280_px_page() -> None:
    res = _results(feelings=(20, 30, 80))
    html = render_html(res, transcripts={r.transcript_id: _transcript(r.transcript_id) for r in res.records})
    section = html.split('<section id="dynamics">')[1].split("</section>")[0]
    assert re.search(r"<(?:table|td|th)[^>]*\s(?:width|style)=", section) is None, "no fixed-width table"
    widths = [int(w) for w in re.findall(r'<svg[^>]*\swidth="(\d+)"', html)]
    assert widths and max(widths) <= 1280 - 2 * 24, "every chart fits inside the page's padding"
    # the aside beside a transcript takes a fixed column; the messages keep the rest
    assert ".transcript-body>aside{flex:0 0 270px" in html and "valence_line" not in html
