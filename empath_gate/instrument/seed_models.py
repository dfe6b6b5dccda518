"""Models of the people side of the instrument: seeds (situation, script, risk) and personas.

One identity per conversation (suites/REVIEW.md, section 8): the **seed** fixes the situation
and the risk, and states in ``speaker`` what the person must be (gender of the script's
self-references, an age range, roles such as ``parent`` or ``student``); the **persona**
supplies the person (name, age, voice, background). A seed with a fixed ``character`` is spoken
only by that persona. User-turn indices (``alert_turn``, ``confirm_turn``) are **1-based
positions in the seed's ``script``** (the first user message is turn 1). Every model is frozen
and forbids unknown keys.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from pydantic import Field, model_validator

from empath_gate.instrument.model_base import Frozen, Locale, Slug

SpeakerGender = Literal["woman", "man"]
"""The gender a seed's script inflects the speaker in (es-MX agreement: ``cansada`` /
``cansado``; en-US: the speaker's relations as written, e.g. "my wife")."""

PersonaGender = Literal["woman", "man", "nonbinary"]
"""How a persona refers to themself; matched against :data:`SpeakerGender` (a ``nonbinary``
persona speaks only seeds whose ``speaker.gender`` is unset)."""

MIN_AGE = 13
MAX_AGE = 100
"""Persona ages the instrument supports (13-100, the range of ``Persona.age``)."""

RiskLevel = Literal["none", "low", "moderate", "high", "imminent", "unknown"]
"""How much risk a seed carries; ``unknown`` marks a seed whose source states no risk (an
imported seed): no risk is ruled out, so ``min_risk`` selectors keep it and the crisis
metrics are never N/A on it."""

AuditorKind = Literal["any", "llm"]
"""Who may play a seed's user side: ``any`` (the scripted auditor replays ``script``, or an LLM
auditor follows it) or ``llm`` (an LLM auditor only: the seed has no script; offline, with
the scripted auditor, its tests are skipped with that reason)."""
RiskCategory = Literal[
    "passive_suicidal_ideation",
    "active_suicidal_ideation",
    "self_harm",
    "domestic_violence",
    "sexual_violence",
    "child_abuse",
    "substance_overdose",
    "psychosis_delusion",
    "eating_disorder",
]
"""Risk categories, after the CRADLE-Dialogue labels (active/passive ideation split as in
C-SSRS levels 4-5 vs 1-3) extended with overdose, psychosis and eating disorder."""

WorstCaseBehaviour = Literal[
    "low_engagement",
    "resistance",
    "limited_self_disclosure",
    "emotional_volatility",
    "rigid_negative_interpretation",
]
"""Worst-case help-seeker behaviours (source: "When Seekers Are Hard to Help", arXiv 2605.28228,
abstract only: low engagement, resistance, limited self-disclosure, emotional volatility, rigid
negative interpretation)."""

BEHAVIOURS: tuple[WorstCaseBehaviour, ...] = (
    "low_engagement",
    "resistance",
    "limited_self_disclosure",
    "emotional_volatility",
    "rigid_negative_interpretation",
)
"""The five behaviour controls in profile order (the order of the source above)."""

MAX_LEVEL = 3
"""Highest behaviour level (0 absent, 1 mild, 2 marked, 3 strongest); this project's scale."""

HARD_LEVEL = 2
"""A behaviour at this level or above makes a persona worst-case (and counts for coverage)."""

class RiskCategoryEntry(Frozen):
    """A risk category of a seed, and whether it is past or ongoing (CRADLE-Dialogue)."""

    category: RiskCategory
    timing: Literal["past", "ongoing"]


class RiskAnnotation(Frozen):
    """Risk a seed carries. Turn indices are 1-based positions in ``script``.

    ``alert_turn``: first user turn where risk can be hinted at; ``confirm_turn``: the turn
    where it becomes explicit. Both ``None`` when the seed carries no risk (level ``none``).
    """

    level: RiskLevel
    categories: tuple[RiskCategoryEntry, ...] = ()
    alert_turn: int | None = Field(default=None, ge=1)
    confirm_turn: int | None = Field(default=None, ge=1)

    @model_validator(mode="after")
    def _consistent(self) -> RiskAnnotation:
        if (
            self.alert_turn is not None
            and self.confirm_turn is not None
            and self.alert_turn > self.confirm_turn
        ):
            raise ValueError("alert_turn must not come after confirm_turn")
        if self.level == "none" and self.categories:
            raise ValueError("level 'none' takes no categories")
        return self


class Review(Frozen):
    """Who reviewed a seed against ``suites/REVIEW.md``, when, and which checklist version."""

    reviewer: str
    date: dt.date
    checklist_version: str


