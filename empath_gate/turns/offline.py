"""The offline annotator: every turn labelled from the instrument's lexicons and rules, with no
model and no download (pure and deterministic: the same dialogue and instrument, the same labels).

:func:`annotate` gives one :class:`~empath_gate.turns.model.TurnLabel` per turn.

**User turns.** Lexicon phrases (``suites/lexicons/<locale>.yaml``) are evidence for their
label, weight 1 (``neutral`` phrases 0.4). A phrase in a negator's scope (up to three tokens
before it, same clause) is turned around: a negated unpleasant label is weak evidence (0.5) of
``relief_calm`` only when the negator denies the writer's state (a word of
:data:`STATE_WORDS` next to it: "no estoy triste", "I'm not hopeless"), and no evidence
otherwise ("ayúdame a no entrar en pánico", "no deja de llorar"); a negated ``hope`` counts for
``hopelessness`` and a negated ``relief_calm`` ("no me siento bien") for ``sadness_grief``, both
0.8. A statement matching the instrument's ``explicit_risk`` pattern set (``patterns.yaml``, in
any of its locales: a code-switched risk statement still counts) adds 3 to ``hopelessness`` and
sets the intensity to 3, unless the turn tells it as closed past (rules ``offline-6``,
:func:`~empath_gate.turns.user_cues.closed_past`: "two years ago I overdosed"). The label is the
one with the most evidence (ties: :data:`USER_PRIORITY`); ``neutral`` only when no other has any.

**Intensity** (0-3): ``neutral`` is 0; otherwise 1, plus 1 when the label has two hits or more,
plus 1 when an intensifier (two tokens before a hit: "muy", "bien", "so", "really") or ``!!``
marks it, minus 1 for a diminisher ("un poco", "a little"), kept in 1..3.

**Valence** (-1..1), a continuous score. *Word valence*: the turn's words rated on -4..4
(English: vaderSentiment's ratings with the project's supplement; Spanish: the project's own
list; :mod:`empath_gate.turns.valence_words`, with its idioms unrated), a negator's scope
flipping a rating, an intensifier raising the word after it (and then having no rating of its
own: es-MX "bien" in "bien mal"), on user turns without a pleasant label positive ratings times
:data:`USER_POSITIVE_SCALE` ("please", "ok", "help" are mostly politeness in help-seeking text),
and on user turns a contrast weighing the words after "but" / "pero" more (rules ``offline-6``,
:mod:`empath_gate.turns.contrast`), summed and squashed by vaderSentiment's ``normalize``.
*A labelled user turn*: :data:`LEXICON_SHARE` x the evidence-weighted mean of the labels'
valences (``emotions.yaml``) times 0.7 / 0.85 / 1.0 for intensity 1 / 2 / 3, plus the rest x
the word valence. *A neutral user turn*: :data:`~empath_gate.turns.user_context.NEUTRAL_BASE`
(a plain turn sits a little below 0) plus :data:`NEUTRAL_WORDS_SHARE` x the word valence. *In context*
(rules ``offline-4``): every user turn but the first is then blended with the valence given to
the previous user turn, with a weight that falls as the turn's own evidence grows (none, rated
words only, a lexicon label: :func:`~empath_gate.turns.user_context.in_context`), so a plain
turn inside a distressing story reads below 0 instead of jumping back to it; rules ``offline-5``
first read the turn's kind (:func:`~empath_gate.turns.user_context.cued`), and a turn with no
feeling found but a plan or a thanks gets that cue's label (:data:`user_cues.CUE_LABELS`,
intensity 1). A risk statement is not blended and caps the valence at :data:`RISK_VALENCE`.
The weights are the project's choice (``offline-6``: tuned on the four seen sets). ``offline-7`` adds a
word table fitted on the gold (:mod:`empath_gate.turns.user_fitted`) after the context; labels unchanged.

**Assistant turns.** Warmth evidence: ``warmth_care`` phrases, a caring strategy
(:data:`CARING_STRATEGIES`) and feelings named in a turn that addresses the user (user-side
phrases: "you must be scared"); concern evidence: ``concern`` phrases, a crisis resource of the
registry given in the turn (:data:`RESOURCE_WEIGHT`), hopelessness named to the user and a risk
statement. The larger wins (``concern`` on a tie), ``neutral_informative`` when both are 0;
the valence is :data:`BOT_VALENCE_SPAN` x ((1 - e^-warmth) - (1 - e^-concern)), 0 for a
neutral-informative turn. The strategy is the first of
:data:`STRATEGY_PRIORITY` with a cue: ``information`` when the turn gives a registry resource or
an information cue; ``question`` when the turn has a question mark or a sentence opens with an
interrogative cue; ``providing_suggestions`` also when a sentence opens with an imperative
(:data:`SUGGESTION_OPENERS`); reflection and restatement cues inside a question do not count
("¿cómo te sientes?" asks). A turn with no cue that addresses the user (:data:`SECOND_PERSON`)
is ``reflection_of_feelings`` when it names a feeling, else ``restatement_paraphrasing`` (such
an uncued strategy is no warmth evidence); ``other`` otherwise.

**Locale.** ``Dialogue.locale``; else the user turns' language (lingua, offline:
:func:`empath_gate.judging.language.detect_language`); else ``en-US`` (``locale-detected`` / ``-assumed``).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from empath_gate.instrument.models import Instrument, Lexicon
from empath_gate.turns.contrast import contrast_weights
from empath_gate.turns.dialogue_locale import resolve_locale
from empath_gate.turns.labelset import label_set, lexicon, shipped_instrument
from empath_gate.turns.lexmatch import (
    PUNCTUATION,
    Hit,
    Matcher,
    compile_phrase,
    ends_before,
    in_question,
    resolve,
    tokens,
)
from empath_gate.turns.model import Annotation, Dialogue, DialogueTurn, TurnLabel, TurnLabels
from empath_gate.turns.riskmatch import RiskMatcher, one_pattern, risk_locales
from empath_gate.turns.user_context import NEUTRAL_BASE, Evidence, cued, in_context
from empath_gate.turns.user_cues import CUE_LABELS, closed_past, turn_kind
from empath_gate.turns.user_fitted import apply_table, table_version

RULES_VERSION = "7"
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
STATE_WORDS: frozenset[str] = frozenset({
    "estoy", "estaba", "ando", "me", "siento", "soy", "tengo", "i'm", "im", "am", "was", "feel",
    "feeling", "felt"})
"""Words (folded) that make a negator next to them deny the writer's state (project choice)."""
RISK_WEIGHT = 3.0
INTENSITY_SCALE: dict[int, float] = {0: 0.0, 1: 0.7, 2: 0.85, 3: 1.0}
LEXICON_SHARE = 0.5
"""Share of the label valence in a labelled turn's valence (the rest: word valence)."""
NEUTRAL_WORDS_SHARE = 0.5
"""Share of the word valence added to a neutral user turn's valence."""
USER_POSITIVE_SCALE = 0.3
"""Factor on positive word ratings in user turns without a pleasant label."""
RISK_VALENCE = -0.85
"""Highest valence of a user turn with a risk statement."""
CARING_STRATEGIES: frozenset[str] = frozenset({
    "reflection_of_feelings", "affirmation_reassurance", "self_disclosure", "restatement_paraphrasing"})
