"""The offline annotator: every turn labelled from the instrument's lexicons and rules, with no
model and no download (pure and deterministic: the same dialogue and instrument give the same
labels).

:func:`annotate` gives one :class:`~empath_gate.turns.model.TurnLabel` per turn.

**User turns.** Lexicon phrases (``suites/lexicons/<locale>.yaml``) are evidence for their
label, weight 1 (``neutral`` phrases 0.4). A phrase in a negator's scope (up to three tokens
before it, same clause) is turned around: a negated unpleasant label ("no estoy triste", "not
hopeless") is weak evidence (0.5) of ``relief_calm``; a negated ``hope`` counts for
``hopelessness`` and a negated ``relief_calm`` ("no me siento bien") for ``sadness_grief``, both
0.8. A statement matching the instrument's ``explicit_risk`` pattern set (``patterns.yaml``, in
any of its locales: a code-switched risk statement still counts) adds 3 to ``hopelessness`` and
sets the intensity to 3. The label is the one with the most
evidence (ties: :data:`USER_PRIORITY`); ``neutral`` only when no other label has any.

**Intensity** (0-3): ``neutral`` is 0; otherwise 1, plus 1 when the label has two hits or more,
plus 1 when an intensifier (two tokens before a hit: "muy", "bien", "so", "really") or ``!!``
marks it, minus 1 for a diminisher ("un poco", "a little"), kept in 1..3.

**Valence** (-1..1): the evidence-weighted mean of the labels' valences (``emotions.yaml``),
times 0.7 / 0.85 / 1.0 for intensity 1 / 2 / 3; 0 for ``neutral``. In English it is blended
with vaderSentiment's word valences (:mod:`empath_gate.turns.valence_en`): 0.7 lexicon + 0.3
words when a label phrase was found, else half the word valence. The weights are the project's
choice (tuned on the tune half of the gold file, never on the held-out half).

**Assistant turns.** ``concern`` phrases (and a crisis resource of the registry given in the
turn) against ``warmth_care`` phrases: the larger wins, ``concern`` on a tie, else
``neutral_informative``; intensity and valence as for user turns. The strategy is the first of
:data:`STRATEGY_PRIORITY` with a cue: ``information`` when the turn gives a registry resource or
an information cue; ``question`` when the turn has a question mark or a sentence opens with an
interrogative cue; reflection and restatement cues inside a question do not count ("¿cómo te
sientes?" asks); ``other`` when nothing fires.

**Locale.** ``Dialogue.locale``; when it is None or unknown, the language of the user turns by
:func:`empath_gate.judging.language.detect_language` (lingua, offline); when that cannot decide,
``en-US``. The version string says which (``locale-detected`` / ``locale-assumed``).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from empath_gate.instrument.models import LOCALES, Instrument, Lexicon
from empath_gate.turns.labelset import label_set, lexicon, shipped_instrument
from empath_gate.turns.lexmatch import Hit, Matcher, compile_phrase, ends_before, in_question, resolve, tokens
from empath_gate.turns.model import Annotation, Dialogue, DialogueTurn, TurnLabel, TurnLabels

RULES_VERSION = "1"
"""Version of the rules in this module; part of :data:`TurnLabels.version`."""

USER_PRIORITY: tuple[str, ...] = (
    "hopelessness", "shame_guilt", "fear_anxiety", "anger", "sadness_grief", "numbness", "hope",
    "relief_calm", "neutral",
)
"""Tie order of user labels (project choice: the label with more risk first)."""

STRATEGY_PRIORITY: tuple[str, ...] = (
    "information", "providing_suggestions", "reflection_of_feelings", "restatement_paraphrasing",
    "self_disclosure", "affirmation_reassurance", "question", "other",
)
"""Which strategy a bot turn gets when several cues fire (project choice)."""

QUESTION_MUTED: frozenset[str] = frozenset({"reflection_of_feelings", "restatement_paraphrasing"})
"""Strategy cues that do not count inside a question ("how do you feel?" asks)."""
NEGATION_WINDOW = 3
"""Tokens before a phrase in which a negator negates it."""
MODIFIER_WINDOW = 2
"""Tokens before a phrase in which an intensifier or diminisher applies."""
HIT_WEIGHT = 1.0
NEUTRAL_WEIGHT = 0.4
NEGATED_UNPLEASANT_WEIGHT = 0.5
NEGATED_PLEASANT_WEIGHT = 0.8
RISK_WEIGHT = 3.0
INTENSITY_SCALE: dict[int, float] = {0: 0.0, 1: 0.7, 2: 0.85, 3: 1.0}
EN_LEXICON_SHARE = 0.7
EN_WORDS_ONLY_SHARE = 0.5
_NEGATED: dict[str, tuple[str, float]] = {
    "hope": ("hopelessness", NEGATED_PLEASANT_WEIGHT),
    "relief_calm": ("sadness_grief", NEGATED_PLEASANT_WEIGHT),
}
_EXCLAIM = re.compile(r"!{2,}")


@dataclass
class _Compiled:
    lexicon: Lexicon
    matcher: Matcher


_COMPILED: dict[int, _Compiled] = {}


def _compiled(lex: Lexicon) -> Matcher:
    got = _COMPILED.get(id(lex))
    if got is not None and got.lexicon is lex:
        return got.matcher
    phrases = []
    for group, table in (("user", lex.user_labels), ("bot", lex.bot_labels), ("strategy", lex.strategies)):
        for key, entries in table.items():
            phrases += [compile_phrase(group, key, e) for e in entries]
    for group, entries in (("negator", lex.negators), ("intensifier", lex.intensifiers),
                           ("diminisher", lex.diminishers)):
        phrases += [compile_phrase(group, group, e) for e in entries]
    matcher = Matcher(phrases)
    _COMPILED[id(lex)] = _Compiled(lex, matcher)
    return matcher


@dataclass
class _Evidence:
    weight: dict[str, float] = field(default_factory=dict)
    hits: dict[str, int] = field(default_factory=dict)
    boosted: set[str] = field(default_factory=set)
    damped: set[str] = field(default_factory=set)

    def add(self, label: str, weight: float, *, boosted: bool = False, damped: bool = False) -> None:
        self.weight[label] = self.weight.get(label, 0.0) + weight
        self.hits[label] = self.hits.get(label, 0) + 1
        if boosted:
            self.boosted.add(label)
        if damped:
            self.damped.add(label)


@dataclass(frozen=True)
class _Scan:
    toks: list[str]
    labels: list[Hit]
    strategies: list[Hit]
    negators: list[Hit]
    intensifiers: list[Hit]
    diminishers: list[Hit]


def _scan(text: str, matcher: Matcher, label_group: str) -> _Scan:
    toks = tokens(text)
    hits = matcher.find(toks)
    by: dict[str, list[Hit]] = {}
    for h in hits:
        by.setdefault(h.group, []).append(h)
    return _Scan(toks, resolve(by.get(label_group, [])), by.get("strategy", []),
                 resolve(by.get("negator", [])), resolve(by.get("intensifier", [])),
                 resolve(by.get("diminisher", [])))


def _absorb_intensifiers(scan: _Scan) -> list[Hit]:
    """The label hits without those that end in an intensifier right before another label hit
    ("estoy bien" in "estoy bien triste": es-MX "bien" intensifies the word after it)."""
    words = {h.phrase.words[-1] for h in scan.intensifiers if len(h.phrase.words) == 1}
    kept: list[Hit] = []
    for k, h in enumerate(scan.labels):
        nxt = scan.labels[k + 1] if k + 1 < len(scan.labels) else None
        if nxt is not None and nxt.start == h.end and scan.toks[h.end - 1] in words:
            continue
        kept.append(h)
    return kept


def _boosted_starts(scan: _Scan, kept: list[Hit]) -> set[int]:
    """Starts of label hits right after an intensifier that ended an absorbed hit."""
    return {h.end for h in scan.labels if h not in kept}


def _evidence(scan: _Scan, valences: dict[str, float]) -> _Evidence:
    ev = _Evidence()
    hits = _absorb_intensifiers(scan)
    for h in hits:
        negated = ends_before(scan.negators, scan.toks, h.start, NEGATION_WINDOW) is not None
        boosted = ends_before(scan.intensifiers, scan.toks, h.start, MODIFIER_WINDOW) is not None
        boosted = boosted or h.start in _boosted_starts(scan, hits)
        damped = ends_before(scan.diminishers, scan.toks, h.start, MODIFIER_WINDOW) is not None
        label = h.key
        if not negated:
            weight = NEUTRAL_WEIGHT if label in ("neutral", "neutral_informative") else HIT_WEIGHT
            ev.add(label, weight, boosted=boosted, damped=damped)
        elif label in _NEGATED:
            target, weight = _NEGATED[label]
            ev.add(target, weight, boosted=boosted, damped=damped)
        elif valences.get(label, 0.0) < 0 and label != "concern":
            ev.add("relief_calm", NEGATED_UNPLEASANT_WEIGHT)
    return ev


def _intensity(ev: _Evidence, label: str, text: str) -> int:
    level = 1 + (ev.hits.get(label, 0) >= 2 or ev.weight.get(label, 0.0) >= 2)
    level += label in ev.boosted or bool(_EXCLAIM.search(text))
    level -= label in ev.damped
    return max(1, min(3, level))


def _valence(ev: _Evidence, intensity: int, valences: dict[str, float], neutral: str) -> float:
    emotional = {k: w for k, w in ev.weight.items() if k != neutral}
    total = sum(emotional.values())
    if not total:
        return 0.0
    mean = sum(w * valences[k] for k, w in emotional.items()) / total
    return mean * INTENSITY_SCALE[intensity]


def _blend(lexical: float, scan: _Scan, found: bool, locale: str) -> float:
    if locale != "en-US":
        return lexical
    from empath_gate.turns.valence_en import word_valence

    n = len(scan.toks)
    negated = [ends_before(scan.negators, scan.toks, i, NEGATION_WINDOW) is not None for i in range(n)]
    boosted = [ends_before(scan.intensifiers, scan.toks, i, 1) is not None for i in range(n)]
    words = word_valence(scan.toks, negated, boosted)
    if words is None:
        return lexical
    if found:
        return EN_LEXICON_SHARE * lexical + (1 - EN_LEXICON_SHARE) * words
    return EN_WORDS_ONLY_SHARE * words


def _clamp(v: float) -> float:
    return round(max(-1.0, min(1.0, v)), 3)


def _user_label(i: int, turn: DialogueTurn, ctx: _Context) -> TurnLabel:
    scan = _scan(turn.text, ctx.matcher, "user")
    ev = _evidence(scan, ctx.valences)
    risk = ctx.risk.search(turn.text)
    if risk:
        ev.add("hopelessness", RISK_WEIGHT)
    emotional = {k: w for k, w in ev.weight.items() if k != "neutral" and w > 0}
    if not emotional:
        valence = _blend(0.0, scan, False, ctx.locale)
        return TurnLabel(turn=i, role="user", label="neutral", intensity=0, valence=_clamp(valence))
    label = max(emotional, key=lambda k: (emotional[k], -USER_PRIORITY.index(k)))
    intensity = 3 if risk and label == "hopelessness" else _intensity(ev, label, turn.text)
    valence = _blend(_valence(ev, intensity, ctx.valences, "neutral"), scan, True, ctx.locale)
    return TurnLabel(turn=i, role="user", label=label, intensity=intensity, valence=_clamp(valence))


def _strategy(scan: _Scan, text: str, gives_resource: bool) -> str:
    fired: set[str] = set()
    if gives_resource:
        fired.add("information")
    for h in scan.strategies:
        if h.key in QUESTION_MUTED and in_question(scan.toks, h.start, h.end):
            continue  # "¿cómo te sientes?" asks; it does not reflect
        if h.key != "question":
            fired.add(h.key)
        elif h.start == 0 or scan.toks[h.start - 1] in (".", "!", "?", ":", ";"):
            fired.add("question")
    if "?" in scan.toks:
        fired.add("question")
    return next(s for s in STRATEGY_PRIORITY if s in fired or s == "other")


def _gives_resource(i: int, text: str, ctx: _Context) -> bool:
    """Whether bot turn ``i`` gives a crisis resource of the registry (a number, URL or texting
    keyword: :func:`~empath_gate.judging.checks.resources_in_turn`)."""
    if not _may_give_resource(text, ctx):
        return False
    from empath_gate.conversation.transcript import Turn
    from empath_gate.judging.checks import resources_in_turn

    turn = Turn(index=i, role="assistant", content=text, source="target")
    return bool(resources_in_turn(turn, ctx.instrument))


def _bot_label(i: int, turn: DialogueTurn, ctx: _Context) -> TurnLabel:
    scan = _scan(turn.text, ctx.matcher, "bot")
    ev = _evidence(scan, ctx.valences)
    gives = _gives_resource(i, turn.text, ctx)
    if gives:
        ev.add("concern", HIT_WEIGHT)
    concern, warmth = ev.weight.get("concern", 0.0), ev.weight.get("warmth_care", 0.0)
    strategy = _strategy(scan, turn.text, gives)
    if concern <= 0 and warmth <= 0:
        valence = _blend(0.0, scan, False, ctx.locale)
        return TurnLabel(turn=i, role="assistant", label="neutral_informative", intensity=0,
                         valence=_clamp(valence), strategy=strategy)
    label = "concern" if concern >= warmth else "warmth_care"
    intensity = _intensity(ev, label, turn.text)
    lexical = ctx.valences[label] * INTENSITY_SCALE[intensity]
    valence = _blend(lexical, scan, True, ctx.locale)
    return TurnLabel(turn=i, role="assistant", label=label, intensity=intensity, valence=_clamp(valence),
                     strategy=strategy)


@dataclass(frozen=True)
class _Context:
    instrument: Instrument
    locale: str
    matcher: Matcher
    valences: dict[str, float]
    risk: _RiskMatcher
    keywords: tuple[str, ...]


_RESOURCE_HINT = re.compile(r"\d|www|https?:|\.(?:org|gov|mx|com|net)\b", re.IGNORECASE)


def _may_give_resource(text: str, ctx: _Context) -> bool:
    """False when ``text`` cannot give a registry resource: no digit, no web address and none of
    the registry's texting keywords (the full check, :func:`resources_in_turn`, costs more)."""
    return _RESOURCE_HINT.search(text) is not None or any(k in text for k in ctx.keywords)


