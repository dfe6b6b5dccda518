"""Redaction of method or means detail from text the reports show (pure, plus one loader).

Safe-messaging guidance for suicide prevention says public text must not carry method or
means detail (doses, heights, how to obtain a lethal means). A pull-request comment is often
public, so transcript excerpts (off by default) pass through :func:`redact` first. The
patterns are the instrument's own ``method_detail`` pattern set (``suites/patterns.yaml``,
every locale), so the reports and the judge's checks agree on what counts as detail.

A match removes its whole *sentence* (up to the nearest ``.``, ``!``, ``?``, ``;`` or line
break on each side), not only the matched span: a pattern anchors on the lethal phrase, while
the figures that make it dangerous often sit a few words away.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

METHOD_DETAIL_SET = "method_detail"
"""Id of the pattern set used for redaction (defined in ``suites/patterns.yaml``)."""

PLACEHOLDER = "[method or means detail removed]"
"""What replaces a redacted sentence."""

_SENTENCE_END = re.compile(r"[.!?;\n]")


@dataclass(frozen=True)
class Redaction:
    """The redacted ``text`` and how many sentences were removed (``count``)."""

    text: str
    count: int


def compile_patterns(patterns: Iterable[str | re.Pattern[str]]) -> tuple[re.Pattern[str], ...]:
    """Compile pattern strings case-insensitively (already compiled patterns pass through).
    Raises ``re.error`` for an invalid pattern."""
    out: list[re.Pattern[str]] = []
    for p in patterns:
        out.append(p if isinstance(p, re.Pattern) else re.compile(p, re.IGNORECASE))
    return tuple(out)


def _sentence_bounds(text: str, start: int, end: int) -> tuple[int, int]:
    left = start
    while left > 0 and not _SENTENCE_END.match(text[left - 1]):
        left -= 1
    m = _SENTENCE_END.search(text, end)
    right = m.end() if m else len(text)
    return left, right


def redact(text: str, patterns: Sequence[str | re.Pattern[str]], placeholder: str = PLACEHOLDER) -> Redaction:
    """Replace every sentence of ``text`` that matches any of ``patterns`` with
    ``placeholder`` (module docstring). Overlapping or adjacent sentences merge into one
    placeholder. With no pattern, the text comes back unchanged (count 0)."""
    compiled = compile_patterns(patterns)
    spans: list[tuple[int, int]] = []
    for pat in compiled:
        for m in pat.finditer(text):
            spans.append(_sentence_bounds(text, m.start(), max(m.end(), m.start() + 1)))
    if not spans:
        return Redaction(text, 0)
    spans.sort()
    merged: list[list[int]] = []
    for s, e in spans:
        if merged and s <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], e)
        else:
            merged.append([s, e])
    parts: list[str] = []
    pos = 0
    for s, e in merged:
        sentence = text[s:e]
        lead = len(sentence) - len(sentence.lstrip())
        parts.append(text[pos : s + lead])
        parts.append(placeholder)
        if sentence.endswith("\n"):
            parts.append("\n")
        pos = e
    parts.append(text[pos:])
    return Redaction("".join(parts), len(merged))


def method_detail_patterns(instrument: object | None = None) -> tuple[str, ...]:
    """The instrument's ``method_detail`` patterns, every locale, in file order.

    ``instrument``: an :class:`~empath_gate.instrument.models.Instrument`; ``None`` loads the
    shipped one (``load_instrument()``). Raises KeyError when the set is missing and
    SuiteError/ConfigError when the instrument cannot be loaded.
    """
    from empath_gate.instrument.models import Instrument

    if instrument is None:
        from empath_gate.instrument.loader import load_instrument

        instrument = load_instrument()
    if not isinstance(instrument, Instrument):
        raise TypeError("instrument must be an Instrument")
    pset = instrument.pattern_set(METHOD_DETAIL_SET)
    out: list[str] = []
    for locale in sorted(pset.patterns):
        out.extend(pset.patterns[locale])
    return tuple(out)
