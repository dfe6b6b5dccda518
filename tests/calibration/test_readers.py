"""Readers: gold labels, results documents, pairs, strict rows, preferences; errors say what to fix."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from empath_gate.calibration.pairing import first_judgings, pair_scores
from empath_gate.calibration.preferences import read_preferences
from empath_gate.calibration.readers import (
    read_gold,
    read_pairs,
    read_results,
    read_standard_vs_strict,
    results_adapter,
)
from empath_gate.errors import ConfigError


def test_gold_csv_and_jsonl(tmp_path: Path) -> None:
    csv_path = tmp_path / "gold.csv"
    csv_path.write_text(
        "conversation_id,run,metric,score\ns-p,0,crisis_detection,7\ns-p,1,crisis_detection,8\n"
    )
    jsonl = tmp_path / "gold.jsonl"
    jsonl.write_text('{"conversation_id": "s-p", "run": 0, "metric_id": "sycophancy", "score": 9}\n\n')
    assert [(g.run, g.score) for g in read_gold(csv_path)] == [(0, 7.0), (1, 8.0)]
    assert read_gold(jsonl)[0].metric_id == "sycophancy"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("conversation_id,run,metric,score\ns-p,0,m,11\n", "gold.csv:2: score 11 is outside the 1-10 scale"),
        ("conversation_id,run,metric,score\ns-p,x,m,5\n", "gold.csv:2: run 'x' is not a number"),
        ("conversation_id,run,score\ns-p,0,5\n", "gold.csv:2: missing 'metric' or 'metric_id'"),
        ("conversation_id,run,metric,score\ns-p,0,m,5\ns-p,0,m,6\n", "labelled twice"),
        ("conversation_id,run,metric,score\n", "no gold labels"),
    ],
)
def test_gold_errors_say_what_to_fix(tmp_path: Path, body: str, message: str) -> None:
    p = tmp_path / "gold.csv"
    p.write_text(body)
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_gold(p)
    with pytest.raises(ConfigError, match="file not found"):
        read_gold(tmp_path / "absent.csv")


def _verdict(tid: str, metric: str, score: int | None, rejudge: int = 0) -> dict[str, object]:
    return {
        "transcript_id": tid,
        "metric_id": metric,
        "status": "scored" if score else "judge_failure",
        "score": score,
        "rejudge": rejudge,
        "judge_model": "judge-a",
    }


def test_results_adapter_finds_verdicts_where_they_are() -> None:
    flat = {"metadata": {"judge": {"model": "judge-x"}}, "verdicts": [_verdict("s-p-r0", "m", 8)]}
    nested = {"runs": [{"transcript_id": "s-p-r0", "verdicts": [_verdict("s-p-r0", "m", 8)]}]}
    a, b = results_adapter(flat), results_adapter(nested)
    assert a.judge_model == "judge-x" and b.judge_model == "judge-a"
    assert a.scores[0].conversation_id == "s-p" and a.scores[0].run == 0
    with pytest.raises(ConfigError, match="no verdicts found"):
        results_adapter({"metadata": {}})
    with pytest.raises(ConfigError, match="is not '<conversation_id>-r<run>'"):
        results_adapter({"verdicts": [_verdict("bad", "m", 8)]})


def test_first_judgings_and_pairing(tmp_path: Path) -> None:
    doc = {
        "verdicts": [
            _verdict("s-p-r0", "m", 8, rejudge=1),
            _verdict("s-p-r0", "m", 6),
            _verdict("s-p-r1", "m", None),
            _verdict("t-p-r0", "m", 9),
        ]
    }
    path = tmp_path / "r.json"
    path.write_text(json.dumps(doc))
    firsts = first_judgings(read_results(path))
    assert firsts == {("s-p-r0", "m"): 6.0, ("t-p-r0", "m"): 9.0}
    pairs, only_a, only_b = pair_scores(firsts, {("s-p-r0", "m"): 7.0, ("u-p-r0", "m"): 5.0})
    assert [(p.item_id, p.a, p.b) for p in pairs] == [("s-p-r0", 6.0, 7.0)]
    assert (only_a, only_b) == (1, 1)


def test_pairs_rows_and_grid_order_check(tmp_path: Path) -> None:
    rows = tmp_path / "pairs.csv"
    rows.write_text("item_id,metric,a,b\nt1,m,8,7\nt2,m,9,9\n")
    pf = read_pairs(rows)
    assert pf.shape == "rows" and [(p.a, p.b) for p in pf.pairs] == [(8, 7), (9, 9)]
    grid = {
        "grid_A": {"x": {"b_metric": 5, "a_metric": 9}},
        "grid_B": {"x": {"b_metric": 4, "a_metric": 8}},
        "pairs_by_model": {"x": [[9, 8], [5, 4]]},
        "agreement": {"exact": 0.0},
    }
    g = tmp_path / "grid.json"
    g.write_text(json.dumps(grid))
    pf2 = read_pairs(g)
    assert [(p.metric_id, p.a) for p in pf2.pairs] == [("a_metric", 9), ("b_metric", 5)]
    assert pf2.published == {"exact": 0.0}
    grid["pairs_by_model"] = {"x": [[5, 4], [9, 8]]}  # grid-key order: refused
    g.write_text(json.dumps(grid))
    with pytest.raises(ConfigError, match="sorted metric-id order"):
        read_pairs(g)


def test_standard_vs_strict_rows(tmp_path: Path) -> None:
    p = tmp_path / "s1.json"
    p.write_text(
        json.dumps([{"id": "a", "metric": "m", "original_score": 9, "strict_score": 0, "error": None}])
    )
    (row,) = read_standard_vs_strict(p)
    assert row.strict == 0 and row.standard == 9


def test_preferences(tmp_path: Path) -> None:
    (tmp_path / "clin.csv").write_text(
        "clinician,entry_id,metric_id,preferred_system\nC1,e1,x,System_A\nC1,e1,y,System_A\nC1,e2,x,none\n"
    )
    (tmp_path / "judge.csv").write_text("entry_id,judge_preferred_system\ne1,System_B\ne2,tie\n")
    prefs = read_preferences(tmp_path)
    assert prefs.raters == ("C1", "judge")
    assert prefs.ratings == {"C1": {"e1": "System_A", "e2": None}, "judge": {"e1": "System_B", "e2": None}}
    assert prefs.categories == ("System_A", "System_B")
    (tmp_path / "clin.csv").write_text(
        "clinician,entry_id,preferred_system\nC1,e1,System_A\nC1,e1,System_B\n"
    )
    with pytest.raises(ConfigError, match="one preference per entry"):
        read_preferences(tmp_path)
