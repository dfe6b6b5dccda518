"""The annotator bench's pipeline with stub annotators (never the real one): dialogues in,
figures, floors and agreement out; failures counted, never labelled; the bench script's exit
codes, including a clear message when the offline annotator is missing."""

from __future__ import annotations

import importlib.util
import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from empath_gate.turns.gold import USER_ONLY_SPLITS, WRITTEN_SETS, GoldSet, WrittenSet, load_gold
from empath_gate.turns.gold_eval import annotate_gold, render_half, score_half
from empath_gate.turns.model import Annotation, AnnotatorFailure, Dialogue, TurnLabel, TurnLabels

ROOT = Path(__file__).resolve().parents[2]
GOLD_DIR = ROOT / "bench" / "data" / "annotator-gold"


@pytest.fixture(scope="module")
def gold() -> GoldSet:
    return load_gold(GOLD_DIR)


def _oracle(gold: GoldSet) -> Any:
    """A stub that returns the gold itself (user turns by seed and index, bot replies by id)."""
    user = {(t.seed, t.turn): t for t in gold.all_user_turns()}
    bot = {r.id: r for r in gold.bot}
    seen: list[Dialogue] = []

    def annotate(dialogue: Dialogue) -> Annotation:
        seen.append(dialogue)
        labels = []
        for i, turn in enumerate(dialogue.turns):
            if turn.role == "user" and dialogue.conversation_id in bot:
                labels.append(TurnLabel(turn=i, role="user", label="neutral", intensity=0, valence=0.0))
            elif turn.role == "user":
                g = user[(dialogue.conversation_id, i)]
                labels.append(TurnLabel(turn=i, role="user", label=g.label, intensity=g.intensity,
                                        valence=g.valence))
            else:
                r = bot[dialogue.conversation_id]
                labels.append(TurnLabel(turn=i, role="assistant", label=r.label, intensity=r.intensity,
                                        valence=r.valence, strategy=r.strategy))
        return TurnLabels(conversation_id=dialogue.conversation_id, annotator="offline", version="stub-1",
                          labels=tuple(labels))

    annotate.seen = seen  # type: ignore[attr-defined]
    return annotate


def _constant(dialogue: Dialogue) -> Annotation:
    labels = tuple(
        TurnLabel(turn=i, role=t.role, label="neutral" if t.role == "user" else "neutral_informative",
                  intensity=0, valence=0.0, strategy=None if t.role == "user" else "other")
        for i, t in enumerate(dialogue.turns))
    return TurnLabels(conversation_id=dialogue.conversation_id, annotator="offline", version="flat",
                      labels=labels)


def test_the_annotator_sees_whole_scripts_and_two_turn_replies(gold: GoldSet) -> None:
    oracle = _oracle(gold)
    preds = annotate_gold(gold, oracle)
    user = gold.all_user_turns()  # halves and held-out sets
    seeds = {t.seed for t in user}
    parts = (gold.user, *(gold.user_in(split) for split in USER_ONLY_SPLITS))
    assert all(parts) and len(seeds) == sum(len({t.seed for t in part}) for part in parts)
    assert preds.dialogues == len(seeds) + len(gold.bot) == len(oracle.seen)
    scripts = [d for d in oracle.seen if d.conversation_id in seeds]
    assert sum(len(d.turns) for d in scripts) == len(user)
    replies = [d for d in oracle.seen if d.conversation_id not in seeds]
    assert all([t.role for t in d.turns] == ["user", "assistant"] for d in replies)
    assert set(preds.labels) == {t.id for t in user} | {r.id for r in gold.bot}
    assert preds.failures == {} and preds.version == "stub-1"


def test_a_perfect_annotator_meets_every_floor(gold: GoldSet) -> None:
    half = score_half(gold, annotate_gold(gold, _oracle(gold)), "held-out")
    assert half.user.labels.macro_f1 == pytest.approx(1.0) and half.bot.labels.macro_f1 == pytest.approx(1.0)
    assert half.user.valence.spearman == pytest.approx(1.0)
    assert half.bot.strategies is not None and half.bot.strategies.accuracy == pytest.approx(1.0)
    assert half.user.labels.n == len(gold.user_in("held-out"))
    assert all(f.met for f in half.floors) and len(half.floors) == 4
    assert set(half.by_locale) == {"es-MX", "en-US"}


