"""The dynamics page: no text unless asked, charts only with data, the 2 MB cap, escaping."""

from __future__ import annotations

import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "turns"))

from dynamics_stub import stub_annotate

from empath_gate.dynamics import analyse_dynamics
from empath_gate.report.html.dynamics import CONTENT_NOTE, MAX_HTML_BYTES, render_dynamics_html
from empath_gate.turns.external import SourcedDialogue
from empath_gate.turns.model import Dialogue, DialogueTurn

SECRET_PHRASE = "my dog Biscuit died"


def _item(cid: str, pairs: list[tuple[str, str]], locale: str = "en-US") -> SourcedDialogue:
    turns = []
    for user, bot in pairs:
        turns.append(DialogueTurn(role="user", text=user))
        if bot:
            turns.append(DialogueTurn(role="assistant", text=bot))
    return SourcedDialogue(
        dialogue=Dialogue(conversation_id=cid, locale=locale, turns=tuple(turns)),
        keys={"locale": locale},
        profiles=("resistance",),
    )


def _items() -> list[SourcedDialogue]:
    return [
        _item(
            "down-1",
            [
                (f"I'm sad, {SECRET_PHRASE}", "Try a walk"),
                ("I feel hopeless", "Are you safe?"),
                ("still hopeless", "I hear you"),
            ],
        ),
        _item("up-1", [("I'm scared", "What happened?"), ("a bit better", "Good"), ("I have hope now", "")]),
        _item("bad-1", [("UNPARSEABLE", "ok")]),
    ]


def test_no_message_text_unless_asked() -> None:
    items = _items()
    report = analyse_dynamics(items, stub_annotate, group_keys=("locale",))
    page = render_dynamics_html(report)
    assert SECRET_PHRASE not in page and "Try a walk" not in page
    assert "no message text is shown" in page
    shown = render_dynamics_html(report, {i.dialogue.conversation_id: i.dialogue for i in items})
    assert SECRET_PHRASE in shown
    gate = shown.index(CONTENT_NOTE)
    assert shown.index(SECRET_PHRASE) > gate
    assert shown[:gate].rfind('<details class="gate"') > shown[:gate].rfind("</details>")


def test_sections_reflect_the_data_and_failures_are_listed() -> None:
    report = analyse_dynamics(_items(), stub_annotate, group_keys=("locale",))
    page = render_dynamics_html(report)
    assert report.failed == 1
    assert 'id="failures"' in page and "bad-1" in page and "parse_error" in page
    assert 'id="strategies"' in page and 'data-strategy="providing_suggestions"' in page
    assert 'id="risky"' in page and "escalation_to_hopelessness" in page
    assert 'id="profiles"' in page and "resistance" in page
    assert page.count('class="heatmap"') >= 2  # user and bot overall
    assert "<script" not in page and "script-src 'none'" in page


def test_no_profile_table_without_profiles() -> None:
    items = [i.model_copy(update={"profiles": ()}) for i in _items()]
    page = render_dynamics_html(analyse_dynamics(items, stub_annotate))
    assert 'id="strategies"' in page and 'id="profiles"' not in page


def test_charts_with_no_data_are_not_drawn() -> None:
    lone = [_item("one", [("I'm sad", "")])]  # one user message: no transition, no unit
    report = analyse_dynamics(lone, stub_annotate, group_keys=("locale",))
    page = render_dynamics_html(report)
    assert 'class="heatmap"' not in page
    assert 'id="strategies"' not in page and 'id="risky"' not in page and 'id="interplay"' not in page
    assert 'class="trajectories"' not in page  # too_short draws no trajectory plot
    assert 'data-shape="too_short"' in page


def test_ids_are_escaped() -> None:
    evil = [_item('<img src=x onerror="alert(1)">', [("I'm sad", "Try this"), ("hopeless", "ok")])]
    page = render_dynamics_html(analyse_dynamics(evil, stub_annotate))
    assert "<img src=x" not in page and "&lt;img src=x" in page


def test_the_page_is_capped_and_says_what_was_left_out() -> None:
    long_text = "hopeless " * 300
    items = [_item(f"c{i:05d}", [(long_text, "Try a walk?")] * 10) for i in range(2500)]
    report = analyse_dynamics(items, stub_annotate, group_keys=("locale",))
    page = render_dynamics_html(report, {i.dialogue.conversation_id: i.dialogue for i in items})
    assert len(page.encode("utf-8")) <= MAX_HTML_BYTES
    m = re.search(r"(\d+) of 2500 conversations are left out", page)
    assert m is not None and 0 < int(m.group(1)) < 2500


def test_secrets_are_taken_out_of_the_page_with_text() -> None:
    key = "sk-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4"
    items = [_item("leak", [(f"I'm sad, my key is {key}", "Try rotating it"), ("hopeless", "ok")])]
    report = analyse_dynamics(items, stub_annotate)
    page = render_dynamics_html(report, {i.dialogue.conversation_id: i.dialogue for i in items})
    assert key not in page and "&lt;redacted&gt;" in page
