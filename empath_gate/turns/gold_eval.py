"""Run an annotator over the gold (:mod:`empath_gate.turns.gold`) and score it
(:mod:`empath_gate.turns.quality`): what ``bench/bench_annotator.py`` prints.

The annotator sees each seed script as one dialogue of user turns (in order) and each gold bot
reply as a two-turn dialogue (the user message, then the reply), so it labels every turn with
its context. It runs once over the whole gold; the halves are scored from those labels. A
dialogue it fails on (:class:`~empath_gate.turns.model.AnnotatorFailure`) leaves its turns
without a prediction: counted by reason and scored as misses, never given a label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Sequence

from empath_gate.analysis.base import AnalysisModel
from empath_gate.turns.gold import (
    USER_ONLY_SPLITS,
    GoldBotReply,
    GoldSet,
    GoldUserTurn,
    Split,
    bot_dialogue,
    user_dialogues,
)
from empath_gate.turns.model import (
    BOT_LABELS,
    STRATEGIES,
    USER_LABELS,
    Annotation,
    AnnotatorFailure,
    Dialogue,
    TurnLabel,
)
from empath_gate.turns.quality import (
    Agreement,
    FloorCheck,
    SideScores,
    agreement,
    floor_checks,
    labels_for,
    majority_label,
    side_scores,
    spearman_interval,
)

Annotate = Callable[[Dialogue], Annotation]
"""An annotator: one dialogue in, its labels or a failure out."""

LOCALES = ("es-MX", "en-US")


class Predictions(AnalysisModel):
    """One annotator's output on the gold: ``labels`` the predicted label of each gold item id
    (``None`` when its dialogue failed or the turn was left out); ``failures`` the number of
    failed dialogues per reason; ``dialogues`` how many were annotated; ``version`` the
    annotator's version as it reported it (``None`` when every dialogue failed)."""

    labels: dict[str, TurnLabel | None]
    failures: dict[str, int]
    dialogues: int
    version: str | None


def annotate_gold(gold: GoldSet, annotate: Annotate, splits: Collection[Split] | None = None) -> Predictions:
    """Run ``annotate`` on the dialogues of ``gold`` (seed scripts, then bot replies) of
    ``splits`` (``None``: every set: both halves and the other held-out sets), so a run on the
    tune half never labels a held-out turn. An exception of the annotator is not caught: it is
    a bug, not an annotation failure."""
    labels: dict[str, TurnLabel | None] = {}
    failures: Counter[str] = Counter()
    version: str | None = None
    users = [t for t in gold.all_user_turns() if splits is None or t.split in splits]
    jobs: list[tuple[Dialogue, Sequence[int], Sequence[str]]] = [
        (dialogue, range(len(items)), [t.id for t in items]) for dialogue, items in user_dialogues(users)]
    jobs += [(bot_dialogue(reply), (1,), (reply.id,)) for reply in gold.bot
             if splits is None or reply.split in splits]
    for dialogue, turns, ids in jobs:
        annotation = annotate(dialogue)
        if isinstance(annotation, AnnotatorFailure):
            failures[annotation.reason] += 1
        else:
            version = version or annotation.version
        labels.update(zip(ids, labels_for(annotation, list(turns)), strict=True))
    return Predictions(labels=labels, failures=dict(failures), dialogues=len(jobs), version=version)


Labels = dict[str, TurnLabel | None]


def _user_side(items: Sequence[GoldUserTurn], labels: Labels, majority: str) -> SideScores:
    return side_scores([t.label for t in items], [t.valence for t in items], [t.intensity for t in items],
                       [labels[t.id] for t in items], USER_LABELS, majority)


def _bot_side(items: Sequence[GoldBotReply], labels: Labels, majority: str) -> SideScores:
    return side_scores([r.label for r in items], [r.valence for r in items], [r.intensity for r in items],
                       [labels[r.id] for r in items], BOT_LABELS, majority,
                       gold_strategies=[r.strategy for r in items], strategies=STRATEGIES)


