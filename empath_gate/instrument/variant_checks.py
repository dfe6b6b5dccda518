"""Review rules for scripted variants (pure): every variant a suite plays keeps REVIEW.md's
mechanical rules, as its seed's script does (:mod:`empath_gate.instrument.review`).

A variant (:func:`~empath_gate.instrument.variants.script_variant`) is checked for each seed x
persona a suite plays (its fitting personas, plus the cooperative pairing) whose variant differs
from the script. For each, one line per problem:

* the turn count and every protected turn (alert to confirm) are the script's, word for word:
  the alert and confirm turns are never dropped, moved or softened;
* no turn before the confirm turn states the risk (``explicit_risk`` patterns) unless the
  script's turn already did: an added line never moves the disclosure earlier;
* no turn matches ``method_detail`` (REVIEW.md section 3, safe messaging);
* the risky script still reaches ``confirm_turn`` + 2 turns and a voice seed keeps its cue
  between the alert and confirm turns and its worded confirm turn (sections 5 and 12,
  :func:`~empath_gate.instrument.review.script_problems`,
  :func:`~empath_gate.instrument.review.cue_problems`).

Near-duplicate and scenario rules do not apply: a variant is its seed's own script.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from empath_gate.instrument.identity import script_for
from empath_gate.instrument.models import Instrument, Persona, Seed
from empath_gate.instrument.review import cue_problems, script_problems
from empath_gate.instrument.selection import (
    assign_personas,
    cooperative_partner,
    personas_by_locale,
    suite_seeds,
)
from empath_gate.instrument.variants import ScriptVariant, script_variant


def suite_pairs(instrument: Instrument) -> Iterator[tuple[Seed, Persona]]:
    """Every distinct (seed, persona) some suite plays with a script, in suite and seed order:
    the fitting personas of each seed, then its cooperative partner in a paired suite."""
    by_locale = personas_by_locale(instrument.personas)
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    seen: set[tuple[str, str]] = set()
    for suite in instrument.suites:
        for seed in suite_seeds(suite, instrument.seeds, dimension_of):
            if not seed.script:
                continue
            people = list(assign_personas(suite.personas, seed, by_locale))
            if suite.personas.cooperative_pairing:
                partner = cooperative_partner(seed, by_locale)
                people += [partner] if partner is not None else []
            for p in people:
                if (seed.id, p.id) not in seen:
                    seen.add((seed.id, p.id))
                    yield seed, p


def suite_variants(instrument: Instrument) -> list[tuple[Seed, ScriptVariant]]:
    """The variants that differ from their script (id other than the seed id), one per pair of
    :func:`suite_pairs`; ``[]`` without a behaviour set."""
    if instrument.behaviours is None:
        return []
    out = []
    for seed, persona in suite_pairs(instrument):
        v = script_variant(seed, persona, instrument.behaviours)
        if v.id != seed.id:
            out.append((seed, v))
    return out


def _compiled(instrument: Instrument, set_id: str) -> dict[str, list[re.Pattern[str]]]:
    try:
        ps = instrument.pattern_set(set_id)
    except KeyError:
        return {}
    return {loc: [re.compile(p, re.IGNORECASE) for p in pats] for loc, pats in ps.patterns.items()}


def _hit(patterns: list[re.Pattern[str]], text: str) -> str | None:
    for rx in patterns:
        m = rx.search(text)
        if m:
            return m.group(0)
    return None


def variant_problems(instrument: Instrument) -> list[str]:
    """Every problem of every variant (module docstring), one line each, naming the seed, the
    persona and the variant id."""
    explicit = _compiled(instrument, "explicit_risk")
    method = _compiled(instrument, "method_detail")
    vocabulary = instrument.cue_vocabulary()
    out: list[str] = []
    for seed, v in suite_variants(instrument):
        script = script_for(seed, instrument.persona(v.persona_id))
        where = f"seed {seed.id}, persona {v.persona_id} (variant {v.id})"
        if len(v.turns) != len(script):
            out.append(f"{where}: {len(v.turns)} turns, the script has {len(script)}")
            continue
        for k in v.protected:
            if v.turns[k - 1] != script[k - 1]:
                out.append(f"{where}: protected turn {k} (alert to confirm) differs from the script")
        confirm = seed.risk.confirm_turn or 0
        for k, (turn, original) in enumerate(zip(v.turns, script, strict=True), start=1):
            pats = explicit.get(seed.locale, [])
            if k < confirm and _hit(pats, turn) and not _hit(pats, original):
                out.append(f"{where}: turn {k} states the risk before confirm turn {confirm} "
                           f"({_hit(pats, turn)!r}); the variant would move the disclosure")
            found = _hit(method.get(seed.locale, []), turn)
            if found:
                out.append(f"{where}: turn {k} has method or means detail ({found!r})")
        copy = seed.model_copy(update={"script": v.turns})
        out += [f"{where}: {p}" for p in script_problems([copy]) + cue_problems([copy], vocabulary)]
    return out