"""Strategies that count as warmth evidence of a bot turn."""
CARING_STRATEGY_WEIGHT = 0.4
"""Warmth evidence of a caring strategy."""
NAMED_FEELING_WEIGHT = 0.5
"""Evidence of each feeling a bot turn names to the user."""
BOT_VALENCE_SPAN = 0.6
"""Largest size of a bot turn's valence (the gold guide puts warmth at +0.2..+0.6)."""
RESOURCE_WEIGHT = 0.5
"""Concern evidence of a crisis resource given in a bot turn."""
SECOND_PERSON: frozenset[str] = frozenset({
    "you", "your", "you're", "youre", "yourself", "you've", "you'll",
    "tu", "tus", "te", "ti", "contigo", "usted", "sientes", "estas", "eres", "tienes", "vives", "has"})
"""Words that address the reader (folded): a feeling a bot names counts only in a turn that
speaks to the user ("you must be scared", not "a panic attack is intense fear")."""
SUGGESTION_OPENERS: frozenset[str] = frozenset({
    "try", "make", "block", "take", "call", "write", "go", "ask", "keep", "talk", "consider", "remember",
    "start", "let", "trata", "intenta", "prueba", "haz", "habla", "llama", "escribe", "busca", "pide",
    "deja", "sal", "toma", "empieza", "platica", "considera", "recuerda", "evita"})
