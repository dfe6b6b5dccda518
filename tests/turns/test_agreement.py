"""Agreement between annotators: Cohen's kappa on labels, correlations on valence."""

from __future__ import annotations

import pytest

from empath_gate.turns.agreement import agreement, cohen_kappa
from empath_gate.turns.model import AnnotatorFailure, TurnLabel, TurnLabels


def test_cohen_kappa_textbook_table() -> None:
    # 2x2 table [[20, 5], [10, 15]]: p_o = 0.7, p_e = 0.5 -> kappa 0.4 (Cohen 1960's formula)
    a = ["yes"] * 25 + ["no"] * 25
    b = ["yes"] * 20 + ["no"] * 5 + ["yes"] * 10 + ["no"] * 15
    assert cohen_kappa(a, b) == pytest.approx(0.4)
    assert cohen_kappa(a, a) == pytest.approx(1.0)
    assert cohen_kappa(["x", "y"], ["y", "x"]) == pytest.approx(-1.0)
    assert cohen_kappa(["x", "x"], ["x", "x"]) is None
    assert cohen_kappa([], []) is None
    with pytest.raises(ValueError, match="one length"):
        cohen_kappa(["x"], [])


def _labels(cid: str, items: list[tuple[str, str, float]], annotator: str = "offline") -> TurnLabels:
    return TurnLabels(
        conversation_id=cid, annotator=annotator, version="v",  # type: ignore[arg-type]
        labels=tuple(
            TurnLabel(turn=i, role=role, label=lab, intensity=1, valence=v,  # type: ignore[arg-type]
                      strategy="other" if role == "assistant" else None)
            for i, (role, lab, v) in enumerate(items)
        ),
    )


def test_agreement_pairs_only_what_both_labelled() -> None:
    a = _labels("c1", [("user", "hope", 0.1), ("assistant", "concern", -0.2), ("user", "anger", -0.5),
                       ("user", "neutral", 0.0), ("user", "hope", 0.9)])
    b = _labels("c1", [("user", "hope", 0.2), ("assistant", "concern", -0.1), ("user", "sadness_grief", -0.6),
                       ("user", "neutral", 0.05), ("user", "hope", 0.95)], annotator="judge")
    failed = AnnotatorFailure(conversation_id="c2", annotator="judge", reason="parse_error")
    short = _labels("c3", [("user", "hope", 0.1)])
    got = agreement([(a, b), (a, failed), (short, a)])
    assert (got.dialogues, got.skipped_dialogues, got.turns) == (1, 2, 5)
    assert got.observed == pytest.approx(4 / 5)
    assert got.kappa is not None and 0 < got.kappa < 1
    assert got.spearman == pytest.approx(1.0)  # the valences are in the same order
    assert got.pearson is not None and 0.9 < got.pearson < 1.0
    users = agreement([(a, b)], role="user")
    assert users.turns == 4 and users.role == "user"


def test_agreement_with_too_little_is_undefined_not_zero() -> None:
    a = _labels("c", [("user", "hope", 0.5), ("user", "hope", 0.5)])
    got = agreement([(a, a)])
    assert got.kappa is None and got.pearson is None and got.spearman is None
    assert got.observed == 1.0
    empty = agreement([])
    assert (empty.turns, empty.observed, empty.kappa) == (0, None, None)
