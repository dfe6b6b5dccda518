"""Identity conflicts are loader errors with file, line, pointer and fix; validate lists them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fixture_instrument import TEAM_SEED as SEED
from fixture_instrument import TeamWriter, write_instrument

from empath_gate.cli import main
from empath_gate.errors import SuiteError
from empath_gate.instrument import loader
from empath_gate.instrument.loader import load_instrument

# Line numbers below refer to SEED (line 1 = "seeds:", line 5 = "instruction:").
INSTRUCTION = "    instruction: The user asks for help with a worry that keeps them awake at night.\n"


def problems_of(base: Path, layer: Path) -> list[str]:
    with pytest.raises(SuiteError) as info:
        load_instrument((layer,), base_dir=base)
    return info.value.problems


def test_an_instruction_naming_its_own_person_is_an_error(base: Path, team: TeamWriter) -> None:
    named = "    instruction: You are Iván, 26, and a worry keeps you awake at night.\n"
    text = SEED.replace(INSTRUCTION, named)
    layer = team({"seeds/mine.yaml": text})
    assert problems_of(base, layer) == [
        f"{layer / 'seeds/mine.yaml'}:5: /seeds/0/instruction: seed team-01: the instruction gives the "
        "speaker a name or age of its own ('You are Iván, 26'); the persona supplies the person — "
        "describe the situation in the second person without a name or age (state who the person must "
        "be in 'speaker:'), "
        "or fix the person with 'character: <persona id>'"
    ]


def test_a_speaker_no_persona_fits_is_an_error_at_its_line(base: Path, team: TeamWriter) -> None:
    speaker = "    speaker: {gender: man, age_min: 20, roles: [parnet]}\n"
    text = SEED.replace(INSTRUCTION, INSTRUCTION + speaker)
    layer = team({"seeds/mine.yaml": text})
    [msg] = problems_of(base, layer)
    assert msg.startswith(f"{layer / 'seeds/mine.yaml'}:6: /seeds/0/speaker: seed team-01: no en-US "
                          "persona may speak it (speaker: man, 20-100, roles: parnet); no en-US persona "
                          "holds the role 'parnet' — widen 'speaker'")


def test_a_misspelt_character_is_an_error(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace(INSTRUCTION, INSTRUCTION + "    character: emmma\n")})
    [msg] = problems_of(base, layer)
    assert msg == (f"{layer / 'seeds/mine.yaml'}:6: /seeds/0/character: seed team-01: character 'emmma' "
                   "is not a persona — did you mean 'emma'?")


def test_a_script_naming_the_speaker_is_an_error_at_the_turn(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace("      - I can't sleep again\n",
                                                  "      - my name is Dana and I can't sleep again\n")})
    [msg] = problems_of(base, layer)
    assert msg == (f"{layer / 'seeds/mine.yaml'}:10: /seeds/0/script/0: seed team-01: user turn 1 introduces "
                   "the speaker as 'Dana' — write {name}: the persona's given name is filled in")


def test_a_team_seed_with_placeholders_and_a_fitting_speaker_loads(base: Path, team: TeamWriter) -> None:
    text = SEED.replace(INSTRUCTION, INSTRUCTION + "    speaker: {age_min: 25, age_max: 40}\n").replace(
        "      - it's the third night this week\n", "      - i'm {name}, it's the third night this week\n")
    inst = load_instrument([team({"seeds/mine.yaml": text})], base_dir=base)
    assert inst.seed("team-01").speaker.age_min == 25


@pytest.fixture
def fixture_shipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The fixture instrument as the 'shipped' one for in-process CLI runs."""
    suites = write_instrument(tmp_path / "pkg")
    monkeypatch.setattr(loader, "shipped_paths", lambda: (suites, suites.parent / "thresholds.yaml"))
    monkeypatch.chdir(tmp_path)
    return suites


def test_validate_lists_identity_conflicts_and_exits_2(fixture_shipped: Path, team: TeamWriter,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    aged = "    instruction: You are a 16-year-old who cannot sleep before exams.\n"
    text = SEED.replace(INSTRUCTION, aged)
    layer = team({"seeds/ours.yaml": text})
    assert main(["validate", "--suites", str(layer)]) == 2
    err = capsys.readouterr().err
    assert ("seeds/ours.yaml:5: /seeds/0/instruction: seed team-01: the instruction gives the speaker a "
            "name or age of its own ('You are a 16-year-old')") in err


def test_validate_json_counts_fixed_characters_and_unspoken_seeds(
    fixture_shipped: Path, team: TeamWriter, capsys: pytest.CaptureFixture[str]
) -> None:
    layer = team({"seeds/ours.yaml": SEED, "suites.yaml": (
        "suites:\n  - id: ours\n    label: Ours\n    description: our seed\n"
        "    seeds: {ids: [team-01, sd-00]}\n    personas: {mode: list, ids: [emma]}\n")})
    assert main(["validate", "--suites", str(layer), "--format", "json",
                 "--min-seeds-per-metric", "2"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert data["fixed_characters"] == 0
    assert data["unspoken_seeds"] == {"ours": ["sd-00"]}  # an es-MX seed, and emma is en-US
    note = "note: identity: suite 'ours' selects 1 seed(s) that none of its personas may speak"
    assert note in captured.err
