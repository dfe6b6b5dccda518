"""Identity conflicts: places where the auditor would be given two people, or none.

Pure functions over seeds and personas (the loader turns each conflict into a
``file:line: /pointer: what — fix`` error, so ``empath-gate validate`` lists them). A seed
conflicts when:

* its ``instruction`` introduces a person of its own (``You are Montse, 20``, ``you are a
  16-year-old``, ``your name is``, ``eres Iván, 26``): the persona supplies name and age;
* a script turn introduces the speaker by a literal name (``me llamo Eufrosina``, ``my name
  is Luis``) or states their age (``I'm 62``, ``tengo 16 años``) instead of ``{name}`` /
  ``{age}``, or uses a placeholder other than those two;
* its ``character`` is not a persona of its locale, or does not meet its ``speaker``;
* no persona of its locale may speak it (``speaker`` too narrow, or a role nobody holds).

A persona conflicts when it is ``reserved`` but no seed names it as ``character`` (it would
never speak). The patterns are deliberately narrow (a name must be followed by an age, an
age must follow "I'm" or "tengo"), so prose about other people ("his son Martín, 42") passes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from empath_gate.instrument.identity import (
    PLACEHOLDER_RE,
    PLACEHOLDERS,
    describe_persona,
    describe_speaker,
    may_speak,
    speaker_fits,
)
from empath_gate.instrument.seed_models import Persona, Seed, Speaker

_CAP = r"[A-ZÁÉÍÓÚÑ][\w'-]*"
_TITLE = r"(?:(?i:don|doña|maestra|maestro|mr|mrs|ms|miss|dr)\.?\s+)?"
INSTRUCTION_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?i:\b(?:you are|you're|eres|usted es)\s+){_TITLE}(?:(?i:the|el|la)\s+\w+\s+)?{_CAP}"
               rf"(?:\s+\([^)]*\))?,\s*\d{{1,3}}\b"),
    re.compile(r"(?i)\b(?:you are|you're)\s+an?\s+\d{1,3}[- ]year[- ]old\b"),
    re.compile(r"(?i)\b(?:your name is|te llamas|tu nombre es)\s+[A-ZÁÉÍÓÚÑ]"),
    re.compile(rf"(?i:\b(?:you are|you're)\s+)(?i:don|doña)\s+{_CAP}"),
)
"""An instruction naming or ageing its own speaker (see the module docstring)."""

SCRIPT_NAME_RE = re.compile(r"(?i:\b(?:me llamo|mi nombre es|my name is|my name's)\s+)([A-ZÁÉÍÓÚÑ][\w'-]*)")
"""A user turn introducing the speaker by a literal name."""

SCRIPT_AGE_RES: tuple[re.Pattern[str], ...] = (
    re.compile(r"(?i)\b(?:i'?m|i am)\s+(\d{1,3})(?:\s+years?\s+old)?\b(?!\s*(?:%|:|am\b|pm\b|a\.m|p\.m))"),
    re.compile(r"(?i)\btengo\s+(\d{1,3})\s+años\b"),
)
"""A user turn stating the speaker's age in digits."""


@dataclass(frozen=True)
class IdentityConflict:
    """One conflict: the ``kind`` and ``entry_id`` of the seed or persona, the ``field`` path
    inside that entry (for the file:line pointer), what is wrong and what to fix."""

    kind: Literal["seed", "persona"]
    entry_id: str
    field: tuple[str | int, ...]
    what: str
    fix: str


def _seed_conflict(seed: Seed, field: tuple[str | int, ...], what: str, fix: str) -> IdentityConflict:
    return IdentityConflict("seed", seed.id, field, f"seed {seed.id}: {what}", fix)


_INSTRUCTION_FIX = ("describe the situation in the second person without a name or age (state who the "
                    "person must be in 'speaker:'), or fix the person with 'character: <persona id>'")
_SPEAKER_FIX = ("widen 'speaker' as far as the script allows, add a persona that fits, or give the seed "
                "a fixed 'character'")


def instruction_conflicts(seed: Seed) -> list[IdentityConflict]:
    """The instruction introduces a person of its own (first match only)."""
    for rx in INSTRUCTION_PATTERNS:
        m = rx.search(seed.instruction)
        if m:
            what = (f"the instruction gives the speaker a name or age of its own ({m.group(0)!r}); "
                    "the persona supplies the person")
            return [_seed_conflict(seed, ("instruction",), what, _INSTRUCTION_FIX)]
    return []


def script_conflicts(seed: Seed) -> list[IdentityConflict]:
    """Script turns that name or age the speaker literally, or use an unknown placeholder."""
    out: list[IdentityConflict] = []
    for i, line in enumerate(seed.script):
        turn, n = ("script", i), i + 1
        for word in PLACEHOLDER_RE.findall(line):
            if word not in PLACEHOLDERS:
                out.append(_seed_conflict(seed, turn, f"user turn {n} uses the placeholder {{{word}}}",
                                          "use {name} or {age}, or remove the braces"))
        m = SCRIPT_NAME_RE.search(line)
        if m:
            out.append(_seed_conflict(seed, turn, f"user turn {n} introduces the speaker as {m.group(1)!r}",
                                      "write {name}: the persona's given name is filled in"))
        ages = [a for a in (rx.search(line) for rx in SCRIPT_AGE_RES) if a]
        if ages:
            what = f"user turn {n} states the speaker's age ({ages[0].group(0)!r})"
            out.append(_seed_conflict(seed, turn, what, "write {age}: the persona's age is filled in"))
    return out


