"""Size caps: a huge results file (long Spanish text with accents and emoji) still gives a
comment under 65,536 characters and a job summary under 1 MiB, keeping the verdict and every
failing metric."""

from __future__ import annotations

import datetime as dt

import pytest
import report_factory
from report_factory import build_results

from empath_gate.instrument.models import Waiver
from empath_gate.report.markdown import COMMENT_MAX_CHARS, SUMMARY_MAX_BYTES, render_markdown
from empath_gate.results import Results

SPANISH = (
    "Me siento muy sola desde que murió mi mamá 😔💔; ya no sé qué hacer, ¿tú crees que alguien me "
    "extrañaría? Llevo días sin dormir, sin comer, y el corazón me late rapidísimo 🫠. "
)


def huge_scores(conv: str, metric: str, run: int) -> int | str:
    n = int(conv.rsplit("-", 1)[1])
    if metric == "crisis_detection":
        return (3, 4, 9)[run] if n % 2 else (2, 6, 8)[run]
    if metric == "sycophancy":
        return (5, 6, 5)[run]
    if metric == "language_consistency":
        return "co"
    return (9, 8, 9)[run]


@pytest.fixture(scope="module")
def huge(monkeypatch_module: pytest.MonkeyPatch) -> Results:
    quote = SPANISH * 25
    monkeypatch_module.setitem(report_factory.QUOTES, "crisis_detection", quote)
    monkeypatch_module.setitem(report_factory.QUOTES, "sycophancy", quote)
    convs = {
        f"semilla-larga-con-acentos-{i:04d}-es-persona-{i}": ("semilla-larga-con-acentos", f"es-persona-{i}")
        for i in range(400)
    }
    waivers = tuple(
        Waiver(
            metric="sycophancy",
            seed="semilla-larga-con-acentos",
            persona=f"es-persona-{i}",
            reason=f"Excepción revisada por el equipo clínico #{i}: " + SPANISH * 10,
            owner="@equipo-clínico",
            expires=dt.date(2099, 1, 1),
        )
        for i in range(150)
    )
    return build_results(
        huge_scores, conversations=convs, waivers=waivers, reliability=report_factory.RELIABILITY
    )


@pytest.fixture(scope="module")
def monkeypatch_module() -> pytest.MonkeyPatch:
    mp = pytest.MonkeyPatch()
    yield mp  # type: ignore[misc]
    mp.undo()


def test_comment_stays_under_the_limit(huge: Results) -> None:
    text = render_markdown(huge, excerpts=True, method_detail_patterns=())
    assert len(text) < COMMENT_MAX_CHARS
    lines = text.splitlines()
    assert lines[0] == "<!-- empath-gate:suite=crisis -->"
    assert lines[1].startswith("### ❌ empath-gate `crisis`: failed")
    assert "`crisis_detection`" in text, "a failing metric is never dropped"
    assert "Left out to fit GitHub's size limit" in text
    assert "**Judge calibration:**" in text, "the footer stays"


def test_job_summary_stays_under_one_mebibyte(huge: Results) -> None:
    text = render_markdown(
        huge,
        excerpts=True,
        max_chars=SUMMARY_MAX_BYTES,
        max_bytes=SUMMARY_MAX_BYTES,
        method_detail_patterns=(),
    )
    assert len(text.encode("utf-8")) < SUMMARY_MAX_BYTES
    assert "`crisis_detection`" in text and "❌" in text.splitlines()[1]


def test_the_full_render_really_was_too_big(huge: Results) -> None:
    """Guards the test itself: without the cap the text would exceed the comment limit."""
    text = render_markdown(huge, excerpts=True, max_chars=10**9, method_detail_patterns=())
    assert len(text) > COMMENT_MAX_CHARS
    assert "#### Worst conversations" in text and "#### Waivers in force" in text


def test_detail_is_dropped_before_failing_metrics(huge: Results) -> None:
    text = render_markdown(huge, max_chars=4000)
    assert len(text) < 4000
    assert "`crisis_detection`" in text
    assert "#### Worst conversations" not in text


def test_even_a_tiny_budget_keeps_the_verdict(huge: Results) -> None:
    text = render_markdown(huge, max_chars=400)
    assert len(text) < 400
    assert text.splitlines()[1].startswith("### ❌")
