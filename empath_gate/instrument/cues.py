"""Non-verbal cues of spoken transcripts: the vocabulary model and the pure text helpers.

A speech pipeline turns a call into text and inserts what it hears besides words as bracketed
tokens (``[sigh]``, ``[crying]``, ``[long pause]``). The instrument declares which tokens
exist in ``suites/cues.yaml`` (:class:`Cue`: an ASCII id, the token, a display label per
locale and a definition written by the project). Motivation: speech-based crisis assessment
classifies calls from transcripts into which detected non-verbal cues are inserted
("Speech-based Psychological Crisis Assessment using LLMs", arXiv 2605.10027).

Rules (suites/REVIEW.md, section 12):

* a seed carries cues only when it is a **voice seed** (tag :data:`VOICE_TAG`); only suites
  marked ``voice: true`` select voice seeds, and they select nothing else
  (:func:`empath_gate.instrument.selection.suite_seeds`);
* every bracketed token of a voice seed's script is a declared cue (:data:`BRACKETED` finds
  candidates; :meth:`CueVocabulary.undeclared` names the others).

:class:`CueVocabulary` finds, strips and splits declared tokens in a text. It is pure and
matches tokens exactly (case-sensitive, as the vocabulary writes them), so ``*sighs*`` or an
undeclared ``[sobbing]`` is never taken for a cue.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from empath_gate.instrument.model_base import Frozen, Locale, Slug

VOICE_TAG = "voice"
"""The tag that makes a seed a voice seed (its script may carry cue tokens)."""

CUE_TOKEN_PATTERN = r"^\[[a-z]+(?: [a-z]+){0,3}\]$"
"""A cue token: one to four lower-case ASCII words in square brackets (``[long pause]``)."""

BRACKETED = re.compile(r"\[[^\[\]\n]{1,80}\]")
"""Any bracketed span of a script turn: a cue token or a candidate the vocabulary must declare."""

STRIPPED_SILENCE = "..."
"""What a user message that held only cues becomes when cues are stripped for a target: the
way a text transcript renders a silence (an empty message would be no message at all)."""

class Cue(Frozen):
    """One declared non-verbal cue: ``id`` (ASCII slug), ``token`` as it appears in text,
    ``labels`` (locale -> display label, both locales required) and ``definition`` (what the
    speech pipeline heard, written by the project)."""

    id: Slug
    token: str = Field(pattern=CUE_TOKEN_PATTERN, description="as written in a transcript, e.g. [long pause]")
    labels: dict[Locale, str] = Field(min_length=2, description="display label per locale")
    definition: str = Field(min_length=10)

    def label(self, locale: str) -> str:
        """The display label in ``locale`` (en-US when the locale has none)."""
        for loc, text in self.labels.items():
            if loc == locale:
                return text
        return self.labels.get("en-US") or self.token


def is_voice_seed(seed_tags: Iterable[str]) -> bool:
    """True when a seed with these tags is a voice seed (tag :data:`VOICE_TAG`)."""
    return VOICE_TAG in seed_tags


@dataclass(frozen=True)
class CueVocabulary:
    """The declared cues, for finding them in text. Empty vocabulary: no text has cues."""

    cues: tuple[Cue, ...] = ()
    _rx: re.Pattern[str] | None = field(default=None, init=False, repr=False, compare=False)
    _by_token: dict[str, Cue] = field(default_factory=dict, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_token = {c.token: c for c in self.cues}
        object.__setattr__(self, "_by_token", by_token)
        if by_token:
            alts = "|".join(re.escape(t) for t in sorted(by_token, key=len, reverse=True))
            object.__setattr__(self, "_rx", re.compile(alts))

    def __bool__(self) -> bool:
        return bool(self.cues)

    def find(self, text: str) -> list[tuple[int, int, Cue]]:
        """Every declared token in ``text`` as ``(start, end, cue)``, left to right."""
        if self._rx is None:
            return []
        return [(m.start(), m.end(), self._by_token[m.group(0)]) for m in self._rx.finditer(text)]

    def tokens_in(self, text: str) -> list[str]:
        """The cue ids found in ``text``, in order (repeats kept)."""
        return [c.id for _, _, c in self.find(text)]

    def undeclared(self, text: str) -> list[str]:
        """Bracketed spans of ``text`` that are not declared tokens, in order."""
        return [m.group(0) for m in BRACKETED.finditer(text) if m.group(0) not in self._by_token]

    def without_cues(self, text: str) -> str:
        """``text`` without its declared tokens, spaces around them collapsed (no other change:
        text without cues comes back identical)."""
        if self._rx is None or self._rx.search(text) is None:
            return text
        out = self._rx.sub(" ", text)
        out = re.sub(r"[ \t]{2,}", " ", out)
        out = re.sub(r" +([,.;:!?…])", r"\1", out)
        return out.strip()

    def split(self, text: str) -> list[str | Cue]:
        """``text`` as a list of plain pieces and cues, in order (for rendering badges)."""
        out: list[str | Cue] = []
        pos = 0
        for start, end, cue in self.find(text):
            if start > pos:
                out.append(text[pos:start])
            out.append(cue)
            pos = end
        if pos < len(text):
            out.append(text[pos:])
        return out


def strip_for_target(messages: Sequence[dict[str, Any]], vocabulary: CueVocabulary) -> list[dict[str, Any]]:
    """The dialogue as a target set to ``strip`` receives it: cue tokens removed from user
    messages (a message left empty becomes :data:`STRIPPED_SILENCE`); assistant messages and
    messages without cues unchanged. Pure; returns new dicts."""
    out = []
    for m in messages:
        if m.get("role") != "user" or not vocabulary.find(m.get("content", "")):
            out.append(dict(m))
            continue
        text = vocabulary.without_cues(m["content"])
        out.append({**m, "content": text or STRIPPED_SILENCE})
    return out