def _unheld_roles(speaker: Speaker, personas: Sequence[Persona]) -> list[str]:
    held = {r for p in personas for r in p.roles}
    out = []
    for role in speaker.roles:
        if role not in held:
            guess = difflib.get_close_matches(role, sorted(held), n=1, cutoff=0.6)
            out.append(f"{role!r}" + (f" (did you mean {guess[0]!r}?)" if guess else ""))
    return out


def _character_conflicts(
    seed: Seed, character: str, personas: Sequence[Persona]
) -> list[IdentityConflict]:
    found = [p for p in personas if p.id == character]
    if not found:
        local = [p.id for p in personas if p.locale == seed.locale]
        guess = difflib.get_close_matches(character, local, n=1, cutoff=0.6)
        fix = (f"did you mean {guess[0]!r}?" if guess
               else f"add it to personas/{seed.locale}.yaml or use an existing {seed.locale} persona id")
        return [_seed_conflict(seed, ("character",), f"character {character!r} is not a persona", fix)]
    person = found[0]
    if person.locale != seed.locale:
        return [_seed_conflict(seed, ("character",), f"character {person.id!r} is a {person.locale} persona, "
                               f"the seed is {seed.locale}", f"use a {seed.locale} persona")]
    if not speaker_fits(seed.speaker, person):
        what = (f"character {describe_persona(person)} does not meet speaker "
                f"({describe_speaker(seed.speaker)})")
        return [_seed_conflict(seed, ("speaker",), what, "make 'speaker' and the character agree")]
    return []


def speaker_conflicts(seed: Seed, personas: Sequence[Persona]) -> list[IdentityConflict]:
    """The fixed character is not a fitting persona of the seed's locale, or no persona may
    speak the seed. ``personas``: every persona of the instrument."""
    return _speaker_conflicts(seed, personas, [p for p in personas if p.locale == seed.locale], {})


def _speaker_conflicts(seed: Seed, personas: Sequence[Persona], local: Sequence[Persona],
                       spoken: dict[tuple[str, Speaker], bool]) -> list[IdentityConflict]:
    """:func:`speaker_conflicts` given the personas of the seed's locale (``local``) and a memo of
    whether some of them may speak a seed without character, per (locale, speaker): that is all
    :func:`~empath_gate.instrument.identity.may_speak` reads of such a seed."""
    if seed.character is not None:
        return _character_conflicts(seed, seed.character, personas)
    key = (seed.locale, seed.speaker)
    fits = spoken.get(key)
    if fits is None:
        fits = spoken[key] = not local or any(may_speak(seed, p) for p in local)
    if not fits:
        unheld = _unheld_roles(seed.speaker, [p for p in local if not p.reserved])
        why = f"; no {seed.locale} persona holds the role {', '.join(unheld)}" if unheld else ""
        what = f"no {seed.locale} persona may speak it (speaker: {describe_speaker(seed.speaker)}){why}"
        return [_seed_conflict(seed, ("speaker",), what, _SPEAKER_FIX)]
    return []


def reserved_conflicts(seeds: Sequence[Seed], personas: Sequence[Persona],
                       listed: Collection[str] = ()) -> list[IdentityConflict]:
    """Reserved personas that no seed names as its ``character`` and no suite lists by id for
    mode ``empath_md5`` (``listed``: those ids; such a pool speaks only through its suite)."""
    named = {s.character for s in seeds if s.character is not None} | set(listed)
    return [
        IdentityConflict("persona", p.id, ("reserved",),
                         f"persona {p.id} is reserved but no seed names it as 'character', so it never "
                         "speaks",
                         "name it in a seed's 'character' (or a suite's empath_md5 ids) or set "
                         "'reserved: false'")
        for p in personas if p.reserved and p.id not in named
    ]


def identity_conflicts(seeds: Sequence[Seed], personas: Sequence[Persona],
                       listed: Collection[str] = ()) -> list[IdentityConflict]:
    """Every identity conflict, seeds in order (instruction, script, speaker), then personas
    (``listed``: persona ids an ``empath_md5`` suite names, see :func:`reserved_conflicts`)."""
    out: list[IdentityConflict] = []
    by_locale: dict[str, list[Persona]] = {}
    for p in personas:
        by_locale.setdefault(p.locale, []).append(p)
    spoken: dict[tuple[str, Speaker], bool] = {}
    for seed in seeds:
        out += instruction_conflicts(seed) + script_conflicts(seed)
        out += _speaker_conflicts(seed, personas, by_locale.get(seed.locale, []), spoken)
    return out + reserved_conflicts(seeds, personas, listed)
