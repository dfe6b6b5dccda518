"""The library entry point of the dynamics analysis: annotate each conversation, find its
explicit risk statements, and build the :class:`~empath_gate.analysis.dynamics.DynamicsReport`.

``empath-gate dynamics`` calls :func:`analyse_dynamics` with the conversations read by
:func:`empath_gate.turns.external.read_conversations`; a run would call it once per suite
with its transcripts. The annotator is a parameter (``Callable[[Dialogue], Annotation]``): the
offline annotator by default in the command, the LLM annotator on request, a stub in tests.
Its answer is checked (:func:`~empath_gate.analysis.dynamics.checked_annotation`): labels that
do not cover the dialogue become a visible failure, never default labels.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from empath_gate.analysis.dynamics import (
    DEFAULT_ALPHA,
    DynamicsReport,
    LabelledConversation,
    build_report,
    checked_annotation,
)
from empath_gate.instrument.models import Instrument
from empath_gate.turns.external import InputProblem, SourcedDialogue
from empath_gate.turns.model import Annotation, AnnotatorFailure, Dialogue

Annotator = Callable[[Dialogue], Annotation]
"""Labels one dialogue: :class:`~empath_gate.turns.model.TurnLabels` or a failure."""

RiskMatcher = Callable[[str, "str | None"], bool]
"""``(user text, locale or None) -> True`` when the text states risk explicitly."""

LOCALES = ("es-MX", "en-US")


def explicit_risk_matcher(instrument: Instrument) -> RiskMatcher:
    """A :data:`RiskMatcher` over the instrument's ``explicit_risk`` pattern set: the patterns of
    a locale joined into one search (:func:`empath_gate.turns.riskmatch.one_pattern`: a text
    matches when any pattern does, as the deterministic checks'
    :func:`~empath_gate.judging.checks.first_match` finds; one search per message instead of one
    per pattern). An unknown locale is matched against both locales' patterns (a risk statement
    is not missed for want of a locale). Raises SuiteError when the set or a locale's patterns
    are missing or a pattern is not a valid regular expression."""
    from empath_gate.judging.checks import EXPLICIT_RISK_SET, patterns_for
    from empath_gate.turns.riskmatch import one_pattern

    raw = {loc: tuple(p.pattern for p in patterns_for(instrument, EXPLICIT_RISK_SET, loc)) for loc in LOCALES}
    joined = {loc: one_pattern(ps) for loc, ps in raw.items()}
    both = one_pattern(raw["es-MX"] + raw["en-US"])

    def match(text: str, locale: str | None) -> bool:
        return joined.get(locale or "", both).search(text)

    return match


def risk_turns(dialogue: Dialogue, matcher: RiskMatcher) -> list[int]:
    """0-based indices of the user messages of ``dialogue`` that ``matcher`` flags."""
    return [i for i, t in enumerate(dialogue.turns) if t.role == "user" and matcher(t.text, dialogue.locale)]


def risk_speakers(dialogue: Dialogue, turns: Sequence[int]) -> tuple[str, ...]:
    """The speaker id of each of ``turns`` (0-based user-message indices) in a multi-party
    dialogue, in order (``""`` for a turn without one); ``()`` when no turn names a speaker."""
    if not any(t.speaker for t in dialogue.turns):
        return ()
    return tuple(dialogue.turns[i].speaker or "" for i in turns)


def default_group_keys(items: Sequence[SourcedDialogue]) -> tuple[str, ...]:
    """The keys pooled statistics group by: ``suite`` when any conversation has one,
    ``source`` when the conversations come from more than one file, and ``locale``."""
    keys = []
    if any("suite" in i.keys for i in items):
        keys.append("suite")
    if len({i.keys.get("source") for i in items if "source" in i.keys}) > 1:
        keys.append("source")
    keys.append("locale")
    return tuple(keys)


def analyse_dynamics(
    items: Sequence[SourcedDialogue],
    annotator: Annotator,
    *,
    risk_matcher: RiskMatcher | None = None,
    group_keys: Sequence[str] | None = None,
    alpha: float = DEFAULT_ALPHA,
    input_problems: Sequence[InputProblem] = (),
    progress: Callable[[int, int], None] | None = None,
) -> DynamicsReport:
    """Annotate every dialogue of ``items`` with ``annotator``, flag explicit risk statements
    with ``risk_matcher`` (none flagged when it is ``None``) and build the report
    (:func:`~empath_gate.analysis.dynamics.build_report`; ``group_keys`` default:
    :func:`default_group_keys`). ``progress(done, total)`` is called after about every tenth
    of the conversations and at the end. Exceptions of the annotator propagate."""
    total = len(items)
    step = max(1, total // 10)
    done: list[LabelledConversation] = []
    failures: list[tuple[AnnotatorFailure, dict[str, str]]] = []
    for n, item in enumerate(items, start=1):
        annotation = checked_annotation(item.dialogue, annotator(item.dialogue))
        if isinstance(annotation, AnnotatorFailure):
            failures.append((annotation, item.keys))
        else:
            risks = risk_turns(item.dialogue, risk_matcher) if risk_matcher is not None else []
            done.append(
                LabelledConversation(
                    conversation_id=item.dialogue.conversation_id,
                    keys=item.keys,
                    profiles=item.profiles,
                    labels=annotation.labels,
                    risk_turns=tuple(risks),
                    risk_speakers=risk_speakers(item.dialogue, risks),
                    annotator=annotation.annotator,
                    version=annotation.version,
                    feelings=item.feelings,
                )
            )
        if progress is not None and (n % step == 0 or n == total):
            progress(n, total)
    keys = default_group_keys(items) if group_keys is None else tuple(group_keys)
    return build_report(done, failures, group_keys=keys, alpha=alpha, input_problems=input_problems)
