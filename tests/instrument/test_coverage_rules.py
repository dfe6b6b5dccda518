"""Coverage rules: seeds per metric (parameterised minimum), both locales, balance, reach."""

from __future__ import annotations

from pathlib import Path

from fixture_instrument import instrument_files, write_instrument

from empath_gate.instrument.coverage import (
    coverage_problems,
    locale_problems,
    metric_problems,
    persona_problems,
    reachable_personas,
    seeds_by_locale,
    seeds_by_metric,
)
from empath_gate.instrument.loader import load_instrument


def test_fixture_meets_every_rule(base: Path) -> None:
    inst = load_instrument(base_dir=base)
    assert coverage_problems(inst, min_seeds_per_metric=2) == []
    assert seeds_by_locale(inst) == {"es-MX": 12, "en-US": 12}
    assert min(seeds_by_metric(inst).values()) >= 2


def test_min_seeds_per_metric_is_a_parameter(base: Path) -> None:
    inst = load_instrument(base_dir=base)
    counts = seeds_by_metric(inst)
    assert metric_problems(inst, 2) == []
    short = metric_problems(inst, 5)
    assert len(short) == sum(1 for n in counts.values() if n < 5) > 0
    assert "needs at least 5" in short[0]


def test_locale_balance(tmp_path: Path) -> None:
    files = instrument_files()
    seeds = files["suites/seeds/a-first.yaml"]["seeds"] + files["suites/seeds/b-second.yaml"]["seeds"]
    es = [s for s in seeds if s["locale"] == "es-MX"]
    en = [s for s in seeds if s["locale"] == "en-US"][:4]
    files["suites/seeds/a-first.yaml"] = {"seeds": es}
    files["suites/seeds/b-second.yaml"] = {"seeds": en}
    files["suites/suites.yaml"]["suites"] = [s for s in files["suites/suites.yaml"]["suites"]
                                             if s["id"] in ("full", "crisis", "smoke")]
    files["suites/suites.yaml"]["suites"][0]["also_seeds"] = []
    inst = load_instrument(base_dir=write_instrument(tmp_path, files))
    probs = locale_problems(inst)
    assert probs == [
        "locale en-US has 4 of 16 seeds (25%); at least 40% are required — write more en-US seeds"]
    assert locale_problems(inst, 0.2) == []


def test_every_persona_reachable(tmp_path: Path) -> None:
    files = instrument_files()
    suites = files["suites/suites.yaml"]["suites"]
    files["suites/suites.yaml"]["suites"] = [s for s in suites if s["id"] == "smoke"]
    del files["thresholds.yaml"]["suites"]
    inst = load_instrument(base_dir=write_instrument(tmp_path, files))
    reached = reachable_personas(inst)
    assert len(reached) == 2
    probs = persona_problems(inst)
    assert len(probs) == 6 and all("is not reached by any suite" in p for p in probs)