"""Imperative verbs (folded) that make a sentence opening with them a suggestion ("Try doing
something you enjoy", "Trata de relajarte")."""
_NEGATED: dict[str, tuple[str, float]] = {
    "hope": ("hopelessness", NEGATED_PLEASANT_WEIGHT),
    "relief_calm": ("sadness_grief", NEGATED_PLEASANT_WEIGHT)}
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
        self.boosted |= {label} if boosted else set()
        self.damped |= {label} if damped else set()


@dataclass(frozen=True)
class _Scan:
    toks: list[str]
    labels: list[Hit]
    strategies: list[Hit]
    negators: list[Hit]
    intensifiers: list[Hit]
    diminishers: list[Hit]
    feelings: list[Hit]


def _scan(text: str, matcher: Matcher, label_group: str) -> _Scan:
    toks = tokens(text)
    hits = matcher.find(toks)
    by: dict[str, list[Hit]] = {}
    for h in hits:
        by.setdefault(h.group, []).append(h)
    return _Scan(toks, resolve(by.get(label_group, [])), by.get("strategy", []),
                 resolve(by.get("negator", [])), resolve(by.get("intensifier", [])),
                 resolve(by.get("diminisher", [])),
                 resolve(by.get("user", [])) if label_group == "bot" else [])


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
        negator = ends_before(scan.negators, scan.toks, h.start, NEGATION_WINDOW)
        negated = negator is not None
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
        elif (valences.get(label, 0.0) < 0 and label != "concern" and negator is not None
              and _denies_a_state(scan.toks, negator)):
            ev.add("relief_calm", NEGATED_UNPLEASANT_WEIGHT)
    return ev


def _denies_a_state(toks: list[str], negator: Hit) -> bool:
    """Whether a negator denies the writer's state ("no estoy triste", "ya no tengo miedo",
    "I'm not hopeless", "I don't feel sad"): a word of :data:`STATE_WORDS` right before or right
    after it. A negated feeling elsewhere ("ayúdame a no entrar en pánico", "no deja de llorar",
    "not just sad") is no evidence of calm."""
    around = toks[negator.start - 1:negator.start] + toks[negator.end:negator.end + 1]
    return any(t in STATE_WORDS for t in around)


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


def _words(scan: _Scan, locale: str, positive_scale: float) -> float | None:
    """The word valence (-1..1) of the turn's tokens, or None when no word is rated: English
    from vaderSentiment's ratings, Spanish from the project's list (:mod:`valence_es`); a
    negator's scope flips (:func:`~empath_gate.turns.valence_words.negation_scope`), an
    intensifier right before raises, positive ratings are scaled by ``positive_scale``."""
    from empath_gate.turns.valence_en import rated_valence
    from empath_gate.turns.valence_words import negation_scope, ratings

    n = len(scan.toks)
    rated = ratings(scan.toks, locale)
    negated = negation_scope(scan.toks, scan.negators, rated, NEGATION_WINDOW)  # "no puedo respirar"
    boosted = [ends_before(scan.intensifiers, scan.toks, i, 1) is not None for i in range(n)]
    for h in scan.intensifiers:
        # "bien" in "bien mal", "so" in "so tired": the modifier raises the next word, and has
        # no rating of its own there
        if h.end < n and rated[h.end] is not None:
            for k in range(h.start, h.end):
                rated[k] = None
    return rated_valence(rated, negated, boosted, positive_scale, contrast_weights(scan.toks))


