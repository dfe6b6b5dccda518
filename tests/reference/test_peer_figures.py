"""Reproduce the peer release's published figures from its data (CC-BY-4.0; see ATTRIBUTION.md there).

The data sit beside the repository at ``../shared/reference/empath-benchmark`` (or wherever
``EMPATH_REFERENCE_DIR`` points); without them these tests skip, saying so. Each figure is
checked through the library functions and through the commands' ``--format json`` output.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from empath_gate.calibration.agreement import agreement
from empath_gate.calibration.calibrate import standard_vs_strict
from empath_gate.calibration.categorical import categorical_agreement
from empath_gate.calibration.preferences import read_preferences
from empath_gate.calibration.readers import read_pairs, read_standard_vs_strict
from empath_gate.cli import main

REPO = Path(__file__).resolve().parents[2]


def _reference_dir() -> Path:
    env = os.environ.get("EMPATH_REFERENCE_DIR")
    return Path(env) if env else REPO.parent / "shared" / "reference" / "empath-benchmark"


REF = _reference_dir()
pytestmark = pytest.mark.skipif(
    not (REF / "ATTRIBUTION.md").is_file(),
    reason=f"peer reference data not found at {REF} (set EMPATH_REFERENCE_DIR to the empath-benchmark dir)",
)
S2 = REF / "results" / "s2_grid_and_interjudge.json"
S1 = REF / "results" / "s1_calibration.json"
HUMAN = REF / "human_eval"


def run_json(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    code = main([*argv, "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


# ------------------------------------------------------------------ inter-judge agreement (s2)


def test_interjudge_agreement_through_the_library() -> None:
    pf = read_pairs(S2)
    assert pf.shape == "interjudge-grid"
    report = agreement(pf.pairs)
    f = report.pooled
    assert f.n == 57
    assert (f.within_one_count, f.exact_count) == (53, 22)
    assert f.within_one.value == pytest.approx(0.9298, abs=5e-5)
    assert f.exact.value == pytest.approx(0.3860, abs=5e-5)
    assert f.mean_abs_diff.value == pytest.approx(0.7018, abs=5e-5)
    assert f.pearson.value == pytest.approx(0.8372, abs=5e-5)
    # the file's own summary block agrees to the last digit
    assert pf.published is not None
    assert f.pearson.value == pytest.approx(pf.published["pearson_r"], abs=1e-12)
    assert f.mean_abs_diff.value == pytest.approx(pf.published["mad"], abs=1e-12)
    # three pairs per metric: no per-metric figures
    assert all(m.figures is None and m.note == "too few: n=3 < 10" for m in report.metrics)


def test_pairs_follow_sorted_metric_order_not_grid_order() -> None:
    doc = json.loads(S2.read_text(encoding="utf-8"))
    pf = read_pairs(S2)
    for p in pf.pairs:
        model, metric = p.item_id.split("/", 1)
        assert (doc["grid_A"][model][metric], doc["grid_B"][model][metric]) == (p.a, p.b)
    grid_order = list(doc["grid_A"]["gpt-5.5"])
    assert grid_order != sorted(grid_order)  # the trap this reading avoids


def test_interjudge_agreement_through_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "agreement", str(S2))
    assert out["kind"] == "ordinal" and out["n_pairs"] == 57
    pooled = out["pooled"]
    assert round(pooled["within_one"]["value"], 4) == 0.9298 and pooled["within_one_count"] == 53
    assert round(pooled["exact"]["value"], 4) == 0.3860 and pooled["exact_count"] == 22
    assert round(pooled["mean_abs_diff"]["value"], 4) == 0.7018
    assert round(pooled["pearson"]["value"], 4) == 0.8372
    assert out["published"]["n_pairs"] == 57
    ci = pooled["pearson"]
    assert ci["ci_low"] < ci["value"] < ci["ci_high"]


# ------------------------------------------------------------------ strict-rubric inflation (s1)


def test_strict_rubric_inflation_through_the_library() -> None:
    report = standard_vs_strict(read_standard_vs_strict(S1))
    assert report.inflated_count == 10
    assert report.inflated_in_scale_count == 8
    assert len(report.out_of_scale_rows) == 6
    diff = {d.metric_id: d.rows for d in report.differences}
    assert diff == {
        "dependency_fostering": ("seed-dependency-es-001::gpt-5.5",),
        "sensitive_context_reintroduction": (
            "seed-reintro-es-001::claude-opus-4-7",
            "seed-reintro-es-001::deepseek-v4-pro",
        ),
    }


def test_strict_rubric_inflation_through_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "calibrate", "--standard-vs-strict", str(S1))
    assert out["kind"] == "standard_vs_strict"
    assert out["inflated_count"] == 10 and len(out["inflated"]) == 10
    assert out["inflated_in_scale_count"] == 8
    assert all(d["drop"] >= 1 - 1e-9 and d["n"] >= 1 for d in out["inflated"])
    assert {d["metric_id"] for d in out["differences"]} == {
        "dependency_fostering",
        "sensitive_context_reintroduction",
    }


# ------------------------------------------------------------------ Gwet's AC1 on preferences (human_eval)

EXPECTED_AC1 = {
    frozenset({"judge", "Clinician_1"}): (15, 0.60, 0.20),
    frozenset({"judge", "Clinician_2"}): (21, 0.76, 0.61),
    frozenset({"Clinician_1", "Clinician_2"}): (17, 0.47, -0.04),
}


def test_gwet_ac1_through_the_library() -> None:
    prefs = read_preferences(HUMAN)
    assert prefs.categories == ("System_A", "System_B")
    for raters, (n, share, ac1) in EXPECTED_AC1.items():
        a, b = sorted(raters)
        r = categorical_agreement(prefs.ratings[a], prefs.ratings[b], prefs.categories)
        assert r.n == n
        assert r.agreement is not None and round(r.agreement, 2) == share
        assert r.ac1.value is not None and round(r.ac1.value, 2) == ac1


def test_gwet_ac1_through_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = run_json(capsys, "agreement", "--preferences", str(HUMAN))
    assert out["kind"] == "categorical"
    got = {frozenset({p["rater_a"], p["rater_b"]}): p for p in out["pairs"]}
    assert set(got) == set(EXPECTED_AC1)
    for raters, (n, share, ac1) in EXPECTED_AC1.items():
        p = got[raters]
        assert p["n"] == n
        assert round(p["agreement"], 2) == share
        assert round(p["ac1"]["value"], 2) == ac1