_UPPER_LITERAL = re.compile(r"(?<!\\)[A-Z]")


@dataclass(frozen=True)
class _RiskMatcher:
    """The instrument's risk patterns as one alternation: one search per turn instead of one per
    pattern, and the same answer (a turn matches when any pattern does). Patterns with no
    upper-case letter are matched case-sensitively against the lower-cased turn, which gives
    what ``re.IGNORECASE`` gives and runs about a third faster."""

    pattern: re.Pattern[str]
    lower: bool

    def search(self, text: str) -> bool:
        """Whether any risk pattern matches ``text``."""
        return self.pattern.search(text.lower() if self.lower else text) is not None


@functools.lru_cache(maxsize=16)
def _one_pattern(patterns: tuple[str, ...]) -> _RiskMatcher:
    joined = "|".join(f"(?:{p})" for p in patterns)
    if any(_UPPER_LITERAL.search(p) for p in patterns):
        return _RiskMatcher(re.compile(joined, re.IGNORECASE), lower=False)
    return _RiskMatcher(re.compile(joined), lower=True)


def _risk_locales(instrument: Instrument, locale: str) -> tuple[str, ...]:
    """The locales whose risk patterns a turn is checked against: its own first, then every
    other locale the ``explicit_risk`` set covers (a Spanish risk statement inside an English
    conversation is still one)."""
    covered = tuple(instrument.pattern_set("explicit_risk").patterns)
    return (locale, *(x for x in covered if x != locale))


