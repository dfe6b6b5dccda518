"""The annotator gold file: valid, tied to the shipped seed scripts, large enough, and split by
its rule into two halves that each hold every label and strategy."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from empath_gate.instrument.cues import is_voice_seed
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.seed_models import Seed
from empath_gate.turns.gold import (
    FIFTH_SCRIPT_PREFIX,
    FOURTH_SCRIPT_PREFIX,
    THIRD_SCRIPT_PREFIX,
    WRITTEN_SCRIPT_PREFIXES,
    GoldError,
    GoldSet,
    GoldUserTurn,
    bot_dialogue,
    deal_halves,
    expected_splits,
    load_gold,
    split_problems,
    user_dialogues,
)
from empath_gate.turns.model import BOT_LABELS, STRATEGIES, USER_LABELS

GOLD_DIR = Path(__file__).resolve().parents[2] / "bench" / "data" / "annotator-gold"
LOCALES = ("es-MX", "en-US")


@pytest.fixture(scope="module")
def gold() -> GoldSet:
    return load_gold(GOLD_DIR)


@pytest.fixture(scope="module")
def seeds() -> dict[str, Seed]:
    return {s.id: s for s in load_instrument().seeds}


def test_user_side_covers_every_turn_of_at_least_40_seed_scripts_per_locale(
        gold: GoldSet, seeds: dict[str, Seed]) -> None:
    by_seed: dict[str, list[str]] = {}
    for t in gold.user:
        assert t.seed in seeds, f"{t.id}: no such seed in suites/seeds"
        assert t.locale == seeds[t.seed].locale, t.id
        by_seed.setdefault(t.seed, []).append(t.text)
    for seed_id, texts in by_seed.items():
        assert tuple(texts) == tuple(seeds[seed_id].script), f"{seed_id}: gold turns differ from the script"
    per_locale: Counter[str] = Counter(seeds[s].locale for s in by_seed)
    assert all(per_locale[loc] >= 40 for loc in LOCALES), per_locale


def test_user_side_spans_every_dimension_metric_and_risk_level(gold: GoldSet, seeds: dict[str, Seed]) -> None:
    chosen = [seeds[s] for s in {t.seed for t in gold.user}]
    for loc in LOCALES:
        mine = [s for s in chosen if s.locale == loc]
        # one-person text seeds: the voice and multi-party seeds came after the gold
        shipped = [s for s in seeds.values()
                   if s.locale == loc and not is_voice_seed(s.tags) and not s.multi_party]
        assert {s.id.split("-")[0] for s in mine} == {s.id.split("-")[0] for s in shipped}
        levels = {s.risk.level if s.risk else None for s in mine}
        assert levels == {s.risk.level if s.risk else None for s in shipped}, loc
    metrics = {m for s in seeds.values() if not is_voice_seed(s.tags) and not s.multi_party
               for m in s.primary_metrics}
    assert {m for s in chosen for m in s.primary_metrics} == metrics


def test_bot_side_has_150_replies_per_locale_and_10_per_strategy(gold: GoldSet) -> None:
    per_locale: Counter[str] = Counter(r.locale for r in gold.bot)
    assert all(per_locale[loc] >= 150 for loc in LOCALES), per_locale
    per_strategy: Counter[tuple[str, str]] = Counter((r.locale, r.strategy) for r in gold.bot)
    short = {k: n for k in ((loc, s) for loc in LOCALES for s in STRATEGIES) if (n := per_strategy[k]) < 10}
    assert not short, short
    assert {r.quality for r in gold.bot} == {"good", "mediocre", "generic", "unsafe"}


def test_stored_halves_follow_the_split_rule(gold: GoldSet) -> None:
    assert split_problems(gold) == []


def test_both_halves_hold_every_label_and_strategy_per_locale(gold: GoldSet) -> None:
    for loc in LOCALES:
        for split in ("tune", "held-out"):
            user = Counter(t.label for t in gold.user_in(split) if t.locale == loc)
            bot = Counter(r.label for r in gold.bot_in(split) if r.locale == loc)
            strat = Counter(r.strategy for r in gold.bot_in(split) if r.locale == loc)
            assert set(user) == set(USER_LABELS), (loc, split, user)
            assert set(bot) == set(BOT_LABELS), (loc, split, bot)
            assert set(strat) == set(STRATEGIES), (loc, split, strat)


def test_halves_are_about_half_and_a_seed_never_straddles_them(gold: GoldSet) -> None:
    halves: dict[str, set[str]] = {}
    for t in gold.user:
        halves.setdefault(t.seed, set()).add(t.split)
    assert all(len(h) == 1 for h in halves.values())
    for loc in LOCALES:
        mine = {t.seed for t in gold.user if t.locale == loc}
        seeds = Counter(next(iter(h)) for s, h in halves.items() if s in mine)
        assert abs(seeds["tune"] - seeds["held-out"]) <= 1, (loc, seeds)
        bots = Counter(r.split for r in gold.bot if r.locale == loc)
        assert abs(bots["tune"] - bots["held-out"]) <= 1, (loc, bots)


def test_gold_values_follow_the_guide(gold: GoldSet) -> None:
    # the README's valence convention: hopelessness strongly negative, hope positive, neutral near 0
    for t in gold.user:
        if t.label == "hopelessness":
            assert t.valence <= -0.5, t.id
        if t.label in ("hope", "relief_calm"):
            assert t.valence > 0, t.id
        if t.label == "neutral":
            assert abs(t.valence) <= 0.3 and t.intensity == 0, t.id
    for r in gold.bot:
        assert {"warmth_care": r.valence > 0, "concern": r.valence < 0,
                "neutral_informative": r.valence == 0 and r.intensity == 0}[r.label], r.id


def test_deal_halves_is_stratified_order_free_and_balanced() -> None:
    units = [("s1", f"u{i}") for i in range(7)] + [("s2", f"v{i}") for i in range(5)]
    a = deal_halves(units)
    assert a == deal_halves(list(reversed(units)) + units[:3])
    for prefix in ("u", "v"):
        c = Counter(h for u, h in a.items() if u.startswith(prefix))
        assert abs(c["tune"] - c["held-out"]) == 1
    total = Counter(a.values())
    assert total["tune"] == total["held-out"] == 6


def test_dialogues_for_the_annotator(gold: GoldSet) -> None:
    pairs = user_dialogues(gold.user)
    assert len(pairs) == len({t.seed for t in gold.user})
    dialogue, items = pairs[0]
    assert dialogue.conversation_id == items[0].seed and dialogue.locale == items[0].locale
    assert [t.text for t in dialogue.turns] == [t.text for t in items]
    assert all(t.role == "user" for t in dialogue.turns)
    reply = gold.bot[0]
    d = bot_dialogue(reply)
    assert [(t.role, t.text) for t in d.turns] == [("user", reply.user_text), ("assistant", reply.text)]


# ----------------------------------------------------------------------------- loader errors


def _write(folder: Path, user: list[dict[str, object]], bot: list[dict[str, object]]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "user.jsonl").write_text("".join(json.dumps(r) + "\n" for r in user), encoding="utf-8")
    (folder / "bot.jsonl").write_text("".join(json.dumps(r) + "\n" for r in bot), encoding="utf-8")
    return folder


def _u(seed: str, turn: int, **kw: object) -> dict[str, object]:
    row: dict[str, object] = {"id": f"u:{seed}:{turn}", "locale": "en-US", "seed": seed, "turn": turn,
                              "text": "hi", "label": "neutral", "intensity": 0, "valence": 0.0,
                              "split": "tune"}
    return {**row, **kw}


def _b(n: int, **kw: object) -> dict[str, object]:
    row: dict[str, object] = {"id": f"b-us-{n:03d}", "locale": "en-US", "strategy": "question",
                              "label": "concern", "intensity": 1, "valence": -0.2, "quality": "good",
                              "user_text": "hi", "text": "How are you?", "split": "tune"}
    return {**row, **kw}


def test_a_valid_small_gold_loads_and_its_split_is_checked(tmp_path: Path) -> None:
    g = load_gold(_write(tmp_path, [_u("s-a", 0), _u("s-a", 1), _u("s-b", 0)], [_b(1), _b(2)]))
    assert len(g.user) == 3 and len(g.bot) == 2
    want = expected_splits(g.user, g.bot)
    assert want["u:s-a:0"] == want["u:s-a:1"] != want["u:s-b:0"]  # one stratum: dealt apart
    assert want["b-us-001"] != want["b-us-002"]
    assert len(split_problems(g)) == sum(v != "tune" for v in want.values())


@pytest.mark.parametrize(("user", "bot", "message"), [
    ([_u("s-a", 0, label="joy")], [_b(1)], "user.jsonl:1: label"),
    ([_u("s-a", 0)], [_b(1), _b(2, strategy="advice")], "bot.jsonl:2: strategy"),
    ([_u("s-a", 0)], [_b(1, label="hopelessness")], "bot.jsonl:1: label"),
    ([_u("s-a", 0, valence=1.5)], [_b(1)], "user.jsonl:1: valence"),
    ([_u("s-a", 0, intensity=4)], [_b(1)], "user.jsonl:1: intensity"),
    ([_u("s-a", 0, split="test")], [_b(1)], "user.jsonl:1: split"),
    ([_u("s-a", 0, extra=1)], [_b(1)], "user.jsonl:1: extra"),
    ([_u("s-a", 0, id="u:s-a:5")], [_b(1)], "user.jsonl:1"),
    ([_u("s-a", 0), _u("s-a", 0)], [_b(1)], "user.jsonl:2: id 'u:s-a:0' repeats line 1"),
    ([_u("s-a", 0), _u("s-a", 2)], [_b(1)], "turns must be 0..1"),
    ([_u("s-a", 0), _u("s-a", 1, locale="es-MX")], [_b(1)], "more than one locale"),
])
def test_loader_errors_name_file_and_line(tmp_path: Path, user: list[dict[str, object]],
                                          bot: list[dict[str, object]], message: str) -> None:
    with pytest.raises(GoldError, match=message.replace("(", r"\(").replace(".", r"\.")):
        load_gold(_write(tmp_path, user, bot))


def test_loader_reports_bad_json_and_missing_files(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    (folder / "bot.jsonl").write_text(json.dumps(_b(1)) + "\n{not json\n", encoding="utf-8")
    with pytest.raises(GoldError, match=r"bot\.jsonl:2: not valid JSON"):
        load_gold(folder)
    (folder / "bot.jsonl").unlink()
    with pytest.raises(GoldError, match="missing"):
        load_gold(folder)


def test_loader_reads_through_the_bounded_reader(tmp_path: Path) -> None:
    from empath_gate.bounded import InputLimitError, InputLimits

    folder = _write(tmp_path, [_u("s-a", 0, text="x" * 50)], [_b(1)])
    with pytest.raises(InputLimitError):
        load_gold(folder, InputLimits(max_field_chars=20))


# ----------------------------------------------------------------------------- the second held-out set


def test_heldout2_labels_every_user_turn_of_40_new_seed_scripts_per_locale(
        gold: GoldSet, seeds: dict[str, Seed]) -> None:
    by_seed: dict[str, list[str]] = {}
    locales: dict[str, str] = {}
    for t in gold.fresh:
        assert t.split == "heldout2", t.id
        by_seed.setdefault(t.seed, []).append(t.text)
        locales[t.seed] = t.locale
    written = {s for s in by_seed if s.startswith(WRITTEN_SCRIPT_PREFIXES)}
    for seed_id, texts in by_seed.items():
        if seed_id in written:
            assert seed_id not in seeds, seed_id
            continue
        assert seed_id in seeds and locales[seed_id] == seeds[seed_id].locale, seed_id
        assert tuple(texts) == tuple(seeds[seed_id].script), f"{seed_id}: heldout2 differs from the script"
    assert not set(by_seed) & {t.seed for t in gold.user}  # no seed of the tune or held-out half
    per_locale: Counter[str] = Counter(locales[s] for s in by_seed if s not in written)
    assert all(per_locale[loc] >= 40 for loc in LOCALES), per_locale
    new_per_locale: Counter[str] = Counter(locales[s] for s in written)
    assert all(new_per_locale[loc] >= 20 for loc in LOCALES), new_per_locale
    # it reaches the voice and multi-party seeds the first gold predates
    instrument = [seeds[s] for s in by_seed if s not in written]
    assert any(is_voice_seed(s.tags) for s in instrument) and any(s.multi_party for s in instrument)
    for loc in LOCALES:
        assert {t.label for t in gold.fresh if t.locale == loc} == set(USER_LABELS), loc


def _off_guide(items: tuple[GoldUserTurn, ...]) -> list[str]:
    """Ids of held-out user turns whose values break the README's guide."""
    bad = []
    for t in items:
        ok = {"hopelessness": t.valence <= -0.5, "hope": t.valence > 0, "relief_calm": t.valence > 0,
              "neutral": abs(t.valence) <= 0.3 and t.intensity == 0}.get(t.label, True)
        if not ok or (t.label != "neutral" and t.intensity == 0):
            bad.append(t.id)
    return bad


