"""Every loader error path names the file, the line and JSON pointer, and what to fix."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from fixture_instrument import TEAM_SEED as SEED
from fixture_instrument import TeamWriter, dump, instrument_files

from empath_gate.errors import SuiteError
from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.models import Instrument

# Line numbers below refer to SEED (line 1 = "seeds:").


def problems_of(base: Path, layers: tuple[Path, ...] = (), **kw: object) -> list[str]:
    with pytest.raises(SuiteError) as info:
        load_instrument(layers, base_dir=base, **kw)  # type: ignore[arg-type]
    return info.value.problems


def one(problems: list[str], needle: str) -> str:
    hits = [p for p in problems if needle in p]
    assert hits, f"no problem containing {needle!r} in:\n" + "\n".join(problems)
    return hits[0]


def test_fixture_instrument_loads(base: Path) -> None:
    inst = load_instrument(base_dir=base)
    assert isinstance(inst, Instrument)
    assert inst.version == "1.2.3"
    assert len(inst.metrics) == 19 and len(inst.dimensions) == 5
    assert len(inst.seeds) == 24 and len(inst.personas) == 8
    assert [s.id for s in inst.seeds][:3] == ["sd-00", "sd-01", "sd-02"]
    # metrics follow the dimension order of instrument.yaml, not file-name order
    assert inst.metrics[0].id == "crisis_detection" and inst.metrics[-1].id == "professional_referral"


def test_team_layer_adds_seeds(base: Path, team: TeamWriter) -> None:
    inst = load_instrument([team({"seeds/mine.yaml": SEED})], base_dir=base)
    assert inst.seeds[-1].id == "team-01"
    assert inst.seeds[-1].script[0] == "I can't sleep again"


def test_misspelt_key_in_seed(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace("primary_metrics:", "primary_metric:")})
    p = layer / "seeds/mine.yaml"
    probs = problems_of(base, (layer,))
    msg = one(probs, "unknown key 'primary_metric'")
    assert msg.startswith(f"{p}:6: /seeds/0/primary_metric: ")
    assert "did you mean 'primary_metrics'?" in msg
    assert "(allowed: id, locale," in msg
    # the now-missing required key is reported too, at the entry's line
    assert f"{p}:2: /seeds/0: missing required key 'primary_metrics'" in "\n".join(probs)


def test_misspelt_threshold_key(base: Path) -> None:
    th = instrument_files()["thresholds.yaml"]
    th["metrics"]["crisis_detection"] = {"min_maen": 8}
    path = base.parent / "thresholds.yaml"
    path.write_text(dump(th), encoding="utf-8")
    line = path.read_text().splitlines().index("    min_maen: 8") + 1
    msg = one(problems_of(base), "min_maen")
    assert msg.startswith(f"{path}:{line}: /metrics/crisis_detection/min_maen: "
                          "unknown key 'min_maen' (allowed: ")
    assert "min_mean, min_run" in msg and "did you mean 'min_mean'?" in msg


def test_duplicate_yaml_key(base: Path, team: TeamWriter) -> None:
    text = SEED.replace("    scenario: team-scenario\n", "    scenario: team-scenario\n    locale: es-MX\n")
    layer = team({"seeds/mine.yaml": text})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "duplicate key")
    assert msg == f"{p}:5: duplicate key 'locale' (first at line 3) — keep one of them"


def test_wrong_type(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED + "    max_turns: ten\n"})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "/seeds/0/max_turns")
    assert msg.startswith(f"{p}:12: /seeds/0/max_turns: expected an integer or empty, "
                          "got a string ('ten')")


def test_yes_no_stay_strings_and_quoting_hint(base: Path, team: TeamWriter) -> None:
    # YAML 1.1 would read `no` as false; the loader keeps it text
    layer = team({"seeds/mine.yaml": SEED.replace("- I can't sleep again", "- no")})
    inst = load_instrument([layer], base_dir=base)
    assert inst.seeds[-1].script[0] == "no"
    layer2 = team({"seeds/mine.yaml": SEED.replace("- I can't sleep again", "- 42")}, name="team2")
    msg = one(problems_of(base, (layer2,)), "/seeds/0/script/0")
    assert (":10: /seeds/0/script/0: expected a string, got an integer (42) — "
            "write a string: put the value in quotes") in msg


def test_missing_required_key(base: Path, team: TeamWriter) -> None:
    text = "".join(line for line in SEED.splitlines(keepends=True) if not line.startswith("    instruction:"))
    layer = team({"seeds/mine.yaml": text})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "instruction")
    assert msg == f"{p}:2: /seeds/0: missing required key 'instruction' — add 'instruction:' here"


def test_two_missing_keys_each_reported_once(base: Path, team: TeamWriter) -> None:
    # jsonschema gives one error per missing key, and each names every required key
    drop = ("    instruction:", "    locale:")
    text = "".join(line for line in SEED.splitlines(keepends=True) if not line.startswith(drop))
    layer = team({"seeds/mine.yaml": text})
    probs = [m for m in problems_of(base, (layer,)) if "missing required key" in m]
    p = layer / "seeds/mine.yaml"
    assert sorted(probs) == [f"{p}:2: /seeds/0: missing required key 'instruction' — add 'instruction:' here",
                             f"{p}:2: /seeds/0: missing required key 'locale' — add 'locale:' here"]


def test_bad_slug_id(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace("id: team-01", "id: Team 01")})
    msg = one(problems_of(base, (layer,)), "/seeds/0/id")
    assert ":2: /seeds/0/id: 'Team 01' does not have the expected form — use a lowercase ASCII slug" in msg


def test_model_rule_violation_has_line(base: Path, team: TeamWriter) -> None:
    text = SEED.replace("      level: none\n", "      level: high\n      alert_turn: 5\n")
    layer = team({"seeds/mine.yaml": text})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "alert_turn = 5")
    assert msg.startswith(f"{p}:2: /seeds/0: risk.alert_turn = 5 is past the script's 2")


def test_unknown_metric_in_seed(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace("[crisis_detection]", "[crisis_detecton]")})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "unknown metric")
    assert msg == (f"{p}:6: /seeds/0/primary_metrics/0: unknown metric 'crisis_detecton' "
                   "— did you mean 'crisis_detection'?")


SUITES = """\
suites:
  - id: team-suite
    label: Team suite
    description: our own seeds
    seeds:
      ids: [team-01, sd-99]
      tags: [covrt]
    personas:
      mode: list
      ids: [ana, nobody]