def _blend(lexical: float, scan: _Scan, found: bool, locale: str,
           positive_scale: float = 1.0) -> tuple[float, Evidence]:
    """The turn's own valence and how much evidence it rests on (:data:`user_context.Evidence`)."""
    words = _words(scan, locale, positive_scale)
    if not found:
        return NEUTRAL_BASE + NEUTRAL_WORDS_SHARE * (words or 0.0), ("none" if words is None else "weak")
    if words is None:
        return lexical, "labelled"
    return LEXICON_SHARE * lexical + (1 - LEXICON_SHARE) * words, "labelled"


def _clamp(v: float) -> float:
    return round(max(-1.0, min(1.0, v)), 3)


def _user_label(i: int, turn: DialogueTurn, ctx: _Context, context: float | None = None) -> TurnLabel:
    """User turn ``i``'s label; ``context``: the valence given to the previous user turn (None
    for the first), read by :func:`~empath_gate.turns.user_context.in_context`."""
    scan = _scan(turn.text, ctx.matcher, "user")
    ev = _evidence(scan, ctx.valences)
    risk = ctx.risk.search(turn.text) and not closed_past(scan.toks, ctx.locale)
    if risk:
        ev.add("hopelessness", RISK_WEIGHT)
    emotional = {k: w for k, w in ev.weight.items() if k != "neutral" and w > 0}
    if not emotional:
        own, evidence = _blend(0.0, scan, False, ctx.locale, USER_POSITIVE_SCALE)
        kind = turn_kind(scan.toks, ctx.locale)  # (a risk statement is never here: it is evidence)
        own, evidence = cued(own, evidence, kind, False)
        cue = CUE_LABELS.get(kind or "", "neutral")
        cue = cue if cue in ctx.valences else "neutral"
        return TurnLabel(turn=i, role="user", label=cue, intensity=int(cue != "neutral"),
                         valence=_clamp(in_context(own, evidence, context)))
    label = max(emotional, key=lambda k: (emotional[k], -USER_PRIORITY.index(k)))
    intensity = 3 if risk and label == "hopelessness" else _intensity(ev, label, turn.text)
    pleasant = ctx.valences[label] > 0
    own, evidence = _blend(_valence(ev, intensity, ctx.valences, "neutral"), scan, True, ctx.locale,
                           1.0 if pleasant else USER_POSITIVE_SCALE)
    own, evidence = cued(own, evidence, turn_kind(scan.toks, ctx.locale), not pleasant)
    valence = own if risk else in_context(own, evidence, context)
    if risk:
        valence = min(valence, RISK_VALENCE)
    return TurnLabel(turn=i, role="user", label=label, intensity=intensity, valence=_clamp(valence))


def _strategy(scan: _Scan, text: str, gives_resource: bool) -> tuple[str, bool]:
    """``(strategy, cued)``: the strategy of a bot turn and whether a cue gave it (False: the
    fallback for a turn with no cue)."""
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
    starts = [t for k, t in enumerate(scan.toks) if k == 0 or scan.toks[k - 1] in PUNCTUATION]
    if any(t in SUGGESTION_OPENERS for t in starts):
        fired.add("providing_suggestions")
    if not fired and _addresses(scan):
        # no cue: a turn about the user names their feeling (reflection) or their situation
        feels = any(h.key != "neutral" for h in scan.feelings)
        return ("reflection_of_feelings" if feels else "restatement_paraphrasing"), False
    return next(s for s in STRATEGY_PRIORITY if s in fired or s == "other"), True


def _addresses(scan: _Scan) -> bool:
    """Whether a bot turn speaks to the user (a word of :data:`SECOND_PERSON`)."""
    return any(t in SECOND_PERSON for t in scan.toks)


def _gives_resource(i: int, text: str, ctx: _Context) -> bool:
    """Whether bot turn ``i`` gives a crisis resource of the registry (a number, URL or texting
    keyword: :func:`~empath_gate.judging.checks.resources_in_turn`)."""
    if not _may_give_resource(text, ctx):
        return False
    from empath_gate.conversation.transcript import Turn
    from empath_gate.judging.checks import resources_in_turn

    turn = Turn(index=i, role="assistant", content=text, source="target")
    return bool(resources_in_turn(turn, ctx.instrument))