class NotReviewed(Frozen):
    """A record that a seed was **not** reviewed against ``suites/REVIEW.md`` (e.g. imported
    from a published instrument): ``reason`` says why and where the seed comes from. The seed
    review rules report such a seed as a note, never as an error."""

    reviewed: Literal[False]
    reason: str = Field(min_length=10)


class Speaker(Frozen):
    """What the person speaking a seed must be, so that every persona chosen for it fits the
    script (es-MX scripts are gendered; a script about a child of one's own needs a parent).

    ``gender``: the speaker's gender as the script inflects it (None: the script is neutral);
    ``age_min``/``age_max``: inclusive years; ``roles``: slugs every chosen persona must hold in
    ``Persona.roles`` (e.g. ``parent``, ``partnered``, ``student``, ``veteran``). Defaults: any
    persona of the seed's locale.
    """

    gender: SpeakerGender | None = None
    age_min: int = Field(default=MIN_AGE, ge=MIN_AGE, le=MAX_AGE)
    age_max: int = Field(default=MAX_AGE, ge=MIN_AGE, le=MAX_AGE)
    roles: tuple[Slug, ...] = ()

    @model_validator(mode="after")
    def _ordered(self) -> Speaker:
        if self.age_min > self.age_max:
            raise ValueError(f"speaker.age_min {self.age_min} is above age_max {self.age_max}")
        return self


class Participant(Frozen):
    """One person who writes in a multi-party seed (a couple, a parent and a teenager, siblings).

    ``id``: a slug unique within the seed, what ``Seed.speakers`` names; ``name``: the display
    name the target sees (``Name: text`` or the message's ``name`` field); ``relation``: how this
    person relates to the others, in the seed's language (e.g. ``"madre de Diego"``, ``"older
    sister"``); ``minor``: under 18, so the relation-sensitive support metric puts this person's
    safety first (suites/REVIEW.md, multi-party section).
    """

    id: Slug
    name: str = Field(min_length=1, max_length=40)
    relation: str = Field(min_length=2, max_length=80)
    minor: bool = False


class Seed(Frozen):
    """A situation for the auditor: instruction, fixed script, risk annotation, and who may say it.

    ``instruction`` describes the situation in the second person without a name or age of its
    own; ``script`` may write ``{name}`` (the persona's given name) and ``{age}`` where the person
    names themself (:func:`empath_gate.instrument.identity.script_for`). ``speaker`` constrains
    the persona; ``character`` (a persona id of the seed's locale) fixes it instead.
    ``auditor: llm`` marks a seed without a script (at least 2 user turns otherwise), which
    only an LLM auditor can play; such a seed may leave ``address_form`` unset (the persona's
    register, if any, applies).
    """

    id: Slug
    locale: Locale
    scenario: Slug = Field(description="one per scenario: a translation of a scenario repeats it")
    address_form: Literal["tu", "usted"] | None = Field(
        default=None, description="es-MX register: tú or usted (required for es-MX)"
    )
    covert: bool = False
    tags: tuple[Slug, ...] = ()
    instruction: str = Field(min_length=30)
    primary_metrics: tuple[Slug, ...] = Field(min_length=1)
    risk: RiskAnnotation
    auditor: AuditorKind = Field(
        default="any", description="llm: only an LLM auditor plays it (no script); offline it is skipped"
    )
    script: tuple[str, ...] = ()
    max_turns: int | None = Field(default=None, ge=1, le=60)
    speaker: Speaker = Speaker()
    character: Slug | None = Field(
        default=None, description="the persona id that always speaks this seed (a fixed character)"
    )
    review: Review | NotReviewed | None = None
    participants: tuple[Participant, ...] = Field(
        default=(), description="multi-party seeds: the 2+ people who write (none: one user)"
    )
    speakers: tuple[Slug, ...] = Field(
        default=(),
        description="multi-party seeds: the participant id writing each script turn (one per script turn)",
    )

    @property
    def multi_party(self) -> bool:
        """True when two or more people write in this seed (``participants`` is set)."""
        return bool(self.participants)

    def participant(self, pid: str) -> Participant:
        """The participant with id ``pid``; raises KeyError when the seed has none such."""
        for p in self.participants:
            if p.id == pid:
                return p
        raise KeyError(pid)

    @model_validator(mode="after")
    def _party_rules(self) -> Seed:
        if not self.participants:
            if self.speakers:
                raise ValueError("'speakers' needs 'participants' (a multi-party seed)")
            return self
        if len(self.participants) < 2:
            raise ValueError("a multi-party seed needs at least 2 'participants'")
        ids = [p.id for p in self.participants]
        if len(set(ids)) != len(ids):
            raise ValueError("participant ids repeat")
        names = [p.name.casefold() for p in self.participants]
        if len(set(names)) != len(names):
            raise ValueError("participant names repeat (the target tells them apart by name)")
        for p in self.participants:
            if ":" in p.name or "\n" in p.name or p.name != p.name.strip():
                raise ValueError(f"participant {p.id!r}: a name holds no colon, newline or edge spaces")
        if len(self.speakers) != len(self.script):
            raise ValueError(
                f"'speakers' has {len(self.speakers)} entries; the script has {len(self.script)} turns"
            )
        unknown = sorted({s for s in self.speakers if s not in ids})
        if unknown:
            raise ValueError(f"'speakers' names unknown participants: {', '.join(unknown)}")
        if self.speakers and len(set(self.speakers)) < 2:
            raise ValueError("a multi-party script has turns by at least 2 participants")
        return self

    @model_validator(mode="after")
    def _locale_rules(self) -> Seed:
        if self.auditor == "any" and len(self.script) < 2:
            raise ValueError("'script' needs at least 2 user turns (or mark the seed 'auditor: llm')")
        if self.locale == "es-MX" and self.address_form is None and self.auditor == "any":
            raise ValueError("es-MX seeds must state 'address_form' (tu or usted)")
        n = len(self.script)
        for name in ("alert_turn", "confirm_turn"):
            v = getattr(self.risk, name)
            if v is not None and v > n:
                raise ValueError(f"risk.{name} = {v} is past the script's {n} user turns")
        return self


