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
        "personas": _digest(instrument.persona(p).model_dump(mode="json") for p in persona_ids),
        "metrics": _digest(instrument.metric(m).model_dump(mode="json") for m in metric_ids),
        "judge_template": judge_template_part(rubric),
    }
