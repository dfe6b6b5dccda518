"""The annotator gold file: valid, tied to the shipped seed scripts, large enough, and split by
its rule into two halves that each hold every label and strategy."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from typing import get_args

import pytest

from empath_gate.instrument.cues import is_voice_seed
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.seed_models import Seed
from empath_gate.turns.gold import (
    FRESH_USER_FILE,
    SPLITS,
    USER_ONLY_SPLITS,
    WRITTEN_SCRIPT_PREFIXES,
    WRITTEN_SETS,
    GoldError,
    GoldSet,
    GoldUserTurn,
    Split,
    WrittenSet,
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
    for t in gold.user_in("heldout2"):
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
        assert {t.label for t in gold.user_in("heldout2") if t.locale == loc} == set(USER_LABELS), loc


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
    fresh = gold.user_in("heldout2")
    assert len(fresh) == 914 and _off_guide(fresh) == []
    assert fresh == gold.held_out["heldout2"] and not gold.bot_in("heldout2")
    assert not set(gold.user_in(None)) & set(fresh)


def test_heldout2_file_is_optional_and_checked(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    assert load_gold(folder).user_in("heldout2") == ()
    fresh = folder / "user-heldout2.jsonl"
    fresh.write_text(json.dumps(_u("s-b", 0, split="heldout2")) + "\n", encoding="utf-8")
    assert [t.seed for t in load_gold(folder).user_in("heldout2")] == ["s-b"]
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


# ----------------------------------------------------------------------------- the written held-out sets

LOCALE_TAGS = {"es-MX": "mx-", "en-US": "us-"}
"""The part of a written script's seed after the set's prefix that names its locale."""
SHIPPED_WRITTEN: dict[str, tuple[dict[str, tuple[int, int]], str, str]] = {
    "heldout3": ({"es-MX": (173, 25), "en-US": (181, 25)}, "u:h3-us-overdraft-fees:0",
                 "u:h3-mx-ex-plantada-vips:7"),
    "heldout4": ({"es-MX": (174, 25), "en-US": (181, 25)}, "u:h4-us-trucker-missed-recital:0",
                 "u:h4-mx-suegra-casa:6"),
    "heldout5": ({"es-MX": (183, 25), "en-US": (176, 25)}, "u:h5-us-rent-short:0", "u:h5-mx-tesis-asesor:6"),
}
"""Each shipped written set: ``{locale: (user turns, scripts)}``, its first and last turn id
(files in name order: en-US first)."""
each_written = pytest.mark.parametrize("written", WRITTEN_SETS, ids=[w.split for w in WRITTEN_SETS])


def _put(folder: Path, written: WrittenSet, locale: str, rows: list[dict[str, object]]) -> Path:
    path = folder / written.file(locale)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _t(written: WrittenSet, script: str, turn: int, **kw: object) -> dict[str, object]:
    """A row of ``written``: seed ``<prefix><script>``, locale es-MX when ``script`` starts ``mx-``."""
    locale = "es-MX" if script.startswith("mx-") else "en-US"
    return _u(written.prefix + script, turn, **{"locale": locale, "split": written.split, **kw})


def _before(folder: Path, written: WrittenSet, split: str | None = None) -> tuple[str, str, str]:
    """Write one row of the set before ``written`` (heldout2 before the first written set) into
    ``folder``, of ``split`` (default: that set's); return that set's split, the file and the seed."""
    i = WRITTEN_SETS.index(written)
    if i == 0:
        before, name, row = "heldout2", FRESH_USER_FILE, _u("s-b", 0, split=split or "heldout2")
    else:
        prior = WRITTEN_SETS[i - 1]
        before, name, row = prior.split, prior.file("es-MX"), _t(prior, "mx-a", 0, split=split or prior.split)
    (folder / name).write_text(json.dumps(row) + "\n", encoding="utf-8")
    return before, name, str(row["seed"])


def test_the_written_sets_are_splits_with_their_own_prefixes() -> None:
    assert get_args(Split) == (*SPLITS, *USER_ONLY_SPLITS)
    for w in WRITTEN_SETS:
        assert w.prefix == "h" + w.split.removeprefix("heldout") + "-"
        assert w.files == f"user-{w.split}-*.jsonl"
    with pytest.raises(ValueError, match="'tune' is not a user-only held-out set"):
        GoldSet(user=(), bot=(), held_out={"tune": ()})


@each_written
def test_written_files_are_optional_and_loaded_per_locale(tmp_path: Path, written: WrittenSet) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    assert load_gold(folder).user_in(written.split) == ()
    _put(folder, written, "es-MX", [_t(written, "mx-a", 0),
                                    _t(written, "mx-a", 1, label="hope", intensity=1, valence=0.4)])
    _put(folder, written, "en-US", [_t(written, "us-a", 0)])
    before, _, seed = _before(folder, written)
    g = load_gold(folder)
    mine, p = g.user_in(written.split), written.prefix
    assert [t.id for t in mine] == [f"u:{p}us-a:0", f"u:{p}mx-a:0", f"u:{p}mx-a:1"]  # files in name order
    assert [t.seed for t in g.user_in(before)] == [seed]
    assert mine == g.held_out[written.split] and not g.bot_in(written.split)
    assert not set(g.user_in(None)) & set(mine) and not set(g.user_in(before)) & set(mine)
    assert not [s for s in USER_ONLY_SPLITS if s not in (before, written.split) and g.user_in(s)]
    assert all(t.seed.startswith(p) for t in mine)


@each_written
@pytest.mark.parametrize("case", ["tune", "earlier split", "seed of the halves", "seed of the set before",
                                  "locale", "valence", "gap"])
def test_written_set_errors_name_the_file_and_line(tmp_path: Path, written: WrittenSet, case: str) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    before, before_file, before_seed = _before(folder, written)
    f, a = re.escape(written.file("es-MX")), _t(written, "mx-a", 0)
    rows, message = {
        "tune": ([a, _t(written, "mx-b", 0, split="tune")], rf"{f}:2: split: 'tune' is not allowed"),
        "earlier split": ([_t(written, "mx-a", 0, split=before)],
                          rf"{f}:1: split: '{before}' is not allowed"),
        "seed of the halves": ([a, _u("s-a", 0, locale="es-MX", split=written.split)],
                               rf"{f}:2: seed 's-a' is also in user\.jsonl"),
        "seed of the set before": ([a, _u(before_seed, 0, locale="es-MX", split=written.split)],
                                   rf"{f}:2: seed '{before_seed}' is also in {re.escape(before_file)}"),
        "locale": ([a, _t(written, "us-a", 0)], rf"{f}:2: locale 'en-US' in a file named for"),
        "valence": ([_t(written, "mx-a", 0, valence=-2)], rf"{f}:1: valence"),
        "gap": ([a, _t(written, "mx-a", 2)], rf"{f}: seed '{written.prefix}mx-a': turns must be 0\.\.1"),
    }[case]
    _put(folder, written, "es-MX", rows)
    with pytest.raises(GoldError, match=message):
        load_gold(folder)


@each_written
def test_a_written_split_is_allowed_only_in_its_files_and_a_seed_in_one_file_only(
        tmp_path: Path, written: WrittenSet) -> None:
    folder = _write(tmp_path, [_u("s-a", 0, split=written.split)], [_b(1)])
    with pytest.raises(GoldError, match=rf"user\.jsonl:1: split: '{written.split}' is not allowed"):
        load_gold(folder)
    _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    _, before_file, _ = _before(folder, written, split=written.split)
    with pytest.raises(GoldError,
                       match=rf"{re.escape(before_file)}:1: split: '{written.split}' is not allowed"):
        load_gold(folder)
    (folder / before_file).unlink()
    _put(folder, written, "en-US", [_t(written, "us-a", 0)])
    _put(folder, written, "es-MX", [_t(written, "us-a", 0, locale="es-MX")])
    with pytest.raises(GoldError, match=rf"{re.escape(written.file('es-MX'))}:1: seed '{written.prefix}us-a' "
                                        rf"is also in {re.escape(written.file('en-US'))}"):
        load_gold(folder)


def test_the_guide_check_catches_off_guide_values(tmp_path: Path) -> None:
    folder = _write(tmp_path, [_u("s-a", 0)], [_b(1)])
    w = WRITTEN_SETS[0]
    _put(folder, w, "en-US", [_t(w, "us-a", 0, label="hopelessness", intensity=2, valence=-0.2),
                              _t(w, "us-a", 1, valence=0.5),
                              _t(w, "us-a", 2, label="hope", intensity=0, valence=0.3),
                              _t(w, "us-a", 3, label="relief_calm", intensity=1, valence=0.2)])
    p = w.prefix
    assert _off_guide(load_gold(folder).user_in(w.split)) == [f"u:{p}us-a:0", f"u:{p}us-a:1", f"u:{p}us-a:2"]


@each_written
def test_written_scripts_are_written_for_the_set_and_follow_the_guide(
        gold: GoldSet, seeds: dict[str, Seed], written: WrittenSet) -> None:
    mine = gold.user_in(written.split)
    sizes, first, last = SHIPPED_WRITTEN[written.split]
    assert {loc: (sum(t.locale == loc for t in mine), len({t.seed for t in mine if t.locale == loc}))
            for loc in LOCALES} == sizes
    assert (mine[0].id, mine[-1].id) == (first, last)
    for t in mine:
        assert t.split == written.split and t.seed.startswith(written.prefix + LOCALE_TAGS[t.locale]), t.id
        assert t.seed not in seeds, f"{t.seed}: a {written.split} script is not a seed of the instrument"
    earlier = (*gold.user, *(t for s in USER_ONLY_SPLITS[:USER_ONLY_SPLITS.index(written.split)]
                             for t in gold.user_in(s)))
    assert not {t.seed for t in mine} & {t.seed for t in earlier}
    assert _off_guide(mine) == []