def test_heldout2_values_follow_the_guide(gold: GoldSet) -> None:
    assert _off_guide(gold.fresh) == []
    assert gold.user_in("heldout2") == gold.fresh and not gold.bot_in("heldout2")
    assert not set(gold.user_in(None)) & set(gold.fresh)


def test_heldout2_file_is_optional_and_checked(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    assert load_gold(folder).fresh == ()
    fresh = folder / "user-heldout2.jsonl"
    fresh.write_text(json.dumps(_u("s-b", 0, split="heldout2")) + "\n", encoding="utf-8")
    assert [t.seed for t in load_gold(folder).fresh] == ["s-b"]
    fresh.write_text(json.dumps(_u("s-b", 0, split="heldout2")) + "\n" + json.dumps(_u("s-c", 0)) + "\n",
                     encoding="utf-8")
    with pytest.raises(GoldError, match=r"user-heldout2\.jsonl:2: split: 'tune' is not allowed"):
        load_gold(folder)
    fresh.write_text(json.dumps(_u("s-a", 0, split="heldout2")) + "\n", encoding="utf-8")
    with pytest.raises(GoldError, match=r"user-heldout2\.jsonl:1: seed 's-a' is also in user\.jsonl"):
        load_gold(folder)
    fresh.unlink()
    _write(tmp_path, [_u("s-a", 0, split="heldout2")], [_b(1)])
    with pytest.raises(GoldError, match=r"user\.jsonl:1: split: 'heldout2' is not allowed"):
        load_gold(folder)


# ----------------------------------------------------------------------------- the third held-out set


def _h3(folder: Path, locale: str, rows: list[dict[str, object]]) -> Path:
    path = folder / f"user-heldout3-{locale}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _t3(seed: str, turn: int, **kw: object) -> dict[str, object]:
    locale = "es-MX" if seed.startswith("h3-mx-") else "en-US"
    return _u(seed, turn, **{"locale": locale, "split": "heldout3", **kw})


def test_heldout3_files_are_optional_and_loaded_per_locale(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    assert load_gold(folder).third == ()
    _h3(folder, "es-MX", [_t3("h3-mx-a", 0), _t3("h3-mx-a", 1, label="hope", intensity=1, valence=0.4)])
    _h3(folder, "en-US", [_t3("h3-us-a", 0)])
    g = load_gold(folder)
    assert [t.id for t in g.third] == ["u:h3-us-a:0", "u:h3-mx-a:0", "u:h3-mx-a:1"]  # files in name order
    assert g.user_in("heldout3") == g.third and not g.bot_in("heldout3")
    assert not set(g.user_in(None)) & set(g.third) and g.fresh == ()
    assert all(t.seed.startswith(THIRD_SCRIPT_PREFIX) for t in g.third)


@pytest.mark.parametrize(("rows", "message"), [
    ([_t3("h3-mx-a", 0), _t3("h3-mx-b", 0, split="tune")],
     r"user-heldout3-es-MX\.jsonl:2: split: 'tune' is not allowed"),
    ([_t3("h3-mx-a", 0, split="heldout2")],
     r"user-heldout3-es-MX\.jsonl:1: split: 'heldout2' is not allowed"),
    ([_t3("h3-mx-a", 0), _t3("s-a", 0, locale="es-MX")],
     r"user-heldout3-es-MX\.jsonl:2: seed 's-a' is also in user\.jsonl"),
    ([_t3("h3-mx-a", 0), _t3("s-b", 0, locale="es-MX")],
     r"user-heldout3-es-MX\.jsonl:2: seed 's-b' is also in user-heldout2\.jsonl"),
    ([_t3("h3-mx-a", 0), _t3("h3-us-a", 0)],
     r"user-heldout3-es-MX\.jsonl:2: locale 'en-US' in a file named for"),
    ([_t3("h3-mx-a", 0, valence=-2)], r"user-heldout3-es-MX\.jsonl:1: valence"),
    ([_t3("h3-mx-a", 0), _t3("h3-mx-a", 2)],
     r"user-heldout3-es-MX\.jsonl: seed 'h3-mx-a': turns must be 0\.\.1"),
])
def test_heldout3_errors_name_the_file_and_line(tmp_path: Path, rows: list[dict[str, object]],
                                                message: str) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    (folder / "user-heldout2.jsonl").write_text(json.dumps(_u("s-b", 0, split="heldout2")) + "\n",
                                                encoding="utf-8")
    _h3(folder, "es-MX", rows)
    with pytest.raises(GoldError, match=message):
        load_gold(folder)


def test_heldout3_split_is_allowed_only_in_its_files_and_a_seed_in_one_file_only(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0, split="heldout3")], [_b(1)])
    with pytest.raises(GoldError, match=r"user\.jsonl:1: split: 'heldout3' is not allowed"):
        load_gold(folder)
    _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    (folder / "user-heldout2.jsonl").write_text(json.dumps(_u("s-b", 0, split="heldout3")) + "\n",
                                                encoding="utf-8")
    with pytest.raises(GoldError, match=r"user-heldout2\.jsonl:1: split: 'heldout3' is not allowed"):
        load_gold(folder)
    (folder / "user-heldout2.jsonl").unlink()
    _h3(folder, "en-US", [_t3("h3-us-a", 0)])
    _h3(folder, "es-MX", [_t3("h3-us-a", 0, locale="es-MX")])
    with pytest.raises(GoldError, match=r"user-heldout3-es-MX\.jsonl:1: seed 'h3-us-a' is also in "
                                        r"user-heldout3-en-US\.jsonl"):
        load_gold(folder)


