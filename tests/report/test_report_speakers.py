"""A multi-party run's results and HTML per speaker: each speaker's trajectory and risk timing,
named and coloured as on the transcript's turns."""

from __future__ import annotations

import json
import os
import re
import textwrap
from pathlib import Path

import pytest

from empath_gate.cli import main as cli_main
from empath_gate.instrument.loader import load_instrument

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
    assert cli_main(args) in (0, 1)
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
