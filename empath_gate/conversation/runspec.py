"""What one transcript is: a :class:`RunSpec` (run ``k`` of a seed x persona in a suite) and
the per-run seed every role derives from it (:func:`derive_seed`).

Per-run seeds: run ``k`` of conversation ``c`` uses
``derive_seed(base, c, k) = int(sha256(f"{base}:{c}:{k}")[:8 hex digits]) & 0x7FFFFFFF`` for
every role that sends a seed (``base`` is the role's ``seed`` or ``Settings.base_seed``), so the
N runs of a conversation are N different samples, never one sample repeated.
"""

from __future__ import annotations

import hashlib

from pydantic import BaseModel, ConfigDict, Field, model_validator

from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.models import Cue, Persona, Seed


class RunSpec(BaseModel):
    """One transcript to generate: run ``run`` (0-based) of conversation seed x persona in
    ``suite``. ``max_turns`` counts user turns (each followed by one target reply); it is
    ``seed.max_turns`` when set, else the suite's. Ids follow the transcript contract:
    ``conversation_id = <seed>-<persona>``, ``transcript_id = <conversation_id>-r<run>``
    (:meth:`build` makes them). The seed and persona must share a locale. ``cues``: in a
    ``voice: true`` suite, the instrument's cue vocabulary (the auditor may write those tokens
    and a target set to ``target_cues = "strip"`` receives user turns without them); empty
    in every other suite. ``behaviours``: the instrument's behaviour controls."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    suite: str
    seed: Seed
    persona: Persona
    run: int = Field(ge=0)
    max_turns: int = Field(ge=1, le=60)
    conversation_id: str
    transcript_id: str
    cues: tuple[Cue, ...] = Field(
        default=(), description="the declared cues this conversation may carry (a voice suite's)"
    )
    behaviours: BehaviourSet | None = Field(
        default=None, description="the instrument's behaviour controls: the LLM auditor's conduct "
        "text and the scripted auditor's variant lines (None: names and levels only, the script as written)",
    )

    @model_validator(mode="after")
    def _same_locale(self) -> RunSpec:
        if self.seed.locale != self.persona.locale:
            seed, persona = self.seed, self.persona
            raise ValueError(f"seed {seed.id} is {seed.locale} but persona {persona.id} is {persona.locale}")
        return self

    @classmethod
    def build(
        cls, suite: str, seed: Seed, persona: Persona, run: int, *, suite_max_turns: int = 8
    ) -> RunSpec:
        """A spec with the contract's ids and ``max_turns = seed.max_turns or suite_max_turns``."""
        cid = f"{seed.id}-{persona.id}"
        return cls(
            suite=suite,
            seed=seed,
            persona=persona,
            run=run,
            max_turns=seed.max_turns or suite_max_turns,
            conversation_id=cid,
            transcript_id=f"{cid}-r{run}",
        )


def derive_seed(base_seed: int, conversation_id: str, run: int) -> int:
    """The seed of run ``run`` of ``conversation_id``: the first 32 bits of
    ``sha256(f"{base_seed}:{conversation_id}:{run}")`` masked to 31 bits (0 <= seed < 2**31,
    accepted by every provider that takes a seed)."""
    digest = hashlib.sha256(f"{base_seed}:{conversation_id}:{run}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF
