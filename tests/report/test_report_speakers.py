"""A multi-party run's results, HTML and diff per speaker: each speaker's trajectory and risk
timing, named and coloured as on the transcript's turns; the diff's one line per suite."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest
from report_factory import build_results

from empath_gate.analysis.risk_timing import SuiteRiskTiming, TimingClass, TranscriptTiming
from empath_gate.analysis.speakers import SpeakerTiming
from empath_gate.cli import main as cli_main
from empath_gate.instrument.loader import load_instrument
from empath_gate.report.html import render_html
from empath_gate.report.markdown import render_markdown
from empath_gate.report.view.risk_timing import speaker_text

# replies with a crisis resource to the confirm turn of a risk seed, plainly otherwise
BOT = textwrap.dedent('''
    from empath_gate.instrument.loader import load_instrument

    SEEDS = {s.id: s for s in load_instrument(()).seeds if s.multi_party}
    RISK = {"en-US": "Are you safe right now? Please call or text 988, or 911 if you are in danger.",
            "es-MX": "¿Estás a salvo ahora? Llama a la Línea de la Vida al 800 911 2000 o al 911."}

    def reply(messages, conversation_id):
        seed = next(s for sid, s in SEEDS.items() if conversation_id.startswith(sid + "-"))
        users = sum(1 for m in messages if m["role"] == "user")
        if seed.risk.confirm_turn is not None and users == seed.risk.confirm_turn:
            return RISK[seed.locale]
        return "Thank you both for telling me this."
''')


@pytest.fixture
def run_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in [k for k in os.environ if k.startswith("EMPATH_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("EMPATH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "speaker_bot.py").write_text(BOT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    args = ["run", "--suite", "multi-party", "--offline", "--runs", "1", "--target", "py:speaker_bot:reply",
            "--results", "out/results.json"]
    assert cli_main(args) == 3  # offline: every multi-party test skipped, not evaluated
    return tmp_path / "out"


def test_results_and_html_per_speaker(run_dir: Path) -> None:
    data = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    seeds = {s.id: s for s in load_instrument(()).seeds if s.multi_party}
    records = {r["transcript_id"]: r for r in data["records"]}
    for r in records.values():
        assert [s["id"] for s in r["speakers"]] == list(seeds[r["seed_id"]].speakers[: len(r["speakers"])])
    # risk timing: the speaker who wrote the confirm turn was answered in the reply to it
    [timing] = data["risk_timing"]
    risky = [t for t in timing["transcripts"] if t["speakers"]]
    assert risky
    for t in risky:
        seed = seeds[records[t["transcript_id"]]["seed_id"]]
        confirm_by = seed.speakers[seed.risk.confirm_turn - 1]
        mine = next(s for s in t["speakers"] if s["speaker"] == confirm_by)
        assert seed.risk.confirm_turn in mine["risk_turns"]
        assert mine["first_response"] == seed.risk.confirm_turn == t["first_turn"]
        assert mine["lag"] == seed.risk.confirm_turn - mine["risk_turns"][0]
    assert timing["speaker_counts"]["speakers"] == sum(len(t["speakers"]) for t in risky)
    assert timing["speaker_counts"]["never_answered"] == sum(
        1 for t in risky for s in t["speakers"] if s["first_response"] is None)
    # dynamics: one row per speaker of each transcript
    [dyn] = data["dynamics"]
    rows = dyn["speakers"]
    assert len(rows) == sum(len({s["id"] for s in r["speakers"]}) for r in records.values())
    for row in rows:
        own = [s["id"] for s in records[row["transcript_id"]]["speakers"]].count(row["speaker"])
        assert row["messages"] == own == len(row["valences"])
    # the HTML names and colours each speaker as on the transcript's turns
    html = (run_dir / "report.html").read_text(encoding="utf-8")
    assert "Each speaker&#x27;s own trajectory" in html or "Each speaker's own trajectory" in html
    assert "Per speaker:" in html and 'class="speaker-timing"' in html
    for r in records.values():
        ids = list(dict.fromkeys(s["id"] for s in r["speakers"]))
        for k, sid in enumerate(ids):
            name = next(s["name"] for s in r["speakers"] if s["id"] == sid)
            badge = rf'<span class="speaker sp-{k % 4}" title="[^"]*">{re.escape(name)}</span>'
            assert re.search(badge, html)
    for t in risky:
        for s in t["speakers"]:
            assert f'<li data-speaker="{s["speaker"]}">' in html


def test_the_diff_has_a_per_speaker_line_matching_the_results(run_dir: Path) -> None:
    data = json.loads((run_dir / "results.json").read_text(encoding="utf-8"))
    [timing] = data["risk_timing"]
    c = timing["speaker_counts"]
    md = (run_dir / "diff.md").read_text(encoding="utf-8")
    [line] = [x for x in md.splitlines() if x.startswith("Risk-response timing per speaker: ")]
    people = {(s["name"], s["relation"]) for t in timing["transcripts"] if t["timing"] != "not_reached"
              for s in t["speakers"]}
    later = c["speakers"] - c["answered_within_one_turn"] - c["never_answered"]
    assert line.startswith(
        f"Risk-response timing per speaker: {timing['suite']}: {len(people)} speakers with a risk turn, "
        f"in {c['speakers']} speaker-transcripts: {c['answered_within_one_turn']} answered in the reply to "
        f"their first risk turn or the next, {later} later, {c['never_answered']} never"), line


def _timing(speakers: list[tuple[str, str, int | None]], timing: TimingClass = "on_time") -> TranscriptTiming:
    return TranscriptTiming(
        transcript_id=f"t{len(speakers)}", conversation_id="c", timing=timing,
        speakers=tuple(SpeakerTiming(speaker=n.lower(), name=n, relation=rel, risk_turns=(2,),
                                     first_response=first, lag=None if first is None else first - 2)
                       for n, rel, first in speakers),
    )


def test_the_per_speaker_line_names_who_was_never_answered_and_one_user_suites_have_none() -> None:
    rows = (
        _timing([("Ana", "mother", 2), ("Sam", "teenager", None)]),
        _timing([("Ana", "mother", 5), ("Sam", "teenager", None), ("Leo", "", None)]),  # Ana: lag 3
        _timing([("Sam", "teenager", None)], timing="not_reached"),  # not timed: not counted
    )
    counts = {"speakers": 5, "answered_within_one_turn": 1, "never_answered": 3}
    suite = SuiteRiskTiming(suite="multi-party", counts={}, transcripts=rows, speaker_counts=counts)
    text = ("3 speakers with a risk turn, in 5 speaker-transcripts: 1 answered in the reply to their first "
            "risk turn or the next, 1 later, 3 never; never answered: Sam (teenager) in 2 of 2 transcripts, "
            "Leo in 1 of 1 transcript; answered later: Ana (mother) in 1 of 2 transcripts")
    assert speaker_text(suite) == text
    results = build_results().model_copy(update={"risk_timing": (suite,)})
    assert f"\nRisk-response timing per speaker: multi-party: {text}\n" in render_markdown(results)
    assert f"Per speaker: {text}." in render_html(results)
    one_user = suite.model_copy(update={"speaker_counts": {}, "transcripts": ()})
    assert speaker_text(one_user) is None
    md = render_markdown(build_results().model_copy(update={"risk_timing": (one_user,)}))
    assert "Risk-response timing: multi-party" in md and "per speaker" not in md


def test_the_per_speaker_line_counts_people_once_over_the_runs_and_names_three() -> None:
    # 4 people never answered in each of 3 runs: 4 speakers, 12 speaker-transcripts, 3 named
    people = [("Fer", "mother"), ("Armando", "father"), ("Karla", "sister"), ("Iker", "")]
    rows = tuple(_timing([(n, rel, None) for n, rel in people]) for _ in range(3))
    counts = {"speakers": 12, "answered_within_one_turn": 0, "never_answered": 12}
    suite = SuiteRiskTiming(suite="multi-party", counts={}, transcripts=rows, speaker_counts=counts)
    assert speaker_text(suite) == (
        "4 speakers with a risk turn, in 12 speaker-transcripts: 0 answered in the reply to their first "
        "risk turn or the next, 0 later, 12 never; never answered: Fer (mother) in 3 of 3 transcripts, "
        "Armando (father) in 3 of 3 transcripts, Karla (sister) in 3 of 3 transcripts, 1 more")
