"""Scripted variants: the seed's script as a persona with hard-to-help behaviours says it (pure).

The scripted auditor emulates three behaviour controls at level 2 or more, as
``suites/behaviours.yaml`` says (:class:`~empath_gate.instrument.behaviour_models.BehaviourSet`):

* ``low_engagement`` (``shorten``): a turn keeps its first :data:`KEEP_SENTENCES` sentences
  (two at level 2, one at level 3);
* ``resistance`` (``pushback``): a pushback line goes before the turn, on every third eligible
  turn at level 2 and every other one at level 3 (:data:`EVERY`);
* ``emotional_volatility`` (``mood``): a mood line goes after the turn, at the same spacing, its
  direction alternating from ``down`` (then ``up``: an apology or calm after the outburst), so
  the mood reverses between affected turns.

**Protected turns are never changed**: every turn from the seed's ``alert_turn`` to its
``confirm_turn`` (either alone when only one is set), so a variant never drops, moves or softens
where the risk is hinted at and made explicit; the number of turns never changes. Pushback and
mood also skip the first turn (there is no bot reply yet to react to). Levels 0 and 1 change
nothing (mild conduct is left to the script as written and to the LLM auditor);
``limited_self_disclosure`` and ``rigid_negative_interpretation`` need the LLM auditor.

**Deterministic**: which turns and lines are chosen comes from sha256 of the seed id, the profile
and the behaviour (:func:`stable_int`), never from a random state, so a variant has the same id
and text on every machine. The id is ``<seed id>~e<level>r<level>v<level>`` (the emulated
behaviours' levels) or the seed id itself when nothing changes.
"""

from __future__ import annotations

import hashlib
import re

from pydantic import Field

from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.identity import script_for
from empath_gate.instrument.model_base import Frozen
from empath_gate.instrument.seed_models import BEHAVIOURS, HARD_LEVEL, Persona, Seed

KEEP_SENTENCES: dict[int, int] = {2: 2, 3: 1}
"""Sentences a turn keeps under ``low_engagement`` at level 2 and 3 (project choice: a marked
level halves a typical three-to-four-sentence script turn, the strongest keeps one)."""

EVERY: dict[int, int] = {2: 3, 3: 2}
"""Eligible turns per pushback or mood line at level 2 and 3 (project choice: every third turn
is noticeable without drowning the script; every other turn is the strongest)."""

_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+")


class VariantChange(Frozen):
    """One change: ``turn`` (1-based user turn), ``kind`` (``shorten``, ``pushback``, ``mood``)
    and, for a line, the ``line`` added (and ``direction`` of a mood line)."""

    turn: int = Field(ge=1)
    kind: str
    line: str | None = None
    direction: str | None = None


class ScriptVariant(Frozen):
    """The user side the scripted auditor plays: ``id`` (module docstring), the ``turns`` (same
    count as the script), the ``changes`` made, and the ``protected`` 1-based turns left as written."""

    id: str
    seed_id: str
    persona_id: str
    turns: tuple[str, ...]
    changes: tuple[VariantChange, ...] = ()
    protected: tuple[int, ...] = ()


def stable_int(*parts: object) -> int:
    """A non-negative integer from sha256 of the parts joined by ``|`` (first 8 hex digits):
    the same on every machine and Python version (no ``hash()``, no random state)."""
    return int(hashlib.sha256("|".join(str(p) for p in parts).encode("utf-8")).hexdigest()[:8], 16)


def protected_turns(seed: Seed) -> tuple[int, ...]:
    """The 1-based turns a variant never changes: ``alert_turn`` to ``confirm_turn`` inclusive
    (or whichever of the two is set); ``()`` for a seed without either."""
    a, c = seed.risk.alert_turn, seed.risk.confirm_turn
    if a is not None and c is not None:
        return tuple(range(a, c + 1))
    return tuple(t for t in (a, c) if t is not None)


def shorten(text: str, keep: int) -> str:
    """``text`` cut to its first ``keep`` sentences (split after ``.``, ``!``, ``?`` or ``…``
    followed by white space); unchanged when it has no more than ``keep``."""
    parts = [p for p in _SENTENCE_END.split(text.strip()) if p]
    return text if len(parts) <= keep else " ".join(parts[:keep])


def _after(text: str, line: str) -> str:
    """``line`` after ``text``, a full stop closing ``text`` first when it ends unpunctuated."""
    text = text.rstrip()
    return f"{text} {line}" if text.endswith((".", "!", "?", "…")) else f"{text}. {line}"


def variant_id(seed: Seed, persona: Persona) -> str:
    """The variant's id (module docstring)."""
    e, r, v = _emulated(persona)
    return seed.id if max(e, r, v) < HARD_LEVEL else f"{seed.id}~e{e}r{r}v{v}"


def _emulated(persona: Persona) -> tuple[int, int, int]:
    levels = dict(zip(BEHAVIOURS, persona.profile, strict=True))
    return levels["low_engagement"], levels["resistance"], levels["emotional_volatility"]


def _spaced(eligible: list[int], level: int, key: str) -> list[int]:
    """Every ``EVERY[level]``-th of ``eligible``, starting at an offset from ``key``."""
    step = EVERY[level]
    offset = stable_int(key) % step
    return [t for i, t in enumerate(eligible) if i % step == offset]


def script_variant(seed: Seed, persona: Persona, behaviours: BehaviourSet | None) -> ScriptVariant:
    """The variant of ``seed``'s script as ``persona`` says it (module docstring). Without a
    behaviour set (an instrument without ``behaviours.yaml``) the script is played as written."""
    script = list(script_for(seed, persona))
    protected = protected_turns(seed)
    e, r, v = _emulated(persona)
    vid = variant_id(seed, persona)
    if behaviours is None or vid == seed.id:
        return ScriptVariant(id=seed.id, seed_id=seed.id, persona_id=persona.id, turns=tuple(script),
                             protected=protected)
    free = [k for k in range(1, len(script) + 1) if k not in protected]
    changes: list[VariantChange] = []
    if e >= HARD_LEVEL:
        for k in free:
            cut = shorten(script[k - 1], KEEP_SENTENCES[e])
            if cut != script[k - 1]:
                script[k - 1] = cut
                changes.append(VariantChange(turn=k, kind="shorten"))
    later = [k for k in free if k > 1]
    key = f"{seed.id}|{e}{r}{v}"
    if r >= HARD_LEVEL:
        lines = behaviours.pushback_lines[seed.locale]
        start = stable_int(key, "pushback") % len(lines)
        for j, k in enumerate(_spaced(later, r, f"{key}|pushback-turns")):
            line = lines[(start + j) % len(lines)]
            script[k - 1] = f"{line} {script[k - 1]}"
            changes.append(VariantChange(turn=k, kind="pushback", line=line))
    if v >= HARD_LEVEL:
        mood = behaviours.mood_lines[seed.locale]
        starts = {d: stable_int(key, "mood", d) % len(getattr(mood, d)) for d in ("down", "up")}
        used = {"down": 0, "up": 0}
        for j, k in enumerate(_spaced(later, v, f"{key}|mood-turns")):
            direction = ("down", "up")[j % 2]
            pool = getattr(mood, direction)
            line = pool[(starts[direction] + used[direction]) % len(pool)]
            used[direction] += 1
            script[k - 1] = _after(script[k - 1], line)
            changes.append(VariantChange(turn=k, kind="mood", line=line, direction=direction))
    changes.sort(key=lambda c: (c.turn, c.kind))
    return ScriptVariant(id=vid, seed_id=seed.id, persona_id=persona.id, turns=tuple(script),
                         changes=tuple(changes), protected=protected)