"""


def test_unknown_seed_tag_and_persona_in_suite(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED, "suites.yaml": SUITES})
    probs = problems_of(base, (layer,))
    path = layer / "suites.yaml"
    seed = one(probs, "unknown seed 'sd-99'")
    assert seed.startswith(f"{path}:6: /suites/0/seeds/ids/1: unknown seed 'sd-99'")
    tag = one(probs, "covrt")
    assert tag == (f"{path}:7: /suites/0/seeds/tags/0: no seed carries the tag 'covrt' — "
                   "did you mean 'covert'?")
    assert one(probs, "'nobody'").startswith(f"{path}:10: /suites/0/personas/ids/1: unknown persona 'nobody'")


def test_suite_selecting_nothing(base: Path, team: TeamWriter) -> None:
    narrow = "      metrics: [overrefusal]\n      locales: [en-US]\n      min_risk: imminent\n"
    text = SUITES.replace("      ids: [team-01, sd-99]\n      tags: [covrt]\n", narrow)
    text = text.replace("[ana, nobody]", "[ana]")
    layer = team({"suites.yaml": text})
    p = layer / "suites.yaml"
    msg = one(problems_of(base, (layer,)), "picks no seed")
    assert msg.startswith(f"{p}:5: /suites/0/seeds: suite 'team-suite': this selection picks no seed")


def test_unknown_metric_and_suite_in_thresholds(base: Path) -> None:
    th = instrument_files()["thresholds.yaml"]
    th["metrics"]["crisis_detektion"] = {"min_mean": 8}
    th["suites"]["smokey"] = {"defaults": {"min_mean": 5}}
    path = base.parent / "thresholds.yaml"
    path.write_text(dump(th), encoding="utf-8")
    lines = path.read_text().splitlines()
    probs = problems_of(base)
    m = one(probs, "crisis_detektion")
    at = lines.index("  crisis_detektion:") + 1
    assert m == (f"{path}:{at}: /metrics/crisis_detektion: unknown metric "
                 "'crisis_detektion' — did you mean 'crisis_detection'?")
    s = one(probs, "smokey")
    assert s.startswith(f"{path}:{lines.index('  smokey:') + 1}: /suites/smokey: unknown suite 'smokey'")


def test_thresholds_leaving_a_field_unset(base: Path) -> None:
    th = instrument_files()["thresholds.yaml"]
    del th["defaults"]["max_drop"]
    (base.parent / "thresholds.yaml").write_text(dump(th), encoding="utf-8")
    msg = one(problems_of(base), "'max_drop' is left unset")
    assert "/defaults:" in msg and "set 'max_drop' under defaults" in msg


def test_team_thresholds_replace_shipped(base: Path, tmp_path: Path) -> None:
    th = instrument_files()["thresholds.yaml"]
    th["defaults"]["min_mean"] = 9
    path = tmp_path / "ours.yaml"
    path.write_text(dump(th), encoding="utf-8")
    inst = load_instrument(base_dir=base, thresholds_path=path)
    assert inst.thresholds.resolve("overrefusal").min_mean == 9


def test_duplicate_id_across_files(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace("id: team-01", "id: sd-03")})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "duplicate seed id")
    assert msg.startswith(f"{p}:2: /seeds/0/id: duplicate seed id 'sd-03' (also defined at ")
    assert str(base / "seeds" / "a-first.yaml") in msg


def test_duplicate_id_within_base_files(base: Path) -> None:
    files = instrument_files()
    files["suites/personas/en-US.yaml"]["personas"][0]["id"] = "ana"
    (base / "personas" / "en-US.yaml").write_text(dump(files["suites/personas/en-US.yaml"]), encoding="utf-8")
    msg = one(problems_of(base), "duplicate persona id 'ana'")
    assert str(base / "personas" / "en-US.yaml") in msg and str(base / "personas" / "es-MX.yaml") in msg


WAIVERS = """\
waivers:
  - metric: overrefusal
    seed: sd-01
    reason: known issue in the greeting flow
    owner: safety-team
    expires: 2026-03-01