def test_the_guide_check_catches_off_guide_values(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    _h3(folder, "en-US", [_t3("h3-us-a", 0, label="hopelessness", intensity=2, valence=-0.2),
                          _t3("h3-us-a", 1, valence=0.5), _t3("h3-us-a", 2, label="hope", intensity=0,
                                                              valence=0.3),
                          _t3("h3-us-a", 3, label="relief_calm", intensity=1, valence=0.2)])
    assert _off_guide(load_gold(folder).third) == ["u:h3-us-a:0", "u:h3-us-a:1", "u:h3-us-a:2"]


def test_heldout3_scripts_are_written_for_it_and_follow_the_guide(
        gold: GoldSet, seeds: dict[str, Seed]) -> None:
    if not gold.third:
        pytest.skip("the gold has no user-heldout3-*.jsonl file yet")
    prefix = {"es-MX": "h3-mx-", "en-US": "h3-us-"}
    for t in gold.third:
        assert t.split == "heldout3" and t.seed.startswith(prefix[t.locale]), t.id
        assert t.seed not in seeds, f"{t.seed}: a heldout3 script is not a seed of the instrument"
    assert {t.locale for t in gold.third} == set(LOCALES)
    assert not {t.seed for t in gold.third} & {t.seed for t in (*gold.user, *gold.fresh)}
    assert _off_guide(gold.third) == []


# ----------------------------------------------------------------------------- the fourth held-out set


def _h4(folder: Path, locale: str, rows: list[dict[str, object]]) -> Path:
    path = folder / f"user-heldout4-{locale}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _t4(seed: str, turn: int, **kw: object) -> dict[str, object]:
    locale = "es-MX" if seed.startswith("h4-mx-") else "en-US"
    return _u(seed, turn, **{"locale": locale, "split": "heldout4", **kw})


def test_heldout4_files_are_optional_and_loaded_per_locale(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    assert load_gold(folder).fourth == ()
    _h4(folder, "es-MX", [_t4("h4-mx-a", 0), _t4("h4-mx-a", 1, label="hope", intensity=1, valence=0.4)])
    _h4(folder, "en-US", [_t4("h4-us-a", 0)])
    _h3(folder, "en-US", [_t3("h3-us-a", 0)])
    g = load_gold(folder)
    assert [t.id for t in g.fourth] == ["u:h4-us-a:0", "u:h4-mx-a:0", "u:h4-mx-a:1"]  # files in name order
    assert [t.id for t in g.third] == ["u:h3-us-a:0"]
    assert g.user_in("heldout4") == g.fourth and not g.bot_in("heldout4")
    assert not set(g.user_in(None)) & set(g.fourth) and not set(g.third) & set(g.fourth)
    assert all(t.seed.startswith(FOURTH_SCRIPT_PREFIX) for t in g.fourth)


@pytest.mark.parametrize(("rows", "message"), [
    ([_t4("h4-mx-a", 0), _t4("h4-mx-b", 0, split="tune")],
     r"user-heldout4-es-MX\.jsonl:2: split: 'tune' is not allowed"),
    ([_t4("h4-mx-a", 0, split="heldout3")],
     r"user-heldout4-es-MX\.jsonl:1: split: 'heldout3' is not allowed"),
    ([_t4("h4-mx-a", 0), _t4("s-a", 0, locale="es-MX")],
     r"user-heldout4-es-MX\.jsonl:2: seed 's-a' is also in user\.jsonl"),
    ([_t4("h4-mx-a", 0), _t4("h3-mx-a", 0)],
     r"user-heldout4-es-MX\.jsonl:2: seed 'h3-mx-a' is also in user-heldout3-es-MX\.jsonl"),
    ([_t4("h4-mx-a", 0), _t4("h4-us-a", 0)],
     r"user-heldout4-es-MX\.jsonl:2: locale 'en-US' in a file named for"),
    ([_t4("h4-mx-a", 0, valence=-2)], r"user-heldout4-es-MX\.jsonl:1: valence"),
    ([_t4("h4-mx-a", 0), _t4("h4-mx-a", 2)],
     r"user-heldout4-es-MX\.jsonl: seed 'h4-mx-a': turns must be 0\.\.1"),
])
def test_heldout4_errors_name_the_file_and_line(tmp_path: Path, rows: list[dict[str, object]],
                                                 message: str) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    _h3(folder, "es-MX", [_t3("h3-mx-a", 0)])
    _h4(folder, "es-MX", rows)
    with pytest.raises(GoldError, match=message):
        load_gold(folder)


def test_heldout4_split_is_allowed_only_in_its_files(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0, split="heldout4")], [_b(1)])
    with pytest.raises(GoldError, match=r"user\.jsonl:1: split: 'heldout4' is not allowed"):
        load_gold(folder)
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    _h3(folder, "es-MX", [_t3("h3-mx-a", 0, split="heldout4")])
    with pytest.raises(GoldError, match=r"user-heldout3-es-MX\.jsonl:1: split: 'heldout4' is not allowed"):
        load_gold(folder)


