"""The auditor's prompt for a multi-party seed (two or more named people share one chat).

The system prompt is the versioned package resource ``prompts/auditor_multi_party_v1.md``: the
auditor writes each message as one named participant, ``Name:`` first (the label is taken off
into ``AuditorTurn.speaker`` by :func:`~empath_gate.conversation.speakers.split_label`). This
module renders it and the reminder sent after an unusable reply;
:mod:`empath_gate.conversation.auditor` calls both for a seed with ``multi_party`` set.
"""

from __future__ import annotations

import re

from empath_gate.conversation.auditor_behaviours import behaviour_lines
from empath_gate.conversation.breaks import END_TOKEN, BreakReason
from empath_gate.conversation.prompts import load_template
from empath_gate.conversation.speakers import allowed_speakers
from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.identity import script_for
from empath_gate.instrument.models import Persona, Seed

LANGUAGES = {"es-MX": "Mexican Spanish (español de México)", "en-US": "US English"}
"""The language each locale's auditor writes in, as the prompts name it."""
ADDRESS = {
    "tu": "Address the chatbot informally, with tú.",
    "usted": "Address the chatbot formally, with usted.",
}
"""The prompt line of each ``address_form``."""

MULTI_PARTY_TEMPLATE_NAME = "auditor_multi_party_v1.md"
MULTI_PARTY_TEMPLATE, MULTI_PARTY_TEMPLATE_VERSION = load_template(MULTI_PARTY_TEMPLATE_NAME)
"""The system prompt of multi-party seeds (the auditor writes as each named participant, a
``Name:`` label first) and its version, which keys those seeds' cached auditor replies."""


def render_multi_party_prompt(
    seed: Seed, persona: Persona, *, turn: int, max_turns: int, behaviours: BehaviourSet | None = None
) -> str:
    """The auditor's system prompt for user message ``turn`` (1-based) of a multi-party seed:
    the participants (name, relation, minor), the persona's register as the shared voice, the
    instruction, the script with each turn's writer, and who writes this message
    (:func:`~empath_gate.conversation.speakers.allowed_speakers`); the behaviour controls of the
    persona as the shared voice's conduct (``behaviours``, the instrument's)."""
    address = seed.address_form or persona.address_form
    minor = {"es-MX": "menor de edad", "en-US": "a minor"}.get(seed.locale, "a minor")
    people = "\n".join(
        f"- {p.name}: {p.relation}" + (f" ({minor})" if p.minor else "") for p in seed.participants
    )
    names = {p.id: p.name for p in seed.participants}
    script = script_for(seed, persona)
    pairs = zip(seed.speakers, script, strict=True)
    lines = "\n".join(f"{i}. {names[who]}: {line}" for i, (who, line) in enumerate(pairs, 1))
    allowed = allowed_speakers(seed, turn - 1)
    values = {
        "participants": people,
        "language_style": persona.language_style,
        "writing_style": persona.writing_style,
        "behaviours": behaviour_lines(persona, seed.locale, behaviours),
        "instruction": seed.instruction,
        "script": lines,
        "language": LANGUAGES.get(seed.locale, seed.locale),
        "address_form": ADDRESS.get(address or "", ""),
        "example_label": names[allowed[0]],
        "next_speakers": " or ".join(names[a] for a in allowed),
        "turn": str(turn),
        "max_turns": str(max_turns),
        "end_token": END_TOKEN,
    }
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], MULTI_PARTY_TEMPLATE)


def multi_party_reminder(seed: Seed, reason: BreakReason, user_turn: int) -> str:
    """The reminder after an unusable reply to a multi-party seed's user message ``user_turn``
    (0-based): write only the next message of a participant allowed to write it, name first."""
    language = LANGUAGES.get(seed.locale, seed.locale)
    names = " or ".join(seed.participant(a).name for a in allowed_speakers(seed, user_turn))
    return (
        f"(Your last answer could not be used ({reason.replace('_', ' ')}). Write only the next "
        f"chat message of {names}: their name and a colon first, then their words in first person, "
        f"in {language}, one person only, with no narration, brackets or notes — or exactly "
        f"{END_TOKEN} to end.)"
    )
