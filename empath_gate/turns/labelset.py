"""The label set and lexicons of the turn layer, as the instrument ships them.

The models live with the instrument's (:mod:`empath_gate.instrument.emotion_models`, re-exported
here) because the instrument loader validates ``suites/emotions.yaml`` and
``suites/lexicons/<locale>.yaml`` like every other instrument file (YAML, JSON Schema, model);
``empath-gate validate`` counts them. This module gives the turn layer one place to get them:

* :func:`shipped_instrument`: the shipped instrument, loaded once per process;
* :func:`label_set`: the label set of an instrument (default: the shipped one);
* :func:`lexicon`: the lexicon of a locale.

Each raises :class:`~empath_gate.errors.SuiteError` when the files are missing.
"""

from __future__ import annotations

import functools

from empath_gate.errors import SuiteError
from empath_gate.instrument.emotion_models import (
    MIN_USER_ENTRIES,
    EmotionLabel,
    EmotionSet,
    Lexicon,
    LocalizedText,
    StrategyLabel,
)
from empath_gate.instrument.models import Instrument


@functools.lru_cache(maxsize=1)
def shipped_instrument() -> Instrument:
    """The shipped instrument (no team layers), loaded and validated once per process.
    Raises SuiteError or ConfigError as :func:`~empath_gate.instrument.loader.load_instrument`."""
    from empath_gate.instrument.loader import load_instrument

    return load_instrument()


def label_set(instrument: Instrument | None = None) -> EmotionSet:
    """The label set (``suites/emotions.yaml``) of ``instrument`` (default: the shipped one).
    Raises SuiteError when the instrument has none."""
    inst = instrument or shipped_instrument()
    if inst.emotions is None:
        raise SuiteError("suites/emotions.yaml is missing: the turn layer needs the label set; restore "
                         "the shipped instrument files")
    return inst.emotions


def lexicon(locale: str, instrument: Instrument | None = None) -> Lexicon:
    """The offline annotator's lexicon of ``locale`` (``es-MX`` or ``en-US``) in ``instrument``
    (default: the shipped one). Raises SuiteError when there is none for the locale."""
    inst = instrument or shipped_instrument()
    for lex in inst.lexicons:
        if lex.locale == locale:
            return lex
    raise SuiteError(f"suites/lexicons/{locale}.yaml is missing: the offline annotator has no lexicon "
                     f"for {locale}; restore the shipped instrument files")


def lexicon_sizes(instrument: Instrument | None = None) -> dict[str, dict[str, int]]:
    """Locale -> label id -> number of distinct phrases (user labels, then bot labels), for
    ``validate`` and the README."""
    inst = instrument or shipped_instrument()
    return {
        lex.locale: {k: len(set(v)) for k, v in (*lex.user_labels.items(), *lex.bot_labels.items())}
        for lex in inst.lexicons
    }


__all__ = [
    "MIN_USER_ENTRIES",
    "EmotionLabel",
    "EmotionSet",
    "Lexicon",
    "LocalizedText",
    "StrategyLabel",
    "label_set",
    "lexicon",
    "lexicon_sizes",
    "shipped_instrument",
]