class HalfScores(AnalysisModel):
    """The scores of one half (``split``: ``tune``, ``held-out``, a user-only held-out set
    (``heldout2`` or a written one) or ``all``): ``user`` and ``bot`` pooled over locales (``bot``
    ``None`` for a set without bot replies, the user-only ones), the same ``by_locale``;
    ``user_agreement``/``bot_agreement`` with a second annotator when one ran; ``floors`` the
    issue's floors on each side scored (``user ...`` / ``bot ...``); ``user_valence_interval``
    the 95% interval of the pooled user valence Spearman, resampling whole seed scripts
    (:func:`~empath_gate.turns.quality.spearman_interval`; ``None`` when undefined)."""

    split: str
    user: SideScores
    bot: SideScores | None
    by_locale: dict[str, tuple[SideScores, SideScores | None]]
    user_agreement: Agreement | None = None
    bot_agreement: Agreement | None = None
    floors: tuple[FloorCheck, ...]
    user_valence_interval: tuple[float, float] | None = None


def score_half(gold: GoldSet, predictions: Predictions, split: Split | None,
               second: Predictions | None = None) -> HalfScores:
    """Score ``predictions`` on the ``split`` half of ``gold`` (``None``: both halves; one of
    :data:`~empath_gate.turns.gold.USER_ONLY_SPLITS`: a held-out set of user turns only, so ``bot`` is
    ``None`` and only the user floors are checked). The majority baseline is the tune half's
    most frequent label, pooled for the pooled scores and per locale for each locale's.
    ValueError when the half
    lacks user turns, or bot replies (except the user-only held-out sets)."""
    users, bots = gold.user_in(split), gold.bot_in(split)
    if not users or (not bots and split not in USER_ONLY_SPLITS):
        raise ValueError(f"the {split or 'whole'} gold has no user turns or no bot replies")
    labels = predictions.labels

    def tune_majority(locale: str | None) -> tuple[str, str]:
        u = [t.label for t in gold.user_in("tune") if locale in (None, t.locale)]
        b = [r.label for r in gold.bot_in("tune") if locale in (None, r.locale)]
        return majority_label(u, USER_LABELS), majority_label(b, BOT_LABELS)

    mu, mb = tune_majority(None)
    user = _user_side(users, labels, mu)
    bot = _bot_side(bots, labels, mb) if bots else None
    by_locale: dict[str, tuple[SideScores, SideScores | None]] = {}
    for locale in LOCALES:
        lu = [t for t in users if t.locale == locale]
        lb = [r for r in bots if r.locale == locale]
        if lu and (lb or not bots):
            mlu, mlb = tune_majority(locale)
            by_locale[locale] = (_user_side(lu, labels, mlu), _bot_side(lb, labels, mlb) if lb else None)
    sides = (("user", user), ("bot", bot))
    floors = tuple(check.model_copy(update={"name": f"{side} {check.name}"})
                   for side, scores in sides if scores is not None for check in floor_checks(scores))
    ua = ba = None
    if second is not None:
        ua = agreement([labels[t.id] for t in users], [second.labels[t.id] for t in users])
        if bots:
            ba = agreement([labels[r.id] for r in bots], [second.labels[r.id] for r in bots])
    interval = spearman_interval([t.valence for t in users],
                                 [lab.valence if (lab := labels[t.id]) is not None else None for t in users],
                                 [t.seed for t in users])
    return HalfScores(split=split or "all", user=user, bot=bot, by_locale=by_locale,
                      user_agreement=ua, bot_agreement=ba, floors=floors, user_valence_interval=interval)


# ----------------------------------------------------------------------------- text


def _num(value: float | None, sign: bool = False) -> str:
    if value is None:
        return "n/a"
    return f"{value:+.3f}" if sign else f"{value:.3f}"