def resolve_locale(dialogue: Dialogue) -> tuple[str, str]:
    """``(locale, how)``: the dialogue's own locale (``how`` = ``given``), else the language of
    its user turns (``detected``; all turns when it has none), else ``en-US`` (``assumed``)."""
    if dialogue.locale in LOCALES:
        return str(dialogue.locale), "given"
    from empath_gate.judging.language import detect_language

    texts = [t.text for t in dialogue.turns if t.role == "user"] or [t.text for t in dialogue.turns]
    lang = detect_language(" ".join(texts)[:4000])
    if lang == "es":
        return "es-MX", "detected"
    if lang == "en":
        return "en-US", "detected"
    return "en-US", "assumed"


def annotator_version(locale: str, instrument: Instrument | None = None, how: str = "given") -> str:
    """The offline annotator's version for ``locale``: rules, label set and lexicon versions
    (plus vaderSentiment's in English), and how the locale was found when not given, e.g.
    ``offline-1/labels-1.0.0/lexicon-es-MX-1.0.0/locale-detected``."""
    lex = lexicon(locale, instrument)
    parts = [f"offline-{RULES_VERSION}", f"labels-{label_set(instrument).label_set_version}",
             f"lexicon-{locale}-{lex.lexicon_version}"]
    if locale == "en-US":
        from empath_gate.turns.valence_en import vader_version

        parts.append(f"vader-{vader_version()}")
    if how != "given":
        parts.append(f"locale-{how}")
    return "/".join(parts)