def test_a_constant_annotator_scores_the_baseline_and_fails_the_floors(gold: GoldSet) -> None:
    half = score_half(gold, annotate_gold(gold, _constant), "held-out")
    assert half.user.valence.spearman is None  # constant valence: undefined, reported as such
    assert not any(f.met for f in half.floors)
    text = render_half(half, "held-out")
    assert "not met" in text and "n/a" in text


def test_majority_baseline_is_the_tune_halfs_most_frequent_label(gold: GoldSet) -> None:
    from collections import Counter

    half = score_half(gold, annotate_gold(gold, _constant), "held-out")
    assert half.user.majority == Counter(t.label for t in gold.user_in("tune")).most_common(1)[0][0]
    assert half.bot.majority == Counter(r.label for r in gold.bot_in("tune")).most_common(1)[0][0]
    tune = score_half(gold, annotate_gold(gold, _constant), "tune")
    assert tune.user.majority == half.user.majority and tune.split == "tune"


def test_failures_are_counted_by_reason_and_scored_as_misses(gold: GoldSet) -> None:
    oracle = _oracle(gold)
    calls = {"n": 0}

    def flaky(dialogue: Dialogue) -> Annotation:
        calls["n"] += 1
        if calls["n"] % 3 == 0:
            return AnnotatorFailure(conversation_id=dialogue.conversation_id, annotator="judge",
                                    reason="parse_error", detail="stub")
        return oracle(dialogue)  # type: ignore[no-any-return]

    preds = annotate_gold(gold, flaky)
    failed = preds.failures["parse_error"]
    assert failed == preds.dialogues // 3
    half = score_half(gold, preds, None)
    halves = {t.id for t in gold.user} | {r.id for r in gold.bot}  # None: both halves, not heldout2
    missing = sum(v is None for k, v in preds.labels.items() if k in halves)
    assert half.user.labels.failures + half.bot.labels.failures == missing > 0
    assert half.user.labels.macro_f1 is not None and half.user.labels.macro_f1 < 1.0
    # a failure never becomes a label: precision stays perfect, only recall drops
    assert all(s.precision in (None, 1.0) for s in half.user.labels.labels)
    assert half.user.valence.excluded == half.user.labels.failures


def test_agreement_between_two_annotators(gold: GoldSet) -> None:
    a = annotate_gold(gold, _oracle(gold))
    same = score_half(gold, a, "held-out", second=annotate_gold(gold, _oracle(gold)))
    assert same.user_agreement is not None and same.user_agreement.kappa.kappa == pytest.approx(1.0)
    assert same.bot_agreement is not None and same.bot_agreement.valence.pearson == pytest.approx(1.0)
    flat = score_half(gold, a, "held-out", second=annotate_gold(gold, _constant))
    assert flat.user_agreement is not None and flat.user_agreement.kappa.kappa == pytest.approx(0.0)
    assert "Cohen's kappa" in render_half(flat, "x")


# ----------------------------------------------------------------------------- the script


def _bench() -> Any:
    path = ROOT / "bench" / "bench_annotator.py"
    spec = importlib.util.spec_from_file_location("bench_annotator_under_test", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _offline(monkeypatch: pytest.MonkeyPatch, annotate: Any) -> None:
    fake = types.ModuleType("empath_gate.turns.offline")
    fake.annotate = annotate  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "empath_gate.turns.offline", fake)


def test_bench_exits_2_with_a_clear_message_when_the_annotator_is_missing(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "empath_gate.turns.offline", None)
    assert _bench().main([]) == 2
    assert "offline annotator is not available" in capsys.readouterr().err


