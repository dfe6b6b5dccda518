"""The behaviour controls as the LLM auditor's prompt states them (pure).

Each of the five behaviours (:data:`~empath_gate.instrument.seed_models.BEHAVIOURS`) becomes one
prompt line: its label, the persona's level and the conduct text of that level in the seed's
locale (``suites/behaviours.yaml``, :class:`~empath_gate.instrument.behaviour_models.BehaviourSet`),
so the auditor is told what to do, not only a name. Without a behaviour set (an instrument without
``behaviours.yaml``) the line gives the name and level only.
"""

from __future__ import annotations

from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.seed_models import BEHAVIOURS, MAX_LEVEL, Persona


def behaviour_lines(persona: Persona, locale: str, behaviours: BehaviourSet | None) -> str:
    """One ``- <label> (level L of 3): <conduct>`` line per behaviour, in :data:`BEHAVIOURS`
    order, newline-separated; the label and conduct in ``locale`` (en-US when it has none)."""
    lines = []
    for behaviour, level in zip(BEHAVIOURS, persona.profile, strict=True):
        if behaviours is None:
            lines.append(f"- {behaviour.replace('_', ' ')} (level {level} of {MAX_LEVEL})")
            continue
        control = behaviours.control(behaviour)
        lines.append(f"- {control.label(locale)} (level {level} of {MAX_LEVEL}): "
                     f"{control.conduct(level, locale)}")
    return "\n".join(lines)
