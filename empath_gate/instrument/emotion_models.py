"""The turn layer's part of the instrument: the emotion label set (``suites/emotions.yaml``) and
the offline annotator's lexicons (``suites/lexicons/<locale>.yaml``).

The label ids are fixed by :mod:`empath_gate.turns.model` (``USER_LABELS``, ``BOT_LABELS``,
``STRATEGIES``): the files must list exactly those ids, in that order, so every annotator and
every statistic agree on them. Display labels and definitions are written by the project in
both locales. Valences are on -1 (most unpleasant) .. 1 (most pleasant): the valence axis of the
circumplex model of affect (Russell, "A circumplex model of affect", J. Pers. Soc. Psychol.
39(6), 1980); each label's ``source`` says where its placement comes from.

A lexicon entry is a phrase matched against a turn after folding case and accents (``más`` and
``mas`` are the same), on word boundaries; a word ending in ``*`` matches any word that starts
with it (``desesperad*`` matches ``desesperado``, ``desesperada``). Entries are the project's
own; no third-party lexicon is copied.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, StringConstraints, model_validator

from empath_gate.instrument.model_base import LOCALES, Frozen, Locale, Slug
from empath_gate.turns.model import BOT_LABELS, STRATEGIES, USER_LABELS

MIN_USER_ENTRIES = 40
"""Entries per user-side label per locale (issue "Multi-level emotion dynamics", item 2)."""

PHRASE_PATTERN = r"^[^\s*]+\*?(?: [^\s*]+\*?)*$"
Phrase = Annotated[str, StringConstraints(pattern=PHRASE_PATTERN, min_length=1, max_length=80)]
"""A lexicon phrase: words separated by single spaces, each optionally ending in ``*``."""

SEMVER = r"^\d+\.\d+\.\d+$"


class LocalizedText(Frozen):
    """A text in both locales, written by the project."""

    es_MX: str = Field(alias="es-MX", min_length=1, max_length=400)
    en_US: str = Field(alias="en-US", min_length=1, max_length=400)

    def get(self, locale: str) -> str:
        """The text in ``locale`` (``es-MX`` or ``en-US``; anything else gives ``en-US``)."""
        return self.es_MX if locale == "es-MX" else self.en_US


class EmotionLabel(Frozen):
    """One primary label: ``valence`` in -1..1, display label and definition per locale, and
    the source of its placement on the valence axis."""

    id: Slug
    valence: float = Field(ge=-1.0, le=1.0)
    display: LocalizedText
    definition: LocalizedText
    source: str = Field(min_length=3)


class StrategyLabel(Frozen):
    """One bot support strategy: display label and a short definition per locale (the name is
    ESConv's, Liu et al., ACL 2021; the definitions are the project's)."""

    id: Slug
    display: LocalizedText
    definition: LocalizedText
    source: str = Field(min_length=3)


class EmotionSet(Frozen):
    """``suites/emotions.yaml``: the label set's version and its user labels, bot labels and
    strategies, each listing exactly the ids of :mod:`empath_gate.turns.model` in that order.
    Raises (on validation) when an id is missing, extra or out of order."""

    label_set_version: str = Field(pattern=SEMVER, description="semver, e.g. 1.0.0")
    valence_scale: str = Field(min_length=3, description="what -1 and 1 mean, and the source")
    user_labels: tuple[EmotionLabel, ...]
    bot_labels: tuple[EmotionLabel, ...]
    strategies: tuple[StrategyLabel, ...]

    @model_validator(mode="after")
    def _fixed_ids(self) -> EmotionSet:
        for name, got, want in (
            ("user_labels", tuple(x.id for x in self.user_labels), USER_LABELS),
            ("bot_labels", tuple(x.id for x in self.bot_labels), BOT_LABELS),
            ("strategies", tuple(x.id for x in self.strategies), STRATEGIES),
        ):
            if got != want:
                raise ValueError(f"{name} must list exactly {', '.join(want)} in this order "
                                 f"(got {', '.join(got)})")
        return self

    def label(self, label_id: str) -> EmotionLabel:
        """The user or bot label with this id; KeyError if absent."""
        for lab in (*self.user_labels, *self.bot_labels):
            if lab.id == label_id:
                return lab
        raise KeyError(label_id)

    def valence(self, label_id: str) -> float:
        """The valence (-1..1) of a label id; KeyError if absent."""
        return self.label(label_id).valence


class Lexicon(Frozen):
    """``suites/lexicons/<locale>.yaml``: the offline annotator's phrases for one locale.

    * ``user_labels``: every user-side label id -> at least :data:`MIN_USER_ENTRIES` phrases
      (``neutral`` included: phrases of plain, unemotional talk);
    * ``bot_labels``: bot-side label ids -> phrases (``neutral_informative`` is what a bot turn
      with no warmth or concern phrase gets, so it may be empty);
    * ``strategies``: strategy ids -> cue phrases (``question`` also comes from question marks;
      ``other`` is what a turn with no cue gets);
    * ``negators``: words that negate the phrase that follows within three words; ``intensifiers``
      and ``diminishers``: words that raise or lower the intensity of the phrase that follows.
    """

    lexicon_version: str = Field(pattern=SEMVER, description="semver, e.g. 1.0.0")
    locale: Locale
    source: str = Field(min_length=3)
    user_labels: dict[Slug, tuple[Phrase, ...]]
    bot_labels: dict[Slug, tuple[Phrase, ...]]
    strategies: dict[Slug, tuple[Phrase, ...]]
    negators: tuple[Phrase, ...] = Field(min_length=1)
    intensifiers: tuple[Phrase, ...] = ()
    diminishers: tuple[Phrase, ...] = ()

    @model_validator(mode="after")
    def _known_ids(self) -> Lexicon:
        if tuple(self.user_labels) != USER_LABELS:
            raise ValueError(f"user_labels must list exactly {', '.join(USER_LABELS)} in this order")
        short = [k for k, v in self.user_labels.items() if len(set(v)) < MIN_USER_ENTRIES]
        if short:
            raise ValueError(f"user_labels {', '.join(short)}: fewer than {MIN_USER_ENTRIES} "
                             "distinct entries")
        unknown = [k for k in self.bot_labels if k not in BOT_LABELS]
        unknown += [k for k in self.strategies if k not in STRATEGIES]
        if unknown:
            raise ValueError(f"unknown label or strategy ids: {', '.join(unknown)}")
        return self


__all__ = [
    "LOCALES",
    "MIN_USER_ENTRIES",
    "EmotionLabel",
    "EmotionSet",
    "Lexicon",
    "LocalizedText",
    "StrategyLabel",
]
