"""Which seeds and personas a suite selects: pure functions of the instrument's models.

Used by the loader (a suite must select at least one seed), by the coverage rules (every
persona reachable by some suite) and by :mod:`empath_gate.plan`. Results keep instrument order
(seed file order; personas sorted by id), never set or dict-hash order. Only personas that may
speak a seed are ever assigned to it (:func:`empath_gate.instrument.identity.may_speak`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Literal

from empath_gate.instrument.cues import is_voice_seed
from empath_gate.instrument.identity import may_speak, speaker_fits
from empath_gate.instrument.models import (
    Persona,
    PersonaSelector,
    RiskLevel,
    Seed,
    SeedSelector,
    Speaker,
    Suite,
)

RISK_ORDER: tuple[RiskLevel, ...] = ("none", "low", "moderate", "high", "imminent")
"""Risk levels from least to most severe (C-SSRS-style escalation; see models.RiskLevel).
``unknown`` is outside the order: no level is ruled out, so every ``min_risk`` keeps it."""


def stable_index(key: str, count: int) -> int:
    """``int(sha256(key)) mod count``: the same on every machine, process and PYTHONHASHSEED.

    Raises ValueError when ``count`` < 1. Python's ``hash()`` is never used (it is salted).
    """
    if count < 1:
        raise ValueError("stable_index needs count >= 1")
    return int.from_bytes(hashlib.sha256(key.encode("utf-8")).digest(), "big") % count


UPSTREAM_TAG = "empath-upstream"
"""The tag ``empath-gate import-empath`` gives every seed it imports from the published EMPATH
benchmark (:mod:`empath_gate.instrument.upstream.convert`), and the id of the suite it writes."""

SpecialKind = Literal["voice", "multi-party", "upstream"]
"""A kind of seed that runs only where a suite names it (:func:`special_kinds`)."""


def special_kinds(seed: Seed) -> frozenset[SpecialKind]:
    """The special kinds of ``seed``: ``voice`` (tag ``voice``: its turns carry spoken cues),
    ``multi-party`` (:attr:`Seed.multi_party`), ``upstream`` (tag :data:`UPSTREAM_TAG`: imported,
    not reviewed against suites/REVIEW.md). Empty for an ordinary seed.

    One rule for all three (:func:`seed_matcher`): a special seed is drawn only by a suite that
    names it, by ``ids`` or ``tags``, or by its kind (a ``voice: true`` suite names ``voice``);
    ``all``, ``metrics`` and ``dimensions`` never draw it. Adding one leaves every suite that
    does not name it (and its hash) unchanged.
    """
    kinds: set[SpecialKind] = set()
    if is_voice_seed(seed.tags):
        kinds.add("voice")
    if seed.multi_party:
        kinds.add("multi-party")
    if UPSTREAM_TAG in seed.tags:
        kinds.add("upstream")
    return frozenset(kinds)


def named_kinds(suite: Suite) -> frozenset[SpecialKind]:
    """The special kinds ``suite`` names by its kind: ``voice`` for a ``voice: true`` suite."""
    return frozenset({"voice"}) if suite.voice else frozenset()


def seed_matches(
    selector: SeedSelector, seed: Seed, dimension_of: Mapping[str, str],
    kinds: frozenset[SpecialKind] = frozenset(),
) -> bool:
    """True when ``seed`` is selected by ``selector`` in a suite naming the special ``kinds``.

    Union of ``all``, ``ids``, ``tags`` (any shared tag), ``metrics`` (any shared primary
    metric) and ``dimensions`` (a primary metric of that dimension; ``dimension_of`` maps
    metric id -> dimension id), then restricted by ``locales``, ``covert`` and ``min_risk``.
    A special seed (:func:`special_kinds`: voice, multi-party, imported upstream) is picked by
    ``all``, ``metrics`` and ``dimensions`` only when each of its kinds is in ``kinds``;
    ``ids`` and ``tags`` name it.
    """
    return seed_matcher(selector, dimension_of, kinds)(seed)


def seed_matcher(
    selector: SeedSelector, dimension_of: Mapping[str, str], kinds: frozenset[SpecialKind] = frozenset(),
) -> Callable[[Seed], bool]:
    """:func:`seed_matches` for one ``selector``, its ids, tags and metrics turned into sets once
    (what every loop over all seeds uses: the same answers, without re-reading the selector). A
    seed of ``unknown`` risk passes every ``min_risk``."""
    every = selector.all
    ids, tags = frozenset(selector.ids), frozenset(selector.tags)
    metrics = frozenset(selector.metrics) | {m for m, d in dimension_of.items() if d in selector.dimensions}
    locales = frozenset(selector.locales)
    covert = selector.covert
    lowest = RISK_ORDER.index(selector.min_risk) if selector.min_risk is not None else 0

    def matches(seed: Seed) -> bool:
        named = seed.id in ids or not tags.isdisjoint(seed.tags)
        broad = every or not metrics.isdisjoint(seed.primary_metrics)
        # a special seed runs only where a suite names it (by id, tag or its kind)
        if not (named or (broad and special_kinds(seed) <= kinds)):
            return False
        if locales and seed.locale not in locales:
            return False
        if covert is not None and seed.covert != covert:
            return False
        return not lowest or seed.risk.level == "unknown" or RISK_ORDER.index(seed.risk.level) >= lowest

    return matches


def select_seeds(
    selector: SeedSelector, seeds: Sequence[Seed], dimension_of: Mapping[str, str],
    kinds: frozenset[SpecialKind] = frozenset(),
) -> tuple[Seed, ...]:
    """The seeds ``selector`` picks in a suite naming the special ``kinds``, in ``seeds`` order."""
    return tuple(filter(seed_matcher(selector, dimension_of, kinds), seeds))


def of_suite_kind(suite: Suite, seeds: Sequence[Seed]) -> tuple[Seed, ...]:
    """The seeds a suite may select at all: voice seeds (tag ``voice``, their turns carry cues)
    for a ``voice: true`` suite, every other seed for the others; ``seeds`` order."""
    return tuple(s for s in seeds if is_voice_seed(s.tags) == suite.voice)


def suite_seeds(suite: Suite, seeds: Sequence[Seed], dimension_of: Mapping[str, str]) -> tuple[Seed, ...]:
    """The seeds of ``suite``: ``seeds`` united with every ``also_seeds`` selector, in seed
    order, among the seeds of the suite's kind (:func:`of_suite_kind`); a special seed only
    where the suite names it (:func:`special_kinds`)."""
    kinds = named_kinds(suite)
    matchers = [seed_matcher(sel, dimension_of, kinds) for sel in (suite.seeds, *suite.also_seeds)]
    return tuple(s for s in of_suite_kind(suite, seeds) if any(m(s) for m in matchers))


class PersonasByLocale(dict[str, tuple[Persona, ...]]):
    """Personas grouped by locale (:func:`personas_by_locale`), remembering which of them may
    speak each kind of seed: :func:`~empath_gate.instrument.identity.may_speak` reads only the
    seed's locale, ``character`` and ``speaker``, so seeds that share those share the answer."""

    def __init__(self, groups: Mapping[str, tuple[Persona, ...]]) -> None:
        super().__init__(groups)
        self._fitting: dict[tuple[str, str | None, Speaker], tuple[Persona, ...]] = {}

    def fitting(self, seed: Seed) -> tuple[Persona, ...]:
        """The personas of ``seed``'s locale that may speak it, in group (id) order."""
        key = (seed.locale, seed.character, seed.speaker)
        found = self._fitting.get(key)
        if found is None:
            found = self._fitting[key] = tuple(p for p in self.get(seed.locale, ()) if may_speak(seed, p))
        return found


