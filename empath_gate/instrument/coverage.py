"""Coverage rules of the instrument: enough seeds per metric, both locales, balance, reach.

Pure functions of a loaded :class:`Instrument`, returning problem lines (empty = rule holds).
``empath-gate validate`` reports them as errors for the shipped instrument and as notes when
team layers are added (a team's seeds may legitimately tilt the balance).

Defaults (source: the project's issues): at least 5 seeds per metric (the full seed bank),
both locales present, at least 40% of seeds in each locale, every persona
reachable by some suite, every dimension holding a metric, and every seed of a paired suite
(``cooperative_pairing``) playing each behaviour at level >= 2 in some profile beside its
cooperative pairing (:func:`empath_gate.instrument.pairing.pairing_problems`; source: the
project's issues, after "When Seekers Are Hard to Help", arXiv 2605.28228, abstract only).
:func:`unspoken_seeds` lists the
seeds a suite selects but cannot give a persona (its persona selector leaves none that fits
the seed's ``speaker``); ``validate`` prints them as notes.
"""

from __future__ import annotations

from empath_gate.instrument.models import LOCALES, Instrument
from empath_gate.instrument.pairing import pairing_problems
from empath_gate.instrument.selection import assign_personas, personas_by_locale, suite_seeds

MIN_SEEDS_PER_METRIC = 5
MIN_LOCALE_SHARE = 0.4


def seeds_by_metric(instrument: Instrument) -> dict[str, int]:
    """EMPATH metric id -> number of seeds listing it as a primary metric (instrument metric
    order; family metrics are judged where a suite names the family, not by seed)."""
    counts = {m.id: 0 for m in instrument.empath_metrics}
    for s in instrument.seeds:
        for mid in s.primary_metrics:
            if mid in counts:
                counts[mid] += 1
    return counts


def seeds_by_locale(instrument: Instrument) -> dict[str, int]:
    """Locale -> number of seeds, for every supported locale (``LOCALES`` order)."""
    return {loc: sum(1 for s in instrument.seeds if s.locale == loc) for loc in LOCALES}


def multi_party_seeds_by_locale(instrument: Instrument) -> dict[str, int]:
    """Locale -> number of multi-party seeds (two or more ``participants``), every supported locale."""
    return {loc: sum(1 for s in instrument.seeds if s.locale == loc and s.multi_party) for loc in LOCALES}


def personas_by_locale_count(instrument: Instrument) -> dict[str, int]:
    """Locale -> number of personas, for every supported locale."""
    return {loc: sum(1 for p in instrument.personas if p.locale == loc) for loc in LOCALES}


def reachable_personas(instrument: Instrument) -> set[str]:
    """Ids of personas some suite assigns to some seed."""
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    by_locale = personas_by_locale(instrument.personas)
    reached: set[str] = set()
    every = {p.id for p in instrument.personas}
    for suite in instrument.suites:
        for seed in suite_seeds(suite, instrument.seeds, dimension_of):
            reached.update(p.id for p in assign_personas(suite.personas, seed, by_locale))
            if reached == every:
                return reached  # nothing more to find (a large layer's seeds need not be walked)
    return reached


def unspoken_seeds(instrument: Instrument) -> dict[str, tuple[str, ...]]:
    """Suite id -> ids of the seeds it selects that get no persona (seed order); suites where
    every selected seed is spoken are left out. A seed is unspoken when the suite's persona
    selector (``worst_case_only``, a ``list``) keeps no persona that may speak it."""
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    by_locale = personas_by_locale(instrument.personas)
    out: dict[str, tuple[str, ...]] = {}
    for suite in instrument.suites:
        missing = tuple(s.id for s in suite_seeds(suite, instrument.seeds, dimension_of)
                        if not assign_personas(suite.personas, s, by_locale))
        if missing:
            out[suite.id] = missing
    return out


def metric_problems(instrument: Instrument, min_seeds: int = MIN_SEEDS_PER_METRIC) -> list[str]:
    """Metrics with fewer than ``min_seeds`` seeds, and dimensions without a metric."""
    out = [
        f"metric {mid!r} is the primary metric of {n} seed(s); the instrument needs at least {min_seeds} "
        "— write more seeds for it"
        for mid, n in seeds_by_metric(instrument).items() if n < min_seeds
    ]
    used = {m.dimension for m in instrument.empath_metrics}
    out += [f"dimension {d.id!r} has no metric — add its metrics file" for d in instrument.dimensions
            if d.id not in used]
    return out


def locale_problems(instrument: Instrument, min_share: float = MIN_LOCALE_SHARE) -> list[str]:
    """Each supported locale must hold seeds and personas, and at least ``min_share`` of the seeds."""
    out: list[str] = []
    total = len(instrument.seeds)
    per_persona = personas_by_locale_count(instrument)
    for loc, n in seeds_by_locale(instrument).items():
        if n == 0:
            out.append(f"locale {loc} has no seed — write seeds in {loc}")
        elif total and n / total < min_share:
            out.append(f"locale {loc} has {n} of {total} seeds ({n / total:.0%}); at least {min_share:.0%} "
                       f"are required — write more {loc} seeds")
        if per_persona[loc] == 0:
            out.append(f"locale {loc} has no persona — write personas/{loc}.yaml")
    return out


def persona_problems(instrument: Instrument) -> list[str]:
    """Personas no suite reaches (they would never be tested)."""
    reached = reachable_personas(instrument)
    return [
        f"persona {p.id!r} ({p.locale}) is not reached by any suite — add it to a suite "
        "(personas: {mode: all} or a list) or remove it"
        for p in instrument.personas if p.id not in reached
    ]


def coverage_problems(
    instrument: Instrument,
    *,
    min_seeds_per_metric: int = MIN_SEEDS_PER_METRIC,
    min_locale_share: float = MIN_LOCALE_SHARE,
) -> list[str]:
    """Every coverage rule's problems, in a fixed order (metrics, locales, personas, the
    behaviour coverage of paired suites)."""
    return (
        metric_problems(instrument, min_seeds_per_metric)
        + locale_problems(instrument, min_locale_share)
        + persona_problems(instrument)
        + pairing_problems(instrument)
    )
