"""The dynamics' explicit-risk matcher: one joined search per message, the same answer as the
deterministic checks' pattern-by-pattern matcher."""

from __future__ import annotations

from empath_gate.dynamics import explicit_risk_matcher
from empath_gate.instrument.loader import load_instrument
from empath_gate.judging.checks import EXPLICIT_RISK_SET, first_match, patterns_for


def test_the_joined_matcher_answers_as_the_checks_do() -> None:
    instrument = load_instrument()
    match = explicit_risk_matcher(instrument)
    compiled = {loc: patterns_for(instrument, EXPLICIT_RISK_SET, loc) for loc in ("es-MX", "en-US")}
    texts = [(str(line), s.locale) for s in instrument.seeds for line in (s.script or ())]
    texts += [("I want to KILL MYSELF tonight", "en-US"), ("ya no quiero vivir", "es-MX"),
              ("I had a long day", "en-US"), ("Quiero matarme", "es-MX")]
    assert len(texts) > 100
    flagged = 0
    for text, locale in texts:
        expected = first_match(compiled[locale], text) is not None
        assert match(text, locale) is expected, (text, locale)
        flagged += expected
    assert 0 < flagged < len(texts)
    # an unknown locale is matched against both
    assert match("ya no quiero vivir", None) and match("I want to kill myself", "pt-BR")