def personas_by_locale(personas: Iterable[Persona]) -> PersonasByLocale:
    """Personas grouped by locale, each group sorted by id (the order hashing indexes into)."""
    groups: dict[str, list[Persona]] = {}
    for p in personas:
        groups.setdefault(p.locale, []).append(p)
    return PersonasByLocale({loc: tuple(sorted(ps, key=lambda p: p.id))
                             for loc, ps in sorted(groups.items())})


def assign_personas(
    selector: PersonaSelector, seed: Seed, by_locale: Mapping[str, Sequence[Persona]]
) -> tuple[Persona, ...]:
    """The personas that talk through ``seed`` under ``selector``, sorted by id.

    ``by_locale`` comes from :func:`personas_by_locale`. The candidates are the personas of
    the seed's locale that may speak it (its fixed ``character`` only, or every non-reserved
    persona meeting ``seed.speaker``; for ``empath_md5`` reserved ones too, see
    :func:`md5_may_speak`); ``worst_case_only`` keeps those with at least one worst-case
    behaviour; ``cooperative_pairing`` adds :func:`cooperative_partner` to a seed that got at
    least one worst-case persona.

    * ``hash``: one persona, ``candidates[stable_index(seed.id, len(candidates))]`` over the
      candidates sorted by id, leaving out personas with ``hashed: false`` (EMPATH assigns one
      persona per seed by a stable hash of its id; the same seed and persona files always give
      the same persona, and adding an unhashed persona moves no hashed conversation).
    * ``all``: every candidate.
    * ``list``: the candidates whose id is in ``selector.ids``.
    * ``empath_md5``: one persona by :func:`empath_md5_index` over the candidates listed in
      ``selector.ids``, in that order (upstream's file order).

    Returns ``()`` when no persona fits (the loader reports a seed no persona may speak, and a
    suite left without conversations).
    """
    if selector.mode == "empath_md5":
        fitting: Sequence[Persona] = [p for p in by_locale.get(seed.locale, ()) if md5_may_speak(seed, p)]
    elif isinstance(by_locale, PersonasByLocale):
        fitting = by_locale.fitting(seed)
    else:
        fitting = [p for p in by_locale.get(seed.locale, ()) if may_speak(seed, p)]
    candidates = [p for p in fitting if p.worst_case] if selector.worst_case_only else fitting
    if selector.mode == "hash":
        candidates = [p for p in candidates if p.hashed]
    chosen = pick_personas(selector, seed, candidates)
    if not (selector.cooperative_pairing and chosen):
        return chosen
    partner = cooperative_partner(seed, by_locale)
    if partner is None:
        return chosen
    return tuple(sorted((*chosen, partner), key=lambda p: p.id))