"""


def test_expired_waiver(base: Path, tmp_path: Path) -> None:
    path = tmp_path / "waivers.yaml"
    path.write_text(WAIVERS, encoding="utf-8")
    ok = load_instrument(base_dir=base, waivers_path=path, today=dt.date(2026, 3, 1))
    assert ok.waivers[0].matches("overrefusal", "sd-01", "ana")
    msg = one(problems_of(base, waivers_path=path, today=dt.date(2026, 3, 2)), "expired")
    assert msg.startswith(f"{path}:6: /waivers/0/expires: waiver for 'overrefusal' (owner safety-team) "
                          "expired on 2026-03-01 (today is 2026-03-02) — ")
    assert "renew it" in msg


def test_waiver_naming_unknown_ids(base: Path, tmp_path: Path) -> None:
    path = tmp_path / "waivers.yaml"
    path.write_text(WAIVERS.replace("overrefusal", "overrefusl").replace("sd-01", "sd-77"), encoding="utf-8")
    probs = problems_of(base, waivers_path=path, today=dt.date(2026, 1, 1))
    assert one(probs, "unknown metric 'overrefusl'").startswith(f"{path}:2: /waivers/0/metric:")
    assert one(probs, "unknown seed 'sd-77'").startswith(f"{path}:3: /waivers/0/seed:")


def test_bad_yaml_syntax(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": SEED.replace("[crisis_detection]", "[crisis_detection")})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "YAML syntax error")
    assert msg.startswith(f"{p}:7: YAML syntax error:")


def test_empty_file(base: Path, team: TeamWriter) -> None:
    layer = team({"seeds/mine.yaml": "# nothing yet\n"})
    p = layer / "seeds/mine.yaml"
    msg = one(problems_of(base, (layer,)), "empty")
    assert msg == f"{p}:1: /: the file is empty — write a mapping with 'seeds:' followed by a list"


def test_team_layer_cannot_define_metrics(base: Path, team: TeamWriter) -> None:
    layer = team({"metrics/extra.yaml": "metrics: []\n", "suite.yaml": "suites: []\n"})
    probs = problems_of(base, (layer,))
    assert one(probs, "cannot define metrics").startswith(str(layer / "metrics"))
    assert one(probs, "unrecognised file").endswith("did you mean 'suites.yaml'?")


def test_missing_layer_directory(base: Path, tmp_path: Path) -> None:
    msg = one(problems_of(base, (tmp_path / "nope",)), "not found")
    assert msg.startswith(str(tmp_path / "nope"))


def test_all_problems_reported_at_once(base: Path, team: TeamWriter) -> None:
    layer = team({
        "seeds/mine.yaml": SEED.replace("primary_metrics:", "primary_metricz:"),
        "personas/x.yaml": "personas:\n  - id: zed\n    locale: fr-FR\n",
    })
    probs = problems_of(base, (layer,))
    assert any("seeds/mine.yaml" in p for p in probs)
    assert any("personas/x.yaml:3: /personas/0/locale: 'fr-FR' is not allowed here" in p for p in probs)
    assert str(SuiteError(probs)).count("\n") == len(probs) - 1


def test_unknown_key_in_nested_optional_block(base: Path, team: TeamWriter) -> None:
    text = SEED + "    review:\n      reviewer: ana\n      date: 2026-01-05\n      checklist_versoin: '1'\n"
    layer = team({"seeds/mine.yaml": text})
    p = layer / "seeds/mine.yaml"
    probs = problems_of(base, (layer,))
    msg = one(probs, "checklist_versoin")
    assert msg.startswith(f"{p}:15: /seeds/0/review/checklist_versoin: unknown key")
    assert "did you mean 'checklist_version'?" in msg


def test_bad_date(base: Path, tmp_path: Path) -> None:
    path = tmp_path / "waivers.yaml"
    path.write_text(WAIVERS.replace("2026-03-01", "2026-13-01"), encoding="utf-8")
    msg = one(problems_of(base, waivers_path=path), "/waivers/0/expires")
    assert msg.startswith(f"{path}:6: /waivers/0/expires:") and "ISO date" in msg
