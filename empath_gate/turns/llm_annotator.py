"""The LLM annotator: one call per dialogue to the judge model, asking for the labels of every
turn, parsed fail-closed (an unusable answer is an :class:`AnnotatorFailure`, never a default
label).

* **The call.** :func:`empath_gate.llm.client.complete` with role ``judge`` and the judge's
  settings (model, temperature, default 0.0, seed, retries), so the ledger counts it as a judge
  call, the budget (``max_cost_usd``) applies and the cache serves it again. Its template is
  its own (:mod:`empath_gate.turns.annotate_prompt`): the metric judge's prompt and template
  hash do not change. The cache key covers the template's hash, the label set's version, the
  run index and the ask.
* **Re-asks** as the judge's (:mod:`empath_gate.judging.judge_call`): an unparseable
  (``parse_error``, ``incomplete``) or refused (``content_policy``) answer is asked again up to
  :data:`MAX_REASKS` times with a new seed; a reply cut at ``max_tokens`` is retried once with
  twice the budget, then fails ``truncated``; provider errors and ``context_exceeded`` fail at
  once. Only replies that parse are cached.
* **When.** ``Settings.dynamics_annotator``: ``offline`` (default) uses
  :func:`empath_gate.turns.offline.annotate`, ``judge`` this module, ``off`` neither
  (:func:`annotate_dialogue`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from empath_gate.errors import ConfigError, ProviderError
from empath_gate.judging.judge_call import MAX_REASKS, TRUNCATION_RETRY_FACTOR
from empath_gate.turns.annotate_parse import AnnotationParseError, parse_annotation_reply
from empath_gate.turns.annotate_prompt import (
    ANNOTATE_TEMPLATE_VERSION,
    annotate_template_hash,
    build_annotate_messages,
)
from empath_gate.turns.labelset import label_set
from empath_gate.turns.model import Annotation, AnnotatorFailure, Dialogue, TurnLabels

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.llm.cache import Cache
    from empath_gate.llm.client import Completion
    from empath_gate.settings import Settings

REPLY_TOKENS_PER_TURN = 40
"""Completion tokens one labelled turn takes (an entry of about 25 JSON tokens, with margin);
the token budget and the dry-run estimate use it."""
MIN_MAX_TOKENS = 512
"""The smallest token budget of an annotation call when ``judge_max_tokens`` is unset."""
REASKED: frozenset[str] = frozenset({"parse_error", "incomplete", "content_policy"})
"""Failure reasons that are asked again (as the judge's, plus ``incomplete``)."""


def annotator_version(settings_label_version: str) -> str:
    """The LLM annotator's version: template version, the first 16 hex digits of its hash and
    the label set's version, e.g. ``annotate-v1/0123456789abcdef/labels-1.0.0``."""
    return f"{ANNOTATE_TEMPLATE_VERSION}/{annotate_template_hash()[:16]}/labels-{settings_label_version}"


def annotation_seed(settings: Settings, dialogue: Dialogue, run: int, ask: int = 0) -> int:
    """The seed of ask ``ask`` of the annotation of ``dialogue`` in run ``run``: derived from the
    judge's base seed (``judge_seed``, else ``base_seed``), ``"<conversation_id>#annotate"``, the
    run and the ask (0 <= seed < 2**31), so it differs from the judge's own seed."""
    from empath_gate.conversation.runspec import derive_seed

    base = settings.judge.seed if settings.judge.seed is not None else settings.base_seed
    seed = derive_seed(base, f"{dialogue.conversation_id}#annotate", run)
    return seed if ask == 0 else derive_seed(seed, "reask", ask)


def _usable(dialogue: Dialogue) -> Callable[[Completion], bool]:
    def usable(completion: Completion) -> bool:
        if completion.filtered or completion.truncated or completion.finish_reason == "content_filter":
            return False
        try:
            parse_annotation_reply(completion.content or "", dialogue)
        except AnnotationParseError:
            return False
        return True

    return usable


FailureReason = Literal[
    "parse_error", "truncated", "content_policy", "context_exceeded", "provider_error", "incomplete"
]


def _failure(dialogue: Dialogue, reason: FailureReason, detail: str) -> AnnotatorFailure:
    return AnnotatorFailure(conversation_id=dialogue.conversation_id, annotator="judge",
                            reason=reason, detail=detail)


async def _ask_once(dialogue: Dialogue, settings: Settings, messages: list[dict[str, str]], seed: int,
                    cache: Cache | None, cache_extra: dict[str, object]) -> TurnLabels | AnnotatorFailure:
    from empath_gate.llm.client import complete

    role = settings.judge
    model = role.model or ""
    temperature = role.temperature if role.temperature is not None else 0.0
    budget = role.max_tokens or max(MIN_MAX_TOKENS, REPLY_TOKENS_PER_TURN * len(dialogue.turns))
    for max_tokens in (budget, budget * TRUNCATION_RETRY_FACTOR):
        try:
            completion = await complete(
                "judge", role.model_copy(update={"max_tokens": max_tokens, "temperature": temperature}),
                list(messages), seed=seed, cache=cache, cache_extra=cache_extra, usable=_usable(dialogue),
            )
        except ProviderError as exc:
            reason: FailureReason = "provider_error"
            if exc.kind == "content_policy":
                reason = "content_policy"
            elif exc.kind == "context_exceeded":
                reason = "context_exceeded"
            return _failure(dialogue, reason, f"{model}: {exc.kind}: {exc}")
        if completion.filtered or completion.finish_reason == "content_filter":
            return _failure(dialogue, "content_policy", f"{model}: a content filter blocked the annotation")
        if completion.truncated:
            continue
        try:
            labels = parse_annotation_reply(completion.content or "", dialogue)
        except AnnotationParseError as exc:
            return _failure(dialogue, exc.reason, f"{model}: {exc}")
        return TurnLabels(conversation_id=dialogue.conversation_id, annotator="judge",
                          version=str(cache_extra["annotate_version"]), labels=labels)
    return _failure(dialogue, "truncated", f"{model}: the annotation stopped at max_tokens={budget} and "
                    f"again at {budget * TRUNCATION_RETRY_FACTOR}; raise judge_max_tokens")


async def annotate_with_judge(
    dialogue: Dialogue,
    *,
    settings: Settings,
    cache: Cache | None = None,
    instrument: Instrument | None = None,
    run: int = 0,
) -> Annotation:
    """Label every turn of ``dialogue`` with one call to the judge model (see the module
    docstring). ``instrument``: where the label set comes from (default: the shipped one);
    ``run``: the run index (part of the seed and the cache key). Returns :class:`TurnLabels`
    (``annotator="judge"``) or an :class:`AnnotatorFailure` whose detail ends with the number of
    asks and their seeds when it was asked again. Never raises on provider or parse failures;
    raises ConfigError when no judge model is set, BudgetExceeded when the budget refuses the
    call."""
    if not settings.judge.model:
        raise ConfigError('dynamics_annotator = "judge" needs a judge model (judge_model / '
                          'EMPATH_JUDGE_MODEL), '
                          'or set dynamics_annotator = "offline"')
    labels = label_set(instrument)
    from empath_gate.turns.offline import resolve_locale

    locale, _how = resolve_locale(dialogue)
    messages = build_annotate_messages(dialogue, labels, locale)
    version = annotator_version(labels.label_set_version)
    cache_extra: dict[str, object] = {
        "annotate_template": ANNOTATE_TEMPLATE_VERSION,
        "annotate_template_sha256": annotate_template_hash(),
        "annotate_version": version,
        "label_set": labels.label_set_version,
        "run": run,
    }
    if not dialogue.turns:
        return TurnLabels(conversation_id=dialogue.conversation_id, annotator="judge", version=version,
                          labels=())
    seeds: list[int] = []
    result: TurnLabels | AnnotatorFailure | None = None
    for ask in range(1 + MAX_REASKS):
        seed = annotation_seed(settings, dialogue, run, ask)
        seeds.append(seed)
        result = await _ask_once(dialogue, settings, messages, seed, cache, cache_extra)
        if isinstance(result, TurnLabels) or result.reason not in REASKED:
            break
    assert result is not None
    if isinstance(result, AnnotatorFailure) and len(seeds) > 1:
        result = result.model_copy(update={
            "detail": f"{result.detail} (asked {len(seeds)} times, seeds {', '.join(map(str, seeds))})"})
    return result


async def annotate_dialogue(
    dialogue: Dialogue,
    *,
    settings: Settings,
    cache: Cache | None = None,
    instrument: Instrument | None = None,
    run: int = 0,
) -> Annotation | None:
    """The annotation ``Settings.dynamics_annotator`` asks for: ``offline`` (the lexicon
    annotator), ``judge`` (:func:`annotate_with_judge`) or ``off`` (None)."""
    if settings.dynamics_annotator == "off":
        return None
    if settings.dynamics_annotator == "judge":
        return await annotate_with_judge(dialogue, settings=settings, cache=cache, instrument=instrument,
                                         run=run)
    from empath_gate.turns.offline import annotate

    return annotate(dialogue, instrument)


def annotator_for(
    model: str,
    *,
    settings: Settings | None = None,
    instrument: Instrument | None = None,
) -> Callable[[Dialogue], Annotation]:
    """A synchronous annotator (``Dialogue -> Annotation``, what
    :func:`empath_gate.dynamics.analyse_dynamics` takes) that labels with
    :func:`annotate_with_judge` on ``model``: the judge role's other settings (base URL, key,
    temperature, retries, cache) come from ``settings`` (default: ``pyproject.toml`` and the
    ``EMPATH_*`` environment, :func:`empath_gate.settings.load.load_settings`). Each call runs
    one annotation to completion (run index 0). Raises ConfigError for an empty model or
    invalid settings."""
    import asyncio

    if not model.strip():
        raise ConfigError("--judge needs a model name")
    if settings is None:
        from empath_gate.settings.load import load_settings

        settings = load_settings()
    chosen = settings.model_copy(update={"judge": settings.judge.model_copy(update={"model": model})})
    from empath_gate.judging.batch import judge_cache

    cache = judge_cache(chosen)

    def annotate(dialogue: Dialogue) -> Annotation:
        return asyncio.run(annotate_with_judge(dialogue, settings=chosen, cache=cache, instrument=instrument))

    return annotate


__all__ = [
    "MAX_REASKS",
    "REPLY_TOKENS_PER_TURN",
    "annotate_dialogue",
    "annotate_with_judge",
    "annotation_seed",
    "annotator_for",
    "annotator_version",
]
