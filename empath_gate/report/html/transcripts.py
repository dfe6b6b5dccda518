"""The transcript viewer of the report (behind a content note), and reading the transcript
files the records name."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from empath_gate.conversation.transcript import Transcript, Turn
from empath_gate.instrument.cues import CueVocabulary
from empath_gate.judging.verdict import MetricVerdict
from empath_gate.report.escape import html_text as h
from empath_gate.report.html.run_dynamics import transcript_strip
from empath_gate.report.html.run_dynamics import turn_label as turn_emotion
from empath_gate.report.view import CRITERIA_ONLY_NOTE, turn_label, user_turn
from empath_gate.results import Results, RunRecord

MAX_TRANSCRIPTS = 400
"""Transcripts embedded at most (worst conversations first); the rest stay in the artifact."""

NO_CUES = CueVocabulary()
"""No declared cues: every bracket is shown as typed."""

CONTENT_NOTE = (
    "Content note: these transcripts are conversations about suicide, self-harm, abuse or other "
    "distress, written by a model playing a help-seeker. They are shown in full for review."
)


SPEAKER_CLASSES = 4
"""Distinct speaker colours (``sp-0`` .. ``sp-3`` in the stylesheet); a fifth speaker reuses the
first colour, still named on every turn."""


def _anchor(transcript_id: str) -> str:
    return "t-" + re.sub(r"[^A-Za-z0-9_-]", "_", transcript_id)


def _cued(text: str, cues: CueVocabulary, locale: str) -> str:
    """``text`` escaped, each declared cue token shown as a badge with the locale's display
    label (titled by its definition), never as the typed token."""
    out = []
    for piece in cues.split(text):
        if isinstance(piece, str):
            out.append(h(piece))
        else:
            out.append(f'<span class="badge b-cue cue" data-cue="{h(piece.id)}" '
                       f'title="{h(piece.definition)}">{h(piece.label(locale))}</span>')
    return "".join(out)


def _highlight(content: str, quotes: Sequence[tuple[str, str]], cues: CueVocabulary = NO_CUES,
               locale: str = "en-US") -> str:
    """``content`` escaped, with each quote found (case-insensitively, any whitespace) wrapped
    in ``<mark class="cite">`` titled by its label, and declared cues shown as badges."""
    spans: list[tuple[int, int, str]] = []
    for quote, label in quotes:
        words = quote.split()
        if not words:
            continue
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.IGNORECASE)
        m = pattern.search(content)
        if m:
            spans.append((m.start(), m.end(), label))
    spans.sort()
    out: list[str] = []
    pos = 0
    for s, e, label in spans:
        if s < pos:
            continue
        out.append(_cued(content[pos:s], cues, locale))
        out.append(f'<mark class="cite" title="{h(label)}">{_cued(content[s:e], cues, locale)}</mark>')
        pos = e
    out.append(_cued(content[pos:], cues, locale))
    return "".join(out)


_EVENT_BADGE = {"filtered": "b-filtered", "handoff": "b-handoff", "error": "b-error", "budget": "b-budget"}
"""Badge class of an event kind (any other kind: ``b-other``)."""


def _events(turn: Turn) -> str:
    out = []
    for ev in turn.events:
        cls = _EVENT_BADGE.get(ev.kind, "b-other")
        label = "content filter" if ev.kind == "filtered" else ev.kind.replace("_", " ")
        out.append(
            f'<span class="badge {cls} ev-{h(ev.kind)}" title="{h(ev.role)}">{h(label)} ({h(ev.role)})</span>'
        )
    return "".join(out)


def _verdict_table(verdicts: Sequence[MetricVerdict]) -> str:
    rows = []
    for v in verdicts:
        if v.status == "scored":
            state = f"score {v.score}" + (
                f" (judge wrote {v.raw_score}, capped)" if v.raw_score != v.score else ""
            )
        elif v.status == "judge_failure" and v.failure is not None:
            state = (
                f'<span class="badge b-jf jf">JudgeFailure: {h(v.failure.reason)}</span> '
                f"{h(v.failure.detail)}"
            )
        elif v.status == "na":
            state = "N/A"
        else:
            state = f"criteria-only ({CRITERIA_ONLY_NOTE})"
        crits = "".join(
            f'<li class="crit-{c.state.replace("/", "")}">{h(c.criterion_id)}: {h(c.state)}'
            f"{' (critical)' if c.critical else ''}"
            f"{' — ' + h(c.check_detail) if c.check_detail else ''}"
            + "".join(f" · {turn_label(ct.turn)}" for ct in c.citations)
            + "</li>"
            for c in v.criteria
        )
        rows.append(
            f'<tr data-metric="{h(v.metric_id)}"><td><code>{h(v.metric_id)}</code></td><td>{state}</td>'
            f"<td><ul>{crits}</ul></td></tr>"
        )
    return (
        '<table class="verdicts"><thead><tr><th>Metric</th><th>Verdict</th><th>Criteria</th></tr></thead>'
        "<tbody>" + "".join(rows) + "</tbody></table>"
    )


def _transcript(rec: RunRecord, item: Transcript | str | None, cues: CueVocabulary = NO_CUES,
                scripted: bool = False) -> str:
    anchor = _anchor(rec.transcript_id)
    fails = sum(1 for v in rec.verdicts for c in v.criteria if c.state == "FAIL")
    jf = sum(1 for v in rec.verdicts if v.status == "judge_failure")
    flags = []
    if fails:
        flags.append(f"{fails} FAIL")
    if jf:
        flags.append(f"{jf} judge failure")
    if rec.target_filtered:
        flags.append(f"{rec.target_filtered} filtered")
    if rec.handoffs:
        flags.append(f"{rec.handoffs} hand-off")
    if rec.status != "complete":
        flags.append(rec.status)
    summary = f"<code>{h(rec.conversation_id)}</code> · run {rec.run} · {h(rec.locale)}" + (
        f" · {h(', '.join(flags))}" if flags else ""
    )
    search = f"{rec.conversation_id} {rec.seed_id} {rec.persona_id} {' '.join(flags)}".lower()
    beside = transcript_strip(rec, scripted)
    parts = [
        f'<details class="transcript" id="{anchor}" data-search="{h(search)}"><summary>{summary}</summary>',
        _verdict_table(rec.verdicts),
    ]
    if rec.error:
        what = "Not run (sequential gating)" if rec.status == "stopped" else "Transcript stopped"
        parts.append(f'<p class="missing">{what}: {h(rec.error)}</p>')
    if not isinstance(item, Transcript):
        msg = item if isinstance(item, str) else "no transcript file recorded"
        parts.append(f'{beside}<p class="missing transcript-missing">{h(msg)}</p></details>')
        return "".join(parts)
    turns: list[str] = []
    cites: dict[int, list[tuple[str, str]]] = {}
    for v in rec.verdicts:
        for c in v.criteria:
            for ct in c.citations:
                cites.setdefault(ct.turn, []).append(
                    (ct.quote, f"{v.metric_id} · {c.criterion_id} · {c.state}")
                )
    order = {sid: i for i, sid in enumerate(item.speakers)}
    for t in item.turns:
        who = "user (" + t.source + ")" if t.role == "user" else "assistant (target)"
        badge, cls = "", str(t.role)
        if t.speaker is not None:  # a multi-party conversation: each speaker its own colour
            k = order[t.speaker.id] % SPEAKER_CLASSES
            cls = f"{t.role} sp-{k}"
            rel = h(t.speaker.relation)
            badge = (f'<span class="speaker sp-{k}" title="{rel}">{h(t.speaker.name)}</span> '
                     f'<span class="muted">{rel}</span> · ')
        content = (
            _highlight(t.content, cites.get(t.index, []), cues, rec.locale) if t.content
            else '<em class="muted">(empty)</em>'
        )
        turn = user_turn(t.index)
        turns.append(
            f'<div class="turn {cls}" data-index="{t.index}" data-turn="{turn}"><div class="who">'
            f"turn {turn} · {badge}{h(who)}{turn_emotion(rec, t.index, scripted)}{_events(t)}</div>"
            f"{content}</div>"
        )
    for ev in item.events:
        turns.append(
            f'<div class="turn"><div class="who">transcript event{_events_from(ev.kind, ev.role)}</div></div>'
        )
    if beside:  # the trajectory beside the messages it follows
        parts.append(f'<div class="transcript-body"><div class="turns">{"".join(turns)}</div>'
                     f'<aside class="beside">{beside}</aside></div>')
    else:
        parts.extend(turns)
    parts.append("</details>")
    return "".join(parts)


def _events_from(kind: str, role: str) -> str:
    cls = _EVENT_BADGE.get(kind, "b-other")
    return f'<span class="badge {cls} ev-{h(kind)}">{h(kind)} ({h(role)})</span>'


def _transcripts(results: Results, transcripts: Mapping[str, Transcript | str], order: Sequence[str],
                 cues: CueVocabulary = NO_CUES) -> str:
    records = {r.transcript_id: r for r in results.records}
    chosen = [t for t in order if t in records][:MAX_TRANSCRIPTS]
    left = len(results.records) - len(chosen)
    scripted = results.metadata.auditor == "scripted"
    body = "".join(_transcript(records[t], transcripts.get(t), cues, scripted) for t in chosen)
    more = (
        f'<p class="muted">{left} more transcripts are in the artifact\'s transcript files.</p>'
        if left > 0
        else ""
    )
    return (
        '<section id="transcript-viewer"><h2>Transcripts</h2>'
        f'<details class="gate" id="transcripts"><summary>{h(CONTENT_NOTE)} Click to show the transcripts.'
        '</summary><input id="transcript-filter" type="search" placeholder="filter by conversation, seed, '
        f'persona, FAIL…" aria-label="filter transcripts">{body}{more}</details></section>'
    )


def load_transcripts(results: Results, results_dir: Path) -> dict[str, Transcript | str]:
    """Read every record's transcript: ``transcript_path`` relative to ``results_dir`` or
    absolute. A missing file gives ``"transcript file missing: <path>"``, an unreadable one
    ``"transcript file unreadable: <why>"``; a record without a path is left out."""
    from empath_gate.conversation.engine import read_transcript

    out: dict[str, Transcript | str] = {}
    for rec in results.records:
        if not rec.transcript_path:
            continue
        p = Path(rec.transcript_path)
        path = p if p.is_absolute() else results_dir / p
        if not path.is_file():
            out[rec.transcript_id] = f"transcript file missing: {rec.transcript_path}"
            continue
        try:
            out[rec.transcript_id] = read_transcript(path)
        except (OSError, ValueError) as exc:
            out[rec.transcript_id] = f"transcript file unreadable: {exc}"
    return out
