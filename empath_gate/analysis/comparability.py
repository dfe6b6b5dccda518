"""Whether a candidate and a baseline can be compared for one suite (pure).

Per suite, when both sides record the suite's content hashes
(:mod:`empath_gate.results.suite_hash`): comparable when the judge model is the same and every
part the suite uses (conversations, seeds, personas, the judged metrics' rubrics and criteria,
the judge template files of the rubric) hashes the same. Adding a suite, a metric family or a
file the suite does not use leaves its baseline comparable. A side without hashes (a results
file written before they were recorded) falls back to the instrument-level rule: instrument
version, judge model and whole judge template hash must be equal, and the report says so
(:func:`comparability_note`). The run count may differ: the comparison uses the runs both
sides have (:mod:`empath_gate.analysis.regression`).
"""

from __future__ import annotations

from collections.abc import Mapping

from empath_gate.analysis.regression_models import RunMetadata

SUITE_HASH_PARTS: tuple[str, ...] = ("conversations", "seeds", "personas", "metrics", "judge_template")
"""The parts of a suite's content hash, in the order reasons name them."""

PART_LABELS: Mapping[str, str] = {"judge_template": "judge template"}
"""How a reason names a part whose id is not a plain word (``judge template changed since the
baseline``: the judge prompt's files changed, e.g. the ``judge-v1`` -> ``judge-v2`` reorder that
puts the stable rubric first; every judged suite's baseline is then not comparable)."""


def changed_parts(candidate: Mapping[str, str], baseline: Mapping[str, str]) -> tuple[str, ...]:
    """The parts whose hashes differ (a part on one side only counts as changed), in
    :data:`SUITE_HASH_PARTS` order, then any other part name sorted."""
    names = [p for p in SUITE_HASH_PARTS if p in candidate or p in baseline]
    names += sorted((set(candidate) | set(baseline)) - set(SUITE_HASH_PARTS))
    return tuple(p for p in names if candidate.get(p) != baseline.get(p))


def _differs(name: str, c: str | None, b: str | None) -> str:
    return (f"{name} differs: candidate {c if c is not None else 'unknown'}, "
            f"baseline {b if b is not None else 'unknown'}")


def comparability(candidate: RunMetadata, baseline: RunMetadata) -> tuple[str, ...]:
    """Reasons the two runs are not comparable (empty when they are), module docstring for the
    rule; e.g. ``seeds changed since the baseline``, ``judge model differs: candidate a, baseline
    b``. An unknown value on one side counts as different."""
    if candidate.suite_hashes and baseline.suite_hashes:
        reasons = [_differs("judge model", candidate.judge_model, baseline.judge_model)] if (
            candidate.judge_model != baseline.judge_model) else []
        reasons += [f"{PART_LABELS.get(part, part)} changed since the baseline"
                    for part in changed_parts(candidate.suite_hashes, baseline.suite_hashes)]
        return tuple(reasons)
    pairs = (
        ("instrument version", candidate.instrument_version, baseline.instrument_version),
        ("judge model", candidate.judge_model, baseline.judge_model),
        ("judge template hash", candidate.judge_template_hash, baseline.judge_template_hash),
    )
    return tuple(_differs(name, c, b) for name, c, b in pairs if c != b)


def comparability_note(candidate: RunMetadata, baseline: RunMetadata) -> str | None:
    """Why comparability was decided by the instrument-level rule (a side records no per-suite
    content hashes), or None when it was decided per suite."""
    if candidate.suite_hashes and baseline.suite_hashes:
        return None
    rule = "compared by instrument version, judge model and judge template hash"
    if not baseline.suite_hashes and not candidate.suite_hashes:
        return f"neither side records per-suite content hashes (older results files): {rule}"
    side = "the baseline" if not baseline.suite_hashes else "the candidate"
    return f"{side} records no per-suite content hashes (an older results file): {rule}"