def _table(scores: SideScores, strategies: bool = False) -> list[str]:
    figures = scores.strategies if strategies and scores.strategies is not None else scores.labels
    head = "strategy" if strategies else "label"
    out = [f"    {head:<26} {'support':>7} {'pred':>5} {'prec':>6} {'recall':>6} {'F1':>6}"]
    for s in figures.labels:
        out.append(f"    {s.label:<26} {s.support:>7} {s.predicted:>5} {_num(s.precision):>6} "
                   f"{_num(s.recall):>6} {s.f1:>6.3f}")
    return out


def _side(name: str, scores: SideScores) -> list[str]:
    lab = scores.labels
    out = [f"  {name}: {lab.n} items, {lab.failures} without a prediction "
           "(annotator failure, scored as a miss)"]
    out += _table(scores)
    out.append(f"    macro-F1 {_num(lab.macro_f1)} | majority baseline ({scores.majority}, most frequent "
               f"in the tune half) {_num(scores.baseline.macro_f1)} | "
               f"margin {_num(scores.margin, sign=True)}")
    v = scores.valence
    out.append(f"    valence Spearman {_num(v.spearman)}, Pearson {_num(v.pearson)} (n={v.n}, "
               f"{v.excluded} excluded) | intensity mean abs error {_num(scores.intensity_mae)}")
    if scores.strategies is not None:
        st = scores.strategies
        out.append(f"    strategies: accuracy {_num(st.accuracy)}, macro-F1 {_num(st.macro_f1)}, "
                   f"{st.failures} without a strategy")
        out += _table(scores, strategies=True)
    return out


def _agreement(name: str, a: Agreement | None) -> list[str]:
    if a is None:
        return []
    return [f"  {name} agreement with the second annotator: Cohen's kappa {_num(a.kappa.kappa)} "
            f"(observed {_num(a.kappa.observed)}, chance {_num(a.kappa.expected)}, n={a.kappa.n}, "
            f"{a.kappa.excluded} excluded); valence Pearson {_num(a.valence.pearson)}, "
            f"Spearman {_num(a.valence.spearman)} (n={a.valence.n})"]


def render_half(half: HalfScores, title: str) -> str:
    """The text block of one half: ``title``, each side's tables and figures, the per-locale
    summary, the agreement when a second annotator ran, and each floor with met / not met."""
    lines = [f"== {title} ==", *_side("user turns", half.user)]
    lines += _side("bot replies", half.bot) if half.bot is not None else ["  bot replies: none in this set"]
    for locale, (u, b) in half.by_locale.items():
        bot = "" if b is None else (
            f" | bot macro-F1 {_num(b.labels.macro_f1)} (margin {_num(b.margin, sign=True)}), valence "
            f"Spearman {_num(b.valence.spearman)}, strategy macro-F1 "
            f"{_num(b.strategies.macro_f1 if b.strategies else None)}")
        lines.append(f"  {locale}: user macro-F1 {_num(u.labels.macro_f1)} (baseline "
                     f"{_num(u.baseline.macro_f1)}, margin {_num(u.margin, sign=True)}), valence Spearman "
                     f"{_num(u.valence.spearman)}{bot}")
    lines += _agreement("user", half.user_agreement) + _agreement("bot", half.bot_agreement)
    if half.user_valence_interval is not None:
        low, high = half.user_valence_interval
        lines.append(f"  user valence Spearman {_num(half.user.valence.spearman)}, 95% interval "
                     f"{_num(low)} to {_num(high)} (bootstrap over whole scripts)")
    lines.append(f"  floors ({half.split}):")
    for f in half.floors:
        sign = "margin" in f.name
        lines.append(f"    {f.name} >= {f.floor:.2f}: {_num(f.value, sign=sign)}  "
                     f"{'met' if f.met else 'not met'}")
    return "\n".join(lines)


__all__ = ["LOCALES", "Annotate", "HalfScores", "Predictions", "annotate_gold", "render_half", "score_half"]
