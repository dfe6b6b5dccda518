"""Agreement between two annotators on the same dialogues (pure): Cohen's kappa on the primary
label, Pearson and Spearman correlations on the valence.

* Cohen's kappa (Cohen, "A coefficient of agreement for nominal scales", Educational and
  Psychological Measurement 20(1), 1960): ``(p_o - p_e) / (1 - p_e)`` with ``p_o`` the share of
  turns given the same label and ``p_e`` the agreement expected from each annotator's label
  shares. Undefined (``None``) when ``p_e == 1`` (both gave one and the same label throughout).
* Pearson's r and Spearman's rho on the valences, from ``scipy.stats``; ``None`` with fewer than
  three turns or when either side's valences are constant.

Only dialogues both annotators labelled count; a failure on either side is counted in
``skipped_dialogues``, never imputed.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from empath_gate.turns.model import Annotation, Role, TurnLabels

MIN_CORRELATION_TURNS = 3
"""Fewer paired turns than this give no correlation (a correlation of two points is ±1)."""


class Agreement(BaseModel):
    """Agreement of two annotators: ``turns`` paired turns (of ``role``, or both roles when
    ``role`` is None) from ``dialogues`` dialogues; ``skipped_dialogues`` where either side failed
    or the turn counts differ. ``observed`` is the share of same labels (0..1); ``kappa`` in
    -1..1; ``pearson`` / ``spearman`` in -1..1; each ``None`` when undefined (see the module)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role | None = None
    dialogues: int = Field(ge=0)
    skipped_dialogues: int = Field(ge=0)
    turns: int = Field(ge=0)
    observed: float | None = None
    kappa: float | None = None
    pearson: float | None = None
    spearman: float | None = None


def cohen_kappa(a: Sequence[str], b: Sequence[str]) -> float | None:
    """Cohen's kappa of two equally long label sequences; None when empty or when chance
    agreement is 1. Raises ValueError when the lengths differ."""
    if len(a) != len(b):
        raise ValueError(f"cohen_kappa needs sequences of one length ({len(a)} != {len(b)})")
    n = len(a)
    if n == 0:
        return None
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    ca, cb = Counter(a), Counter(b)
    expected = sum(ca[k] * cb[k] for k in ca) / (n * n)
    if math.isclose(expected, 1.0):
        return None
    return (observed - expected) / (1 - expected)


def _correlations(x: Sequence[float], y: Sequence[float]) -> tuple[float | None, float | None]:
    if len(x) < MIN_CORRELATION_TURNS or len(set(x)) < 2 or len(set(y)) < 2:
        return None, None
    from scipy import stats

    pearson = float(stats.pearsonr(x, y).statistic)
    spearman = float(stats.spearmanr(x, y).statistic)
    return (None if math.isnan(pearson) else pearson), (None if math.isnan(spearman) else spearman)


def agreement(pairs: Sequence[tuple[Annotation, Annotation]], role: Role | None = None) -> Agreement:
    """Agreement over ``pairs`` (one ``(first, second)`` annotation per dialogue, e.g. offline
    and judge), on the turns of ``role`` (None: all turns). A pair counts only when both sides
    are :class:`TurnLabels` with the same number of labels."""
    labels_a: list[str] = []
    labels_b: list[str] = []
    val_a: list[float] = []
    val_b: list[float] = []
    used = skipped = 0
    for first, second in pairs:
        if not (isinstance(first, TurnLabels) and isinstance(second, TurnLabels)) or len(first.labels) != len(
            second.labels
        ):
            skipped += 1
            continue
        used += 1
        for x, y in zip(first.labels, second.labels, strict=True):
            if role is not None and x.role != role:
                continue
            labels_a.append(x.label)
            labels_b.append(y.label)
            val_a.append(x.valence)
            val_b.append(y.valence)
    n = len(labels_a)
    pearson, spearman = _correlations(val_a, val_b)
    return Agreement(
        role=role,
        dialogues=used,
        skipped_dialogues=skipped,
        turns=n,
        observed=(sum(x == y for x, y in zip(labels_a, labels_b, strict=True)) / n) if n else None,
        kappa=cohen_kappa(labels_a, labels_b),
        pearson=pearson,
        spearman=spearman,
    )


__all__ = ["MIN_CORRELATION_TURNS", "Agreement", "agreement", "cohen_kappa"]
