"""Comparability per suite: two results compare for a suite when the judge model and the
content hashes of what that suite uses match; a suite, metric or seed the suite does not use
changes nothing; a changed seed makes the baseline not comparable, named on the comment's
first line; an older baseline without hashes falls back to the instrument-level rule."""

from __future__ import annotations

import functools

from report.report_factory import THRESHOLDS, build_results

from empath_gate.analysis.comparability import changed_parts, comparability, comparability_note
from empath_gate.analysis.regression import RunMetadata
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.plan.build import build_plan
from empath_gate.results import Results
from empath_gate.results.evaluate import decide_results
from empath_gate.results.model import GateInputs
from empath_gate.results.suite_hash import suite_content_hashes

SUITE = "crisis"


@functools.cache
def shipped() -> Instrument:
    return load_instrument()


def _hashes(inst: Instrument, suite: str = SUITE) -> dict[str, str]:
    return suite_content_hashes(inst, suite, "strict")


def _used(inst: Instrument, suite: str = SUITE) -> tuple[set[str], set[str]]:
    plan = build_plan(inst, (suite,))
    return {c.seed_id for c in plan.conversations}, {m for c in plan.conversations for m in c.metric_ids}


def test_hashes_cover_every_part_and_are_stable() -> None:
    h = _hashes(shipped())
    assert set(h) == {"conversations", "seeds", "personas", "metrics", "judge_template"}
    assert all(len(v) == 64 for v in h.values())
    assert _hashes(shipped()) == h
    assert suite_content_hashes(shipped(), SUITE, "standard")["judge_template"] != h["judge_template"]


def test_adding_a_suite_or_changing_what_the_suite_does_not_use_leaves_it_comparable() -> None:
    inst = shipped()
    base = _hashes(inst)
    seeds, metrics = _used(inst)
    other_suite = inst.suites[0].model_copy(update={"id": "extra-suite", "label": "Extra"})
    assert _hashes(inst.model_copy(update={"suites": (*inst.suites, other_suite)})) == base
    unused_seed = next(s for s in inst.seeds if s.id not in seeds)
    edited = unused_seed.model_copy(update={"instruction": unused_seed.instruction + " Edited."})
    seeds_changed = tuple(edited if s.id == unused_seed.id else s for s in inst.seeds)
    assert _hashes(inst.model_copy(update={"seeds": seeds_changed})) == base
    unused_metric = next(m for m in inst.metrics if m.id not in metrics)
    m2 = unused_metric.model_copy(update={"definition": unused_metric.definition + " Edited."})
    metrics_changed = tuple(m2 if m.id == m2.id else m for m in inst.metrics)
    assert _hashes(inst.model_copy(update={"metrics": metrics_changed})) == base
    # a metric the suite judges does change it
    used_metric = next(m for m in inst.metrics if m.id in metrics)
    m3 = used_metric.model_copy(update={"definition": used_metric.definition + " Edited."})
    edited_used = inst.model_copy(update={"metrics": tuple(m3 if m.id == m3.id else m for m in inst.metrics)})
    assert changed_parts(_hashes(edited_used), base) == ("metrics",)


def test_changing_a_seed_of_the_suite_changes_its_seeds_hash_only() -> None:
    inst = shipped()
    seeds, _ = _used(inst)
    used = next(s for s in inst.seeds if s.id in seeds)
    edited = used.model_copy(update={"instruction": used.instruction + " Edited."})
    new_seeds = tuple(edited if s.id == used.id else s for s in inst.seeds)
    changed = _hashes(inst.model_copy(update={"seeds": new_seeds}))
    assert changed_parts(changed, _hashes(inst)) == ("seeds",)


def _meta(hashes: dict[str, str] | None, **kw: object) -> RunMetadata:
    fields: dict[str, object] = {"run_count": 3, "instrument_version": "1.0.0", "judge_model": "j",
                                 "judge_template_hash": "t", "suite_hashes": hashes, **kw}
    return RunMetadata.model_validate(fields)


