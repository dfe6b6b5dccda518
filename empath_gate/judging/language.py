"""Offline language identification for the ``language_matches`` check (the only lingua import).

Uses ``lingua-language-detector`` (its models ship inside the wheel, so no download), restricted
to Spanish and English: the instrument's locales are es-MX and en-US, and restricting the
candidate set makes short replies far more reliable than open-set detection. The detector is
built once per process, lazily, on first use (building it costs little, but loading the
language models on first detection takes about half a second).
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from lingua import LanguageDetector

LanguageCode = Literal["es", "en"]

LOCALE_LANGUAGE: dict[str, LanguageCode] = {"es-MX": "es", "en-US": "en"}
"""The language each supported locale is expected to be written in."""


@functools.lru_cache(maxsize=1)
def _detector() -> LanguageDetector:
    from lingua import Language, LanguageDetectorBuilder

    return LanguageDetectorBuilder.from_languages(Language.SPANISH, Language.ENGLISH).build()


def detect_language(text: str) -> LanguageCode | None:
    """The language of ``text``, ``"es"`` or ``"en"``; ``None`` when lingua cannot decide
    (e.g. empty text, digits only). The caller decides what minimum length is meaningful."""
    from lingua import Language

    if not text.strip():
        return None
    found = _detector().detect_language_of(text)
    if found == Language.SPANISH:
        return "es"
    if found == Language.ENGLISH:
        return "en"
    return None
