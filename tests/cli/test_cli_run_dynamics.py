"""Emotion dynamics in every run (``empath-gate run``): fixed scripts show bot labels and
strategies per run and the script's user trajectory marked ``script (fixed)``; with the fake
LLM auditor the user trajectory follows the bot, and ``max_worsened_share`` fails for a cold bot."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import TINY, Project
from plugin_support import environment, gate_env, read_json, shipped_paths

from empath_gate.cli import main as cli_main
from empath_gate.results import Results, read_results
from empath_gate.results.model import RESULTS_SCHEMA_VERSION
from empath_gate.testing.scenarios import ScoringJudge, install
from empath_gate.testing.scenarios.auditor import ReactiveAuditor
from empath_gate.turns.model import AnnotatorFailure, TurnLabels

WARM_BOT = '''\
def reply(messages, conversation_id):
    last = messages[-1]["content"]
    if any(ch in last for ch in "áéíóúñ") or " que " in last:
        return "Lo siento mucho. Aquí estoy contigo, cuéntame más."
    return "I'm so sorry you're going through this. I'm here for you; tell me more."
'''
COLD_BOT = '''\
def reply(messages, conversation_id):
    return "Ok. Anyway, next topic."
'''


def _run_llm_auditor(project: Project, bot: str, out: str) -> tuple[int, Path]:
    source = WARM_BOT if bot == "bot_warm_dyn" else COLD_BOT
    (project.path / f"{bot}.py").write_text(source, encoding="utf-8")
    _, shipped = shipped_paths()
    th = project.path / "thresholds-dyn.yaml"
    th.write_text(shipped.read_text(encoding="utf-8") + "\ndynamics:\n  max_worsened_share: 0.5\n",
                  encoding="utf-8")
    install(project.fake, auditor=ReactiveAuditor())
    values = gate_env(project.fake, project.cache_dir, target=f"py:{bot}:reply", judge=False)
    with environment(values), pytest.MonkeyPatch.context() as mp:
        mp.chdir(project.path)
        mp.syspath_prepend(str(project.path))
        code = cli_main(["run", *TINY, "--runs", "1", "--thresholds", str(th),
                         "--results", f"{out}/results.json"])
    return code, project.path / out / "results.json"


def user_valences(res: Results) -> dict[str, list[float]]:
    """Conversation -> the valences of its user messages (first run)."""
    out = {}
    for r in res.records:
        assert isinstance(r.annotation, TurnLabels)
        out[r.conversation_id] = [t.valence for t in r.annotation.labels if t.role == "user"]
    return out


def test_offline_run_shows_bot_labels_strategies_and_the_fixed_script_trajectory(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    project.cli("run", *TINY, "--offline", "--runs", "1", "--target", "py:bot_unsafe_cli:reply")
    capsys.readouterr()
    out = project.path / "empath-results"
    res = read_results(out / "results.json")
    assert res.schema_version == RESULTS_SCHEMA_VERSION
    [dyn] = res.dynamics
    assert dyn.user_side == "script (fixed)" and dyn.labelled == dyn.transcripts == 3
    assert dyn.worsened_share is None and dyn.recovering_share is None  # never compared or gated
    assert sum(s.units for s in dyn.strategies) > 0
    assert not any(c.check in ("max_worsened_share", "min_recovering_share") for c in res.checks)
    for rec in res.records:
        a = rec.annotation
        assert a is not None and a.status == "labelled" and a.annotator == "offline"
        assert len(a.labels) == rec.n_turns
        assert all(t.strategy for t in a.labels if t.role == "assistant")
    # the labels are in the transcript JSONL too
    first = res.records[0]
    assert first.transcript_path is not None
    last = (out / first.transcript_path).read_text(encoding="utf-8").splitlines()[-1]
    assert '"type": "annotation"' in last
    html = (out / "report.html").read_text(encoding="utf-8")
    assert 'id="dynamics"' in html and "User side: script (fixed)" in html
    assert 'class="dynamics-strip"' in html
    assert "<svg" in html.split('id="dynamics"', 1)[1]
    diff = (out / "diff.md").read_text(encoding="utf-8")
    assert "Dynamics `tiny` (offline annotator; user side script (fixed), for orientation)" in diff


def test_llm_auditor_trajectory_follows_the_bot_and_max_worsened_share_fails_for_a_cold_bot(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    warm_code, warm_path = _run_llm_auditor(project, "bot_warm_dyn", "warm")
    cold_code, cold_path = _run_llm_auditor(project, "bot_cold_dyn", "cold")
    out = capsys.readouterr().out
    warm, cold = read_results(warm_path), read_results(cold_path)
    [wd], [cd] = warm.dynamics, cold.dynamics
    assert wd.user_side == cd.user_side == "per run"
    # the same seeds, a different bot: the user's trajectory differs
    wv, cv = user_valences(warm), user_valences(cold)
    assert wv.keys() == cv.keys() and all(wv[k] != cv[k] for k in wv)
    assert all(v[-1] > 0 for v in wv.values()) and all(v[-1] < 0 for v in cv.values())
    assert wd.worsened_share == 0.0 and wd.shapes["recovering"] > 0
    assert cd.worsened_share == 1.0 and cd.shapes["deteriorating"] == 3
    wcheck = next(c for c in warm.checks if c.check == "max_worsened_share")
    ccheck = next(c for c in cold.checks if c.check == "max_worsened_share")
    assert wcheck.status == "passed" and ccheck.status == "failed"
    assert "worsened share 100.0%" in ccheck.reasons[0]
    assert not any(c.check == "min_recovering_share" for c in cold.checks)  # no limit set: no check
    assert warm_code == 0 and cold_code == 1
    assert "tiny::max_worsened_share" in out
    data = read_json(cold_path)
    assert data["dynamics"][0]["worsened_share"] == 1.0


def test_an_llm_annotator_failure_makes_only_the_dynamics_check_incomplete(
    project: Project, capsys: pytest.CaptureFixture[str]
) -> None:
    (project.path / "bot_warm_dyn.py").write_text(WARM_BOT, encoding="utf-8")
    _, shipped = shipped_paths()
    th = project.path / "thresholds-dyn.yaml"
    th.write_text(shipped.read_text(encoding="utf-8") + "\ndynamics:\n  max_worsened_share: 0.5\n",
                  encoding="utf-8")
    # the fake judge answers metric verdicts: asked for turn labels, its answer does not parse
    install(project.fake, auditor=ReactiveAuditor(), judge=ScoringJudge(default=10, seeds=project.seeds))
    values = gate_env(project.fake, project.cache_dir, target="py:bot_warm_dyn:reply")
    values["EMPATH_DYNAMICS_ANNOTATOR"] = "judge"
    with environment(values), pytest.MonkeyPatch.context() as mp:
        mp.chdir(project.path)
        mp.syspath_prepend(str(project.path))
        code = cli_main(["run", *TINY, "--runs", "1", "--thresholds", str(th),
                         "--results", "ann/results.json"])
    capsys.readouterr()
    res = read_results(project.path / "ann" / "results.json")
    assert all(isinstance(r.annotation, AnnotatorFailure) for r in res.records)
    # the annotation call is a judge call of the transcript: one per metric verdict, plus its asks
    assert all(r.by_role["judge"].calls > len(r.verdicts) for r in res.records)
    [check] = [c for c in res.checks if c.check == "max_worsened_share"]
    assert check.status == "incomplete" and "no emotion labels" in check.reasons[0]
    # the metrics are untouched: every verdict scored, no test incomplete
    assert all(v.failure is None and v.score is not None for v in res.verdicts)
    assert "incomplete" not in {d.status for d in res.decisions}
    assert code == 3
