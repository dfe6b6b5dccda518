"""The turn layer's label set and lexicons: shipped, validated by the instrument loader, fixed ids."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from empath_gate.errors import SuiteError
from empath_gate.instrument.emotion_models import MIN_USER_ENTRIES
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import LOCALES
from empath_gate.turns.labelset import label_set, lexicon, lexicon_sizes
from empath_gate.turns.model import BOT_LABELS, STRATEGIES, USER_LABELS

REPO = Path(__file__).resolve().parents[2]


def test_shipped_label_set_has_the_fixed_ids_with_both_locales() -> None:
    ls = label_set()
    assert tuple(x.id for x in ls.user_labels) == USER_LABELS
    assert tuple(x.id for x in ls.bot_labels) == BOT_LABELS
    assert tuple(x.id for x in ls.strategies) == STRATEGIES
    for lab in (*ls.user_labels, *ls.bot_labels, *ls.strategies):
        for loc in LOCALES:
            assert lab.display.get(loc) and lab.definition.get(loc)
        assert lab.display.get("es-MX") != "" and lab.source
    # the valence ordering the dynamics rely on
    v = ls.valence
    assert v("hopelessness") < v("sadness_grief") < v("neutral") < v("hope")
    assert ls.valence("neutral") == 0.0 and ls.valence("relief_calm") > 0


def test_every_user_label_has_enough_phrases_per_locale() -> None:
    sizes = lexicon_sizes()
    assert set(sizes) == set(LOCALES)
    for loc in LOCALES:
        for lab in USER_LABELS:
            assert sizes[loc][lab] >= MIN_USER_ENTRIES, (loc, lab)
        assert lexicon(loc).negators


def _copy_instrument(tmp_path: Path) -> Path:
    dest = tmp_path / "suites"
    shutil.copytree(REPO / "suites", dest)
    shutil.copy(REPO / "thresholds.yaml", tmp_path / "thresholds.yaml")
    return dest


def test_a_short_label_or_a_wrong_id_is_a_loader_error(tmp_path: Path) -> None:
    base = _copy_instrument(tmp_path)
    lex = base / "lexicons" / "en-US.yaml"
    text = lex.read_text(encoding="utf-8")
    start = text.index("  numbness: [")
    end = text.index("\n  ]", start)
    lex.write_text(text[:start] + "  numbness: [numb, empty" + text[end:], encoding="utf-8")
    emo = base / "emotions.yaml"
    emo.write_text(emo.read_text(encoding="utf-8").replace("id: anger", "id: rage"), encoding="utf-8")
    with pytest.raises(SuiteError) as err:
        load_instrument(base_dir=base)
    msg = str(err.value)
    assert "en-US.yaml" in msg and "numbness" in msg and f"fewer than {MIN_USER_ENTRIES}" in msg
    assert "emotions.yaml" in msg and "user_labels must list exactly" in msg


def test_instrument_without_the_turn_layer_files_still_loads(tmp_path: Path) -> None:
    base = _copy_instrument(tmp_path)
    (base / "emotions.yaml").unlink()
    shutil.rmtree(base / "lexicons")
    inst = load_instrument(base_dir=base)
    assert inst.emotions is None and inst.lexicons == ()
    with pytest.raises(SuiteError, match=r"emotions\.yaml is missing"):
        label_set(inst)
    with pytest.raises(SuiteError, match=r"lexicons/es-MX\.yaml is missing"):
        lexicon("es-MX", inst)


def test_readme_gives_the_current_lexicon_sizes() -> None:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    sizes = lexicon_sizes()
    for loc in LOCALES:
        row = text.split(f"  | {loc} | ", 1)[1].split("\n", 1)[0]
        shown = [int(x) for x in row.rstrip(" |").split(" | ")]
        want = [sizes[loc][lab] for lab in (*USER_LABELS, *BOT_LABELS) if lab != "neutral_informative"]
        assert shown == want, f"README's lexicon table is stale for {loc}: {want}"
