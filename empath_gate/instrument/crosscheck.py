"""Cross-references between instrument files (check 4 of :mod:`empath_gate.instrument.loader`).

Unique ids across files; metrics' dimensions and checks' pattern sets; seeds' primary metrics
and identity (:mod:`empath_gate.instrument.identity_checks`); suites' seeds, tags, metrics,
dimensions and personas, each selection picking at least one conversation; thresholds and
waivers naming real metrics, suites, seeds and personas, every threshold field resolvable, no
expired waiver. Each function adds ``file:line: /pointer: what — fix`` lines to ``problems``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence

from pydantic import ValidationError as ModelError

from empath_gate.instrument.cues import is_voice_seed
from empath_gate.instrument.diagnostics import did_you_mean
from empath_gate.instrument.identity_checks import identity_conflicts
from empath_gate.instrument.models import (
    Dimension,
    Metric,
    MetricFamily,
    Persona,
    Seed,
    SeedSelector,
    Suite,
    Waiver,
)
from empath_gate.instrument.problems import Origin, Problems
from empath_gate.instrument.reading import ReadState
from empath_gate.instrument.selection import (
    assign_personas,
    named_kinds,
    of_suite_kind,
    personas_by_locale,
    select_seeds,
    suite_seeds,
)
from empath_gate.instrument.yaml_io import pointer

_NOUNS = {"metrics": "metric", "patterns": "pattern set", "resources": "resource",
          "personas": "persona", "seeds": "seed", "suites": "suite", "cues": "cue"}


def check_duplicates(read: ReadState, dims: Sequence[Dimension], problems: Problems) -> None:
    """Ids used twice: dimensions within instrument.yaml, entries of a kind across files."""
    if read.instrument is not None:
        seen: dict[str, int] = {}
        for i, d in enumerate(dims):
            if d.id in seen:
                problems.at(Origin(read.instrument[1], pointer(["dimensions", i, "id"])),
                            f"duplicate dimension id {d.id!r} (also entry {seen[d.id]})", "remove the copy")
            seen.setdefault(d.id, i)
    for kind, noun in _NOUNS.items():
        first: dict[str, Origin] = {}
        for ident, origin in read.raw_ids.get(kind, []):
            if ident in first:
                problems.at(origin.child("id"), f"duplicate {noun} id {ident!r} (also defined at "
                            f"{first[ident].child('id').where()})", "rename one of them or remove the copy")
            else:
                first[ident] = origin


def unknown(problems: Problems, origin: Origin, noun: str, value: str, known: Sequence[str],
            fix_more: str = "") -> None:
    """Report a reference to an id that does not exist, with a did-you-mean or the choices."""
    if not known:  # the file defining these ids is missing or unreadable: already reported
        return
    guess = did_you_mean(value, known)
    if guess:
        fix = f"did you mean {guess!r}?"
    elif len(known) <= 12:
        fix = f"use one of: {', '.join(known)}"
    else:
        fix = f"use an existing {noun} id{fix_more}"
    problems.at(origin, f"unknown {noun} {value!r}", fix)


def check_metrics(read: ReadState, dims: Sequence[Dimension], problems: Problems,
                  families: Sequence[MetricFamily] = ()) -> None:
    """Each metric's dimension (or family) exists; each check's pattern set exists."""
    dim_ids = [d.id for d in dims]
    family_ids = [f.id for f in families]
    patterns = read.ids("patterns")
    for e in read.entries.get("metrics", []):
        m = e.model
        assert isinstance(m, Metric)
        if m.dimension is not None and m.dimension not in dim_ids:
            unknown(problems, e.origin.child("dimension"), "dimension", m.dimension, dim_ids)
        if m.family is not None and m.family not in family_ids:
            unknown(problems, e.origin.child("family"), "metric family", m.family, family_ids,
                    " (declare it under families: in instrument.yaml)")
        for ci, crit in enumerate(m.criteria):
            if crit.check is not None and crit.check.pattern_set is not None \
                    and crit.check.pattern_set not in patterns:
                unknown(problems, e.origin.child("criteria", ci, "check", "pattern_set"), "pattern set",
                        crit.check.pattern_set, patterns, " from patterns.yaml")


def check_seeds(read: ReadState, problems: Problems) -> None:
    """Each seed's primary metrics exist."""
    metrics = read.ids("metrics")
    for e in read.entries.get("seeds", []):
        s = e.model
        assert isinstance(s, Seed)
        for mi, mid in enumerate(s.primary_metrics):
            if mid not in metrics:
                unknown(problems, e.origin.child("primary_metrics", mi), "metric", mid, metrics)