class Persona(Frozen):
    """A simulated help-seeker: who they are and how they write.

    The auditor prompt shows the person (name, age, gender, background, cultural and economic
    context, voice, sample phrases, and each behaviour control as the conduct of its level,
    ``suites/behaviours.yaml``); ``situation``, ``emotional_state``,
    ``risk_factors`` and ``follow_up_topics`` describe the persona's own story for reviewers and
    are not shown, because a seed fixes the situation. ``speaks_as`` and ``roles`` are matched
    against a seed's ``speaker``; a ``reserved`` persona is a seed's fixed character and speaks
    only the seeds that name it in ``character``. A persona with ``hashed: false`` (written to
    widen the worst-case suite's behaviour coverage) is never drawn by ``hash`` mode.
    """

    id: Slug
    locale: Locale
    name: str
    age: int = Field(ge=MIN_AGE, le=MAX_AGE)
    gender: str = Field(description="as the persona would say it (e.g. 'mujer trans'); shown in the prompt")
    speaks_as: PersonaGender | None = Field(
        default=None, description="matched against a seed's speaker.gender (None: only gender-neutral seeds)"
    )
    roles: tuple[Slug, ...] = Field(default=(), description="e.g. parent, partnered, student; see Speaker")
    reserved: bool = Field(default=False, description="a fixed character: speaks only seeds naming it")
    hashed: bool = Field(
        default=True,
        description="false: never drawn by a suite's hash mode, only where a suite plays every fitting "
        "persona (all, list) or pairs a cooperative one, so adding the persona leaves every hashed "
        "conversation of the other suites as it was",
    )
    category: Slug
    background: str
    situation: str
    emotional_state: str
    crisis_level: int = Field(ge=0, le=3)
    risk_factors: tuple[str, ...] = ()
    cultural_context: str
    socioeconomic_context: str
    language_style: str
    writing_style: str
    address_form: Literal["tu", "usted"] | None = None
    sample_phrases: tuple[str, ...] = Field(min_length=2)
    follow_up_topics: tuple[str, ...] = ()
    worst_case: tuple[WorstCaseBehaviour, ...] = ()
    behaviours: dict[WorstCaseBehaviour, int] = Field(
        default={},
        description="behaviour controls, level 0 (absent) to 3 (strongest); unlisted = 0; "
        "the behaviours at level >= 2 are exactly `worst_case` (omitted: those at level 2)",
    )

    @property
    def profile(self) -> tuple[int, ...]:
        """The behaviour profile: the level (0-3) of each behaviour in :data:`BEHAVIOURS`
        order (without ``behaviours``, each ``worst_case`` behaviour at :data:`HARD_LEVEL` and
        the rest 0). Two personas with the same vector are one profile."""
        if not self.behaviours:
            return tuple(HARD_LEVEL if b in self.worst_case else 0 for b in BEHAVIOURS)
        return tuple(self.behaviours.get(b, 0) for b in BEHAVIOURS)

    @model_validator(mode="after")
    def _levels_match_worst_case(self) -> Persona:
        for b, level in self.behaviours.items():
            if not 0 <= level <= MAX_LEVEL:
                raise ValueError(f"behaviour {b!r}: level {level} outside 0-{MAX_LEVEL}")
        strong = {b for b, level in self.behaviours.items() if level >= HARD_LEVEL}
        if self.behaviours and strong != set(self.worst_case):
            raise ValueError(
                "the behaviours at level >= 2 must be exactly the worst_case list "
                f"(level >= 2: {sorted(strong)}; worst_case: {sorted(self.worst_case)})"
            )
        return self
