"""Behaviour coverage of a paired suite (``cooperative_pairing``): which behaviour profiles
play each seed, and whether every behaviour is played hard (pure).

A behaviour profile is a distinct vector of levels (:attr:`Persona.profile`). The rule, for
each seed of a paired suite: each of the five behaviours reaches level >= 2
(:data:`~empath_gate.instrument.seed_models.HARD_LEVEL`) in at least one of the seed's
worst-case profiles, and the seed has its cooperative pairing. ``validate`` prints the table;
a seed that misses the rule is a coverage problem (:func:`pairing_problems`, part of
:func:`empath_gate.instrument.coverage.coverage_problems`): an error for the shipped instrument,
a note when team layers are added (the suite still runs the seed).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from empath_gate.instrument.models import BEHAVIOURS, HARD_LEVEL, Instrument
from empath_gate.instrument.selection import (
    assign_personas,
    cooperative_partner,
    personas_by_locale,
    suite_seeds,
)


class SeedCoverage(BaseModel):
    """One row of the coverage table: ``hard`` maps each behaviour to the number of the seed's
    distinct worst-case profiles that play it at level >= 2; ``cooperative`` is the paired
    cooperative persona (None: none fits the seed)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    seed_id: str
    cooperative: str | None
    profiles: int
    hard: dict[str, int]

    @property
    def missing(self) -> tuple[str, ...]:
        """Behaviours no profile plays at level >= 2, in profile order."""
        return tuple(b for b in BEHAVIOURS if not self.hard.get(b))

    @property
    def covered(self) -> bool:
        """True when every behaviour is played hard and the cooperative pairing exists."""
        return not self.missing and self.cooperative is not None


def pairing_coverage(instrument: Instrument, suite_id: str) -> tuple[SeedCoverage, ...]:
    """The coverage rows of ``suite_id``'s seeds that get a worst-case persona, in seed order;
    ``()`` for a suite without ``cooperative_pairing``. Raises KeyError for an unknown suite."""
    suite = instrument.suite(suite_id)
    if not suite.personas.cooperative_pairing:
        return ()
    by_locale = personas_by_locale(instrument.personas)
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    rows: list[SeedCoverage] = []
    for seed in suite_seeds(suite, instrument.seeds, dimension_of):
        worst = [p for p in assign_personas(suite.personas, seed, by_locale) if p.worst_case]
        if not worst:
            continue
        profiles = sorted({p.profile for p in worst})
        partner = cooperative_partner(seed, by_locale)
        rows.append(SeedCoverage(
            seed_id=seed.id,
            cooperative=partner.id if partner is not None else None,
            profiles=len(profiles),
            hard={b: sum(1 for v in profiles if v[i] >= HARD_LEVEL) for i, b in enumerate(BEHAVIOURS)},
        ))
    return tuple(rows)


def pairing_problems(instrument: Instrument) -> list[str]:
    """One problem line per seed of a paired suite that misses the coverage rule (module
    docstring), in suite then seed order; empty when every such seed meets it."""
    out: list[str] = []
    for suite in instrument.suites:
        for row in pairing_coverage(instrument, suite.id):
            if row.covered:
                continue
            gaps = []
            if row.missing:
                gaps.append("no profile plays " + ", ".join(row.missing) + " at level >= 2")
            if row.cooperative is None:
                gaps.append("no cooperative persona fits it")
            out.append(f"behaviours: suite {suite.id!r}, seed {row.seed_id!r}: " + "; ".join(gaps)
                       + " — write a persona who fits the seed's speaker and plays it (suites/REVIEW.md)")
    return out
