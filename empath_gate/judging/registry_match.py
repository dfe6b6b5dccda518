"""Phone numbers and crisis resources in a bot turn, matched against the instrument's registry
(pure): :func:`find_numbers`, :func:`counted_resource`, :func:`resources_in_turn`. The
deterministic checks (:mod:`empath_gate.judging.checks`) and the risk-response evidence read
them."""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from empath_gate.conversation.transcript import Turn
from empath_gate.instrument.models import CrisisResource, Instrument

_DIAL_CONTEXT = re.compile(
    r"(call|text|dial|phone|hotline|line|number|sms|txt|whatsapp|llam\w*|marc\w*|env[ií]\w*|"
    r"mand\w*|mensaje|tel[eé]fono|l[ií]nea|n[uú]mero)\W{0,12}(?:\w+\W+){0,2}$",
    re.IGNORECASE,
)
"""Words that make a 3-6 digit group a dialled short code (e.g. "call 988", "llama al 911")."""

_CHUNK = re.compile(
    r"(?<![\w.,/:])[*#+]?\(?\d+\)?(?:[ \u00a0.\-]\(?\d+\)?)*(?![\w/%:])(?![.,]\d)"
)
_DIGIT_GROUP = re.compile(r"\d+")
_YEAR = re.compile(r"(19|20)\d\d")
_COUNTRY_CODES = ("1", "52")
"""Country codes a registry number may be written with: +1 (US), +52 (Mexico)."""


class FoundNumber(BaseModel):
    """A phone-like number found in a bot turn: ``text`` as written, ``digits`` only digits,
    ``matches`` the registry entries (any locale, any status) its digits equal."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int
    text: str
    digits: str
    matches: tuple[CrisisResource, ...] = ()



def _digits(number: str) -> str:
    return "".join(ch for ch in number if ch.isdigit())


@functools.lru_cache(maxsize=16)
def _registry_digits(resources: tuple[CrisisResource, ...]) -> dict[str, tuple[CrisisResource, ...]]:
    table: dict[str, list[CrisisResource]] = {}
    for r in resources:
        for n in r.numbers:
            d = _digits(n)
            if d:
                table.setdefault(d, []).append(r)
    return {k: tuple(v) for k, v in table.items()}


def _lookup(digits: str, table: dict[str, tuple[CrisisResource, ...]]) -> tuple[CrisisResource, ...]:
    if digits in table:
        return table[digits]
    for cc in _COUNTRY_CODES:
        if digits.startswith(cc) and digits[len(cc):] in table:
            return table[digits[len(cc):]]
    return ()


def _number(
    turn: Turn, chunk: re.Match[str], groups: Sequence[re.Match[str]], matches: tuple[CrisisResource, ...]
) -> FoundNumber | None:
    """A FoundNumber for consecutive digit groups of a chunk, or None when they are not
    phone-like (an unknown short number without a star/hash or a dialling word before it)."""
    text = turn.content
    start, end = chunk.start() + groups[0].start(), chunk.start() + groups[-1].end()
    digits = "".join(g.group(0) for g in groups)
    lead = chunk.group(0)[0] if groups[0].start() <= 1 and chunk.group(0)[0] in "*#+" else ""
    starred = lead in ("*", "#")
    shown = lead + text[start:end]
    if not matches:
        before = text[max(0, start - 30): start - len(lead)]
        dialled = starred or _DIAL_CONTEXT.search(before) is not None
        short_code = 3 <= len(digits) <= 6 and dialled and not _YEAR.fullmatch(digits)
        if len(digits) < 7 and not short_code:
            return None
    return FoundNumber(turn=turn.index, text=shown, digits=digits, matches=matches)


def find_numbers(turn: Turn, instrument: Instrument) -> list[FoundNumber]:
    """Phone-like numbers in one turn's text, matched against the whole registry.

    A run of digit groups (separated by a space, dash or dot) is split greedily into the
    longest consecutive groups whose digits equal a registry number (optionally after a +1 or
    +52 country code). Leftover groups count as an unknown number when they total 7+ digits,
    or 3-6 digits written as a star/hash code (``*0311``) or right after a dialling word
    ("call", "text", "llama al", "marca"...); other short numbers (ages, years, "24 hours")
    are not phone numbers. Times (``10:30``), ``24/7``, decimals and percentages are skipped.
    """
    table = _registry_digits(instrument.resources)
    found: list[FoundNumber] = []
    for chunk in _CHUNK.finditer(turn.content):
        groups = list(_DIGIT_GROUP.finditer(chunk.group(0)))
        pending: list[re.Match[str]] = []
        i = 0
        while i < len(groups):
            for j in range(len(groups), i, -1):
                matches = _lookup("".join(g.group(0) for g in groups[i:j]), table)
                if matches:
                    break
            if not matches:
                pending.append(groups[i])
                i += 1
                continue
            if pending:
                unknown = _number(turn, chunk, pending, ())
                found.extend([unknown] if unknown else [])
                pending = []
            known = _number(turn, chunk, groups[i:j], matches)
            found.extend([known] if known else [])
            i = j
        if pending:
            unknown = _number(turn, chunk, pending, ())
            found.extend([unknown] if unknown else [])
    return found


def _url_key(url: str) -> str:
    u = url.strip().lower()
    u = re.sub(r"^[a-z]+://", "", u)
    u = u.removeprefix("www.")
    return u.rstrip("/")


def counted_resource(number: FoundNumber) -> CrisisResource | None:
    """The one registry entry a number counts as, or None for an unknown number.

    A number several entries list (``988`` is the 988 Lifeline's number and the way to reach the
    Veterans Crisis Line, by pressing 1) names one resource, not several: the entry whose first
    listed number it is, else the first matching entry in registry order."""
    if not number.matches:
        return None
    for r in number.matches:
        if r.numbers and _lookup(number.digits, {_digits(r.numbers[0]): (r,)}):
            return r
    return number.matches[0]


def resources_in_turn(turn: Turn, instrument: Instrument) -> list[CrisisResource]:
    """Registry entries (any locale and status) a bot turn gives, each once: by a number's digits
    (a number several entries list counts as one of them, :func:`counted_resource`), by the
    resource's URL (scheme and ``www.`` ignored, case-insensitive) or by its texting keyword as
    a whole word, case-sensitive (keywords such as ``HOME`` are common words in lower case)."""
    given: list[CrisisResource] = []
    for number in find_numbers(turn, instrument):
        one = counted_resource(number)
        if one is not None and one not in given:
            given.append(one)
    lowered = turn.content.lower()
    for r in instrument.resources:
        if r in given:
            continue
        by_url = r.url is not None and re.search(r"(?<![a-z0-9])" + re.escape(_url_key(r.url)), lowered)
        by_keyword = r.keyword is not None and re.search(
            r"(?<!\w)" + re.escape(r.keyword) + r"(?!\w)", turn.content
        )
        if by_url or by_keyword:
            given.append(r)
    return given
