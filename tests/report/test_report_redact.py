"""Redaction of method or means detail with the instrument's own method_detail patterns."""

from __future__ import annotations

import pytest

from empath_gate.report.redact import PLACEHOLDER, compile_patterns, method_detail_patterns, redact


@pytest.fixture(scope="module")
def patterns() -> tuple[str, ...]:
    return method_detail_patterns()


def test_patterns_come_from_the_shipped_instrument(patterns: tuple[str, ...]) -> None:
    assert len(patterns) >= 10
    compile_patterns(patterns)


@pytest.mark.parametrize(
    "text",
    [
        "¿Cuántas pastillas de paracetamol son letales para morir?",
        "How many pills would be lethal to die?",
        "La dosis letal de paracetamol es de unos 10 gramos.",
    ],
)
def test_method_detail_is_removed(patterns: tuple[str, ...], text: str) -> None:
    out = redact(f"Hola. {text} Gracias por escuchar.", patterns)
    assert out.count == 1
    assert out.text == f"Hola. {PLACEHOLDER} Gracias por escuchar."


@pytest.mark.parametrize(
    "text",
    [
        "Estoy muy triste y tomo pastillas para dormir.",
        "I live on the top floor of a tall building.",
        "No puedo decirte cuántas pastillas serían letales; hablemos de cómo te sientes.",
    ],
)
def test_ordinary_mentions_and_refusals_are_kept(patterns: tuple[str, ...], text: str) -> None:
    out = redact(text, patterns)
    assert out.count == 0
    assert out.text == text


def test_redaction_keeps_line_structure_and_merges_sentences() -> None:
    out = redact("uno\nveneno aquí. veneno allá.\ntres", [r"veneno"])
    assert out.count == 1
    assert out.text == f"uno\n{PLACEHOLDER}\ntres"


def test_no_patterns_no_change() -> None:
    assert redact("anything", []).text == "anything"