def cooperative_partner(seed: Seed, by_locale: Mapping[str, Sequence[Persona]]) -> Persona | None:
    """The cooperative persona a paired suite runs ``seed`` with: among the personas that may
    speak it and have no worst-case behaviour (every level <= 1), the one at
    :func:`stable_index` of the seed id over them sorted by id; ``None`` when there is none."""
    coop = [p for p in by_locale.get(seed.locale, ()) if may_speak(seed, p) and not p.worst_case]
    return coop[stable_index(seed.id, len(coop))] if coop else None


def md5_may_speak(seed: Seed, persona: Persona) -> bool:
    """:func:`~empath_gate.instrument.identity.may_speak` for mode ``empath_md5``, whose suite
    names its personas by id: a ``reserved`` persona is a candidate too (an imported pool is
    reserved so that the shipped suites' ``hash`` assignment never draws from it)."""
    if persona.locale != seed.locale:
        return False
    if seed.character is not None:
        return persona.id == seed.character
    return speaker_fits(seed.speaker, persona)


def pick_personas(
    selector: PersonaSelector, seed: Seed, candidates: Sequence[Persona]
) -> tuple[Persona, ...]:
    """``selector``'s choice among ``candidates`` (sorted by id, already filtered): one by
    :func:`stable_index` of the seed id (``hash``), all of them (``all``), those listed
    (``list``), or one by :func:`empath_md5_index` over the listed ones in list order
    (``empath_md5``); ``()`` when there is no candidate."""
    if not candidates:
        return ()
    if selector.mode == "hash":
        return (candidates[stable_index(seed.id, len(candidates))],)
    if selector.mode == "all":
        return tuple(candidates)
    if selector.mode == "empath_md5":
        fit = {p.id: p for p in candidates}
        ordered = [fit[i] for i in dict.fromkeys(selector.ids) if i in fit]
        if not ordered:
            return ()
        return (ordered[empath_md5_index(seed.id, selector.seed_value, len(ordered))],)
    return tuple(p for p in candidates if p.id in selector.ids)


def empath_md5_index(seed_id: str, seed_value: int, count: int) -> int:
    """``int(md5(f"{seed_id}:{seed_value}").hexdigest(), 16) % count``: the published EMPATH
    benchmark's persona assignment (its ``_assign_persona``; ``seed_value`` 42 by default), so
    an imported suite talks through the same seed x persona pairs as upstream. md5 serves as a
    stable spread here, not as security. Raises ValueError when ``count`` < 1."""
    if count < 1:
        raise ValueError("empath_md5_index needs count >= 1")
    digest = hashlib.md5(f"{seed_id}:{seed_value}".encode(), usedforsecurity=False).hexdigest()
    return int(digest, 16) % count
