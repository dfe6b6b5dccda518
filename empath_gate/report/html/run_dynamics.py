"""The emotion dynamics of a run in its HTML report (pure): per suite, the transition heatmaps,
the user trajectories per shape, the seeker's own feeling (LLM auditor: a third signal), the
strategy table ("what the bot did and what happened next") and the risky interventions, with
the units a failed critical criterion points at, each with its messages and turns and linked
to its transcript; and, beside each transcript, its user valence trajectory (with the seeker's
feeling when recorded) and its per-message label strip. Charts come from
:mod:`empath_gate.report.html.dynamics_svg`; a chart with no data is not drawn. With fixed
scripts the user side is marked ``script (fixed)``: it is the script's, the same in every run,
shown for orientation only. Multi-party suites add
each speaker's own trajectory (:mod:`empath_gate.report.html.speakers`).
"""

from __future__ import annotations

from collections.abc import Mapping

from empath_gate.analysis.dynamics.interventions import RiskyIntervention
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.dynamics_svg import (
    FEELING_COLOUR,
    heatmap_svg,
    label_strip_svg,
    trajectories_svg,
    valence_line_svg,
)
from empath_gate.report.html.speakers import speaker_order, trajectories_table
from empath_gate.results import Results, RunRecord
from empath_gate.results.dynamics import SCRIPT_FIXED, SuiteDynamics
from empath_gate.turns.model import TurnLabels

LINES_PER_SHAPE = 60
"""Trajectories drawn per shape (the mean covers all)."""

MAX_RISKY_ROWS = 200
"""Rows of a suite's risky-intervention table; the rest are in results.json."""

_KIND_TEXT = {
    "escalation_to_hopelessness": "escalation toward hopelessness",
    "suggestion_after_risk": "suggestion right after a risk statement",
    "failed_critical_criterion": "failed critical criterion",
}


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
    if d.feeling_shapes:
        agree = ("not computable" if d.feeling_agreement is None
                 else f"Spearman rho {d.feeling_agreement:+.2f}")
        shares += (f'<p class="feeling-note">The seeker\'s own feeling (0-100, reported with each message, '
                   f"never shown to the bot, the judge or the annotator) against the annotator's valence: "
                   f"{agree}.</p>")
    feel = bool(d.feeling_shapes)
    rows = "".join(
        f"<tr><td>{h(s)}</td><td class=num>{n}</td>"
        + (f"<td class=num>{d.feeling_shapes.get(s, 0)}</td>" if feel else "") + "</tr>"
        for s, n in d.shapes.items() if n or (feel and d.feeling_shapes.get(s))
    )
    shape_table = (f"<table><thead><tr><th>Shape{' (script, fixed)' if fixed else ''}</th><th>"
                   f"{'Conversations' if fixed else 'Transcripts'}</th>"
                   + ("<th>By own feeling</th>" if feel else "")
                   + f"</tr></thead><tbody>{rows}</tbody></table>" if rows else "")
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
    return (f'<div class="suite-dynamics" data-suite="{h(d.suite)}">{head}{shares}{shape_table}'
            f'<div class="plots">{"".join(plots)}{_feeling_plot(d)}</div>'
            f'<div class="plots">{"".join(maps)}</div>{strat_table}{_risky_table(d.risky, fixed)}'
            f"{trajectories_table(d.speakers, order)}</div>")


def _feeling_plot(d: SuiteDynamics) -> str:
    """The seekers' own feeling trajectories (0-100) with their mean; ``""`` when none has one."""
    trajs = [t.feeling.points for t in d.trajectories if t.feeling is not None]
    if not trajs:
        return ""
    mean = [sum(t[k] for t in trajs) / len(trajs) for k in range(len(trajs[0]))]
    title = f"own feeling 0-100 (n = {len(trajs)}; black: mean)"
    svg = trajectories_svg(title, trajs[:LINES_PER_SHAPE], mean, colour=FEELING_COLOUR, scale=(0.0, 100.0))
    return f'<div class="plot feeling-plot">{svg}</div>'