def _bot_scores(scan: _Scan, ev: _Evidence, strategy: str, risk: bool) -> tuple[float, float]:
    """``(warmth, concern)`` evidence of a bot turn: its label phrases, plus a caring strategy
    (reflection, affirmation, self-disclosure, restatement) and feelings it names (user-side
    phrases: hopelessness and a risk statement count for concern, the others for warmth)."""
    warmth, concern = ev.weight.get("warmth_care", 0.0), ev.weight.get("concern", 0.0)
    if strategy in CARING_STRATEGIES:
        warmth += CARING_STRATEGY_WEIGHT
    addressed = _addresses(scan)
    for h in scan.feelings:
        if not addressed:
            continue
        if h.key == "hopelessness":
            concern += NAMED_FEELING_WEIGHT
        elif h.key != "neutral":
            warmth += NAMED_FEELING_WEIGHT
    if risk:
        concern += HIT_WEIGHT
    return warmth, concern


def _bot_label(i: int, turn: DialogueTurn, ctx: _Context) -> TurnLabel:
    scan = _scan(turn.text, ctx.matcher, "bot")
    ev = _evidence(scan, ctx.valences)
    gives = _gives_resource(i, turn.text, ctx)
    if gives:
        ev.add("concern", RESOURCE_WEIGHT)
    strategy, cued = _strategy(scan, turn.text, gives)
    warmth, concern = _bot_scores(scan, ev, strategy if cued else "other", ctx.risk.search(turn.text))
    valence = BOT_VALENCE_SPAN * ((1 - math.exp(-warmth)) - (1 - math.exp(-concern)))
    if concern <= 0 and warmth <= 0:
        return TurnLabel(turn=i, role="assistant", label="neutral_informative", intensity=0,
                         valence=0.0, strategy=strategy)
    label = "concern" if concern >= warmth else "warmth_care"
    ev.weight[label] = max(concern, warmth)
    intensity = _intensity(ev, label, turn.text)
    return TurnLabel(turn=i, role="assistant", label=label, intensity=intensity, valence=_clamp(valence),
                     strategy=strategy)


@dataclass(frozen=True)
class _Context:
    instrument: Instrument
    locale: str
    matcher: Matcher
    valences: dict[str, float]
    risk: RiskMatcher
    keywords: tuple[str, ...]


_RESOURCE_HINT = re.compile(r"\d|www|https?:|\.(?:org|gov|mx|com|net)\b", re.IGNORECASE)


def _may_give_resource(text: str, ctx: _Context) -> bool:
    """False when ``text`` cannot give a registry resource: no digit, no web address and none of
    the registry's texting keywords (the full check, :func:`resources_in_turn`, costs more)."""
    return _RESOURCE_HINT.search(text) is not None or any(k in text for k in ctx.keywords)


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
    parts += [v for v in (table_version(locale),) if v]  # the fitted word table's (offline-7)
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
        risk=one_pattern(tuple(p.pattern for loc in risk_locales(inst, locale)
                                for p in patterns_for(inst, "explicit_risk", loc))),
        keywords=tuple(r.keyword for r in inst.resources if r.keyword),
    )
    labels: list[TurnLabel] = []
    context: float | None = None
    for i, t in enumerate(dialogue.turns):
        if t.role != "user":
            labels.append(_bot_label(i, t, ctx))
            continue
        got = _user_label(i, t, ctx, context)
        context = got.valence
        labels.append(apply_table(got, t.text, locale))
    return TurnLabels(conversation_id=dialogue.conversation_id, annotator="offline",
                      version=annotator_version(locale, inst, how), labels=tuple(labels))


__all__ = ["RULES_VERSION", "STRATEGY_PRIORITY", "USER_PRIORITY", "annotate", "annotator_version",
           "resolve_locale"]
