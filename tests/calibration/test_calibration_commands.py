"""The agreement and calibrate commands, end to end through the CLI on files made here."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from empath_gate.cli import main


def _results(path: Path, judge: str, scores: dict[str, int]) -> Path:
    verdicts = [
        {"transcript_id": tid, "metric_id": "crisis_detection", "status": "scored", "score": s}
        for tid, s in scores.items()
    ]
    path.write_text(
        json.dumps({"metadata": {"judge": {"model": judge}}, "verdicts": verdicts}), encoding="utf-8"
    )
    return path


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


SCORES_A = {f"seed{i}-p-r{r}": 6 + (i + r) % 4 for i in range(6) for r in range(2)}
SCORES_B = {k: min(10, v + (1 if i % 3 == 0 else 0)) for i, (k, v) in enumerate(SCORES_A.items())}


def test_agreement_between_two_results_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = _results(tmp_path / "a.json", "judge-a", SCORES_A)
    b = _results(tmp_path / "b.json", "judge-b", {**SCORES_B, "extra-p-r0": 5})
    code, out, _ = _run(capsys, "agreement", str(a), str(b), "--format", "json", "--resamples", "200")
    assert code == 0
    doc: dict[str, Any] = json.loads(out)
    assert doc["n_pairs"] == 12 and doc["judges"] == ["judge-a", "judge-b"]
    assert doc["unmatched"] == {"a": 0, "b": 1}
    assert doc["pooled"]["exact_count"] == 8 and doc["pooled"]["within_one_count"] == 12
    (metric,) = doc["metrics"]
    assert metric["metric_id"] == "crisis_detection" and metric["figures"]["n"] == 12
    code, text, _ = _run(capsys, "agreement", str(a), str(b), "--resamples", "200")
    assert code == 0 and "within ±1" in text and "8/12" in text


def test_calibrate_against_gold(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = _results(tmp_path / "r.json", "judge-a", {f"seed{i}-p-r0": 9 for i in range(12)})
    gold = tmp_path / "gold.jsonl"
    gold.write_text(
        "\n".join(
            json.dumps({"conversation_id": f"seed{i}-p", "run": 0, "metric": "crisis_detection", "score": 7})
            for i in range(13)
        )
    )
    code, out, _ = _run(
        capsys, "calibrate", "--gold", str(gold), "--results", str(results), "--format", "json"
    )
    assert code == 0
    doc = json.loads(out)
    assert doc["kind"] == "gold" and doc["judge_model"] == "judge-a"
    assert doc["pooled"]["bias"]["value"] == 2 and doc["pooled"]["inflated_vs_gold"]
    assert doc["inflated_vs_gold"] == ["crisis_detection"]
    assert doc["unmatched_gold"] == 1 and doc["unmatched_judge"] == 0
    code, text, _ = _run(capsys, "calibrate", "--gold", str(gold), "--results", str(results))
    assert code == 0 and "inflated vs gold (lower bound of the bias >= 1 point): crisis_detection" in text


def test_usage_and_input_errors_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "agreement")[0] == 2
    assert _run(capsys, "agreement", "a", "b", "c")[0] == 2
    assert _run(capsys, "calibrate")[0] == 2
    assert _run(capsys, "calibrate", "--gold", "g.csv")[0] == 2
    code, _, err = _run(capsys, "calibrate", "--standard-vs-strict", str(tmp_path / "missing.json"))
    assert code == 2 and "file not found" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    code, _, err = _run(capsys, "agreement", str(bad))
    assert code == 2 and "not valid JSON" in err
