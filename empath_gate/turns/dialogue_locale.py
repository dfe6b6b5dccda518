"""The locale of a dialogue to label: its own, else the language its user turns are written in
(:func:`empath_gate.judging.language.detect_language`), else ``en-US``."""

from __future__ import annotations

from empath_gate.instrument.models import LOCALES
from empath_gate.turns.model import Dialogue


def resolve_locale(dialogue: Dialogue) -> tuple[str, str]:
    """``(locale, how)``: the dialogue's own locale (``how`` = ``given``), else the language of
    its user turns (``detected``; all turns when it has none), else ``en-US`` (``assumed``)."""
    if dialogue.locale in LOCALES:
        return str(dialogue.locale), "given"
    from empath_gate.judging.language import detect_language

    texts = [t.text for t in dialogue.turns if t.role == "user"] or [t.text for t in dialogue.turns]
    lang = detect_language(" ".join(texts)[:4000])
    if lang == "es":
        return "es-MX", "detected"
    if lang == "en":
        return "en-US", "detected"
    return "en-US", "assumed"


__all__ = ["resolve_locale"]
