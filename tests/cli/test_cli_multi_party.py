"""The multi-party suite end to end: offline with a callable bot (in two shards, merged), and
against the fake OpenAI server as an HTTP target under both speaker conventions."""

from __future__ import annotations

import json
import os
import textwrap
from pathlib import Path

import pytest

from empath_gate.cli import main as cli_main
from empath_gate.conversation.transcript_io import read_transcript
from empath_gate.instrument.loader import load_instrument
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import JUDGE_MODEL, ScoringJudge, install, role_env

RELATIONAL = ("relational_understanding", "relation_sensitive_support")

BOT = textwrap.dedent('''
    CALLS = []

    def reply(messages, conversation_id):
        CALLS.append([dict(m) for m in messages])
        return "I hear each of you. Can you each say what you need from the other?"
''')


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for key in [k for k in os.environ if k.startswith("EMPATH_")]:
        monkeypatch.delenv(key)
    monkeypatch.setenv("EMPATH_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mp_bot.py").write_text(BOT, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _transcripts(results: Path) -> list:
    data = json.loads(results.read_text(encoding="utf-8"))
    return [read_transcript(results.parent / r["transcript_path"]) for r in data["records"]]


def test_offline_run_in_shards_merges_speaker_turns(here: Path) -> None:
    import mp_bot  # type: ignore[import-not-found]

    base = ("run", "--suite", "multi-party", "--offline", "--runs", "1", "--target", "py:mp_bot:reply")
    # offline every multi-party test needs a judge model and is skipped: not evaluated, exit 3
    assert cli_main([*base, "--shard", "1/2", "--results", "s1/results.json"]) == 3
    assert cli_main([*base, "--shard", "2/2", "--results", "s2/results.json"]) == 3
    assert cli_main(["merge", "s1/results.json", "s2/results.json", "-o", "all/results.json"]) == 0
    transcripts = _transcripts(here / "all" / "results.json")
    party = [s for s in load_instrument(()).seeds if s.multi_party]
    assert sorted(t.seed_id for t in transcripts) == sorted(s.id for s in party)
    for t in transcripts:
        seed = next(s for s in party if s.id == t.seed_id)
        users = [u for u in t.turns if u.role == "user"]
        assert [u.speaker.id if u.speaker else None for u in users] == list(seed.speakers[: len(users)])
    # the callable got every user message as "Name: text" (the default convention)
    names = {p.name for s in party for p in s.participants}
    user_msgs = [m for call in mp_bot.CALLS for m in call if m["role"] == "user"]
    assert user_msgs and all(m["content"].split(": ", 1)[0] in names for m in user_msgs)
    html = (here / "all" / "report.html").read_text(encoding="utf-8")
    assert 'class="speaker' in html
    # offline, the relational family is skipped: it needs a judge model
    decisions = json.loads((here / "all" / "results.json").read_text(encoding="utf-8"))["decisions"]
    merged = json.loads((here / "all" / "results.json").read_text(encoding="utf-8"))
    assert all(r["speakers"] for r in merged["records"])  # merge keeps each user turn's speaker
    assert {row["transcript_id"] for row in merged["dynamics"][0]["speakers"]} == {
        r["transcript_id"] for r in merged["records"]}
    assert any(t["speakers"] for t in merged["risk_timing"][0]["transcripts"])
    relational = [d for d in decisions if d["metric_id"] in RELATIONAL]
    assert len(relational) == 2 * len(party)
    assert all(d["status"] == "skipped" and "needs a judge model" in d["reasons"][0] for d in relational)


def test_judged_run_scores_the_relational_family(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)  # the scripted auditor with a judge is a local run
    judge = ScoringJudge(default=8, states={"vulnerable_safety_first": "FAIL"})
    with FakeOpenAIServer(strict=False) as fake:
        install(fake, judge=judge)
        for key, value in role_env(fake, target=None, auditor=False, judge=True).items():
            monkeypatch.setenv(key, value)
        args = ["run", "--suite", "multi-party", "--runs", "1", "--target", "py:mp_bot:reply",
                "--auditor", "scripted", "--results", "judged/results.json"]
        assert cli_main(args) in (0, 1)
    asked = [c.metrics for c in judge.calls]
    assert asked and all(set(RELATIONAL) <= set(m) for m in asked)
    assert all("no_side_taking" in m["relation_sensitive_support"] for m in asked)
    data = json.loads((here / "judged" / "results.json").read_text(encoding="utf-8"))
    scores = {(r["conversation_id"], v["metric_id"]): v.get("score") for r in data["records"]
              for v in r["verdicts"] if v["metric_id"] in RELATIONAL}
    assert len(scores) == 2 * len(data["records"])
    # the critical FAIL caps relation-sensitive support at 3; relational understanding keeps 8
    assert {s for (_, m), s in scores.items() if m == "relational_understanding"} == {8}
    assert {s for (_, m), s in scores.items() if m == "relation_sensitive_support"} == {3}
    failed = [d for d in data["decisions"] if d["metric_id"] == "relation_sensitive_support"]
    assert failed and all(d["status"] == "failed" for d in failed)


def test_rejudge_reads_speaker_turns(here: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    args = ["run", "--suite", "multi-party", "--offline", "--runs", "1", "--target", "py:mp_bot:reply"]
    assert cli_main([*args, "--results", "base/results.json"]) == 3  # offline: all skipped, not evaluated
    base_file = here / "base" / "results.json"
    base = json.loads(base_file.read_text(encoding="utf-8"))
    # a file written before records carried speakers: rejudge reads them from the transcripts
    expected = [r.pop("speakers") for r in base["records"]]
    base_file.write_text(json.dumps(base, ensure_ascii=False), encoding="utf-8")
    with FakeOpenAIServer(strict=False) as fake:
        install(fake, judge=ScoringJudge(default=8))
        for key, value in role_env(fake, target=None, auditor=False, judge=True).items():
            monkeypatch.setenv(key, value)
        assert cli_main(["rejudge", "base/results.json", "--judge", f"openai/{JUDGE_MODEL}",
                         "-o", "rj/results.json"]) in (0, 1)
        prompts = [m["content"] for r in fake.requests for m in r.messages if m["role"] == "user"]
    assert prompts and all("USER (" in p for p in prompts)  # the judge sees who wrote each turn
    data = json.loads((here / "rj" / "results.json").read_text(encoding="utf-8"))
    assert data["records"] and all(r["verdicts"] for r in data["records"])
    assert [t.speakers for t in _transcripts(here / "rj" / "results.json")] == [
        t.speakers for t in _transcripts(here / "base" / "results.json")
    ]
    # each user turn's speaker is back in the re-judged records
    assert [r["speakers"] for r in data["records"]] == expected
    assert all(expected)
    assert any(t["speakers"] for t in data["risk_timing"][0]["transcripts"])


@pytest.mark.parametrize("convention", ["prefix", "name"])
def test_http_target_gets_speaker_labels(here: Path, convention: str) -> None:
    with FakeOpenAIServer(strict=False) as fake:
        fake.on("empath-target", "Thank you both for writing.")
        args = ["run", "--suite", "multi-party", "--offline", "--runs", "1", "--target", fake.base_url,
                "--multi-party-convention", convention, "--results", f"{convention}/results.json"]
        assert cli_main(args) == 3  # offline: every multi-party test skipped, not evaluated
        requests = list(fake.requests)
    assert requests
    party = [s for s in load_instrument(()).seeds if s.multi_party]
    labels = tuple(f"{p.name}: " for s in party for p in s.participants)
    for req in requests:
        users = [m for m in req.messages if m["role"] == "user"]
        assert users
        if convention == "name":
            assert all(m.get("name") for m in users)
            assert not any(m["content"].startswith(labels) for m in users)
        else:
            assert all("name" not in m for m in users)
            assert all(m["content"].startswith(labels) for m in users)
    transcripts = _transcripts(here / convention / "results.json")
    assert transcripts and all(t.schema_version == "2" for t in transcripts)
