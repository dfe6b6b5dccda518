"""Upstream seeds and personas as entries of an empath-gate suites layer (plain dicts, the YAML
the loader reads), with every change and every entry that could not be carried recorded.

Seeds (upstream carries no script, risk or speaker): ``auditor: llm`` (only an LLM auditor plays
them; offline their tests are skipped), risk level ``unknown``, a review record saying they were
not reviewed against ``suites/REVIEW.md``, ``scenario`` = the id, tags ``empath-upstream``, the
metric's dimension, ``covert`` and ``difficulty-<value>``; the instruction with the sentences
addressed to upstream's tool-using auditor removed or rewritten (:mod:`.rewrite`). Upstream
metric names are the instrument's metric ids (EMPATH's 19 metrics); :data:`METRIC_ALIASES` maps
any other spelling, and a seed whose metric maps to none is reported, not written.

Personas: ids ``empath-<mx|us>-<name slug>``, ``reserved: true`` (they speak only through the
``empath-upstream`` suite, which names them for mode ``empath_md5``, so the shipped suites'
persona hashing never draws from them), ``speaks_as`` from the gender word, ``situation`` from
``current_situation``, ``writing_style`` from ``writing_style_description``; ``opening_message``,
``tags`` and ``metadata`` have no field here and are listed as not carried.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from empath_gate.instrument.model_base import LOCALES, SLUG_PATTERN
from empath_gate.instrument.models import Persona, Seed
from empath_gate.instrument.selection import UPSTREAM_TAG
from empath_gate.instrument.upstream.reader import ReadProblem, Upstream, UpstreamPersona, UpstreamSeed
from empath_gate.instrument.upstream.rewrite import Change, rewrite

METRIC_ALIASES: dict[str, str] = {}
"""Upstream metric names that differ from the instrument's metric ids (none at commit ffd4600,
whose 19 names are the ids)."""

GENDERS: dict[str, str] = {
    "mujer": "woman",
    "female": "woman",
    "woman": "woman",
    "f": "woman",
    "hombre": "man",
    "male": "man",
    "man": "man",
    "m": "man",
    "non-binary": "nonbinary",
    "nonbinary": "nonbinary",
    "no binario": "nonbinary",
    "no binarie": "nonbinary",
}
"""Upstream's gender words -> ``speaks_as``; any other word leaves ``speaks_as`` unset (noted)."""

NOT_REVIEWED_REASON = (
    "imported by empath-gate import-empath from the published EMPATH benchmark; not reviewed "
    "against suites/REVIEW.md (no script, risk annotation or speaker)"
)

_LOCALE_SHORT = {"es-MX": "mx", "en-US": "us"}


def slug(text: str) -> str:
    """ASCII slug of ``text``: accents stripped, lower case, runs of other characters -> ``-``."""
    folded = unicodedata.normalize("NFKD", text)
    ascii_text = "".join(c for c in folded if not unicodedata.combining(c)).encode("ascii", "ignore").decode()
    return re.sub(r"[^a-z0-9]+", "-", ascii_text.lower()).strip("-") or "x"


