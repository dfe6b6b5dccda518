"""Conversation ids before speaker constraints, so an older baseline still pairs.

Up to instrument 1.1.0 a suite's ``hash`` mode gave each seed ``candidates[stable_index(seed.id,
n)]`` over *every* persona of the seed's locale (restricted by ``worst_case_only`` and
``list``), whoever the seed's script was written for. From 1.2.0 only personas that may speak
the seed are candidates (:func:`empath_gate.instrument.identity.may_speak`), so a seed's
hashed persona, and with it the conversation id ``<seed>-<persona>``, can change.

:func:`conversation_aliases` recomputes the 1.1.0 assignment from the same files (reserved
personas, the fixed characters added in 1.2.0, and the unhashed personas added in 1.6.0 did
not exist then and are left out) and maps
each old id to the id that now holds the same place: the seed's one conversation in ``hash``
mode. In ``all`` and ``list`` modes a persona keeps its id for as long as it may speak the
seed, and one that no longer may has no counterpart, so those suites add no alias.

The regression pairing applies the map to the baseline side only: a baseline conversation id
found in it is read as its new id, and an id that is not is kept (an id of the current
instrument is never a key). Pure; the same files always give the same map.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from empath_gate.instrument.models import Instrument, Persona, PersonaSelector, Seed
from empath_gate.instrument.selection import assign_personas, personas_by_locale, pick_personas, suite_seeds


def legacy_personas(
    selector: PersonaSelector, seed: Seed, by_locale: Mapping[str, Sequence[Persona]]
) -> tuple[Persona, ...]:
    """The personas the 1.1.0 rule assigned to ``seed``: every non-reserved persona of its
    locale is a candidate (no ``speaker`` or ``character``), then ``worst_case_only`` and the
    selector's mode as in :func:`~empath_gate.instrument.selection.assign_personas`."""
    candidates = [
        p for p in by_locale.get(seed.locale, ())
        if not p.reserved and p.hashed and (not selector.worst_case_only or p.worst_case)
    ]
    return pick_personas(selector, seed, candidates)


def suite_aliases(instrument: Instrument, suite_id: str) -> dict[str, str]:
    """Old conversation id -> new id for the suite ``suite_id`` (``hash`` mode only; ``{}`` for
    ``all`` and ``list``). Raises KeyError for an unknown suite."""
    suite = instrument.suite(suite_id)
    if suite.personas.mode != "hash":
        return {}
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    by_locale = personas_by_locale(instrument.personas)
    out: dict[str, str] = {}
    for seed in suite_seeds(suite, instrument.seeds, dimension_of):
        old = legacy_personas(suite.personas, seed, by_locale)
        new = assign_personas(suite.personas, seed, by_locale)
        if old and new and old[0].id != new[0].id:
            out[f"{seed.id}-{old[0].id}"] = f"{seed.id}-{new[0].id}"
    return out


def conversation_aliases(instrument: Instrument, suite_id: str | None = None) -> dict[str, str]:
    """Old (instrument 1.1.0) conversation id -> current id, for one suite or, with
    ``suite_id=None``, for every suite at once.

    The union drops an old id that is a current conversation id of any suite (it still exists
    in an ``all``-mode suite and pairs as itself) and an old id mapped to two different new
    ids. Keys are never current ids of the suite they were computed for. Raises KeyError for
    an unknown ``suite_id``.
    """
    if suite_id is not None:
        return suite_aliases(instrument, suite_id)
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    by_locale = personas_by_locale(instrument.personas)
    current = {
        f"{seed.id}-{p.id}"
        for suite in instrument.suites
        for seed in suite_seeds(suite, instrument.seeds, dimension_of)
        for p in assign_personas(suite.personas, seed, by_locale)
    }
    merged: dict[str, str] = {}
    conflicting: set[str] = set()
    for suite in instrument.suites:
        for old, new in suite_aliases(instrument, suite.id).items():
            if merged.get(old, new) != new:
                conflicting.add(old)
            merged[old] = new
    return {old: new for old, new in merged.items() if old not in current and old not in conflicting}
