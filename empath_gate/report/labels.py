"""Display labels of metrics and dimensions: one source for every report.

The run's own ``diff.md`` and ``report.html``, ``empath-gate diff``, ``report`` and ``comment``
and the job summary all show a metric as its instrument label beside its id
("Crisis detection (`crisis_detection`)"). A renderer given no labels uses the shipped
instrument's (:func:`instrument_labels`), so the same results file reads the same wherever
it is rendered. Metrics a team layer adds have no shipped label and are shown by id. The
display labels of non-verbal cues come from the same instrument (:func:`instrument_cues`).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import TYPE_CHECKING

from empath_gate.errors import EmpathGateError

if TYPE_CHECKING:
    from empath_gate.instrument.cues import Cue
    from empath_gate.instrument.models import Instrument


@functools.lru_cache(maxsize=1)
def _shipped() -> Instrument | None:
    from empath_gate.instrument.loader import load_instrument

    try:
        return load_instrument()
    except (EmpathGateError, OSError, ValueError):  # a report never fails for want of labels
        return None


@functools.lru_cache(maxsize=1)
def _shipped_labels() -> tuple[tuple[str, str], ...] | None:
    inst = _shipped()
    if inst is None:
        return None
    pairs = [(m.id, m.label) for m in inst.metrics]
    pairs += [(d.id, d.label) for d in (*inst.dimensions, *inst.families)]
    return tuple(pairs)


def instrument_labels() -> dict[str, str] | None:
    """Metric, dimension and metric family id -> display label, from the shipped instrument (read once per
    process); ``None`` when it cannot be loaded (ids are then shown)."""
    pairs = _shipped_labels()
    return dict(pairs) if pairs is not None else None


def resolve_labels(labels: Mapping[str, str] | None) -> Mapping[str, str] | None:
    """``labels`` when given (an empty mapping shows ids only), else :func:`instrument_labels`."""
    return instrument_labels() if labels is None else labels


def instrument_cues() -> tuple[Cue, ...]:
    """The shipped instrument's declared cues (their display labels per locale), read once per
    process; ``()`` when it cannot be loaded (cue tokens are then shown as text)."""
    inst = _shipped()
    return inst.cues if inst is not None else ()


def behaviour_labels() -> dict[str, str]:
    """Behaviour control id -> its en-US display label from the shipped instrument's
    ``behaviours.yaml``; ``{}`` when it cannot be loaded or has none (ids are then shown)."""
    inst = _shipped()
    if inst is None or inst.behaviours is None:
        return {}
    return {b.id: b.label("en-US") for b in inst.behaviours.behaviours}