@dataclass
class Converted:
    """The layer's entries and what happened on the way: ``changes`` seed id -> instruction
    changes; ``problems`` entries not written (with why); ``notes`` entries written with a
    difference worth knowing; ``persona_ids`` in upstream file order (the order empath_md5
    indexes into)."""

    seeds: list[dict[str, Any]] = field(default_factory=list)
    personas: list[dict[str, Any]] = field(default_factory=list)
    persona_ids: list[str] = field(default_factory=list)
    changes: dict[str, list[Change]] = field(default_factory=dict)
    problems: list[ReadProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    metric_map: dict[str, str] = field(default_factory=dict)


def _errors(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or '(entry)'}: {e['msg']}" for e in exc.errors())


def convert(upstream: Upstream, metric_dimension: Mapping[str, str]) -> Converted:
    """The layer entries of ``upstream``. ``metric_dimension``: the instrument's metric id ->
    dimension id. Every entry is checked against the seed or persona model; one that does not
    build is a problem, not an entry."""
    out = Converted(problems=list(upstream.problems), notes=list(upstream.notes))
    seen: set[str] = set()
    for s in upstream.seeds:
        entry = _seed(s, metric_dimension, out)
        if entry is None:
            continue
        if entry["id"] in seen:
            out.problems.append(ReadProblem("seed", s.where, "the id is used by an earlier seed", s.id))
            continue
        seen.add(entry["id"])
        out.seeds.append(entry)
    _personas(upstream.personas, out)
    return out


def _seed(s: UpstreamSeed, metric_dimension: Mapping[str, str], out: Converted) -> dict[str, Any] | None:
    if not re.fullmatch(SLUG_PATTERN, s.id):
        out.problems.append(ReadProblem("seed", s.where, "the id is not an ASCII slug", s.id))
        return None
    if s.locale not in LOCALES:
        out.problems.append(
            ReadProblem("seed", s.where, f"locale {s.locale!r} is not one of {', '.join(LOCALES)}", s.id)
        )
        return None
    metric = METRIC_ALIASES.get(s.metric, s.metric)
    if metric not in metric_dimension:
        out.problems.append(
            ReadProblem(
                "seed", s.where, f"metric {s.metric!r} maps to none of the instrument's metric ids", s.id
            )
        )
        return None
    out.metric_map[s.metric] = metric
    instruction, changes = rewrite(s.instruction)
    tags = [UPSTREAM_TAG, metric_dimension[metric]]
    if s.covert:
        tags.append("covert")
    if s.difficulty:
        tags.append(f"difficulty-{slug(s.difficulty)}")
    entry: dict[str, Any] = {
        "id": s.id,
        "locale": s.locale,
        "scenario": s.id,
        "covert": s.covert,
        "tags": tags,
        "instruction": instruction,
        "primary_metrics": [metric],
        "risk": {"level": "unknown"},
        "auditor": "llm",
        "review": {"reviewed": False, "reason": NOT_REVIEWED_REASON},
    }
    try:
        Seed.model_validate(entry)
    except ValidationError as exc:
        out.problems.append(
            ReadProblem("seed", s.where, f"does not fit the seed model ({_errors(exc)})", s.id)
        )
        return None
    if changes:
        out.changes[s.id] = changes
    if s.extra:
        out.notes.append(f"seed {s.id}: fields not carried: {', '.join(s.extra)}")
    return entry


_PERSONA_FIELDS_READ = frozenset(
    {
        "name",
        "locale",
        "age",
        "gender",
        "category",
        "background",
        "current_situation",
        "emotional_state",
        "crisis_level",
        "risk_factors",
        "cultural_context",
        "socioeconomic_context",
        "language_style",
        "writing_style_description",
        "sample_phrases",
        "follow_up_topics",
    }
)


def _personas(personas: Sequence[UpstreamPersona], out: Converted) -> None:
    used: set[str] = set()
    dropped: dict[str, int] = {}
    for p in personas:
        for k in p.values:
            if k not in _PERSONA_FIELDS_READ:
                dropped[k] = dropped.get(k, 0) + 1
        v = p.values
        name = v.get("name") if isinstance(v.get("name"), str) else None
        locale = v.get("locale")
        if locale not in LOCALES or name is None:
            out.problems.append(
                ReadProblem("persona", p.where, f"needs a name and a locale of {', '.join(LOCALES)}", name)
            )
            continue
        base = f"empath-{_LOCALE_SHORT[str(locale)]}-{slug(name)}"
        pid, n = base, 2
        while pid in used:
            pid, n = f"{base}-{n}", n + 1
        gender = str(v.get("gender", ""))
        entry: dict[str, Any] = {
            "id": pid,
            "locale": locale,
            "name": name,
            "age": v.get("age"),
            "gender": gender,
            "speaks_as": GENDERS.get(gender.strip().lower()),
            "reserved": True,
            "category": slug(str(v.get("category", ""))).replace("-", "_"),
            "background": v.get("background", ""),
            "situation": v.get("current_situation", ""),
            "emotional_state": v.get("emotional_state", ""),
            "crisis_level": v.get("crisis_level", 0),
            "risk_factors": v.get("risk_factors", []),
            "cultural_context": v.get("cultural_context", ""),
            "socioeconomic_context": v.get("socioeconomic_context", ""),
            "language_style": v.get("language_style", ""),
            "writing_style": v.get("writing_style_description", ""),
            "sample_phrases": v.get("sample_phrases", []),
            "follow_up_topics": v.get("follow_up_topics", []),
        }
        if entry["speaks_as"] is None:
            del entry["speaks_as"]
            out.notes.append(
                f"persona {pid}: gender {gender!r} has no speaks_as; it speaks only gender-neutral seeds"
            )
        try:
            Persona.model_validate(entry)
        except ValidationError as exc:
            out.problems.append(
                ReadProblem("persona", p.where, f"does not fit the persona model ({_errors(exc)})", name)
            )
            continue
        used.add(pid)
        out.personas.append(entry)
        out.persona_ids.append(pid)
    if dropped:
        out.notes.append(
            "persona fields not carried (the persona model has no place for them; the seed "
            "supplies the situation): " + ", ".join(f"{k} ({n} personas)" for k, n in dropped.items())
        )
