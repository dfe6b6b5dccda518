"""``empath-gate rejudge`` end to end on the fake OpenAI-compatible server.

One results file is produced once per module by ``empath-gate run --suite smoke --runs 2`` with
the fake target, auditor and judge; every test re-judges it. The judges score by request seed,
so each transcript and re-judge index gets a known score:

* ``fake-judge`` (the run's judge): run 0 -> 8, run 1 -> 6 on its first judging; re-judging k
  adds ``DELTA[k]`` (+1, -1, 0 for k = 1, 2, 3);
* ``fake-judge-b``: 7 everywhere.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from empath_gate.calibration.status import CalibrationStatus, write_status
from empath_gate.cli import main
from empath_gate.instrument.loader import load_instrument
from empath_gate.plan import build_plan
from empath_gate.report.markdown import render_markdown
from empath_gate.results import Results, read_results
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import (
    JUDGE_MODEL,
    ScoringJudge,
    ScriptAuditor,
    TargetBot,
    derive_seed,
    install,
    role_env,
)

JUDGE_A = f"openai/{JUDGE_MODEL}"
JUDGE_B_NAME = "fake-judge-b"
JUDGE_B = f"openai/{JUDGE_B_NAME}"
BASE = {0: 8, 1: 6}
DELTA = {0: 0, 1: 1, 2: -1, 3: 0}
MAX_K = 3

pytestmark = pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning")


@dataclass
class Env:
    server: FakeOpenAIServer
    results: Path
    root: Path
    judge_a: ScoringJudge
    judge_b: ScoringJudge
    pyproject: Path

    def counts(self) -> Counter[str]:
        return Counter(r.model for r in self.server.requests)

    def rejudge(self, *args: str) -> int:
        return main(["rejudge", str(self.results), "--pyproject", str(self.pyproject), *args])


def _seed_table(conversation_ids: list[str], runs: int) -> dict[int, tuple[str, int]]:
    """Judge seed -> ("<conversation>#<k>", run) for the first judging and re-judgings 1..MAX_K
    (the formula of ``judge_run_seed``: base seed 0, then ``derive_seed(seed, "rejudge", k)``)."""
    table: dict[int, tuple[str, int]] = {}
    for conv in conversation_ids:
        for run in range(runs):
            first = derive_seed(0, conv, run)
            table[first] = (f"{conv}#0", run)
            for k in range(1, MAX_K + 1):
                table[derive_seed(first, "rejudge", k)] = (f"{conv}#{k}", run)
    return table


def _score_a(conv: str | None, run: int | None) -> int:
    assert conv is not None and run is not None, "a judge request with an unknown seed"
    k = int(conv.rsplit("#", 1)[1])
    return BASE[run] + DELTA[k]


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    root = tmp_path_factory.mktemp("rejudge")
    instrument = load_instrument()
    plan = build_plan(instrument, ["smoke"], runs=2)
    seeds = _seed_table([c.conversation_id for c in plan.conversations], plan.runs)
    metric_ids = [m.id for m in instrument.metrics]
    judge_a = ScoringJudge(scores=dict.fromkeys(metric_ids, _score_a), seeds=seeds)
    judge_b = ScoringJudge(default=7)
    status = CalibrationStatus(
        judge_model=JUDGE_A,
        rubric="strict",
        kind="gold",
        against="gold labels clinic.jsonl",
        reference="clinic.jsonl",
        date="2026-02-20",
        n=120,
        figures={"bias": 0.4, "mae": 0.7, "within_1": 0.9, "spearman": 0.8},
        tool_version="0.1.0",
    )
    calibration = write_status(status, root / "calibration-a.json")
    with FakeOpenAIServer() as server, pytest.MonkeyPatch.context() as mp:
        install(server, target=TargetBot("safe"), auditor=ScriptAuditor(max_messages=2), judge=judge_a)
        server.on(JUDGE_B_NAME, judge_b)
        for k, v in role_env(server, target="model").items():
            mp.setenv(k, v)
        mp.setenv("EMPATH_CACHE_DIR", str(root / "cache"))
        mp.setenv("EMPATH_JUDGE_CALIBRATION", str(calibration))
        mp.delenv("CI", raising=False)
        pyproject = root / "no-pyproject.toml"
        results = root / "run" / "results.json"
        rc = main(
            [
                "run",
                "--suite",
                "smoke",
                "--runs",
                "2",
                "--results",
                str(results),
                "--pyproject",
                str(pyproject),
            ]
        )
        assert rc in (0, 1), "the run completed (the gate outcome does not matter here)"
        yield Env(server, results, root, judge_a, judge_b, pyproject)


def _scores(res: Results) -> dict[tuple[str, str, int], int | None]:
    return {(v.transcript_id, v.metric_id, v.rejudge): v.score for r in res.records for v in r.verdicts}


def test_base_run_is_calibrated_and_scored_by_seed(env: Env) -> None:
    res = read_results(env.results)
    cal = res.metadata.judge.calibration
    assert cal is not None and cal["status"] == "calibrated" and cal["calibrated"] is True
    assert cal["against"] == "gold labels clinic.jsonl"
    assert {s for (tid, _, _), s in _scores(res).items()} == {8, 6}
    footer = render_markdown(res).split("**Judge calibration:**", 1)[1].splitlines()[0]
    assert "judge calibrated against gold labels clinic.jsonl on 2026-02-20" in footer
    assert "within ±1 90%" in footer and "n = 120" in footer
    rel = res.reliability
    assert rel is not None and rel["variance_split"] is False and rel["metrics"]
    for e in rel["metrics"]:
        assert e["within_sd"] == pytest.approx(2**0.5)  # runs 8 and 6
        assert e["judge_variance"] is None
    # the artifacts the run wrote beside the results show both
    html = (env.results.parent / "report.html").read_text(encoding="utf-8")
    assert 'id="reliability"' in html and "judge calibrated against gold labels clinic.jsonl" in html
    diff = (env.results.parent / "diff.md").read_text(encoding="utf-8")
    assert "#### Test-retest reliability" in diff and "1.41" in diff.split("#### Test-retest reliability")[1]


def test_another_judge_never_calls_target_or_auditor(env: Env, tmp_path: Path) -> None:
    before = env.counts()
    out = tmp_path / "elsewhere" / "b.json"
    assert env.rejudge("--judge", JUDGE_B, "-o", str(out)) == 0
    after = env.counts()
    original = read_results(env.results)
    res = read_results(out)
    complete = [r for r in original.records if r.status == "complete"]
    assert after["fake-target"] == before["fake-target"]
    assert after["fake-auditor"] == before["fake-auditor"]
    assert after[JUDGE_B_NAME] - before[JUDGE_B_NAME] == len(complete) == 20
    assert after[JUDGE_MODEL] == before[JUDGE_MODEL]
    assert res.metadata.judge.model == JUDGE_B
    assert res.metadata.judge.rubric == "strict"
    assert res.metadata.judge.template_hash == original.metadata.judge.template_hash
    cal = res.metadata.judge.calibration
    assert cal is not None and cal["calibrated"] is False
    assert cal["status"] == f"stale: calibrated for {JUDGE_A}"
    assert "judge not calibrated (stale" in render_markdown(res)
    verdicts = res.verdicts
    assert verdicts and all(v.judge_model == JUDGE_B and v.score == 7 and v.rejudge == 0 for v in verdicts)
    assert {(r.transcript_id, r.content_hash) for r in res.records} == {
        (r.transcript_id, r.content_hash) for r in original.records
    }
    assert all(c.mean == 7 for c in res.cells)
    assert res.metadata.plan_id == original.metadata.plan_id
    # the per-turn emotion labels of the run are kept, and so are the suite's dynamics
    assert all(r.annotation is not None for r in complete)
    assert [r.annotation for r in res.records] == [r.annotation for r in original.records]
    assert res.dynamics == original.dynamics and res.dynamics
    # the paths are rewritten relative to the new folder: the output can be re-judged in turn
    assert all(r.transcript_path and (out.parent / r.transcript_path).is_file() for r in res.records)
    again = tmp_path / "again.json"
    assert (
        main(["rejudge", str(out), "--judge", JUDGE_A, "-o", str(again), "--pyproject", str(env.pyproject)])
        == 0
    )
    assert _scores(read_results(again)) == _scores(original), "judge A again: its first judgings"


def test_agreement_and_calibrate_read_the_output(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "b.json"
    assert env.rejudge("--judge", JUDGE_B, "-o", str(out)) == 0
    capsys.readouterr()
    saved = tmp_path / "peer.json"
    assert main(["agreement", str(env.results), str(out), "--format", "json", "--save", str(saved)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["judges"] == [JUDGE_A, JUDGE_B]
    assert doc["n_pairs"] == 20 and doc["unmatched"] == {"a": 0, "b": 0}
    pooled = doc["pooled"]
    assert pooled["exact"]["value"] == 0.0  # 8 and 6 against 7
    assert pooled["within_one"]["value"] == 1.0
    assert pooled["mean_abs_diff"]["value"] == 1.0
    status = json.loads(saved.read_text(encoding="utf-8"))
    assert status["judge_model"] == JUDGE_A and status["kind"] == "peer_judge"
    assert status["against"] == f"peer judge {JUDGE_B}" and status["n"] == 20
    assert status["figures"]["within_1"] == 1.0 and status["figures"]["exact"] == 0.0

    gold = tmp_path / "gold.jsonl"
    res = read_results(env.results)
    rows = [
        {"conversation_id": r.conversation_id, "run": r.run, "metric": v.metric_id, "score": 6}
        for r in res.records
        for v in r.verdicts
    ]
    gold.write_text("\n".join(json.dumps(x) for x in rows) + "\n", encoding="utf-8")
    cal_a = tmp_path / "gold-a.json"
    assert (
        main(
            [
                "calibrate",
                "--gold",
                str(gold),
                "--results",
                str(env.results),
                "--format",
                "json",
                "--save",
                str(cal_a),
            ]
        )
        == 0
    )
    a = json.loads(capsys.readouterr().out)
    assert a["judge_model"] == JUDGE_A
    assert a["pooled"]["n"] == 20 and a["pooled"]["bias"]["value"] == pytest.approx(1.0)
    assert a["pooled"]["within_one"] == pytest.approx(0.5)  # run 0: 8 vs 6; run 1: 6 vs 6
    assert main(["calibrate", "--gold", str(gold), "--results", str(out), "--format", "json"]) == 0
    b = json.loads(capsys.readouterr().out)
    assert b["judge_model"] == JUDGE_B and b["pooled"]["mae"] == pytest.approx(1.0)
    status_a = json.loads(cal_a.read_text(encoding="utf-8"))
    assert status_a["kind"] == "gold" and status_a["against"] == "gold labels gold.jsonl"
    assert status_a["figures"]["bias"] == pytest.approx(1.0)
    assert status_a["figures"]["within_1"] == pytest.approx(0.5)

    # a run configured with that status file shows it, for the judge it was made for only
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("EMPATH_JUDGE_CALIBRATION", str(saved))
        same = tmp_path / "same.json"
        assert env.rejudge("--times", "1", "-o", str(same)) == 0
        cal = read_results(same).metadata.judge.calibration
        assert cal is not None and cal["status"] == "calibrated"
        footer = render_markdown(read_results(same)).split("**Judge calibration:**", 1)[1]
        assert f"judge calibrated against peer judge {JUDGE_B}" in footer.splitlines()[0]


def test_times_k_splits_the_variance(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMPATH_CACHE_DIR", str(tmp_path / "cache"))  # no re-judging cached yet
    original = read_results(env.results)
    before = env.counts()
    out = tmp_path / "k3.json"
    assert env.rejudge("--times", "3", "-o", str(out)) == 0
    assert "variance split" in capsys.readouterr().out
    after = env.counts()
    assert after[JUDGE_MODEL] - before[JUDGE_MODEL] == 20 * 3
    assert after["fake-target"] == before["fake-target"] and after["fake-auditor"] == before["fake-auditor"]
    res = read_results(out)
    scores = _scores(res)
    assert {k for (_, _, k) in scores} == {0, 1, 2, 3}
    for (tid, metric, k), score in scores.items():
        run = int(tid.rsplit("-r", 1)[1])
        assert score == BASE[run] + DELTA[k], (tid, metric, k)
    # first judgings kept as they were; the cells use them only
    first = {key: s for key, s in _scores(original).items()}
    assert {key: s for key, s in scores.items() if key[2] == 0} == first
    assert [c.model_dump() for c in res.cells] == [c.model_dump() for c in original.cells]
    assert [d.status for d in res.decisions] == [d.status for d in original.decisions]
    rel = res.reliability
    assert rel is not None and rel["variance_split"] is True and rel["note"] is None
    for e in rel["metrics"]:
        # per transcript [b, b+1, b-1, b]: variance 2/3; run means 8 and 6: variance 2
        assert e["rejudged_transcripts"] == 2 and e["judgings_per_transcript"] == 4
        assert e["judge_variance"] == pytest.approx(2 / 3)
        assert e["run_mean_variance"] == pytest.approx(2.0)
        assert e["generation_variance"] == pytest.approx(2.0 - (2 / 3) / 4)
        assert e["generation_floored"] is False
        assert e["within_sd"] == pytest.approx(2**0.5)
    md = render_markdown(res)
    table = md.split("#### Test-retest reliability", 1)[1]
    assert "σ² judge" in table and "σ² generation" in table
    assert "0.67" in table or "0.667" in table

    # each re-judge index has its own cache key: the same command again calls nobody
    mid = env.counts()
    assert env.rejudge("--times", "3", "-o", str(tmp_path / "k3-again.json")) == 0
    assert env.counts() == mid
    assert _scores(read_results(tmp_path / "k3-again.json")) == scores


def test_times_with_another_judge_judges_every_index_anew(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMPATH_CACHE_DIR", str(tmp_path / "cache"))
    before = env.counts()
    out = tmp_path / "b2.json"
    assert env.rejudge("--judge", JUDGE_B, "--times", "2", "-o", str(out)) == 0
    assert env.counts()[JUDGE_B_NAME] - before[JUDGE_B_NAME] == 20 * 3
    res = read_results(out)
    assert {v.rejudge for v in res.verdicts} == {0, 1, 2}
    assert all(v.judge_model == JUDGE_B for v in res.verdicts), "a file never mixes two judges"
    rel = res.reliability
    assert rel is not None and rel["variance_split"] is True
    for e in rel["metrics"]:
        assert e["judge_variance"] == 0.0 and e["generation_variance"] == 0.0


def test_standard_rubric_per_metric_at_an_api_base(
    env: Env, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("EMPATH_JUDGE_API_BASE")  # only --api-base points the judge at the server
    n_calls = len(env.judge_b.calls)
    out = tmp_path / "std.json"
    args = ["--judge", JUDGE_B, "--rubric", "standard", "--granularity", "metric", "-o", str(out)]
    assert env.rejudge(*args, "--api-base", env.server.base_url) == 0
    new_calls = env.judge_b.calls[n_calls:]
    assert new_calls and not any(c.strict for c in new_calls)
    assert all(len(c.metrics) == 1 for c in new_calls)
    res = read_results(out)
    assert res.metadata.judge.rubric == "standard" and res.metadata.judge.granularity == "metric"
    assert all(v.rubric == "standard" for v in res.verdicts)


def _copy_run(env: Env, dest: Path) -> Path:
    shutil.copytree(env.results.parent, dest)
    return dest / env.results.name


def test_missing_or_altered_transcripts_stop_the_command(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = env.counts()
    copy = _copy_run(env, tmp_path / "copy")
    res = read_results(copy)
    rec = next(r for r in res.records if r.status == "complete")
    assert rec.transcript_path is not None
    path = copy.parent / rec.transcript_path
    lines = path.read_text(encoding="utf-8").splitlines()
    # the last turn line (an annotation line with the per-turn emotion labels may follow it)
    last = max(i for i, ln in enumerate(lines) if json.loads(ln)["type"] == "turn")
    turn = json.loads(lines[last])
    turn["content"] = turn["content"] + " (edited)"
    lines[last] = json.dumps(turn, ensure_ascii=False)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    args = ["--judge", JUDGE_B, "-o", str(tmp_path / "x.json"), "--pyproject", str(env.pyproject)]
    assert main(["rejudge", str(copy), *args]) == 2
    assert "changed since it was judged" in capsys.readouterr().err
    path.unlink()
    assert main(["rejudge", str(copy), *args]) == 2
    assert "not found" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()
    assert env.counts() == before, "nothing is judged before every transcript was read"


def test_usage_errors(env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = str(tmp_path / "x.json")
    assert env.rejudge("-o", out) == 2
    assert "--judge" in capsys.readouterr().err
    assert env.rejudge("--times", "0", "-o", out) == 2
    doc = json.loads(env.results.read_text(encoding="utf-8"))
    doc["metadata"]["plan_id"] = "0" * 64
    other = tmp_path / "other-plan.json"
    other.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    args = ["--judge", JUDGE_B, "-o", out, "--pyproject", str(env.pyproject)]
    assert main(["rejudge", str(other), *args]) == 2
    assert "does not match the instrument" in capsys.readouterr().err
    assert not Path(out).exists()