def test_bench_prints_both_halves_and_exits_0_when_the_floors_are_met(
        gold: GoldSet, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _offline(monkeypatch, _oracle(gold))
    assert _bench().main([]) == 0
    out = capsys.readouterr().out
    assert out.index("held-out half") < out.index("tune half")
    for needle in ("macro-F1", "majority baseline", "valence Spearman", "reflection_of_feelings", "met"):
        assert needle in out
    assert "not met" not in out


def test_bench_exits_1_when_a_held_out_floor_is_not_met_and_honours_split(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _offline(monkeypatch, _constant)
    bench = _bench()
    assert bench.main(["--split", "held-out"]) == 1
    assert "not met" in capsys.readouterr().out
    assert bench.main(["--split", "tune"]) == 0  # the tune half is printed, not gated
    out = capsys.readouterr().out
    assert "tune half" in out and "held-out half" not in out


def test_bench_reports_a_bad_gold_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    _offline(monkeypatch, _constant)
    assert _bench().main(["--gold", str(tmp_path)]) == 2
    assert "missing" in capsys.readouterr().err


def test_bench_reports_agreement_with_a_second_annotator(
        gold: GoldSet, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _offline(monkeypatch, _oracle(gold))
    second = types.ModuleType("second_annotator_stub")
    second.label = _constant  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "second_annotator_stub", second)
    bench = _bench()
    assert bench.main(["--split", "held-out", "--second", "second_annotator_stub:label"]) == 0
    out = capsys.readouterr().out
    assert "agreement with the second annotator: Cohen's kappa 0.000" in out
    assert bench.main(["--second", "second_annotator_stub:nothing"]) == 2


def test_the_second_held_out_set_is_scored_on_user_turns_only(gold: GoldSet) -> None:
    preds = annotate_gold(gold, _oracle(gold))
    half = score_half(gold, preds, "heldout2")
    assert half.split == "heldout2" and half.bot is None and half.bot_agreement is None
    assert half.user.labels.n == len(gold.user_in("heldout2"))
    assert half.user.valence.spearman == pytest.approx(1.0)
    assert [f.name.split()[0] for f in half.floors] == ["user", "user"] and all(f.met for f in half.floors)
    assert all(b is None for _, b in half.by_locale.values()) and set(half.by_locale) == {"es-MX", "en-US"}
    assert "bot replies: none in this set" in render_half(half, "heldout2")
    flat = score_half(gold, annotate_gold(gold, _constant), "heldout2", second=preds)
    assert not any(f.met for f in flat.floors) and flat.user_agreement is not None


def test_bench_prints_heldout2_and_gates_on_it(
        gold: GoldSet, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _offline(monkeypatch, _oracle(gold))
    bench = _bench()
    assert bench.main([]) == 0
    out = capsys.readouterr().out
    assert out.index("== held-out half") < out.index("== heldout2, the second") < out.index("== tune half")
    assert f"heldout2: {len(gold.user_in('heldout2'))} user turns" in out
    _offline(monkeypatch, _constant)
    assert bench.main(["--split", "heldout2"]) == 1
    out = capsys.readouterr().out
    assert "not met" in out and "== tune half" not in out and "== held-out half" not in out


def test_bench_splits_heldout2_by_source(
        gold: GoldSet, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    _offline(monkeypatch, _oracle(gold))
    assert _bench().main(["--split", "heldout2"]) == 0
    out = capsys.readouterr().out
    seeds = {t.seed for t in gold.user_in("heldout2")}
    new = {s for s in seeds if s.startswith("new-")}
    assert f"instrument seed scripts ({len(seeds - new)} scripts" in out
    assert f"scripts written for the gold ({len(new)} scripts" in out
    assert out.count("pooled Spearman 1.000") == 2


# ----------------------------------------------------------------------------- the written held-out sets


def _with_written(folder: Path, written: WrittenSet) -> Path:
    """A gold folder: the real halves plus two small files of ``written`` (no heldout2): two
    scripts per locale, six turns in all, seeds ``<prefix>mx-a`` and so on."""
    import shutil

    folder.mkdir(parents=True, exist_ok=True)
    for name in ("user.jsonl", "bot.jsonl"):
        if not (folder / name).exists():
            shutil.copy(GOLD_DIR / name, folder / name)
    rows = {"es-MX": [("mx-a", "ya no puedo más", "hopelessness", 3, -0.9),
                      ("mx-a", "gracias, ya me siento mejor", "relief_calm", 1, 0.3),
                      ("mx-b", "hola", "neutral", 0, 0.0)],
            "en-US": [("us-a", "I'm scared", "fear_anxiety", 2, -0.6),
                      ("us-a", "ok, I'll call tomorrow", "hope", 1, 0.4),
                      ("us-b", "my dog died", "sadness_grief", 2, -0.7)]}
    for locale, items in rows.items():
        turns: dict[str, int] = {}
        lines = []
        for script, text, label, intensity, valence in items:
            seed = written.prefix + script
            k = turns[seed] = turns.get(seed, -1) + 1
            lines.append(json.dumps({"id": f"u:{seed}:{k}", "locale": locale, "seed": seed, "turn": k,
                                     "text": text, "label": label, "intensity": intensity,
                                     "valence": valence, "split": written.split}))
        (folder / written.file(locale)).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


@pytest.mark.parametrize("k", range(len(WRITTEN_SETS)), ids=[w.split for w in WRITTEN_SETS])
def test_bench_prints_each_written_set_after_the_ones_before_and_gates_on_it(
        k: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    written, present = WRITTEN_SETS[k], WRITTEN_SETS[:k + 1]
    folder = tmp_path / "gold"
    for w in present:
        _with_written(folder, w)
    gold = load_gold(folder)
    assert {w.split: len(gold.user_in(w.split)) for w in WRITTEN_SETS} == {
        w.split: 6 if w in present else 0 for w in WRITTEN_SETS}
    assert gold.user_in("heldout2") == ()
    _offline(monkeypatch, _oracle(gold))
    bench = _bench()
    assert bench.main(["--gold", str(folder)]) == 0
    out = capsys.readouterr().out
    heads = [out.index(h) for h in ("== held-out half", *(f"== {w.split}, {w.name} (" for w in present),
                                     "== tune half")]
    assert heads == sorted(heads)
    assert "== heldout2" not in out and f"{written.split}: 6 user turns of 4 scripts" in out
    block = out[out.index(f"== {written.split}"):out.index("== tune half")]
    assert "es-MX: user macro-F1" in block and "en-US: user macro-F1" in block
    assert "bot replies: none in this set" in block
    _offline(monkeypatch, _constant)
    assert bench.main(["--gold", str(folder), "--split", written.split]) == 1
    out = capsys.readouterr().out
    assert "not met" in out and "== tune half" not in out and "== held-out half" not in out
    assert not [w.split for w in WRITTEN_SETS if w != written and f"== {w.split}" in out]
    lacking = WRITTEN_SETS[k + 1].split if k + 1 < len(WRITTEN_SETS) else "heldout2"
    assert bench.main(["--gold", str(folder), "--split", lacking]) == 2
    assert f"has no {lacking} set" in capsys.readouterr().err


def test_bench_labels_only_the_sets_it_prints(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    written = WRITTEN_SETS[0]
    folder = _with_written(tmp_path, written)
    gold = load_gold(folder)
    stub = _oracle(gold)
    _offline(monkeypatch, stub)
    assert _bench().main(["--gold", str(folder), "--split", "tune"]) == 0
    seen = {d.conversation_id for d in stub.seen}
    tune = {t.seed for t in gold.user_in("tune")} | {r.id for r in gold.bot_in("tune")}
    assert seen == tune  # no held-out seed, reply or written script was labelled
    stub.seen.clear()
    assert _bench().main(["--gold", str(folder), "--split", written.split]) == 0
    assert {d.conversation_id for d in stub.seen} == {t.seed for t in gold.user_in(written.split)}
    capsys.readouterr()


def test_annotate_gold_limits_itself_to_the_sets_asked(gold: GoldSet) -> None:
    stub = _oracle(gold)
    preds = annotate_gold(gold, stub, {"held-out"})
    want = {t.id for t in gold.user_in("held-out")} | {r.id for r in gold.bot_in("held-out")}
    assert set(preds.labels) == want
    assert len(annotate_gold(gold, stub).labels) == len(gold.all_user_turns()) + len(gold.bot)
