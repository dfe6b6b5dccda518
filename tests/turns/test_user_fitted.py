"""The user-turn word table fitted on the gold (rules ``offline-7``) and the fitting script's
pure functions (features, cross-validation splits, ridge)."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from dialogues import user_valences

from empath_gate.errors import SuiteError
from empath_gate.turns import user_fitted
from empath_gate.turns.offline import annotator_version
from empath_gate.turns.user_fitted import (
    MAX_FEATURES,
    MAX_WEIGHT,
    ValenceTable,
    features,
    fitted_valence,
    rules_only,
    table_for,
)

ROOT = Path(__file__).resolve().parents[2]
LOCALES = ("es-MX", "en-US")


def _fit_script() -> Any:
    spec = importlib.util.spec_from_file_location("fit_user_valence_under_test",
                                                  ROOT / "bench" / "fit_user_valence.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def _table(weights: dict[str, float], rule_weight: float = 0.5, intercept: float = 0.0) -> ValenceTable:
    return ValenceTable(version="1.0.0", locale="es-MX", provenance={"fitted_on": ["tune"]},
                        rule_weight=rule_weight, intercept=intercept, weights=weights)


# ----------------------------------------------------------------------------- the shipped tables


@pytest.mark.parametrize("locale", LOCALES)
def test_shipped_table_loads_is_bounded_and_says_where_it_comes_from(locale: str) -> None:
    table = table_for(locale)
    assert table is not None and table.locale == locale
    assert 100 < len(table.weights) <= MAX_FEATURES
    assert all(abs(w) <= MAX_WEIGHT for w in table.weights.values())
    fitted_on = str(table.provenance["fitted_on"])
    for split in ("tune", "held-out", "heldout2", "heldout3", "heldout4"):
        assert split in fitted_on
    assert "heldout5" not in json.dumps(table.provenance)
    assert {"model", "features", "date", "caveat"} <= set(table.provenance)
    assert f"uv-{locale}-{table.version}" in annotator_version(locale)


def test_a_table_that_is_not_valid_fails_closed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ValueError, match="weight over"):
        _table({"w:triste": 5.0})
    with pytest.raises(ValueError, match="not a w:/b: feature"):
        _table({"triste": -0.2})
    monkeypatch.setattr(user_fitted, "DATA", tmp_path)
    table_for.cache_clear()
    try:
        assert table_for("es-MX") is None  # no table: the rules alone
        (tmp_path / "user-valence-es-MX.json").write_text('{"version": "1.0.0"}', encoding="utf-8")
        table_for.cache_clear()
        with pytest.raises(SuiteError, match="not a valid user valence table"):
            table_for("es-MX")
        good = _table({"w:triste": -0.2}).model_dump()
        (tmp_path / "user-valence-en-US.json").write_text(json.dumps(good), encoding="utf-8")
        with pytest.raises(SuiteError, match="table of locale 'es-MX'"):
            table_for("en-US")
    finally:
        table_for.cache_clear()


@pytest.mark.parametrize(("locale", "better", "worse"), [
    ("es-MX", "ya hablé con mi hermana y me siento un poco más tranquila, gracias",
     "ya no aguanto, todo está cada vez peor y nadie me entiende"),
    ("en-US", "I talked to my sister today and it helped, thank you",
     "it keeps getting worse and nobody gets it, I can't do this anymore"),
])
def test_a_fitted_positive_construction_reads_above_a_fitted_negative_one(
        locale: str, better: str, worse: str) -> None:
    table = table_for(locale)
    assert table is not None
    assert user_fitted.score(better, table) > 0 > user_fitted.score(worse, table)
    assert user_valences(locale, better)[0] > user_valences(locale, worse)[0]


def test_rules_only_gives_the_rules_valence_and_the_table_never_lifts_a_risk_turn() -> None:
    texts = ("hola, quería platicar", "mi mamá se fue a vivir con mi tía", "ya me quiero morir")
    fitted = user_valences("es-MX", *texts)
    with rules_only():
        rules = user_valences("es-MX", *texts)
    assert fitted != rules
    assert rules[2] <= user_fitted.KEEP_BELOW and fitted[2] <= rules[2]


# ----------------------------------------------------------------------------- features and the formula


def test_features_are_folded_words_and_in_clause_pairs_without_digits_or_placeholders() -> None:
    got = features("Tengo {age} años y 3 hijos. ¿Qué hago?")
    assert {"w:tengo", "w:anos", "b:tengo_anos", "w:hijos", "w:que", "b:que_hago", "w:?"} <= got
    assert not any("3" in f or "age" in f for f in got)
    assert "b:hijos_que" not in got  # a pair never crosses clause punctuation
    assert features("") == set()


def test_fitted_valence_weighs_the_rule_and_the_words() -> None:
    table = _table({"w:mejor": 0.6, "w:peor": -0.6}, rule_weight=0.5, intercept=-0.1)
    up, down = fitted_valence(0.0, "estoy mejor", table), fitted_valence(0.0, "estoy peor", table)
    assert up > -0.1 > down and up == pytest.approx(-0.1 + 0.6 / np.sqrt(3), abs=1e-3)
    assert fitted_valence(0.4, "nada", table) == pytest.approx(0.5 * 0.4 - 0.1)
    assert fitted_valence(-0.9, "estoy mejor", table) == -0.9  # a risk reading is the ceiling
    assert fitted_valence(1.0, "mejor", _table({"w:mejor": 1.0}, rule_weight=2.0)) == 1.0


# ----------------------------------------------------------------------------- the fitting script


def test_kfold_by_script_never_splits_a_script_and_uses_every_fold() -> None:
    fit = _fit_script()
    groups = [f"s{i % 23}" for i in range(200)]
    folds = fit.kfold_by_script(groups, 5)
    where: dict[str, set[int]] = {}
    for g, f in zip(groups, folds, strict=True):
        where.setdefault(g, set()).add(f)
    assert all(len(fs) == 1 for fs in where.values())
    assert set(folds) == set(range(5))
    assert folds == fit.kfold_by_script(groups, 5)  # deterministic


def test_leave_one_set_out_refuses_a_script_in_two_sets() -> None:
    fit = _fit_script()
    sets = ["tune", "tune", "heldout3"]
    assert fit.leave_one_set_out(sets, ["a", "a", "b"]) == sets
    with pytest.raises(ValueError, match="script 'a' is in 'tune' and 'heldout3'"):
        fit.leave_one_set_out(["tune", "heldout3"], ["a", "a"])


def test_cross_validation_predicts_each_fold_from_the_others_only() -> None:
    fit = _fit_script()
    words = {"bien": 0.6, "mal": -0.6}
    turns = []
    for i in range(60):
        word = "bien" if i % 2 else "mal"
        turns.append(fit.Turn(f"set{i % 3}", "es-MX", f"s{i}", f"hoy {word} otra vez", words[word], 0.0))
    turns.append(fit.Turn("set9", "es-MX", "odd", "hoy raro otra vez", 0.0, 0.0))
    preds = fit.cross_validate(turns, [t.set for t in turns], "uni+bi", 2, set(), "blend-1", (0.1,))
    assert preds[0.1]["set0"][1] > 0.2 > -0.2 > preds[0.1]["set0"][0]
    assert preds[0.1]["set9"][0] == pytest.approx(np.mean([t.gold for t in turns[:60]]), abs=0.05)


def test_ridge_recovers_a_known_linear_rule_and_shrinks_with_lambda() -> None:
    fit = _fit_script()
    rows = [{"w:a"}, {"w:b"}, {"w:a", "w:b"}, set(), {"w:a"}, {"w:b"}] * 5
    x = fit.design(rows, [1] * len(rows), ["w:a", "w:b"])
    y = np.asarray(x @ np.array([0.5, -0.3])).ravel() + 0.1
    (w, _, b), (w_big, _, _) = fit.ridge(x, y, [1e-6, 100.0])
    assert w == pytest.approx([0.5, -0.3], abs=1e-3) and b == pytest.approx(0.1, abs=1e-3)
    assert np.all(np.abs(w_big) < np.abs(w))
    rule = np.linspace(-1, 1, len(rows))
    (w2, e, b2), = fit.ridge(x, y + 0.7 * rule, [1e-6], extra=rule)
    assert e == pytest.approx(0.7, abs=1e-3) and w2 == pytest.approx([0.5, -0.3], abs=1e-3)
    assert b2 == pytest.approx(0.1, abs=1e-3)


def test_vocabulary_counts_scripts_and_names_are_dropped() -> None:
    fit = _fit_script()
    rows = [{"w:a", "w:b"}, {"w:a"}, {"w:b"}]
    assert fit.vocabulary(rows, ["s1", "s2", "s1"], 2) == ["w:a"]  # w:b twice, in one script only
    names = fit.name_words(["Hoy vi a Rocío en Monterrey.", "Le dije a Rocío que sí. Yo estoy bien",
                            "I told Mark and I'm fine"])
    assert {"rocio", "monterrey", "mark"} <= names and not {"hoy", "yo", "i", "i'm", "estoy"} & names
    assert fit.turn_features("Rocío me ayudó", "uni+bi", names) == {"w:me", "w:ayudo", "b:me_ayudo"}
    assert fit.trim(np.array([0.9, -0.1, 0.3]), 0.5, 2).tolist() == [0.5, 0.0, 0.3]
