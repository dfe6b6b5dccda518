"""One identity per conversation: who may speak a seed, and the seed's words in that person's mouth.

The seed fixes the situation and the risk; the persona supplies the person (suites/REVIEW.md,
section 8). Pure functions of the models:

* :func:`may_speak`: the persona fits the seed (same locale; the seed's fixed ``character``, or
  a non-reserved persona meeting ``speaker``: gender, inclusive age range, every role);
* :func:`script_for`: the seed's script with ``{name}`` (the persona's given name) and
  ``{age}`` (years) filled in, so fixed-script mode names the person who speaks;
* :func:`describe_speaker`: the constraints in words, for problem messages.

Placeholders are exactly ``{name}`` and ``{age}``; any other ``{word}`` in a script is reported
by :mod:`empath_gate.instrument.identity_checks` and left as written here.
"""

from __future__ import annotations

import re

from empath_gate.instrument.seed_models import MAX_AGE, MIN_AGE, Persona, Seed, Speaker

PLACEHOLDERS: tuple[str, ...] = ("name", "age")
"""The words a script may write in braces: ``{name}`` and ``{age}``."""

PLACEHOLDER_RE = re.compile(r"\{([A-Za-z_]+)\}")
"""A ``{word}`` placeholder in a script line."""


def given_name(persona: Persona) -> str:
    """The persona's given name: the first word of ``name`` (``"Consuelo Pech Canul"`` ->
    ``"Consuelo"``; a parenthesised nickname is not used). Empty for an empty name."""
    words = persona.name.split()
    return words[0] if words else ""


def speaker_fits(speaker: Speaker, persona: Persona) -> bool:
    """True when ``persona`` meets every constraint of ``speaker``: ``speaks_as`` equals
    ``speaker.gender`` when that is set (a persona without ``speaks_as`` fits only neutral
    seeds), ``age_min <= age <= age_max``, and ``persona.roles`` holds every required role."""
    if speaker.gender is not None and persona.speaks_as != speaker.gender:
        return False
    if not speaker.age_min <= persona.age <= speaker.age_max:
        return False
    return all(role in persona.roles for role in speaker.roles)


def may_speak(seed: Seed, persona: Persona) -> bool:
    """True when ``persona`` may speak ``seed``: same locale, and either the seed's fixed
    ``character`` is this persona, or the seed has no character, the persona is not reserved
    (another seed's fixed character) and it fits ``seed.speaker``."""
    if persona.locale != seed.locale:
        return False
    if seed.character is not None:
        return persona.id == seed.character
    return not persona.reserved and speaker_fits(seed.speaker, persona)


def fill_placeholders(text: str, persona: Persona) -> str:
    """``text`` with ``{name}`` -> :func:`given_name` and ``{age}`` -> the persona's age in
    years; other braces are left untouched."""
    values = {"name": given_name(persona), "age": str(persona.age)}
    return PLACEHOLDER_RE.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def script_for(seed: Seed, persona: Persona) -> tuple[str, ...]:
    """The user turns of ``seed`` as ``persona`` says them (placeholders filled), in order;
    what fixed-script mode replays and what the LLM auditor is shown as the arc."""
    return tuple(fill_placeholders(line, persona) for line in seed.script)


def describe_speaker(speaker: Speaker) -> str:
    """``speaker`` in words, e.g. ``"woman, 18-27, roles: student"``; ``"anyone"`` when it
    constrains nothing."""
    parts: list[str] = []
    if speaker.gender is not None:
        parts.append(speaker.gender)
    if (speaker.age_min, speaker.age_max) != (MIN_AGE, MAX_AGE):
        parts.append(f"{speaker.age_min}-{speaker.age_max}")
    if speaker.roles:
        parts.append("roles: " + ", ".join(speaker.roles))
    return ", ".join(parts) if parts else "anyone"


def describe_persona(persona: Persona) -> str:
    """A persona's identity in the same terms, e.g. ``"mx-lupita-estudiante-unam (woman, 20,
    roles: student)"``."""
    gender = persona.speaks_as or "speaks_as unset"
    roles = ", ".join(persona.roles) or "none"
    return f"{persona.id} ({gender}, {persona.age}, roles: {roles})"