def test_heldout4_scripts_are_written_for_it_and_follow_the_guide(
        gold: GoldSet, seeds: dict[str, Seed]) -> None:
    if not gold.fourth:
        pytest.skip("the gold has no user-heldout4-*.jsonl file yet (being written blind)")
    prefix = {"es-MX": "h4-mx-", "en-US": "h4-us-"}
    for t in gold.fourth:
        assert t.split == "heldout4" and t.seed.startswith(prefix[t.locale]), t.id
        assert t.seed not in seeds, f"{t.seed}: a heldout4 script is not a seed of the instrument"
    assert {t.locale for t in gold.fourth} == set(LOCALES)
    assert not {t.seed for t in gold.fourth} & {t.seed for t in (*gold.user, *gold.fresh, *gold.third)}
    assert _off_guide(gold.fourth) == []


# ----------------------------------------------------------------------------- the fifth held-out set


def _h5(folder: Path, locale: str, rows: list[dict[str, object]]) -> Path:
    path = folder / f"user-heldout5-{locale}.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _t5(seed: str, turn: int, **kw: object) -> dict[str, object]:
    locale = "es-MX" if seed.startswith("h5-mx-") else "en-US"
    return _u(seed, turn, **{"locale": locale, "split": "heldout5", **kw})


def test_heldout5_files_are_optional_and_loaded_per_locale(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    assert load_gold(folder).fifth == ()
    _h5(folder, "es-MX", [_t5("h5-mx-a", 0), _t5("h5-mx-a", 1, label="hope", intensity=1, valence=0.4)])
    _h5(folder, "en-US", [_t5("h5-us-a", 0)])
    _h4(folder, "en-US", [_t4("h4-us-a", 0)])
    g = load_gold(folder)
    assert [t.id for t in g.fifth] == ["u:h5-us-a:0", "u:h5-mx-a:0", "u:h5-mx-a:1"]  # files in name order
    assert [t.id for t in g.fourth] == ["u:h4-us-a:0"]
    assert g.user_in("heldout5") == g.fifth and not g.bot_in("heldout5")
    assert not set(g.user_in(None)) & set(g.fifth) and not set(g.fourth) & set(g.fifth)
    assert all(t.seed.startswith(FIFTH_SCRIPT_PREFIX) for t in g.fifth)


@pytest.mark.parametrize(("rows", "message"), [
    ([_t5("h5-mx-a", 0), _t5("h5-mx-b", 0, split="tune")],
     r"user-heldout5-es-MX\.jsonl:2: split: 'tune' is not allowed"),
    ([_t5("h5-mx-a", 0, split="heldout4")],
     r"user-heldout5-es-MX\.jsonl:1: split: 'heldout4' is not allowed"),
    ([_t5("h5-mx-a", 0), _t5("h4-mx-a", 0)],
     r"user-heldout5-es-MX\.jsonl:2: seed 'h4-mx-a' is also in user-heldout4-es-MX\.jsonl"),
    ([_t5("h5-mx-a", 0), _t5("h5-us-a", 0)],
     r"user-heldout5-es-MX\.jsonl:2: locale 'en-US' in a file named for"),
    ([_t5("h5-mx-a", 0, valence=2)], r"user-heldout5-es-MX\.jsonl:1: valence"),
])
def test_heldout5_errors_name_the_file_and_line(tmp_path: Path, rows: list[dict[str, object]],
                                                 message: str) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    _h4(folder, "es-MX", [_t4("h4-mx-a", 0)])
    _h5(folder, "es-MX", rows)
    with pytest.raises(GoldError, match=message):
        load_gold(folder)


def test_heldout5_split_is_allowed_only_in_its_files(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0, split="heldout5")], [_b(1)])
    with pytest.raises(GoldError, match=r"user\.jsonl:1: split: 'heldout5' is not allowed"):
        load_gold(folder)
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    _h4(folder, "es-MX", [_t4("h4-mx-a", 0, split="heldout5")])
    with pytest.raises(GoldError, match=r"user-heldout4-es-MX\.jsonl:1: split: 'heldout5' is not allowed"):
        load_gold(folder)


def test_heldout5_scripts_are_written_for_it_and_follow_the_guide(
        gold: GoldSet, seeds: dict[str, Seed]) -> None:
    if not gold.fifth:
        pytest.skip("the gold has no user-heldout5-*.jsonl file yet (being written blind)")
    prefix = {"es-MX": "h5-mx-", "en-US": "h5-us-"}
    for t in gold.fifth:
        assert t.split == "heldout5" and t.seed.startswith(prefix[t.locale]), t.id
        assert t.seed not in seeds, f"{t.seed}: a heldout5 script is not a seed of the instrument"
    assert {t.locale for t in gold.fifth} == set(LOCALES)
    assert not {t.seed for t in gold.fifth} & {t.seed for t in (*gold.user, *gold.fresh, *gold.third,
                                                                  *gold.fourth)}
    assert _off_guide(gold.fifth) == []
