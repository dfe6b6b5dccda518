"""Plain-text figures every report prints: numbers, shares, changes, cost and the judge's
calibration status (pure)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from empath_gate.results import CostInfo

CRITERIA_ONLY_NOTE = "a judge model is needed for scores"
"""The plain sentence every report puts beside criteria-only (offline) metrics."""


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        if isinstance(value, Mapping):
            for key in ("value", "estimate", "point"):
                if key in value:
                    return _num(value[key])
        return None
    f = float(value)
    return None if math.isnan(f) or math.isinf(f) else f


_CAL_FIGURES: tuple[tuple[tuple[str, ...], str, bool], ...] = (
    (("within_1", "within_one", "within_pm1", "agreement_within_1"), "within ±1", True),
    (("exact", "exact_agreement"), "exact", True),
    (("mae", "mean_absolute_error"), "MAE", False),
    (("mean_abs_diff", "mean_absolute_difference"), "mean |Δ|", False),
    (("bias", "mean_bias"), "bias", False),
    (("spearman", "spearman_rho"), "Spearman", False),
    (("pearson", "pearson_r"), "Pearson", False),
    (("kappa", "weighted_kappa", "quadratic_kappa"), "weighted κ", False),
    (("alpha", "krippendorff_alpha"), "Krippendorff α", False),
)


def calibration_text(calibration: Mapping[str, Any] | None) -> str:
    """The judge's calibration status as one plain-text sentence: "not calibrated" when
    ``None`` or marked uncalibrated (``calibrated: false`` or a ``status`` other than
    ``calibrated``, e.g. "stale: calibrated for <model>", shown with its ``note``); else
    against what, when, and the agreement figures found (within ±1, exact, MAE, mean absolute
    difference, bias with its ``bias_ci_low``/``bias_ci_high`` interval, Spearman, Pearson,
    weighted κ, Krippendorff α, n), in that order. Figures may sit under ``figures``,
    ``pooled`` or ``agreement`` (the shape of :mod:`empath_gate.calibration.status`); unknown
    keys are ignored."""
    if not calibration:
        return "judge not calibrated (no gold labels or agreement run recorded)"
    cal: Mapping[str, Any] = calibration
    status = cal.get("status")
    if cal.get("calibrated") is False or (isinstance(status, str) and status != "calibrated"):
        bits = [
            x
            for x in (
                status if status not in ("uncalibrated", "not_calibrated") else None,
                cal.get("reason") or cal.get("note"),
            )
            if isinstance(x, str) and x
        ]
        return "judge not calibrated" + (f" ({'; '.join(bits)})" if bits else "")
    against = next(
        (cal[k] for k in ("against", "gold", "reference", "source") if isinstance(cal.get(k), str)), None
    )
    when = next(
        (cal[k] for k in ("date", "when", "at", "calibrated_at") if isinstance(cal.get(k), str)), None
    )
    figures_src: Mapping[str, Any] = cal
    for k in ("pooled", "figures", "agreement"):
        if isinstance(cal.get(k), Mapping):
            figures_src = {**cal[k], **{kk: vv for kk, vv in cal.items() if kk not in (k,)}}
            break
    figures: list[str] = []
    for aliases, label, pct in _CAL_FIGURES:
        for a in aliases:
            v = _num(figures_src.get(a))
            if v is not None:
                text_v = fmt_pct(v) if pct else f"{v:+.2f}" if label == "bias" else f"{v:.2f}"
                lo, hi = _num(figures_src.get(f"{a}_ci_low")), _num(figures_src.get(f"{a}_ci_high"))
                if lo is not None and hi is not None:
                    text_v += (
                        f" (95% CI {lo:+.2f} to {hi:+.2f})" if label == "bias" else f" ({lo:.2f}–{hi:.2f})"
                    )
                figures.append(f"{label} {text_v}")
                break
    n = _num(figures_src.get("n") if "n" in figures_src else figures_src.get("n_pairs"))
    if n is not None:
        figures.append(f"n = {int(n)}")
    text = "judge calibrated"
    if against:
        text += f" against {against}"
    if when:
        text += f" on {when}"
    if figures:
        text += ": " + ", ".join(figures)
    inflated = cal.get("inflated_vs_gold") or cal.get("inflated")
    if isinstance(inflated, (list, tuple)) and inflated:
        text += f"; inflated vs gold on {', '.join(str(x) for x in inflated)}"
    return text


def cost_text(cost: CostInfo) -> str:
    """``$1.23 (156 calls)``, or ``≥ $1.23, 4 of 156 calls unpriced`` when some calls had no
    known price (the true cost is then higher), plus the budget when one was set."""
    amount = f"${cost.known_usd:,.2f}"
    if cost.unpriced_calls:
        text = f"≥ {amount}, {cost.unpriced_calls} of {cost.calls} calls unpriced"
    else:
        text = f"{amount} ({cost.calls} calls)"
    if cost.budget_usd is not None:
        text += f"; budget ${cost.budget_usd:,.2f}" + (
            " (exhausted: the run stopped early)" if cost.budget_exhausted else ""
        )
    return text


def plural(n: int, noun: str, many: str | None = None) -> str:
    """``1 metric`` / ``2 metrics`` / ``0 metrics``: ``n`` and ``noun``, in the plural (``many``,
    default ``noun + "s"``) unless ``n`` is 1."""
    return f"{n} {noun if n == 1 else (many or noun + 's')}"


def fmt_num(x: float | None, digits: int = 2) -> str:
    """A number for a table: ``—`` for None, else rounded with trailing zeros kept short."""
    if x is None:
        return "—"
    s = f"{x:.{digits}f}"
    if "." in s:
        s = s.rstrip("0").rstrip(".")
    return "0" if s in ("-0", "") else s


def fmt_pct(x: float | None) -> str:
    """A share (0-1) as a whole percentage for a table: ``42%``; ``—`` for None."""
    return "—" if x is None else f"{x * 100:.0f}%"


def fmt_delta(x: float | None) -> str:
    """A signed change with an arrow: ``▼ -2.42``, ``▲ +0.5``, ``= 0``; ``—`` for None."""
    if x is None:
        return "—"
    if abs(x) < 0.005:
        return "= 0"
    arrow = "▲" if x > 0 else "▼"
    return f"{arrow} {x:+.2f}"


def user_turn(index: int) -> int:
    """The 1-based turn a transcript message belongs to, counted as seeds count turns
    (``confirm_turn``): message ``2k - 2`` (0-based ``index`` in the transcript file and in
    the judge's citations) is the person's k-th message and ``2k - 1`` the chatbot's reply to
    it, since a transcript starts with the person and the two alternate
    (:mod:`empath_gate.conversation.transcript`). Raises ValueError for a negative index."""
    if index < 0:
        raise ValueError(f"a transcript message index is >= 0, got {index}")
    return index // 2 + 1


def turn_label(index: int, *, word: bool = True) -> str:
    """A message index as people read it: ``turn 2 (reply)`` for the chatbot's reply in
    turn 2, ``turn 3 (user)`` for the person's message that opens turn 3 (``2 (reply)``
    without ``word``)."""
    who = "user" if index % 2 == 0 else "reply"
    text = f"{user_turn(index)} ({who})"
    return f"turn {text}" if word else text


def turns_text(indices: Sequence[int], limit: int = 5) -> str:
    """Several message indices as one phrase: ``turn 2 (reply)``, ``turns 2 (reply), 3
    (user)``; at most ``limit`` of them, duplicates removed; ``""`` for none."""
    labels = list(dict.fromkeys(turn_label(i, word=False) for i in indices))[:limit]
    if not labels:
        return ""
    return ("turn " if len(labels) == 1 else "turns ") + ", ".join(labels)


def reply_index(turn: int) -> int:
    """The 0-based transcript index of the chatbot's reply in 1-based ``turn`` (``2 * turn - 1``,
    the inverse of :func:`user_turn` for replies): where a failed deterministic check's
    ``check_turns`` point. Raises ValueError for a turn below 1."""
    if turn < 1:
        raise ValueError(f"a turn is >= 1, got {turn}")
    return 2 * turn - 1
