"""The plan: ids, order, persona assignment, metrics, markers, runs, sharding, determinism."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent / "instrument"))

from fixture_instrument import METRICS, instrument_files, write_instrument

from empath_gate.errors import ConfigError
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument
from empath_gate.plan import Plan, build_plan, parse_shard, plan_counts, shard

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def inst(tmp_path_factory: pytest.TempPathFactory) -> Instrument:
    return load_instrument(base_dir=write_instrument(tmp_path_factory.mktemp("inst")))


def expected_hash_persona(seed_id: str, candidates: list[str]) -> str:
    ordered = sorted(candidates)
    return ordered[int(hashlib.sha256(seed_id.encode()).hexdigest(), 16) % len(ordered)]


def test_full_plan_ids_and_hash_assignment(inst: Instrument) -> None:
    plan = build_plan(inst, ["full"])
    assert plan.runs == 3 and plan.suites == ("full",)
    personas = {"es-MX": ["ana", "beto", "carla", "dario"], "en-US": ["emma", "frank", "gina", "hank"]}
    assert len(plan.conversations) == 24
    for conv, seed in zip(plan.conversations, inst.seeds, strict=True):
        assert conv.seed_id == seed.id
        assert conv.persona_id == expected_hash_persona(seed.id, personas[seed.locale])
        assert conv.conversation_id == f"{seed.id}-{conv.persona_id}"
        assert conv.metric_ids == tuple(m for m in METRICS if m in seed.primary_metrics)
    assert [t.transcript_id for t in plan.transcripts[:3]] == [
        f"{plan.conversations[0].conversation_id}-r{k}" for k in range(3)]
    assert [t.run for t in plan.transcripts[:4]] == [0, 1, 2, 0]
    first = plan.items[0]
    assert first.id == f"{first.seed_id}-{first.persona_id}-{first.metric_id}"
    assert len(plan.items) == 48 and len({i.id for i in plan.items}) == 48


def test_order_suite_seed_persona_metric(inst: Instrument) -> None:
    plan = build_plan(inst, ["sweep", "smoke"], runs=2)
    seed_pos = {s.id: i for i, s in enumerate(inst.seeds)}
    metric_pos = {m: i for i, m in enumerate(METRICS)}
    suite_pos = {"sweep": 0, "smoke": 1}
    keys = [(suite_pos[i.suite], seed_pos[i.seed_id], i.persona_id, metric_pos[i.metric_id])
            for i in plan.items]
    assert keys == sorted(keys)
    assert plan.items[0].suite == "sweep" and plan.items[-1].suite == "smoke"


def test_metrics_all_gives_every_metric(inst: Instrument) -> None:
    plan = build_plan(inst, ["sweep"])
    assert len(plan.conversations) == 8  # two seeds x all 4 personas of each one's locale
    for conv in plan.conversations:
        assert conv.metric_ids == METRICS
    assert len(plan.items) == 8 * 19


def test_worst_case_only(inst: Instrument) -> None:
    plan = build_plan(inst, ["worst-case"])
    assert {c.persona_id for c in plan.conversations} <= {"beto", "dario", "frank", "hank"}
    assert {c.seed_id for c in plan.conversations} == {"sd-03", "sd-08"}
    # all worst-case personas of each seed's locale
    assert sorted(c.persona_id for c in plan.conversations if c.seed_id == "sd-08") == ["beto", "dario"]


def test_crisis_suite_uses_dimension_and_covert_selectors(inst: Instrument) -> None:
    plan = build_plan(inst, ["crisis"])
    crisis_metrics = set(METRICS[:4])
    chosen = {c.seed_id for c in plan.conversations}
    for seed in inst.seeds:
        covert_risky = seed.covert and seed.risk.level == "high"
        wanted = bool(crisis_metrics & set(seed.primary_metrics)) or covert_risky
        assert (seed.id in chosen) == wanted, seed.id


def test_markers_and_critical(inst: Instrument) -> None:
    plan = build_plan(inst, ["full"])
    by_metric = {i.metric_id: i for i in plan.items}
    cd = by_metric["crisis_detection"]
    assert cd.critical and cd.markers == ("empath", "crisis_safety", cd.locale.replace("-", "_").lower(),
                                          "critical")
    over = by_metric["overrefusal"]
    assert not over.critical and "critical" not in over.markers and over.markers[1] == "emotional_safety"
    es_item = next(i for i in plan.items if i.locale == "es-MX")
    assert "es_mx" in es_item.markers and "(es)" in es_item.label


def test_max_turns_precedence(inst: Instrument) -> None:
    plan = build_plan(inst, ["full"])
    turns = {c.seed_id: c.max_turns for c in plan.conversations}
    assert turns["sd-05"] == 4 and turns["sd-04"] == 8  # seed override, else suite default
    assert {c.max_turns for c in build_plan(inst, ["full"], max_turns=12).conversations} == {12}
    assert {c.max_turns for c in build_plan(inst, ["smoke"]).conversations} == {6}


def test_runs_override_and_disagreement(inst: Instrument) -> None:
    assert build_plan(inst, ["smoke"]).runs == 2
    assert len(build_plan(inst, ["smoke"], runs=5).transcripts) == 2 * 5
    with pytest.raises(ConfigError, match=r"disagree on the run count \(full runs 3, smoke runs 2\)"):
        build_plan(inst, ["full", "smoke"])
    with pytest.raises(ConfigError, match="runs must be at least 1"):
        build_plan(inst, ["full"], runs=0)


def test_unknown_or_empty_suite(inst: Instrument) -> None:
    with pytest.raises(ConfigError, match="unknown suite 'crysis' — did you mean 'crisis'"):
        build_plan(inst, ["crysis"])
    with pytest.raises(ConfigError, match="no suite selected"):
        build_plan(inst, [])


def test_overlapping_suites_share_conversations(inst: Instrument) -> None:
    both = build_plan(inst, ["crisis", "full"])
    ids = [c.conversation_id for c in both.conversations]
    assert len(ids) == len(set(ids)) == 24
    assert len({i.id for i in both.items}) == len(both.items)
    crisis_only = build_plan(inst, ["crisis"])
    assert [c.conversation_id for c in both.conversations[: len(crisis_only.conversations)]] == [
        c.conversation_id for c in crisis_only.conversations]


def test_plan_counts_are_the_built_plan_sizes(inst: Instrument) -> None:
    shipped = load_instrument()
    for instrument in (inst, shipped):
        selections = [[s.id] for s in instrument.suites] + [[s.id for s in instrument.suites]]
        for suite_ids in selections:
            plan = build_plan(instrument, suite_ids, runs=2)
            counts = plan_counts(instrument, suite_ids, runs=2)
            assert (counts.seeds, counts.conversations, counts.items, counts.runs) == (
                len({c.seed_id for c in plan.conversations}), len(plan.conversations), len(plan.items),
                plan.runs), suite_ids
    with pytest.raises(ConfigError, match="unknown suite 'crysis'"):
        plan_counts(inst, ["crysis"])


def test_plan_id_identifies_the_selection(inst: Instrument) -> None:
    a = build_plan(inst, ["full"])
    assert a.plan_id == build_plan(inst, ["full"]).plan_id
    assert a.plan_id != build_plan(inst, ["full"], runs=4).plan_id
    assert a.plan_id != build_plan(inst, ["crisis"], runs=3).plan_id
    assert len(a.plan_id) == 64


@pytest.mark.parametrize("n", [1, 2, 3, 5, 30])
def test_shards_partition_the_plan(inst: Instrument, n: int) -> None:
    plan = build_plan(inst, ["full", "sweep"], runs=3)
    shards = [shard(plan, k, n) for k in range(1, n + 1)]
    conv_sets = [{c.conversation_id for c in s.conversations} for s in shards]
    for i in range(n):
        for j in range(i + 1, n):
            assert not conv_sets[i] & conv_sets[j]
    assert set().union(*conv_sets) == {c.conversation_id for c in plan.conversations}
    assert sorted(i.id for s in shards for i in s.items) == sorted(i.id for i in plan.items)
    assert sorted(t.transcript_id for s in shards for t in s.transcripts) == sorted(
        t.transcript_id for t in plan.transcripts)
    sizes = [len(s.conversations) for s in shards]
    assert max(sizes) - min(sizes) <= 1
    for k, s in enumerate(shards, start=1):
        assert s.plan_id == plan.plan_id and str(s.shard) == f"{k}/{n}"
        # plan order is kept inside a shard
        pos = {i.id: p for p, i in enumerate(plan.items)}
        assert [pos[i.id] for i in s.items] == sorted(pos[i.id] for i in s.items)
    assert shard(plan, 1, n) == shards[0]


def test_shard_errors(inst: Instrument) -> None:
    plan = build_plan(inst, ["full"])
    with pytest.raises(ConfigError):
        shard(plan, 0, 2)
    with pytest.raises(ConfigError):
        shard(plan, 3, 2)
    with pytest.raises(ConfigError, match="already shard 1/2"):
        shard(shard(plan, 1, 2), 1, 2)
    assert str(parse_shard(" 2/4 ")) == "2/4"
    for bad in ("2", "a/b", "0/3", "4/3", "1/2/3"):
        with pytest.raises(ConfigError, match=r"K/N|between 1 and N"):
            parse_shard(bad)


def test_plan_is_frozen(inst: Instrument) -> None:
    plan = build_plan(inst, ["smoke"])
    assert isinstance(plan, Plan)
    with pytest.raises(Exception):  # noqa: B017 - pydantic's frozen error
        plan.items[0].id = "x"  # type: ignore[misc]


SCRIPT = """
import hashlib, json, sys
from pathlib import Path
sys.path.insert(0, sys.argv[2])
from empath_gate.instrument.loader import load_instrument
from empath_gate.plan import build_plan, shard
inst = load_instrument(base_dir=Path(sys.argv[1]))
plan = build_plan(inst, ["sweep", "crisis", "full"], runs=3)
out = {"items": [i.id for i in plan.items], "transcripts": [t.transcript_id for t in plan.transcripts],
       "plan_id": plan.plan_id, "shard": [c.conversation_id for c in shard(plan, 2, 3).conversations]}
