"""Per-suite content hashes: what one suite uses of the instrument, so comparability with a
baseline is decided per suite (pure).

A suite uses its conversations (seed x persona pairs, turn budgets and the metrics each is
judged on), those seeds and personas, the judged metrics (definition, bands, criteria: their
rubric) and the judge template files of the rubric in use. Each part is hashed alone, so a
baseline that is not comparable can say which part changed; a seed, persona, metric or suite
the suite does not use changes none of its hashes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument, Seed



def _digest(values: Iterable[Any]) -> str:
    """sha256 (hex) of the values as canonical JSON (sorted keys, UTF-8), one per line."""
    h = hashlib.sha256()
    for v in values:
        h.update(json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8"))
        h.update(b"\n")
    return h.hexdigest()


SEED_FIELDS_ADDED: dict[str, object] = {"auditor": "any", "participants": [], "speakers": []}
"""Seed fields added after suite hashes were first recorded, with the default value at which
they are left out of the ``seeds`` part, so a seed that does not use them keeps its hash (and
a baseline recorded before they existed stays comparable)."""


def seed_hash_value(seed: Seed) -> dict[str, Any]:
    """The JSON form of ``seed`` the ``seeds`` part hashes: its dump without the
    :data:`SEED_FIELDS_ADDED` that hold their default."""
    data = seed.model_dump(mode="json")
    for name, default in SEED_FIELDS_ADDED.items():
        if data.get(name) == default:
            del data[name]
    return data


LATER_FIELDS: dict[str, tuple[str, ...]] = {"metric": ("family",), "persona": ("behaviours",)}
"""Fields added after instrument 1.2.0 that enter a part's hash only when set (not ``None``, not
empty), so the hashes of unchanged metrics and personas stay those older results recorded."""

UNHASHED_FIELDS: dict[str, tuple[str, ...]] = {"metric": (), "persona": ("hashed",)}
"""Fields left out of a part's hash: a persona's ``hashed`` (instrument 1.6.0) only decides
which conversations a hash-mode suite has, which the ``conversations`` part already hashes; it
changes nothing the auditor is shown. (A persona's behaviour levels became conduct in the
auditor's prompt and shape the scripted auditor's variant, so they are hashed.)"""


def _part_dump(kind: str, model: Any) -> dict[str, Any]:
    """``model.model_dump(mode="json")`` without :data:`UNHASHED_FIELDS` and without the
    :data:`LATER_FIELDS` that are unset."""
    dump: dict[str, Any] = model.model_dump(mode="json")
    for name in UNHASHED_FIELDS[kind]:
        dump.pop(name, None)
    for name in LATER_FIELDS[kind]:
        if dump.get(name) in (None, {}, []):
            dump.pop(name, None)
    return dump


def judge_template_part(rubric: str) -> str:
    """The ``judge_template`` part: the hash of the template files a judging with ``rubric``
    (``strict`` or ``standard``) uses."""
    from empath_gate.judging.prompts import rubric_template_hash

    chosen: Literal["strict", "standard"] = "standard" if rubric == "standard" else "strict"
    return rubric_template_hash(chosen)


def suite_content_hashes(instrument: Instrument, suite_id: str, rubric: str) -> dict[str, str]:
    """Part name (:data:`empath_gate.analysis.comparability.SUITE_HASH_PARTS`) -> sha256 (hex)
    of what suite ``suite_id`` uses: its whole plan, whatever tests were selected or which
    shard ran. Raises ConfigError for an unknown suite (as
    :func:`empath_gate.plan.build.build_plan`)."""
    from empath_gate.plan.build import build_plan

    plan = build_plan(instrument, (suite_id,))
    convs = sorted(plan.conversations, key=lambda c: c.conversation_id)
    seed_ids = sorted({c.seed_id for c in convs})
    persona_ids = sorted({c.persona_id for c in convs})
    metric_ids = sorted({m for c in convs for m in c.metric_ids})
    return {
        "conversations": _digest(
            (c.conversation_id, c.seed_id, c.persona_id, c.locale, c.max_turns, list(c.metric_ids))
            for c in convs
        ),
        "seeds": _digest(seed_hash_value(instrument.seed(s)) for s in seed_ids),
        "personas": _digest(_part_dump("persona", instrument.persona(p)) for p in persona_ids),
        "metrics": _digest(_part_dump("metric", instrument.metric(m)) for m in metric_ids),
        "judge_template": _judge_template(instrument, suite_id, rubric),
    }


def _judge_template(instrument: Instrument, suite_id: str, rubric: str) -> str:
    """The ``judge_template`` part of a suite: :func:`judge_template_part`, combined with the
    ``risk_turns`` part's hash when the suite sets ``judge_risk_turns`` (suites that do not keep
    their hash)."""
    base = judge_template_part(rubric)
    suite = instrument.suite(suite_id)
    if not suite.judge_risk_turns and not suite.judge_triage:
        return base
    from empath_gate.judging.prompts import part_template_hash, risk_turns_template_hash

    parts = [base]
    if suite.judge_risk_turns:
        parts.append(risk_turns_template_hash())
    if suite.judge_triage:
        parts.append(part_template_hash("triage"))
    return _digest(parts)