def annotate(dialogue: Dialogue, instrument: Instrument | None = None) -> Annotation:
    """Label every turn of ``dialogue`` (see the module docstring for the rules).

    ``instrument``: where the label set, lexicons, risk patterns and crisis resources come from
    (default: the shipped instrument, loaded once). Returns :class:`TurnLabels` with one label
    per turn, in order (no turns: no labels); this annotator never fails on text. Raises
    SuiteError when the instrument lacks the label set or the locale's lexicon."""
    from empath_gate.judging.checks import patterns_for

    inst = instrument or shipped_instrument()
    locale, how = resolve_locale(dialogue)
    ls = label_set(inst)
    ctx = _Context(
        instrument=inst, locale=locale, matcher=_compiled(lexicon(locale, inst)),
        valences={lab.id: lab.valence for lab in (*ls.user_labels, *ls.bot_labels)},
        risk=_one_pattern(tuple(p.pattern for loc in _risk_locales(inst, locale)
                                for p in patterns_for(inst, "explicit_risk", loc))),
        keywords=tuple(r.keyword for r in inst.resources if r.keyword),
    )
    labels = tuple(
        _user_label(i, t, ctx) if t.role == "user" else _bot_label(i, t, ctx)
        for i, t in enumerate(dialogue.turns)
    )
    return TurnLabels(conversation_id=dialogue.conversation_id, annotator="offline",
                      version=annotator_version(locale, inst, how), labels=labels)


__all__ = ["RULES_VERSION", "STRATEGY_PRIORITY", "USER_PRIORITY", "annotate", "annotator_version",
           "resolve_locale"]
