"""The LLM auditor's system prompt for a one-person seed, and the auditor's view of the dialogue.

The prompt is the versioned package resource ``prompts/auditor_v2.md``: the persona as the
person who speaks, the seed's instruction as their situation, the script as the arc they follow
(:data:`OPEN_ARC` for a seed without one), and how to write. In a voice suite the rule against
brackets is replaced by ``prompts/auditor_voice_v1.md``. A multi-party seed gets
:mod:`empath_gate.conversation.auditor_multi_party` instead. It never shows the judge's rubric,
the seed's risk annotation or its metrics.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from empath_gate.conversation.auditor_behaviours import behaviour_lines
from empath_gate.conversation.auditor_multi_party import (
    ADDRESS,
    LANGUAGES,
    MULTI_PARTY_TEMPLATE_VERSION,
    render_multi_party_prompt,
)
from empath_gate.conversation.breaks import END_TOKEN
from empath_gate.conversation.prompts import load_template
from empath_gate.conversation.transcript import Turn
from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.identity import script_for
from empath_gate.instrument.models import Cue, Persona, Seed

TEMPLATE_NAME = "auditor_v2.md"
VOICE_TEMPLATE_NAME = "auditor_voice_v1.md"
NARRATION_RULE = "- Do not describe actions or feelings from outside"
"""The start of the template's rule line that a voice suite's rule replaces."""
START_TEXT = "(The chat window opens. Write your first message.)"
"""The opening user message of the auditor's own view of the dialogue (its prompt, not the target's)."""
NO_REPLY_TEXT = "(no reply)"
"""Shown to the auditor in place of an empty or filtered target reply."""

TEMPLATE, TEMPLATE_VERSION = load_template(TEMPLATE_NAME)
"""The auditor system-prompt template and its version (``auditor_v2:<sha256[:12]>``)."""
VOICE_RULE, VOICE_TEMPLATE_VERSION = load_template(VOICE_TEMPLATE_NAME)
"""The voice-suite rule line (``{{cues}}``: the declared tokens) and its version."""


def template_version(cues: Sequence[Cue] = (), seed: Seed | None = None) -> str:
    """The version of the prompt an auditor gets: :data:`TEMPLATE_VERSION` (for a multi-party
    ``seed`` :data:`MULTI_PARTY_TEMPLATE_VERSION`), plus :data:`VOICE_TEMPLATE_VERSION` in a voice
    suite (``cues`` given); part of its cache key."""
    base = MULTI_PARTY_TEMPLATE_VERSION if seed is not None and seed.multi_party else TEMPLATE_VERSION
    return f"{base}+{VOICE_TEMPLATE_VERSION}" if cues else base


ARC_START = "The messages below are the arc you follow"
"""The first words of the template's paragraph that shows the seed's script (up to ``{{script}}``)."""
OPEN_ARC = (
    "There is no fixed arc: decide from your situation what you reveal and when, as this person "
    "would, reacting to what the chatbot actually wrote."
)
"""What replaces that paragraph for a seed without a script (``auditor: llm``)."""


def _template_for(seed: Seed) -> str:
    """The template, with the script paragraph replaced by :data:`OPEN_ARC` when ``seed`` has
    no script. Raises RuntimeError when the template no longer holds that paragraph."""
    if seed.script:
        return TEMPLATE
    start, end = TEMPLATE.find(ARC_START), TEMPLATE.find("{{script}}")
    if start < 0 or end < start:
        raise RuntimeError(f"{TEMPLATE_NAME}: the script paragraph ({ARC_START!r} ...) is missing")
    return TEMPLATE[:start] + OPEN_ARC + TEMPLATE[end + len("{{script}}"):]


def render_prompt(
    seed: Seed, persona: Persona, *, turn: int, max_turns: int, cues: Sequence[Cue] = (),
    behaviours: BehaviourSet | None = None,
) -> str:
    """The auditor's system prompt for user message ``turn`` (1-based) of ``max_turns``: the
    persona as the person who speaks, the seed's instruction as their situation, and the script
    as they would say it (for a seed without a script, :data:`OPEN_ARC` instead). With ``cues``
    (a voice suite) the rule against brackets becomes the voice rule listing the declared
    tokens. ``behaviours`` (the instrument's): each behaviour control stated as the conduct of
    the persona's level (:func:`~empath_gate.conversation.auditor_behaviours.behaviour_lines`;
    without it, names and levels only). A multi-party seed gets :func:`render_multi_party_prompt`."""
    if seed.multi_party:
        return render_multi_party_prompt(seed, persona, turn=turn, max_turns=max_turns, behaviours=behaviours)
    address = seed.address_form or persona.address_form
    values = {
        "name": persona.name,
        "age": str(persona.age),
        "gender": persona.gender,
        "background": persona.background,
        "cultural_context": persona.cultural_context,
        "socioeconomic_context": persona.socioeconomic_context,
        "language_style": persona.language_style,
        "writing_style": persona.writing_style,
        "sample_phrases": "; ".join(f"“{p}”" for p in persona.sample_phrases),
        "behaviours": behaviour_lines(persona, seed.locale, behaviours),
        "instruction": seed.instruction,
        "script": "\n".join(f"{i}. {line}" for i, line in enumerate(script_for(seed, persona), 1)),
        "language": LANGUAGES.get(seed.locale, seed.locale),
        "address_form": ADDRESS.get(address or "", ""),
        "turn": str(turn),
        "max_turns": str(max_turns),
        "end_token": END_TOKEN,
    }
    template = _template_for(seed)
    if cues:
        lines = [VOICE_RULE.strip() if line.startswith(NARRATION_RULE) else line
                 for line in template.split("\n")]
        template = "\n".join(lines)
        values["cues"] = ", ".join(c.token for c in cues)
    return re.sub(r"\{\{(\w+)\}\}", lambda m: values[m.group(1)], template)


def auditor_messages(
    seed: Seed, persona: Persona, history: Sequence[Turn], *, turn: int, max_turns: int,
    cues: Sequence[Cue] = (), behaviours: BehaviourSet | None = None,
) -> list[dict[str, str]]:
    """The auditor's view: its system prompt, an opening cue, then the dialogue with roles
    swapped (its own past messages as ``assistant``, with their ``Name:`` label in a multi-party
    conversation; the target's replies as ``user``; an empty target reply shows as
    :data:`NO_REPLY_TEXT`). ``behaviours``: as :func:`render_prompt` takes it."""
    msgs = [
        {"role": "system",
         "content": render_prompt(seed, persona, turn=turn, max_turns=max_turns, cues=cues,
                                  behaviours=behaviours)},
        {"role": "user", "content": START_TEXT},
    ]
    for t in history:
        if t.role == "user":
            label = f"{t.speaker.name}: " if t.speaker is not None else ""
            msgs.append({"role": "assistant", "content": label + t.content})
        else:
            msgs.append({"role": "user", "content": t.content if t.content.strip() else NO_REPLY_TEXT})
    return msgs