def test_per_suite_rule_ignores_the_instrument_version_and_falls_back_without_hashes() -> None:
    h = {"seeds": "a", "metrics": "b"}
    # a new instrument version (another suite was added) with the same suite content: comparable
    assert comparability(_meta(h, instrument_version="1.1.0"), _meta(h)) == ()
    assert comparability_note(_meta(h), _meta(h)) is None
    assert comparability(_meta({**h, "seeds": "z"}), _meta(h)) == ("seeds changed since the baseline",)
    assert comparability(_meta(h, judge_model="k"), _meta(h)) == (
        "judge model differs: candidate k, baseline j",
    )
    # an older baseline without hashes: the instrument-level rule, with a note
    assert comparability(_meta(h, instrument_version="1.1.0"), _meta(None)) == (
        "instrument version differs: candidate 1.1.0, baseline 1.0.0",
    )
    note = comparability_note(_meta(h), _meta(None))
    assert note is not None and note.startswith("the baseline records no per-suite content hashes")


def _with_hashes(res: Results, hashes: dict[str, str] | None) -> Results:
    md = res.metadata.model_copy(update={"suite_hashes": {SUITE: hashes} if hashes else {}})
    return res.model_copy(update={"metadata": md, "gate": GateInputs(thresholds=THRESHOLDS)})


def test_a_changed_seed_is_named_on_the_comments_first_line() -> None:
    from empath_gate.report.markdown import render_markdown

    h = _hashes(shipped())
    baseline = _with_hashes(build_results(), h)
    same = decide_results(_with_hashes(build_results(), h), baseline=baseline)
    assert same.regressions is not None and same.regressions.comparable
    changed = decide_results(_with_hashes(build_results(), {**h, "seeds": "0" * 64}), baseline=baseline)
    assert changed.regressions is not None and not changed.regressions.comparable
    assert changed.regressions.reasons == ("seeds changed since the baseline",)
    first = render_markdown(changed, baseline=baseline, metric_labels={}).splitlines()[1]
    assert first.startswith("### ") and "baseline not comparable: seeds changed since the baseline" in first
    # an older baseline: the instrument-level rule decides (same version: comparable) and says so
    old = decide_results(_with_hashes(build_results(), h), baseline=_with_hashes(build_results(), None))
    assert old.regressions is not None and old.regressions.comparable
    md = render_markdown(old, baseline=baseline, metric_labels={})
    assert "**Baseline comparability:** the baseline records no per-suite content hashes" in md


def test_results_metadata_records_each_suites_hashes() -> None:
    from empath_gate.results.metadata import build_metadata
    from empath_gate.settings import Settings
    from empath_gate.settings.profile import resolve_profile

    inst = shipped()
    plan = build_plan(inst, (SUITE,))
    # offline: under CI=true a run without auditor and judge models must say it is offline
    md = build_metadata(resolve_profile(Settings(offline=True)), plan, inst,
                        started_at="2026-01-01T00:00:00+00:00", fail_on="both")
    assert md.suite_hashes == {SUITE: _hashes(inst)}
    assert md.max_auditor_fallback_share == 0.5


def test_a_changed_judge_template_is_named_in_words_on_the_first_line() -> None:
    from empath_gate.judging.prompts import rubric_template_hash
    from empath_gate.report.markdown import render_markdown

    h = _hashes(shipped())
    assert h["judge_template"] == rubric_template_hash("strict")  # the current (stable-first) template
    # a baseline judged with an earlier template (another hash of the judge_template part)
    baseline = _with_hashes(build_results(), {**h, "judge_template": "1" * 64})
    changed = decide_results(_with_hashes(build_results(), h), baseline=baseline)
    assert changed.regressions is not None and not changed.regressions.comparable
    assert changed.regressions.reasons == ("judge template changed since the baseline",)
    first = render_markdown(changed, baseline=baseline, metric_labels={}).splitlines()[1]
    assert "baseline not comparable: judge template changed since the baseline" in first