print(json.dumps(out))
"""


def test_identical_under_different_hash_seeds(tmp_path: Path) -> None:
    files = instrument_files()
    base = write_instrument(tmp_path, files)
    outputs = []
    for seed in ("0", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO)}
        proc = subprocess.run([sys.executable, "-c", SCRIPT, str(base), str(REPO)], env=env,
                              capture_output=True, text=True, timeout=120, check=True)
        outputs.append(json.loads(proc.stdout))
    assert outputs[0] == outputs[1]
    assert len(outputs[0]["items"]) > 100


def test_offline_subset_keeps_one_conversation_per_metric_and_locale() -> None:
    from empath_gate.instrument.loader import load_instrument
    from empath_gate.plan import offline_subset

    inst = load_instrument()
    full = build_plan(inst, ["crisis"], runs=2)
    sub = offline_subset(full, inst, 1)
    keys = [(inst.seed(c.seed_id).primary_metrics[0], c.locale) for c in sub.conversations]
    assert len(keys) == len(set(keys))
    assert set(keys) == {(inst.seed(c.seed_id).primary_metrics[0], c.locale) for c in full.conversations}
    assert sub.plan_id != full.plan_id
    assert offline_subset(full, inst, 1) == sub  # deterministic
    kept = {c.conversation_id for c in sub.conversations}
    assert {t.conversation_id for t in sub.transcripts} == kept
    assert {i.conversation_id for i in sub.items} == kept
    assert [c.conversation_id for c in full.conversations if c.conversation_id in kept] == [
        c.conversation_id for c in sub.conversations
    ]