def _message(n: int | None, fixed_user: bool = False) -> str:
    """``message 5 (turn 3, reply)`` for a 1-based message number (both roles counted)."""
    if n is None:
        return "—"
    role = "user" if n % 2 else "reply"
    return f"message {n} (turn {(n + 1) // 2}, {role}{', script' if fixed_user else ''})"


def _risky_table(risky: tuple[RiskyIntervention, ...], fixed: bool) -> str:
    """The risky interventions and the units a failed critical criterion points at, one row
    each, linked to their transcripts; ``""`` when there is none."""
    if not risky:
        return ""
    rows = "".join(
        f'<tr class="risky {h(r.kind)}" data-kind="{h(r.kind)}"><td><a href="#{_anchor(r.conversation_id)}">'
        f"<code>{h(r.conversation_id)}</code></a></td><td>{h(_KIND_TEXT.get(r.kind, r.kind))}"
        + (f"<br><code>{'</code>, <code>'.join(h(c) for c in r.criteria)}</code>" if r.criteria else "")
        + f"</td><td>{_message(r.bot_message)}</td><td>{h(r.strategy)}</td>"
        f"<td>{h(r.label_before or '—')} · {_message(r.user_before, fixed)}</td>"
        f"<td>{h(r.label_after or '—')} · {_message(r.user_after, fixed)}</td></tr>"
        for r in risky[:MAX_RISKY_ROWS]
    )
    more = (f'<p class="muted">{len(risky) - MAX_RISKY_ROWS} more are in results.json.</p>'
            if len(risky) > MAX_RISKY_ROWS else "")
    crit = sum(r.kind == "failed_critical_criterion" for r in risky)
    return (
        f"<h4>Risky interventions ({len(risky) - crit})"
        + (f" and units followed by a failed critical criterion ({crit})" if crit else "")
        + "</h4><table class=\"risky-table\"><thead><tr><th>Transcript</th><th>What</th>"
        "<th>Bot message</th><th>Strategy</th><th>User before</th><th>User after</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>{more}"
    )


def dynamics_section(results: Results) -> str:
    """The run's dynamics section (``""`` when no suite has annotations)."""
    if not results.dynamics:
        return ""
    order = speaker_order(results)
    return ('<section id="dynamics"><h2>How the conversations unfolded</h2>'
            + "".join(_suite(d, order) for d in results.dynamics) + "</section>")


def transcript_strip(rec: RunRecord, scripted: bool) -> str:
    """Beside one transcript: its user valence trajectory (with the seeker's own feeling when
    recorded: :func:`~empath_gate.report.html.dynamics_svg.valence_line_svg`), its per-message
    label strip and the bot's strategies; the annotator failure when it has one (``""``
    without annotation)."""
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
    users = [(t.valence, f"message {t.turn + 1}: {t.label} {t.intensity} · valence {t.valence:+.2f}")
             for t in a.labels if t.role == "user"]
    title = "user valence" + (" (script, fixed)" if scripted else "") + (
        " · dashed: own feeling" if any(f is not None for f in rec.feelings) else "")
    chart = valence_line_svg(users, [None if f is None else float(f) for f in rec.feelings], title=title)
    bot = ", ".join(f"{t.turn + 1}: {t.strategy}" for t in a.labels if t.strategy)
    note = " · user side: script (fixed)" if scripted else ""
    return (f'<div class="dynamics-strip">{chart}<div>{label_strip_svg(cells)}</div><span class="muted">'
            f"bot strategies (message: strategy) {h(bot or '–')}{note}</span></div>")


def turn_label(rec: RunRecord, index: int, scripted: bool) -> str:
    """`` · <label> · valence v · <strategy>`` for message ``index`` of ``rec`` (``""`` without labels)."""
    a = rec.annotation
    if not isinstance(a, TurnLabels) or index >= len(a.labels):
        return ""
    t = a.labels[index]
    fixed = " (script, fixed)" if scripted and t.role == "user" else ""
    return (f' · <span class="label" data-label="{h(t.label)}">{h(t.label)}{fixed} {t.valence:+.2f}'
            f"{' · ' + h(t.strategy) if t.strategy else ''}</span>")
