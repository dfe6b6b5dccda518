"""The judge measured on the team's own runs, end to end on the fake OpenAI-compatible server.

One ``empath-gate run --suite smoke --runs 2`` (strict rubric) per module; every test re-judges
it with ``empath-gate rejudge`` and reads the outputs with ``calibrate --standard-vs-strict``
and ``agreement``. The judge scores by request seed, so every judging has a known score:

* judging ``k`` (re-judge index) of run ``r`` of the ``i``-th conversation of the plan scores
  ``BASE(i, r) + DELTA[k]`` with ``BASE(i, r) = 4 + i % 4 + r`` and ``DELTA`` = 0, +1, -1, 0
  for k = 0..3 (so the four judgings of a transcript are ``b, b+1, b-1, b``);
* under the standard rubric, the metrics in ``INFLATED`` score ``STANDARD_BONUS`` (2) points
  more; the others score the same under both rubrics.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import krippendorff
import numpy as np
import pytest
from scipy import stats as sps

from empath_gate.cli import main
from empath_gate.instrument.loader import load_instrument
from empath_gate.plan import build_plan
from empath_gate.results import read_results
from empath_gate.testing import FakeOpenAIServer
from empath_gate.testing.scenarios import (
    JUDGE_MODEL,
    JudgeCall,
    ScoringJudge,
    ScriptAuditor,
    TargetBot,
    derive_seed,
    install,
    role_env,
)

JUDGE = f"openai/{JUDGE_MODEL}"
OTHER_NAME = "fake-judge-other"
DELTA = {0: 0, 1: 1, 2: -1, 3: 0}
STANDARD_BONUS = 2
RUNS = 2
N_TRANSCRIPTS = 20  # smoke: 10 conversations x 2 runs, each judged on its primary metric

FEWER_RESAMPLES = ("--resamples", "400")
"""Enough for the interval checks here (each holds for any number of resamples), and fast."""

pytestmark = pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning")


@dataclass
class RubricJudge(ScoringJudge):
    """A :class:`ScoringJudge` that scores ``standard_bonus[metric]`` more under the standard
    rubric (the score inflation a strict rubric removes)."""

    standard_bonus: dict[str, int] = field(default_factory=dict)

    def reply_for(self, call: JudgeCall) -> dict[str, Any]:
        reply = super().reply_for(call)
        if not call.strict:
            for metric_id, entry in reply["metrics"].items():
                entry["score"] += self.standard_bonus.get(metric_id, 0)
        return reply


@dataclass
class Env:
    server: FakeOpenAIServer
    results: Path
    pyproject: Path
    judge: RubricJudge
    base: dict[str, int]  # transcript id -> BASE score
    metric_of: dict[str, str]  # transcript id -> the metric it is judged on
    inflated: frozenset[str]

    def rejudge(self, out: Path, *args: str, results: Path | None = None) -> int:
        return main(
            [
                "rejudge",
                str(results or self.results),
                "--pyproject",
                str(self.pyproject),
                "-o",
                str(out),
                *args,
            ]
        )


def _base(index: int, run: int) -> int:
    return 4 + index % 4 + run


def _seeds(conversation_ids: list[str]) -> dict[int, tuple[str, int]]:
    """Judge seed -> ("<conversation>#<k>", run) for re-judge indices 0..3 (the rule of
    ``judge_run_seed``: base seed 0, then ``derive_seed(seed, "rejudge", k)``)."""
    table: dict[int, tuple[str, int]] = {}
    for conv in conversation_ids:
        for run in range(RUNS):
            first = derive_seed(0, conv, run)
            table[first] = (f"{conv}#0", run)
            for k in range(1, 4):
                table[derive_seed(first, "rejudge", k)] = (f"{conv}#{k}", run)
    return table


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    root = tmp_path_factory.mktemp("own-runs")
    instrument = load_instrument()
    plan = build_plan(instrument, ["smoke"], runs=RUNS)
    conversations = [c.conversation_id for c in plan.conversations]
    index = {c: i for i, c in enumerate(conversations)}

    def score(conv: str | None, run: int | None) -> int:
        assert conv is not None and run is not None, "a judge request with an unknown seed"
        name, k = conv.rsplit("#", 1)
        return _base(index[name], run) + DELTA[int(k)]

    metric_ids = sorted({i.metric_id for i in plan.items})
    inflated = frozenset(metric_ids[::2])
    judge = RubricJudge(
        scores=dict.fromkeys(metric_ids, score),
        seeds=_seeds(conversations),
        standard_bonus=dict.fromkeys(inflated, STANDARD_BONUS),
    )
    with FakeOpenAIServer() as server, pytest.MonkeyPatch.context() as mp:
        install(server, target=TargetBot("safe"), auditor=ScriptAuditor(max_messages=2), judge=judge)
        server.on(OTHER_NAME, ScoringJudge(default=7))
        for k, v in role_env(server, target="model").items():
            mp.setenv(k, v)
        mp.setenv("EMPATH_CACHE_DIR", str(root / "cache"))
        mp.delenv("CI", raising=False)
        pyproject = root / "no-pyproject.toml"
        results = root / "run" / "results.json"
        rc = main(
            [
                "run",
                "--suite",
                "smoke",
                "--runs",
                str(RUNS),
                "--results",
                str(results),
                "--pyproject",
                str(pyproject),
            ]
        )
        assert rc in (0, 1), "the run completed (the gate outcome does not matter here)"
        res = read_results(results)
        base = {r.transcript_id: _base(index[r.conversation_id], r.run) for r in res.records}
        metric_of = {v.transcript_id: v.metric_id for v in res.verdicts}
        assert len(base) == len(metric_of) == N_TRANSCRIPTS
        yield Env(server, results, pyproject, judge, base, metric_of, inflated)


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    code = main([*argv, "--format", "json", *(FEWER_RESAMPLES if argv[0] == "agreement" else ())])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out)


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    capsys.readouterr()
    assert main(list(argv)) == 2
    return capsys.readouterr().err


# ----------------------------------------------------------------------------- standard vs strict


def test_standard_vs_strict_reads_a_run_and_its_standard_rejudging(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    standard = tmp_path / "standard.json"
    assert env.rejudge(standard, "--judge", JUDGE, "--rubric", "standard") == 0
    assert read_results(standard).metadata.judge.rubric == "standard"
    doc = _json(capsys, "calibrate", "--standard-vs-strict", str(env.results), str(standard))
    assert doc["kind"] == "standard_vs_strict" and doc["left_out"] == []
    per_metric: dict[str, list[int]] = {}
    for tid, metric in env.metric_of.items():
        per_metric.setdefault(metric, []).append(env.base[tid])
    got = {d["metric_id"]: d for d in doc["metrics"]}
    assert set(got) == set(per_metric)
    for metric, bases in per_metric.items():
        bonus = STANDARD_BONUS if metric in env.inflated else 0
        assert got[metric]["n"] == len(bases)
        assert got[metric]["strict_mean"] == pytest.approx(sum(bases) / len(bases))
        assert got[metric]["standard_mean"] == pytest.approx(sum(bases) / len(bases) + bonus)
        assert got[metric]["drop"] == pytest.approx(bonus)
    assert [d["metric_id"] for d in doc["inflated"]] == sorted(env.inflated)
    assert doc["inflated_count"] == doc["inflated_in_scale_count"] == len(env.inflated)
    pairing = doc["pairing"]
    assert pairing["judge_model"] == JUDGE
    assert pairing["sources"] == {"standard": [str(standard)], "strict": [str(env.results)]}
    assert pairing["only_standard"] == pairing["only_strict"] == pairing["different_transcripts"] == 0
    # the order of the two files does not matter; the text names the judge and both files
    again = _json(capsys, "calibrate", "--standard-vs-strict", str(standard), str(env.results))
    assert again["metrics"] == doc["metrics"] and again["inflated"] == doc["inflated"]
    capsys.readouterr()
    assert main(["calibrate", "--standard-vs-strict", str(env.results), str(standard)]) == 0
    text = capsys.readouterr().out
    assert f"of judge {JUDGE} (standard: {standard}; strict: {env.results})" in text
    assert f"inflated, scores read as they are: {len(env.inflated)} metrics" in text


def test_a_judge_failure_under_one_rubric_is_left_out_not_counted(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMPATH_CACHE_DIR", str(tmp_path / "cache"))
    victim = sorted(env.base)[0]
    conv = victim.rsplit("-r", 1)[0]
    # the standard-rubric judging of that conversation (both runs) gets prose, not JSON; an
    # unknown seed (a re-ask) stays broken too
    monkeypatch.setattr(
        env.judge,
        "broken",
        lambda call: (
            not call.strict and (call.conversation_id is None or call.conversation_id == f"{conv}#0")
        ),
    )
    standard = tmp_path / "standard.json"
    env.rejudge(standard, "--judge", JUDGE, "--rubric", "standard")
    failed = {v.transcript_id for v in read_results(standard).verdicts if v.status == "judge_failure"}
    assert failed == {f"{conv}-r{r}" for r in range(RUNS)}
    doc = _json(capsys, "calibrate", "--standard-vs-strict", str(env.results), str(standard))
    assert doc["left_out"] == [f"{t}/{env.metric_of[t]}" for t in sorted(failed)]
    metric = env.metric_of[victim]
    n_metric = sum(1 for t, m in env.metric_of.items() if m == metric)
    by_id = {d["metric_id"]: d for d in doc["metrics"]}
    if n_metric > RUNS:
        assert by_id[metric]["n"] == n_metric - RUNS
    else:
        assert metric not in by_id, "a metric whose every row failed has no drop at all"
    assert sum(d["n"] for d in doc["metrics"]) == N_TRANSCRIPTS - RUNS
    capsys.readouterr()
    assert main(["calibrate", "--standard-vs-strict", str(env.results), str(standard)]) == 0
    assert "left out (error or missing score): " + ", ".join(doc["left_out"]) in capsys.readouterr().out


def test_standard_vs_strict_needs_both_rubrics_and_one_judge(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(capsys, "calibrate", "--standard-vs-strict", str(env.results))
    assert "strict rubric only" in err and "rejudge RESULTS --rubric standard" in err
    other = tmp_path / "other-standard.json"
    assert env.rejudge(other, "--judge", f"openai/{OTHER_NAME}", "--rubric", "standard") == 0
    err = _error(capsys, "calibrate", "--standard-vs-strict", str(env.results), str(other))
    assert "scored by more than one judge" in err and OTHER_NAME in err
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"id": "x", "metric": "m", "standard": 8, "strict": 6}]), encoding="utf-8")
    err = _error(capsys, "calibrate", "--standard-vs-strict", str(env.results), str(rows))
    assert f"{rows}: not a results file" in err


# ----------------------------------------------------------------------------- the judge with itself


def _rejudging_pairs(env: Env, ks: list[int]) -> tuple[list[float], list[float]]:
    """Every pair i < j of the judgings ``ks`` of each transcript (``a`` the lower index)."""
    a: list[float] = []
    b: list[float] = []
    for tid in sorted(env.base):
        scores = [env.base[tid] + DELTA[k] for k in ks]
        for p in range(len(ks)):
            for q in range(p + 1, len(ks)):
                a.append(scores[p])
                b.append(scores[q])
    return a, b


def test_agreement_on_times_k_compares_the_rejudgings(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "k3.json"
    assert env.rejudge(out, "--times", "3") == 0
    doc = _json(capsys, "agreement", str(out))
    assert doc["shape"] == "rejudgings" and doc["judges"] == [JUDGE]
    # four judgings b, b+1, b-1, b per transcript: six pairs with differences 1, 1, 0, 2, 1, 1
    pooled = doc["pooled"]
    assert doc["n_pairs"] == pooled["n"] == N_TRANSCRIPTS * 6
    assert pooled["units"] == N_TRANSCRIPTS
    assert pooled["exact_count"] == N_TRANSCRIPTS and pooled["within_one_count"] == N_TRANSCRIPTS * 5
    assert pooled["exact"]["value"] == pytest.approx(1 / 6)
    assert pooled["mean_abs_diff"]["value"] == pytest.approx(1.0)
    a, b = _rejudging_pairs(env, [0, 1, 2, 3])
    assert pooled["pearson"]["value"] == pytest.approx(sps.pearsonr(a, b).statistic)
    assert pooled["spearman"]["value"] == pytest.approx(sps.spearmanr(a, b).statistic)
    alpha = krippendorff.alpha(reliability_data=np.vstack([a, b]), level_of_measurement="ordinal")
    assert pooled["krippendorff_alpha"]["value"] == pytest.approx(alpha)
    # every transcript has the same six differences: resampling whole transcripts can never
    # change the shares, as resampling single pairs would
    assert pooled["exact"]["ci_low"] == pytest.approx(1 / 6) and pooled["exact"]["ci_high"] == pytest.approx(
        1 / 6
    )
    assert pooled["within_one"]["ci_low"] == pytest.approx(5 / 6)
    assert pooled["within_one"]["ci_high"] == pytest.approx(5 / 6)
    assert pooled["mean_abs_diff"]["ci_low"] == pooled["mean_abs_diff"]["ci_high"] == pytest.approx(1.0)
    pairing = doc["pairing"]
    assert pairing["kind"] == "rejudgings" and pairing["indices"] == [0, 1, 2, 3]
    assert pairing["judgings"] == N_TRANSCRIPTS * 4
    assert pairing["unpaired"] == pairing["judge_failures"] == 0
    # per metric, the independent units are the metric's transcripts, not its pairs
    for m in doc["metrics"]:
        n_units = sum(1 for metric in env.metric_of.values() if metric == m["metric_id"])
        assert m["n"] == n_units * 6
        assert m["figures"] is None and m["note"] == f"too few: n={n_units} clusters < 10"

    # the run and its rejudge output: one judge, so the same comparison (never the kept first
    # judging with itself, which would agree 100 %)
    both = _json(capsys, "agreement", str(env.results), str(out))
    assert both["shape"] == "rejudgings" and both["judges"] == [JUDGE, JUDGE]
    assert both["pooled"] == pooled and both["n_pairs"] == doc["n_pairs"]
    capsys.readouterr()
    assert main(["agreement", str(env.results), str(out), *FEWER_RESAMPLES]) == 0
    text = capsys.readouterr().out
    assert f"Agreement of judge {JUDGE} with itself" in text and "re-judge indices 0, 1, 2, 3" in text
    assert f"{N_TRANSCRIPTS * 6} pairs ({N_TRANSCRIPTS} resampled units)" in text
    err = _error(capsys, "agreement", str(env.results), str(out), "--save", str(tmp_path / "s.json"))
    assert "not a calibration against a peer judge" in err
    assert not (tmp_path / "s.json").exists()


def test_one_rejudging_gives_one_pair_per_transcript(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "k1.json"
    assert env.rejudge(out, "--times", "1") == 0
    doc = _json(capsys, "agreement", str(out))
    pooled = doc["pooled"]
    assert doc["n_pairs"] == N_TRANSCRIPTS and pooled["units"] is None
    assert pooled["exact"]["value"] == 0.0 and pooled["within_one"]["value"] == 1.0
    assert pooled["mean_abs_diff"]["value"] == pytest.approx(1.0)
    assert pooled["pearson"]["value"] == pytest.approx(1.0)  # b against b + 1


def test_a_failed_rejudging_pairs_with_nothing(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("EMPATH_CACHE_DIR", str(tmp_path / "cache"))
    victim = sorted(env.base)[0]
    conv, run = victim.rsplit("-r", 1)
    monkeypatch.setattr(
        env.judge,
        "broken",
        lambda call: (
            call.conversation_id is None or (call.conversation_id, call.run) == (f"{conv}#2", int(run))
        ),
    )
    out = tmp_path / "k3.json"
    env.rejudge(out, "--times", "3")
    doc = _json(capsys, "agreement", str(out))
    assert doc["pairing"]["judge_failures"] == 1
    assert doc["pairing"]["judgings"] == N_TRANSCRIPTS * 4 - 1
    # judgings 0, 1, 3 of the victim: three pairs instead of six
    assert doc["n_pairs"] == (N_TRANSCRIPTS - 1) * 6 + 3
    # their differences 1, 0, 1 against 1, 1, 0, 2, 1, 1 for every other transcript
    total = (N_TRANSCRIPTS - 1) * 6 + 2
    assert doc["pooled"]["mean_abs_diff"]["value"] == pytest.approx(total / doc["n_pairs"])
    assert doc["pooled"]["units"] == N_TRANSCRIPTS


def test_one_judging_per_transcript_is_refused(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(capsys, "agreement", str(env.results))
    assert "one judging per transcript x metric" in err and "--times K" in err
    # the same judge again without --times asks the same questions (same seed, same cache key)
    replay = tmp_path / "replay.json"
    assert env.rejudge(replay, "--judge", JUDGE) == 0
    err = _error(capsys, "agreement", str(env.results), str(replay))
    assert "one judging per transcript x metric" in err


def test_two_runs_of_one_plan_are_different_transcripts(
    env: Env, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Same ids, other text: never paired as if they were the same transcript."""
    doc = json.loads(env.results.read_text(encoding="utf-8"))
    for r in doc["records"]:
        r["content_hash"] = "0" * 64
    other = tmp_path / "other-run.json"
    other.write_text(json.dumps(doc), encoding="utf-8")
    err = _error(capsys, "agreement", str(env.results), str(other))
    assert f"{N_TRANSCRIPTS} transcript ids hold other text in each file" in err
    b = tmp_path / "b.json"
    assert env.rejudge(b, "--judge", f"openai/{OTHER_NAME}") == 0
    err = _error(capsys, "agreement", str(other), str(b))
    assert "share no scored transcript x metric" in err and f"({N_TRANSCRIPTS} transcript ids" in err