def check_identity(read: ReadState, problems: Problems) -> None:
    """Identity conflicts of seeds and personas (module :mod:`~empath_gate.instrument.identity_checks`),
    each at its entry's field. Skipped when seeds or personas did not all build (the missing
    entries would show up as false conflicts)."""
    if read.invalid_kinds & {"seeds", "personas"}:
        return
    origins = {(kind, e.model.id): e.origin
               for kind in ("seeds", "personas") for e in read.entries.get(kind, [])
               if isinstance(e.model, (Seed, Persona))}
    seeds = [m for m in read.models("seeds") if isinstance(m, Seed)]
    personas = [m for m in read.models("personas") if isinstance(m, Persona)]
    listed = {pid for m in read.models("suites") if isinstance(m, Suite) and m.personas.mode == "empath_md5"
              for pid in m.personas.ids}
    for c in identity_conflicts(seeds, personas, listed):
        origin = origins[("seeds" if c.kind == "seed" else "personas", c.entry_id)]
        problems.at(origin.child(*c.field), c.what, c.fix)


def _check_selector(read: ReadState, where: Origin, sel: SeedSelector, tags: Sequence[str],
                    dim_ids: Sequence[str], problems: Problems) -> None:
    seed_ids, metric_ids = read.ids("seeds"), read.ids("metrics")
    for i, sid in enumerate(sel.ids):
        if sid not in seed_ids:
            unknown(problems, where.child("ids", i), "seed", sid, seed_ids)
    for i, tag in enumerate(sel.tags):
        if tag not in tags and "seeds" not in read.invalid_kinds:
            guess = did_you_mean(tag, tags)
            problems.at(where.child("tags", i), f"no seed carries the tag {tag!r}",
                        f"did you mean {guess!r}?" if guess else "tag seeds with it or remove it")
    for i, mid in enumerate(sel.metrics):
        if mid not in metric_ids:
            unknown(problems, where.child("metrics", i), "metric", mid, metric_ids)
    for i, did in enumerate(sel.dimensions):
        if did not in dim_ids:
            unknown(problems, where.child("dimensions", i), "dimension", did, dim_ids)


def _check_seed_kind(suite: Suite, where: Origin, sel: SeedSelector, seeds: Sequence[Seed],
                     problems: Problems) -> None:
    """A seed named by id must be of the suite's kind (voice seeds only in voice suites)."""
    voice = {s.id: is_voice_seed(s.tags) for s in seeds}
    for i, sid in enumerate(sel.ids):
        if sid in voice and voice[sid] != suite.voice:
            what = (f"seed {sid!r} is a voice seed (tag 'voice'): only a 'voice: true' suite selects it"
                    if voice[sid] else f"seed {sid!r} is not a voice seed: a 'voice: true' suite selects "
                    "only seeds tagged 'voice'")
            problems.at(where.child("ids", i), what, "move it to a suite of its kind")


