"""The imported EMPATH instrument end to end: ``import-empath`` on the fixture of upstream's
shapes, ``validate``, the plan, then an LLM-auditor run against the fake OpenAI server (target,
auditor and judge) that completes; offline (the scripted auditor) its tests are skipped with
the reason, never passed, and no model is called."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import ClassVar

import pytest
from plugin_support import environment, gate_env, read_json, write_bot

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "instrument"))

from upstream_checkout import FIXTURE_ORDER, write_checkout

from empath_gate.cli import main as cli_main
from empath_gate.conversation.auditor import OPEN_ARC
from empath_gate.instrument.loader import load_instrument
from empath_gate.plan import build_plan
from empath_gate.plan.rebuild import SKIP_NEEDS_LLM_AUDITOR
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.fake_openai import FakeRequest
from empath_gate.testing.scenarios import ScoringJudge, TargetBot, install, seed_table

pytestmark = pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning")

RUNS = 2
_TURN = re.compile(r"This is message (\d+) of at most (\d+)\.")


class FreeAuditor:
    """An auditor model for seeds without a script: three messages of its own in the prompt's
    language, then the end token; it records every system prompt it was given."""

    LINES: ClassVar[dict[str, tuple[str, ...]]] = {
        "en": ("hi, long week", "I keep thinking about it at night", "ok, thanks for listening"),
        "es": ("hola, ¿cómo estás? la semana está pesada", "no dejo de pensar en eso en la noche, ¿sabes?",
               "sí, gracias por escucharme"),
    }

    def __init__(self) -> None:
        self.prompts: list[str] = []

    def __call__(self, req: FakeRequest) -> str:
        system = next(str(m.get("content") or "") for m in req.messages if m.get("role") == "system")
        self.prompts.append(system)
        m = _TURN.search(system)
        assert m is not None, "the auditor prompt states no turn number"
        turn = int(m.group(1))
        lines = self.LINES["es" if "Write in Mexican Spanish" in system else "en"]
        return lines[turn - 1] if turn <= len(lines) else "<<END>>"


@pytest.fixture()
def layer(tmp_path: Path) -> Path:
    root = write_checkout(tmp_path / "upstream")
    out = tmp_path / "layer"
    assert cli_main(["import-empath", str(root), "-o", str(out)]) == 0
    return out


def test_the_imported_layer_validates_plans_and_completes_an_llm_auditor_run(
    layer: Path, tmp_path: Path, fake: FakeOpenAIServer, cache_dir: Path, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    assert cli_main(["validate", "--suites", str(layer)]) == 0
    assert "empath-upstream: 6 seeds, 6 conversations" in capsys.readouterr().out
    plan = build_plan(load_instrument([layer]), ["empath-upstream"], runs=RUNS)
    assert [c.seed_id for c in plan.conversations] == list(FIXTURE_ORDER)
    auditor = FreeAuditor()
    judge = ScoringJudge(default=10, seeds=seed_table([c.conversation_id for c in plan.conversations], RUNS))
    install(fake, target=TargetBot("safe"), auditor=auditor, judge=judge)
    monkeypatch.chdir(tmp_path)
    with environment(gate_env(fake, cache_dir, judge_tokens=3100)):
        code = cli_main(["run", "--suite", "empath-upstream", "--suites-dir", str(layer), "--runs", str(RUNS),
                         "--results", "out/results.json"])
    out = capsys.readouterr().out
    assert code == 0, out
    results = read_json(tmp_path / "out" / "results.json")
    assert results["summary"]["counts"]["passed"] == 6
    assert {r["status"] for r in results["records"]} == {"complete"}
    assert all(r["n_turns"] == 6 and r["auditor_turns"] >= 3 for r in results["records"])
    assert len(results["records"]) == 6 * RUNS
    assert auditor.prompts and all(OPEN_ARC in p for p in auditor.prompts)
    assert not any("The messages below are the arc" in p or "system prompt" in p for p in auditor.prompts)


def test_offline_the_imported_seeds_are_skipped_with_the_reason(
    layer: Path, tmp_path: Path, fake: FakeOpenAIServer, capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write_bot(tmp_path, "safe", "bot_import_offline")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    before = len(fake.requests)
    with environment({"EMPATH_CACHE_DIR": str(tmp_path / "cache")}):
        code = cli_main(["run", "--suite", "empath-upstream", "--suites-dir", str(layer), "--offline",
                         "--target", "py:bot_import_offline:reply", "--results", "off/results.json"])
    out = capsys.readouterr().out
    assert len(fake.requests) == before
    results = read_json(tmp_path / "off" / "results.json")
    decisions = results["decisions"]
    assert len(decisions) == 6 and {d["status"] for d in decisions} == {"skipped"}
    assert all(d["reasons"] == [f"{d['metric_id']}: {SKIP_NEEDS_LLM_AUDITOR}"] for d in decisions)
    assert results["summary"]["counts"]["passed"] == 0 and results["records"] == []
    assert "6 conversations skipped with their tests: needs an LLM auditor" in out
    assert code != 1, out  # skipped is never a failure, and never a pass
