"""The dynamics page: one self-contained HTML file of a
:class:`~empath_gate.analysis.dynamics.DynamicsReport` (pure rendering).

Sections, each left out when it has no data: the counts (conversations, labelled, annotator
failures, input problems); the shapes with a trajectory plot per shape (and the seeker's own
feeling when the transcripts recorded it); the clusters; the
transition heatmaps (overall, then per group); the role interplay; "what the bot did and what
happened next" (the strategy table); the profile x strategy table; the risky interventions; the
annotator failures and input problems; and the conversations (shape, cluster, a strip of
per-message labels). Message text appears only when ``texts`` is given (``--show-text``), and
then only inside a section closed behind the content note, as the report's transcripts are.
Secrets are taken out of the rendered body, as in the report.

The page uses the report's style sheet and Content-Security-Policy (no script, no network)
and stays under :data:`MAX_HTML_BYTES`: the conversation list is cut to fit and the page says
how many conversations were left out (all are in the JSON).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from empath_gate.analysis.dynamics import DynamicsReport
from empath_gate.analysis.dynamics.inputs import NO_PROFILE
from empath_gate.analysis.dynamics.report import ConversationDynamics
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.assets import _CSS, _csp_hash
from empath_gate.report.html.dynamics_svg import (
    FEELING_COLOUR,
    heatmap_svg,
    label_strip_svg,
    trajectories_svg,
)
from empath_gate.secrets import HTML_PLACEHOLDER, redact
from empath_gate.turns.model import BOT_LABELS, USER_LABELS, Dialogue

MAX_HTML_BYTES = 2_000_000
"""Largest page written (issue #16: 2 MB); the conversation list is cut to fit."""

MAX_GROUPS = 12
"""Groups whose heatmaps are drawn (the overall ones always are); the rest are in the JSON."""

MAX_ROWS = 300
"""Rows of the risky-intervention, failure and problem tables; the rest are in the JSON."""

LINES_PER_SHAPE = 40
"""Trajectories drawn per shape plot (the first ones in input order), besides the mean."""

MAX_TEXT = 2000
"""Characters of one message shown with ``--show-text``; longer ones are cut and marked."""

CONTENT_NOTE = (
    "Content note: these conversations may be about suicide, self-harm, abuse or other distress. "
    "Their messages are shown in full for review."
)
"""Shown on the closed section that holds message text (the report's transcripts do the same)."""

_CLUSTER_COLOURS = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#bc4c00", "#59636e")


def _anchor(conversation_id: str) -> str:
    return "c-" + re.sub(r"[^A-Za-z0-9_-]", "_", conversation_id)


def _group(g: Mapping[str, str]) -> str:
    return ", ".join(f"{k} {v or '—'}" for k, v in g.items()) or "all conversations"


def _pct(x: float | None) -> str:
    return "—" if x is None else f"{100 * x:.0f} %"


def _num(x: float | None, fmt: str = "+.2f") -> str:
    return "—" if x is None else format(x, fmt)


def _text(t: str) -> str:
    if len(t) <= MAX_TEXT:
        return h(t)
    return h(t[:MAX_TEXT]) + f' <em class="muted">(cut: {len(t) - MAX_TEXT:,} more characters)</em>'


def _header(r: DynamicsReport, show_text: bool) -> str:
    ann = ", ".join(f"{h(k)} ({v})" for k, v in r.annotators.items()) or "none"
    text_note = (
        "Message text is shown below, behind a content note."
        if show_text
        else "Labels and trajectories only: no message text is shown (run with --show-text to add it)."
    )
    return (
        "<h1>How the conversations unfold</h1>"
        f'<p id="counts">{r.conversations} conversations · {r.labelled} labelled · '
        f'<span class="{"st-failed" if r.failed else ""}">{r.failed} annotator failures</span> · '
        f"{len(r.input_problems)} input problems · annotators: {ann}</p>"
        f'<p class="muted">{h(text_note)} Failed conversations contribute nothing to any figure. '
        f"Smoothing alpha {r.parameters.alpha:g}; escalation = next user valence lower by at least "
        f"{r.parameters.escalation_delta:g}, or a move to hopelessness.</p>"
    )


def _shape_title(shape: str, n: int) -> str:
    drawn = "" if n <= LINES_PER_SHAPE else f", {LINES_PER_SHAPE} drawn"
    return f"{shape} (n = {n}{drawn}; black: mean)"


def _shapes(r: DynamicsReport) -> str:
    if not r.labelled:
        return ""
    rows = "".join(
        f'<tr data-shape="{h(s)}"><td>{h(s)}</td>'
        f"<td class=num>{n}</td><td class=num>{_pct(n / r.labelled)}</td></tr>"
        for s, n in r.shapes.items()
    )
    plots = []
    for shape in r.shapes:
        trajs = [c.trajectory for c in r.per_conversation if c.shape == shape and c.trajectory is not None]
        if shape == "too_short" or not trajs:
            continue
        mean = [sum(t[k] for t in trajs) / len(trajs) for k in range(len(trajs[0]))]
        plots.append(
            f'<div class="plot">'
            f"{trajectories_svg(_shape_title(shape, len(trajs)), trajs[:LINES_PER_SHAPE], mean)}"
            "</div>"
        )
    feel = [c.feeling.points for c in r.per_conversation if c.feeling is not None]
    if feel:
        mean = [sum(t[k] for t in feel) / len(feel) for k in range(len(feel[0]))]
        title = f"own feeling 0-100 (n = {len(feel)}; black: mean)"
        svg = trajectories_svg(title, feel[:LINES_PER_SHAPE], mean, colour=FEELING_COLOUR, scale=(0.0, 100.0))
        plots.append(f'<div class="plot feeling-plot">{svg}</div>')
    return (
        '<section id="shapes"><h2>Shapes of the user\'s valence</h2>'
        '<p class="muted">Each conversation\'s user '
        "valence (-1..1) resampled to 10 points; the shape is the first rule that applies (README, "
        f'"How a conversation unfolds").</p>'
        f"<table><thead><tr><th>Shape</th><th>Conversations</th><th>Share</th>"
        f'</tr></thead><tbody>{rows}</tbody></table><div class="plots">{"".join(plots)}</div></section>'
    )


def _clusters(r: DynamicsReport) -> str:
    c = r.clustering
    if c.k is None:
        return (
            f'<section id="clusters"><h2>Clusters</h2>'
            f'<p class="muted">Not clustered: {h(c.note)}.</p></section>'
            if r.labelled
            else ""
        )
    comp: dict[int, dict[str, int]] = {}
    for conv in r.per_conversation:
        if conv.cluster is not None:
            comp.setdefault(conv.cluster, {}).setdefault(conv.shape, 0)
            comp[conv.cluster][conv.shape] += 1
    rows = "".join(
        f"<tr><td>{i + 1}</td><td class=num>{c.sizes[i]}</td><td>"
        + ", ".join(f"{h(s)} {n}" for s, n in sorted(comp.get(i, {}).items(), key=lambda x: -x[1]))
        + "</td></tr>"
        for i in range(c.k)
    )
    plots = "".join(
        f'<div class="plot">'
        f"{trajectories_svg(f'cluster {i + 1} (n = {c.sizes[i]})', [], c.centroids[i], width=220)}"
        "</div>"
        for i in range(c.k)
    )
    sil = ", ".join(f"k={k}: {v:.2f}" for k, v in sorted(c.silhouettes.items()))
    return (
        '<section id="clusters"><h2>Clusters (descriptive only)</h2>'
        f'<p class="muted">k-means on the trajectories, k = {c.k}'
        f" chosen by silhouette ({h(sil)}) on a sample of "
        f"{c.sample} (seed {c.seed}). No gate reads the clusters.</p>"
        f"<table><thead><tr><th>Cluster</th><th>Conversations</th><th>Shapes</th></tr></thead><tbody>{rows}"
        f'</tbody></table><div class="plots">{plots}</div></section>'
    )


def _transitions(r: DynamicsReport) -> str:
    charts = []
    for m in r.overall:
        title = f"{'user' if m.role == 'user' else 'bot'} · all ({m.transitions} transitions)"
        charts.append(heatmap_svg(title, m.states, m.states, m.probabilities, m.row_totals))
    groups = sorted({tuple(m.group.items()) for m in r.transitions})
    if len(groups) > 1:
        shown = set(groups[:MAX_GROUPS])
        for m in r.transitions:
            if tuple(m.group.items()) in shown:
                title = f"{'user' if m.role == 'user' else 'bot'} · {_group(m.group)} ({m.transitions})"
                charts.append(heatmap_svg(title, m.states, m.states, m.probabilities, m.row_totals))
    charts = [c for c in charts if c]
    if not charts:
        return ""
    more = (
        f'<p class="muted">{len(groups) - MAX_GROUPS} more groups are in dynamics.json.</p>'
        if len(groups) > MAX_GROUPS
        else ""
    )
    return (
        '<section id="transitions"><h2>Transitions</h2><p class="muted">P(next label | label) between '
        "consecutive messages of the same role (add-alpha smoothed; grey rows: no observation; n: "
        'transitions from that label).</p><div class="plots">'
        + "".join(f'<div class="plot">{c}</div>' for c in charts)
        + f"</div>{more}</section>"
    )


def _interplay(r: DynamicsReport) -> str:
    charts, tables = [], []
    for it in r.interplay[:MAX_GROUPS]:
        charts.append(
            heatmap_svg(
                f"bot reply given user label · {_group(it.group)}",
                USER_LABELS,
                BOT_LABELS,
                it.bot_given_user,
                it.user_totals,
            )
        )
        top = sorted(it.triples, key=lambda t: -t[3])[:10]
        p = {(a, b, n): q for a, b, n, q in it.next_given_user_bot}
        tables.append(
            f"<h3>{h(_group(it.group))}: most frequent user → bot → user</h3><table><thead><tr><th>User</th>"
            "<th>Bot</th><th>Next user</th><th>Count</th><th>P(next | user, bot)</th></tr></thead><tbody>"
            + "".join(
                f"<tr><td>{h(a)}</td><td>{h(b)}</td><td>{h(n)}</td><td class=num>{k}</td>"
                f"<td class=num>{p[(a, b, n)]:.2f}</td></tr>"
                for a, b, n, k in top
            )
            + "</tbody></table>"
        )
    charts = [c for c in charts if c]
    if not charts:
        return ""
    return (
        '<section id="interplay"><h2>Role interplay</h2><div class="plots">'
        + "".join(f'<div class="plot">{c}</div>' for c in charts)
        + "</div>"
        + "".join(tables)
        + "</section>"
    )


def _strategies(r: DynamicsReport) -> str:
    if not any(s.units for s in r.strategies):
        return ""
    rows = "".join(
        f'<tr data-strategy="{h(s.strategy)}"><td>{h(s.strategy)}</td><td class=num>{s.units}</td>'
        f"<td class=num>{s.with_change}</td><td class=num>{_num(s.mean_valence_change)}</td>"
        f"<td class=num>{s.label_changes}</td><td class=num>{s.escalations}</td>"
        f'<td class="num{" st-failed" if (s.escalation_rate or 0) >= 0.25 else ""}">'
        f"{_pct(s.escalation_rate)}</td></tr>"
        for s in r.strategies
        if s.units
    )
    return (
        '<section id="strategies"><h2>What the bot did and what happened next</h2><p class="muted">Each bot '
        "message's support strategy, with the user's message before and after it.</p><table><thead><tr>"
        "<th>Strategy</th><th>Bot messages</th><th>With a user message before and after</th>"
        "<th>Mean valence change</th><th>Label changed</th>"
        "<th>Escalations</th><th>Escalation rate</th></tr></thead>"
        f"<tbody>{rows}</tbody></table></section>"
    )


def _profiles(r: DynamicsReport) -> str:
    if all(c.profile == NO_PROFILE for c in r.profile_strategy):
        return ""  # no conversation names a profile: one "(none)" row would repeat the strategy table
    profiles = list(dict.fromkeys(c.profile for c in r.profile_strategy))
    strategies = [
        s for s in (x.strategy for x in r.strategies) if any(c.strategy == s for c in r.profile_strategy)
    ]
    cell = {(c.profile, c.strategy): c for c in r.profile_strategy}
    head = "".join(f"<th>{h(s)}</th>" for s in strategies)
    body = []
    for p in profiles:
        tds = []
        for s in strategies:
            c = cell.get((p, s))
            tds.append(
                "<td class=num>—</td>"
                if c is None
                else f'<td class="num{" st-failed" if (c.escalation_rate or 0) >= 0.25 else ""}">'
                f"{c.escalations}/{c.with_change} ({_pct(c.escalation_rate)})</td>"
            )
        body.append(f"<tr><td>{h(p)}</td>{''.join(tds)}</tr>")
    return (
        '<section id="profiles"><h2>Escalation by behaviour profile and strategy</h2>'
        '<p class="muted">Escalations '
        "/ bot messages with a user message before and after.</p><table><thead><tr><th>Profile</th>"
        f"{head}</tr></thead><tbody>{''.join(body)}</tbody></table></section>"
    )


def _risky(r: DynamicsReport, texts: Mapping[str, Dialogue] | None) -> str:
    if not r.risky:
        return ""
    rows = []
    for x in r.risky[:MAX_ROWS]:
        extra = ""
        if texts is not None:
            d = texts.get(x.conversation_id)
            said = [
                d.turns[n - 1].text if d and n is not None and n <= len(d.turns) else ""
                for n in (x.user_before, x.bot_message)
            ]
            extra = f"<td>{_text(said[0])}</td><td>{_text(said[1])}</td>"
        rows.append(
            f'<tr class="risky {h(x.kind)}"><td>'
            f'<a href="#{_anchor(x.conversation_id)}">{h(x.conversation_id)}</a></td>'
            f"<td>{h(x.kind)}</td><td class=num>{x.bot_message}</td><td>{h(x.strategy)}</td>"
            f"<td>{h(x.label_before or '—')} (message {x.user_before or '—'})</td>"
            f"<td>{h(x.label_after or '—')} (message {x.user_after or '—'})</td>{extra}</tr>"
        )
    more = (
        f'<p class="muted">{len(r.risky) - MAX_ROWS} more are in dynamics.json.</p>'
        if len(r.risky) > MAX_ROWS
        else ""
    )
    head = (
        "<th>Conversation</th><th>Kind</th><th>Bot message</th><th>Strategy</th><th>User before</th>"
        "<th>User after</th>" + ("<th>User said</th><th>Bot said</th>" if texts is not None else "")
    )
    table = f"<table><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>{more}"
    if texts is not None:
        table = f'<details class="gate"><summary>{h(CONTENT_NOTE)} Click to show.</summary>{table}</details>'
    return (
        f'<section id="risky"><h2>Risky interventions ({len(r.risky)})</h2>'
        f'<p class="muted">Escalation toward '
        "hopelessness after a bot message, or suggestions given right after an explicit risk statement. "
        f"Messages are numbered from 1, both roles counted.</p>{table}</section>"
    )


def _problems(r: DynamicsReport) -> str:
    parts = []
    if r.failures:
        rows = "".join(
            f"<tr><td>{h(f.conversation_id)}</td><td>{h(f.annotator)}</td><td>{h(f.reason)}</td>"
            f"<td>{h(f.detail)}</td></tr>"
            for f in r.failures[:MAX_ROWS]
        )
        more = f"<p>{len(r.failures) - MAX_ROWS} more.</p>" if len(r.failures) > MAX_ROWS else ""
        parts.append(
            f'<section id="failures"><h2 class="st-failed">Annotator failures ({r.failed})</h2><p>These '
            "conversations have no labels and contribute nothing.</p><table><thead><tr><th>Conversation</th>"
            f"<th>Annotator</th><th>Reason</th><th>Detail</th></tr></thead><tbody>{rows}</tbody></table>"
            f"{more}</section>"
        )
    if r.input_problems:
        rows = "".join(
            f"<tr><td>{h(p.source)}</td><td class=num>{p.line or '—'}</td><td>{h(p.what)}</td></tr>"
            for p in r.input_problems[:MAX_ROWS]
        )
        more = f"<p>{len(r.input_problems) - MAX_ROWS} more.</p>" if len(r.input_problems) > MAX_ROWS else ""
        parts.append(
            f'<section id="input-problems"><h2>Input problems ({len(r.input_problems)})</h2><table><thead>'
            f"<tr><th>File</th><th>Line</th><th>Problem</th></tr></thead><tbody>{rows}</tbody></table>"
            f"{more}</section>"
        )
    return "".join(parts)


def _conversation(c: ConversationDynamics, d: Dialogue | None) -> str:
    cells = [
        (
            t.role,
            t.valence,
            f"{i + 1} {t.role}: {t.label}"
            + (f" · {t.strategy}" if t.strategy else "")
            + f" · valence {t.valence:+.2f}",
        )
        for i, t in enumerate(c.labels)
    ]
    row = (
        f'<tr id="{_anchor(c.conversation_id)}" data-shape="{h(c.shape)}"><td>{h(c.conversation_id)}</td>'
        f"<td>{h(c.shape)}</td><td class=num>{'—' if c.cluster is None else c.cluster + 1}</td>"
        f"<td class=num>{c.user_messages}</td><td>{label_strip_svg(cells)}</td></tr>"
    )
    if d is None:
        return row
    msgs = "".join(
        f'<div class="turn {t.role}"><div class="who">message {i + 1} · {h(t.role)} · {h(lab.label)}'
        + (f" · {h(lab.strategy)}" if lab.strategy else "")
        + f" · valence {lab.valence:+.2f}</div>{_text(t.text)}</div>"
        for i, (t, lab) in enumerate(zip(d.turns, c.labels, strict=False))
    )
    return row + (
        f'<tr><td colspan="5"><details class="transcript"><summary>messages of '
        f"{h(c.conversation_id)}</summary>{msgs}</details></td></tr>"
    )


def _conversations(r: DynamicsReport, texts: Mapping[str, Dialogue] | None, budget: int) -> str:
    if not r.per_conversation:
        return ""
    risky = list(dict.fromkeys(x.conversation_id for x in r.risky))
    by_id = {c.conversation_id: c for c in r.per_conversation}
    order = [by_id[i] for i in risky if i in by_id] + [
        c for c in r.per_conversation if c.conversation_id not in risky
    ]
    rows, used = [], 0
    for c in order:
        row = _conversation(c, texts.get(c.conversation_id) if texts is not None else None)
        size = len(row.encode("utf-8"))
        if used + size > budget:
            break
        rows.append(row)
        used += size
    left = len(order) - len(rows)
    note = (
        f'<p class="note" id="left-out">{left} of {len(order)}'
        f" conversations are left out of this page to keep "
        f"it under {MAX_HTML_BYTES // 1_000_000} MB; every conversation is in dynamics.json.</p>"
        if left
        else ""
    )
    table = (
        "<table><thead><tr><th>Conversation</th><th>Shape</th><th>Cluster</th><th>User messages</th>"
        f"<th>Labels (user: valence colour; bot: grey)</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
    if texts is not None:
        table = (
            f'<details class="gate" id="texts"><summary>{h(CONTENT_NOTE)} Click to show.</summary>'
            f"{table}</details>"
        )
    return (
        f'<section id="conversations"><h2>Conversations</h2><p class="muted">Conversations with a risky '
        f"intervention first.</p>{note}{table}</section>"
    )


def render_dynamics_html(report: DynamicsReport, texts: Mapping[str, Dialogue] | None = None) -> str:
    """The page (module docstring). ``texts``: conversation id -> its dialogue, to show message
    text (``None``: no text anywhere on the page). The result is at most :data:`MAX_HTML_BYTES`
    bytes of UTF-8 for any report whose fixed sections fit."""
    css = _CSS.strip()
    csp = (
        f"default-src 'none'; style-src '{_csp_hash(css)}'; script-src 'none'; img-src data:; "
        "base-uri 'none'; form-action 'none'"
    )
    head = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>empath-gate dynamics</title><style>{css}</style></head><body>\n"
    )
    fixed: Sequence[str] = [
        _header(report, texts is not None),
        _shapes(report),
        _clusters(report),
        _transitions(report),
        _interplay(report),
        _strategies(report),
        _profiles(report),
        _risky(report, texts),
        _problems(report),
    ]
    tail = "\n</body></html>\n"
    used = len(head.encode("utf-8")) + sum(len(s.encode("utf-8")) + 1 for s in fixed) + len(tail) + 1024
    body = [*fixed, _conversations(report, texts, max(0, MAX_HTML_BYTES - used))]
    return head + redact("\n".join(b for b in body if b), placeholder=HTML_PLACEHOLDER) + tail
