"""Pairing rules: one transcript, one judge, re-judgings, rubric rows; and telling a results file apart."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from empath_gate.calibration.pairing import judge_pairs, rejudging_pairs, rubric_rows, same_judge
from empath_gate.calibration.readers import ResultsScores, results_adapter, results_or_none
from empath_gate.errors import ConfigError


def _v(tid: str, score: int | None, *, k: int = 0, metric: str = "m", **extra: Any) -> dict[str, Any]:
    status = extra.pop("status", "scored" if score is not None else "judge_failure")
    v: dict[str, Any] = {
        "transcript_id": tid,
        "metric_id": metric,
        "status": status,
        "score": score,
        "rejudge": k,
    }
    if status == "judge_failure":
        v["failure"] = {"reason": "parse_error", "detail": "prose"}
    return {**v, **extra}


def _results(
    path: str,
    verdicts: list[dict[str, Any]],
    *,
    model: str = "judge-a",
    rubric: str = "strict",
    hashes: dict[str, str] | None = None,
) -> ResultsScores:
    by_tid: dict[str, list[dict[str, Any]]] = {}
    for v in verdicts:
        by_tid.setdefault(v["transcript_id"], []).append(v)
    records = [
        {"transcript_id": t, "content_hash": (hashes or {}).get(t, f"h-{t}"), "verdicts": vs}
        for t, vs in by_tid.items()
    ]
    doc = {
        "metadata": {
            "judge": {"model": model, "rubric": rubric, "granularity": "transcript", "template_hash": "t1"}
        },
        "records": records,
    }
    return results_adapter(doc, source=path)


def test_two_judges_pair_first_judgings_of_the_same_transcript_only() -> None:
    a = _results("a.json", [_v("s-p-r0", 8), _v("s-p-r0", 3, k=1), _v("t-p-r0", 7), _v("u-p-r0", 6)])
    b = _results(
        "b.json",
        [_v("s-p-r0", 7), _v("t-p-r0", 7), _v("w-p-r0", 5)],
        model="judge-b",
        hashes={"t-p-r0": "other"},
    )
    assert not same_judge(a, b)
    got = judge_pairs(a, b)
    assert got.kind == "two_judges" and got.judges == ("judge-a", "judge-b")
    assert [(p.item_id, p.a, p.b, p.cluster) for p in got.pairs] == [("s-p-r0", 8.0, 7.0, None)]
    assert got.different_transcripts == 1, "t-p-r0 holds other text in b"
    assert (got.only_in_a, got.only_in_b) == (1, 1)  # u only in a, w only in b


def test_one_judge_in_two_files_pools_its_rejudgings_a_judging_counted_once() -> None:
    run = _results("run.json", [_v("s-p-r0", 8), _v("t-p-r0", 6)])
    out = _results(
        "out.json",
        [
            _v("s-p-r0", 8),
            _v("s-p-r0", 9, k=1),
            _v("s-p-r0", None, k=2),
            _v("t-p-r0", 6),
            _v("t-p-r0", 6, k=1),
        ],
    )
    assert same_judge(run, out)
    got = judge_pairs(run, out)
    assert got.kind == "rejudgings" and got.indices == (0, 1)
    assert [(p.item_id, p.a, p.b, p.cluster) for p in got.pairs] == [
        ("s-p-r0#0-1", 8.0, 9.0, "s-p-r0/m"),
        ("t-p-r0#0-1", 6.0, 6.0, "t-p-r0/m"),
    ]
    assert got.judgings == 4 and got.judge_failures == 1 and got.unpaired == 0
    assert rejudging_pairs([out]).pairs == got.pairs, "the same as the rejudge output alone"


def test_rejudgings_all_pairs_and_refusals() -> None:
    four = _results("k3.json", [_v("s-p-r0", s, k=k) for k, s in enumerate([5, 6, 4, 5])] + [_v("t-p-r0", 7)])
    got = rejudging_pairs([four])
    assert [p.item_id for p in got.pairs] == [f"s-p-r0#{i}-{j}" for i in range(4) for j in range(i + 1, 4)]
    assert [abs(p.a - p.b) for p in got.pairs] == [1, 1, 0, 2, 1, 1]
    assert got.unpaired == 1, "t-p-r0 has one judging"
    with pytest.raises(ConfigError, match=r"one.json: one judging per transcript x metric.*--times K"):
        rejudging_pairs([_results("one.json", [_v("s-p-r0", 8), _v("t-p-r0", 6)])])
    mixed = _results("mixed.json", [_v("s-p-r0", 8, judge_model="x"), _v("s-p-r0", 6, k=1, judge_model="y")])
    with pytest.raises(ConfigError, match="judgings by x, y"):
        rejudging_pairs([mixed])
    other_template = four.model_copy(update={"template_hash": "t2"})
    assert not same_judge(four, other_template), "another judge template is another judge"


def test_rubric_rows_from_results() -> None:
    strict = _results(
        "strict.json",
        [
            _v("s-p-r0", 6),
            _v("t-p-r0", 5),
            _v("u-p-r0", None),
            _v("w-p-r0", None, status="na"),
            _v("x-p-r0", 4),
        ],
    )
    standard = _results(
        "standard.json",
        [_v("s-p-r0", 8), _v("t-p-r0", None, status="na"), _v("u-p-r0", 9), _v("w-p-r0", None, status="na")],
        rubric="standard",
    )
    got = rubric_rows([standard, strict])
    assert got.judge_model == "judge-a"
    assert got.sources == {"standard": ("standard.json",), "strict": ("strict.json",)}
    assert [(r.id, r.standard, r.strict, r.error) for r in got.rows] == [
        ("s-p-r0/m", 8.0, 6.0, None),
        ("t-p-r0/m", None, 5.0, "standard: na"),
        ("u-p-r0/m", 9.0, None, "strict: judge_failure (parse_error)"),
    ]
    assert (got.only_standard, got.only_strict) == (0, 1), "x-p-r0 judged under the strict rubric only"
    # a verdict's own rubric wins over its file's
    one_file = _results("both.json", [_v("s-p-r0", 6), _v("s-p-r0", 9, k=1, rubric="standard")])
    assert [(r.standard, r.strict) for r in rubric_rows([one_file]).rows] == [(9.0, 6.0)]
    with pytest.raises(ConfigError, match="strict rubric only"):
        rubric_rows([strict])
    other = _results("other.json", [_v("s-p-r0", 9)], model="judge-b", rubric="standard")
    with pytest.raises(ConfigError, match=r"more than one judge \(standard: judge-b; strict: judge-a\)"):
        rubric_rows([strict, other])
    moved = _results("moved.json", [_v("s-p-r0", 9)], rubric="standard", hashes={"s-p-r0": "other"})
    got = rubric_rows([strict, moved])
    assert got.rows == () and got.different_transcripts == 1


def test_results_or_none_tells_results_from_rows(tmp_path: Path) -> None:
    results = tmp_path / "r.json"
    results.write_text(json.dumps({"metadata": {}, "verdicts": [_v("s-p-r0", 8)]}))
    found = results_or_none(results)
    assert found is not None and found.scores[0].score == 8
    jsonl = tmp_path / "rows.jsonl"
    jsonl.write_text('{"metric": "m", "a": 8, "b": 7}\n{"metric": "m", "a": 6, "b": 6}\n')
    one_row = tmp_path / "one.jsonl"
    one_row.write_text('{"metric": "m", "a": 8, "b": 7}\n')
    rows = tmp_path / "rows.json"
    rows.write_text(json.dumps([{"metric": "m", "a": 8, "b": 7}]))
    csv_rows = tmp_path / "rows.csv"
    csv_rows.write_text("metric,a,b\nm,8,7\n")
    assert all(results_or_none(p) is None for p in (jsonl, one_row, rows, csv_rows))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match=r"bad\.json:1: not valid JSON"):
        results_or_none(bad)
    with pytest.raises(ConfigError, match="file not found"):
        results_or_none(tmp_path / "absent.json")
