"""The emotion dynamics of a run in its HTML report (pure): per suite, the transition heatmaps,
the user trajectories per shape, the strategy table ("what the bot did and what happened
next") and the risky interventions linked to their transcripts; and, beside each transcript,
its per-message label strip. Charts come from :mod:`empath_gate.report.html.dynamics_svg`; a
chart with no data is not drawn. With fixed scripts the user side is marked ``script (fixed)``:
it is the script's, the same in every run, shown for orientation only. Multi-party suites add
each speaker's own trajectory (:mod:`empath_gate.report.html.speakers`).
"""

from __future__ import annotations

from collections.abc import Mapping

from empath_gate.report.escape import html_text as h
from empath_gate.report.html.dynamics_svg import heatmap_svg, label_strip_svg, trajectories_svg
from empath_gate.report.html.speakers import speaker_order, trajectories_table
from empath_gate.results import Results, RunRecord
from empath_gate.results.dynamics import SCRIPT_FIXED, SuiteDynamics
from empath_gate.turns.model import TurnLabels

LINES_PER_SHAPE = 60
"""Trajectories drawn per shape (the mean covers all)."""


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def _anchor(transcript_id: str) -> str:
    from empath_gate.report.html.transcripts import _anchor as anchor

    return anchor(transcript_id)


def _suite(d: SuiteDynamics, order: Mapping[str, Mapping[str, int]]) -> str:
    fixed = d.user_side == SCRIPT_FIXED
    user_note = (
        " <strong>User side: script (fixed)</strong> — the user's messages come from fixed scripts and do "
        "not depend on the bot, so user labels, shapes and the \"after\" side of the strategy table are "
        "the script's (computed once per conversation), shown for orientation, never compared or gated."
        if fixed else " User side: per run (LLM auditor)."
    )
    head = (
        f"<h3>{h(d.suite)}</h3><p class=\"muted\">{d.labelled} of {d.transcripts} transcripts labelled by "
        f"{h(', '.join(d.annotators) or 'no annotator')}.{user_note}</p>"
    )
    if d.failures:
        items = "".join(
            f"<li><a href=\"#{_anchor(f.transcript_id)}\"><code>{h(f.transcript_id)}</code></a>: "
            f"{h(f.reason)} {h(f.detail)}</li>" for f in d.failures)
        head += f'<p class="st-error">Annotator failures (no labels, no default):</p><ul>{items}</ul>'
    shares = ""
    if d.worsened_share is not None:
        shares = (f"<p>Worsened (deteriorating) {_pct(d.worsened_share)} · recovering "
                  f"{_pct(d.recovering_share)}</p>")
    rows = "".join(f"<tr><td>{h(s)}</td><td class=num>{n}</td></tr>" for s, n in d.shapes.items() if n)
    shape_table = (f"<table><thead><tr><th>Shape{' (script, fixed)' if fixed else ''}</th><th>"
                   f"{'Conversations' if fixed else 'Transcripts'}</th></tr></thead>"
                   f"<tbody>{rows}</tbody></table>"
                   if rows else "")
    plots = []
    for shape in d.shapes:
        trajs = [t.trajectory for t in d.trajectories if t.shape == shape and t.trajectory is not None]
        if shape == "too_short" or not trajs:
            continue
        mean = [sum(t[k] for t in trajs) / len(trajs) for k in range(len(trajs[0]))]
        title = f"{shape}{' (script, fixed)' if fixed else ''} (n = {len(trajs)}; black: mean)"
        plots.append(f'<div class="plot">{trajectories_svg(title, trajs[:LINES_PER_SHAPE], mean)}</div>')
    maps = []
    for m in d.transitions:
        where = ", ".join(f"{k} {v}" for k, v in m.group.items())
        side = "user (script, fixed)" if fixed and m.role == "user" else m.role
        svg = heatmap_svg(f"{side} transitions · {where}", m.states, m.states, m.probabilities, m.row_totals)
        if svg:
            maps.append(f'<div class="plot">{svg}</div>')
    strat = "".join(
        f'<tr data-strategy="{h(s.strategy)}"><td>{h(s.strategy)}</td><td class=num>{s.units}</td>'
        f"<td class=num>{'–' if s.mean_valence_change is None else f'{s.mean_valence_change:+.2f}'}</td>"
        f"<td class=num>{s.escalations}</td><td class=num>{_pct(s.escalation_rate)}</td></tr>"
        for s in d.strategies if s.units
    )
    strat_table = (
        "<h4>What the bot did and what happened next</h4><table><thead><tr><th>Strategy</th>"
        "<th>Bot messages</th>"
        f"<th>Mean valence change{' (script, fixed)' if fixed else ''}</th><th>Escalations</th>"
        f"<th>Escalation rate</th></tr></thead><tbody>{strat}</tbody></table>" if strat else ""
    )
    risky = "".join(
        f"<li><a href=\"#{_anchor(r.conversation_id)}\"><code>{h(r.conversation_id)}</code></a> message "
        f"{r.bot_message}: {h(r.kind)} after {h(r.strategy)}</li>" for r in d.risky
    )
    risky_list = f"<h4>Risky interventions</h4><ul>{risky}</ul>" if risky else ""
    return (f'<div class="suite-dynamics" data-suite="{h(d.suite)}">{head}{shares}{shape_table}'
            f'<div class="plots">{"".join(plots)}</div><div class="plots">{"".join(maps)}</div>'
            f"{strat_table}{risky_list}{trajectories_table(d.speakers, order)}</div>")


def dynamics_section(results: Results) -> str:
    """The run's dynamics section (``""`` when no suite has annotations)."""
    if not results.dynamics:
        return ""
    order = speaker_order(results)
    return ('<section id="dynamics"><h2>How the conversations unfolded</h2>'
            + "".join(_suite(d, order) for d in results.dynamics) + "</section>")


def transcript_strip(rec: RunRecord, scripted: bool) -> str:
    """The per-message label strip of one transcript, with its annotator failure when it has
    one (``""`` without annotation)."""
    a = rec.annotation
    if a is None:
        return ""
    if not isinstance(a, TurnLabels):
        return f'<p class="st-error">Emotion labels: annotator failure ({h(a.reason)}) {h(a.detail)}</p>'
    cells = [
        (t.role, t.valence, f"message {t.turn + 1} · {t.role}"
         + (" (script, fixed)" if scripted and t.role == "user" else "")
         + f" · {t.label} {t.intensity} · valence {t.valence:+.2f}"
         + (f" · {t.strategy}" if t.strategy else ""))
        for t in a.labels
    ]
    bot = ", ".join(f"{t.turn + 1}: {t.strategy}" for t in a.labels if t.strategy)
    note = " · user side: script (fixed)" if scripted else ""
    return (f'<div class="dynamics-strip">{label_strip_svg(cells)} <span class="muted">'
            f"bot strategies {h(bot or '–')}{note}</span></div>")


def turn_label(rec: RunRecord, index: int, scripted: bool) -> str:
    """`` · <label> · valence v · <strategy>`` for message ``index`` of ``rec`` (``""`` without labels)."""
    a = rec.annotation
    if not isinstance(a, TurnLabels) or index >= len(a.labels):
        return ""
    t = a.labels[index]
    fixed = " (script, fixed)" if scripted and t.role == "user" else ""
    return (f' · <span class="label" data-label="{h(t.label)}">{h(t.label)}{fixed} {t.valence:+.2f}'
            f"{' · ' + h(t.strategy) if t.strategy else ''}</span>")
