"""Phrase matching for the offline annotator (pure): folding, tokens, and one index over every
phrase of a lexicon.

* :func:`fold`: lower case, accents removed (``más`` -> ``mas``, ``ñ`` -> ``n``), typographic
  apostrophes made ``'``;
* :func:`tokens`: words (letters and digits, inner apostrophes kept: ``don't``) and the
  punctuation that ends a clause (``. , ; : ! ?``), which no phrase crosses;
* :class:`Matcher`: finds every phrase of a set of groups (labels, strategies, modifiers) at
  every token position, a word ending in ``*`` matching any word that starts with it.

Matching works on tokens, with a few dict lookups per token (the first two words, the first word,
or its first three letters for phrases starting with a ``*`` word), so its cost grows with the
text, not with the
lexicon.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_TOKEN = re.compile(r"[a-z0-9]+(?:'[a-z0-9]+)*|[.,;:!?]")
PUNCTUATION = frozenset(".,;:!?")
"""Tokens that end a clause: negation and intensifiers do not reach across them."""
PREFIX_KEY = 3
"""Letters of a ``*`` word used to index it; shorter ``*`` words are refused."""


def fold(text: str) -> str:
    """``text`` in lower case without accents (NFKD, non-ASCII dropped: ``¿`` and emoji go too),
    with ’ and ‘ as ``'``."""
    text = text.lower().replace("\u2019", "'").replace("\u2018", "'")
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")


def tokens(text: str) -> list[str]:
    """The tokens of ``text`` after :func:`fold`: words and clause punctuation, in order (an
    opening ``¿`` is a ``?`` token, so a Spanish question is one without its closing mark)."""
    return _TOKEN.findall(fold(text.replace("\u00bf", "?")))


@dataclass(frozen=True)
class Phrase:
    """One compiled phrase: ``words`` folded, ``prefix`` flags the words written with ``*``;
    ``group`` (e.g. ``user``, ``bot``, ``strategy``, ``negator``) and ``key`` (the label id)."""

    group: str
    key: str
    words: tuple[str, ...]
    prefix: tuple[bool, ...]
    text: str


@dataclass(frozen=True)
class Hit:
    """A phrase found at tokens ``start`` (inclusive) .. ``end`` (exclusive)."""

    start: int
    end: int
    phrase: Phrase

    @property
    def group(self) -> str:
        """The phrase's group."""
        return self.phrase.group

    @property
    def key(self) -> str:
        """The phrase's key (label, strategy or modifier kind)."""
        return self.phrase.key


def compile_phrase(group: str, key: str, text: str) -> Phrase:
    """A lexicon phrase as a :class:`Phrase`. Raises ValueError when it has no word, or a ``*``
    word shorter than :data:`PREFIX_KEY` letters."""
    words: list[str] = []
    prefix: list[bool] = []
    for raw in text.split():
        star = raw.endswith("*")
        toks = _TOKEN.findall(fold(raw.rstrip("*")))
        if not toks:
            continue
        if star and len(toks[-1]) < PREFIX_KEY:
            raise ValueError(f"{text!r}: a word ending in * needs at least {PREFIX_KEY} letters")
        words.extend(toks)
        prefix.extend([False] * (len(toks) - 1) + [star])
    if not words:
        raise ValueError(f"{text!r}: no word to match")
    return Phrase(group, key, tuple(words), tuple(prefix), text)


class Matcher:
    """Every phrase of some groups, indexed by first word. ``find`` returns all hits (they may
    overlap); :func:`resolve` keeps the non-overlapping ones."""

    def __init__(self, phrases: Iterable[Phrase]) -> None:
        # first word -> (one-word phrases, second word -> phrases, phrases whose second word is a *)
        self._first: dict[str, tuple[list[Phrase], dict[str, list[Phrase]], list[Phrase]]] = {}
        self._prefix: dict[str, list[Phrase]] = {}
        for p in phrases:
            if p.prefix[0]:
                self._prefix.setdefault(p.words[0][:PREFIX_KEY], []).append(p)
                continue
            singles, pairs, loose = self._first.setdefault(p.words[0], ([], {}, []))
            if len(p.words) == 1:
                singles.append(p)
            elif not p.prefix[1]:
                pairs.setdefault(p.words[1], []).append(p)
            else:
                loose.append(p)
        for singles, pairs, loose in self._first.values():
            for group in (singles, loose, *pairs.values()):
                group.sort(key=lambda p: -len(p.words))
        for group in self._prefix.values():
            group.sort(key=lambda p: -len(p.words))

    def find(self, toks: Sequence[str]) -> list[Hit]:
        """Every phrase occurrence in ``toks`` (tokens from :func:`tokens`), by start, longest
        first at each start."""
        hits: list[Hit] = []
        n = len(toks)
        first = self._first
        prefix = self._prefix
        for i, tok in enumerate(toks):
            entry = first.get(tok)
            if entry is not None:
                singles, pairs, loose = entry
                if i + 1 < n:
                    for p in pairs.get(toks[i + 1], ()):
                        if self._matches(p, toks, i, 2):
                            hits.append(Hit(i, i + len(p.words), p))
                    for p in loose:
                        if self._matches(p, toks, i, 1):
                            hits.append(Hit(i, i + len(p.words), p))
                for p in singles:
                    hits.append(Hit(i, i + 1, p))
            if len(tok) >= PREFIX_KEY:
                for p in prefix.get(tok[:PREFIX_KEY], ()):
                    if self._matches(p, toks, i):
                        hits.append(Hit(i, i + len(p.words), p))
        hits.sort(key=lambda h: (h.start, -(h.end - h.start)))
        return hits

    @staticmethod
    def _matches(p: Phrase, toks: Sequence[str], i: int, known: int = 0) -> bool:
        """Whether ``p`` occurs at token ``i``, its first ``known`` words already matched."""
        k = len(p.words)
        if i + k > len(toks):
            return False
        for j in range(known, k):
            tok, w = toks[i + j], p.words[j]
            if not (tok.startswith(w) if p.prefix[j] else tok == w):
                return False
        return True


def resolve(hits: Iterable[Hit]) -> list[Hit]:
    """The non-overlapping hits: the one starting first wins, then the longest (``hits`` in the
    order :meth:`Matcher.find` gives)."""
    kept: list[Hit] = []
    end = -1
    for h in sorted(hits, key=lambda h: (h.start, -(h.end - h.start))):
        if h.start >= end:
            kept.append(h)
            end = h.end
    return kept


def in_question(toks: Sequence[str], start: int, end: int) -> bool:
    """True when tokens ``start..end`` sit in a question: a ``?`` follows before the sentence
    ends (``.`` or ``!``), or the sentence opens with ``?`` (a Spanish ``¿``)."""
    for t in toks[end:]:
        if t in (".", "!"):
            break
        if t == "?":
            return True
    i = start - 1
    while i >= 0 and toks[i] not in (".", "!", "?"):
        i -= 1
    return i >= 0 and toks[i] == "?" and (i == 0 or toks[i - 1] in (".", "!", "?"))


def ends_before(hits: Sequence[Hit], toks: Sequence[str], start: int, window: int) -> Hit | None:
    """A hit of ``hits`` ending within ``window`` tokens before token ``start`` with no clause
    punctuation between it and ``start`` (the scope of a negator or intensifier), else None."""
    for h in hits:
        if start - window <= h.end <= start and not any(t in PUNCTUATION for t in toks[h.end:start]):
            return h
    return None


__all__ = ["PUNCTUATION", "Hit", "Matcher", "Phrase", "compile_phrase", "ends_before", "fold", "in_question",
           "resolve",
           "tokens"]