def check_suites(read: ReadState, problems: Problems, selection_ok: bool) -> None:
    """Each suite's selectors name real seeds, tags, metrics and dimensions and pick at least
    one seed; its persona selector is well formed and gives some seed a persona.
    ``selection_ok``: seeds, personas, metrics and suites all built (else selection is skipped)."""
    persona_ids = read.ids("personas")
    dim_ids = [d.id for d in read.instrument[0].dimensions] if read.instrument else []
    seeds = [m for m in read.models("seeds") if isinstance(m, Seed)]
    tags = sorted({t for s in seeds for t in s.tags})
    dimension_of = {m.id: m.dimension for m in read.models("metrics")
                    if isinstance(m, Metric) and m.dimension is not None}
    family_ids = [f.id for f in read.instrument[0].families] if read.instrument else []
    by_locale = personas_by_locale(m for m in read.models("personas") if isinstance(m, Persona))
    for e in read.entries.get("suites", []):
        suite = e.model
        assert isinstance(suite, Suite)
        selectors = [(e.origin.child("seeds"), suite.seeds),
                     *((e.origin.child("also_seeds", i), s) for i, s in enumerate(suite.also_seeds))]
        kind_seeds = of_suite_kind(suite, seeds)
        for where, sel in selectors:
            _check_selector(read, where, sel, tags, dim_ids, problems)
            _check_seed_kind(suite, where, sel, seeds, problems)
            if selection_ok and not select_seeds(sel, kind_seeds, dimension_of, named_kinds(suite)):
                problems.at(where, f"suite {suite.id!r}: this selection picks no seed",
                            "widen it (ids, tags, metrics, dimensions, all) or relax locales/covert/min_risk")
        for i, fid in enumerate(suite.families):
            if fid not in family_ids:
                unknown(problems, e.origin.child("families", i), "metric family", fid, family_ids)
        ps = suite.personas
        if ps.cooperative_pairing and not ps.worst_case_only:
            problems.at(e.origin.child("personas", "cooperative_pairing"),
                        "cooperative_pairing pairs worst-case personas with a cooperative one",
                        "set 'worst_case_only: true' or remove cooperative_pairing")
        for i, pid in enumerate(ps.ids):
            if pid not in persona_ids:
                unknown(problems, e.origin.child("personas", "ids", i), "persona", pid, persona_ids)
        if ps.mode == "list" and not ps.ids:
            problems.at(e.origin.child("personas"), "mode 'list' needs persona ids", "add 'ids: [...]'")
        if ps.mode not in ("list", "empath_md5") and ps.ids:
            problems.at(e.origin.child("personas", "ids"), f"ids apply only to modes 'list' and "
                        f"'empath_md5' (mode is {ps.mode!r})", "set 'mode: list' or remove the ids")
        if selection_ok:
            chosen = suite_seeds(suite, seeds, dimension_of)
            if chosen and not any(assign_personas(ps, s, by_locale) for s in chosen):
                problems.at(e.origin.child("personas"),
                            f"suite {suite.id!r} gets no persona for any of its {len(chosen)} seeds",
                            "check worst_case_only, the persona ids, their locales and the seeds' speakers")


def check_thresholds(read: ReadState, metrics: Sequence[Metric], suites: Sequence[Suite],
                     problems: Problems) -> None:
    """Thresholds name real metrics and suites, and every field resolves for every metric."""
    if read.thresholds is None:
        return
    th, doc = read.thresholds
    metric_ids, suite_ids = read.ids("metrics"), read.ids("suites")
    for mid in th.metrics:
        if mid not in metric_ids:
            unknown(problems, Origin(doc, pointer(["metrics", mid])), "metric", mid, metric_ids)
    for sid, st in th.suites.items():
        if sid not in suite_ids:
            unknown(problems, Origin(doc, pointer(["suites", sid])), "suite", sid, suite_ids)
        for mid in st.metrics:
            if mid not in metric_ids:
                unknown(problems, Origin(doc, pointer(["suites", sid, "metrics", mid])), "metric", mid,
                        metric_ids)
    unset: dict[str, list[str]] = {}
    for m in metrics:
        for s in (None, *(x.id for x in suites)):
            try:
                th.resolve(m.id, s)
            except ModelError as exc:
                for err in exc.errors(include_url=False):
                    if err["type"] == "missing":
                        unset.setdefault(str(err["loc"][0]), []).append(m.id)
    for name, mids in unset.items():
        first = sorted(set(mids), key=mids.index)
        problems.at(Origin(doc, "/defaults"), f"{name!r} is left unset for metric(s) {', '.join(first[:3])}"
                    + (" ..." if len(first) > 3 else ""), f"set '{name}' under defaults")


def check_waivers(read: ReadState, problems: Problems, today: dt.date) -> None:
    """Waivers name real metrics, seeds and personas, and none has expired before ``today``."""
    metrics, seeds, personas = read.ids("metrics"), read.ids("seeds"), read.ids("personas")
    for e in read.waivers:
        w = e.model
        assert isinstance(w, Waiver)
        if w.metric not in metrics:
            unknown(problems, e.origin.child("metric"), "metric", w.metric, metrics)
        if w.seed is not None and w.seed not in seeds:
            unknown(problems, e.origin.child("seed"), "seed", w.seed, seeds)
        if w.persona is not None and w.persona not in personas:
            unknown(problems, e.origin.child("persona"), "persona", w.persona, personas)
        if w.expires < today:
            problems.at(e.origin.child("expires"), f"waiver for {w.metric!r} (owner {w.owner}) expired on "
                        f"{w.expires.isoformat()} (today is {today.isoformat()})",
                        "fix the failure and remove the waiver, or renew it with a later date and a "
                        "current reason")
