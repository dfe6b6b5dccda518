"""The worst-case gap end to end: a paired suite run against the fake judge, whose scores differ
by persona pairing, with a ``py:`` target; the gap check, the diff and the HTML."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_support import Project
from plugin_support import plan_seeds

from empath_gate.instrument.loader import load_instrument
from empath_gate.instrument.selection import cooperative_partner, personas_by_locale
from empath_gate.testing.scenarios import ScoringJudge

pytestmark = [
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]

SEEDS = ("cs-resource-us-wont-call-cops", "cv-role-mx-hablame-como-mi-mama")
FAMILY = ("deep_emotional_understanding", "guided_exploration", "balanced_emotional_support",
          "authentic_grounded_support")
PAIR_SUITE = f"""\
suites:
  - id: pair
    label: Pair
    description: Two seeds, every worst-case persona who fits plus one cooperative persona.
    seeds:
      ids: [{", ".join(SEEDS)}]
    metrics: primary
    families: [worst_case]
    personas:
      mode: all
      worst_case_only: true
      cooperative_pairing: true
    runs: 2
    max_turns: 2
"""
ARGS = ("--suite", "pair", "--suites-dir", "suites-pair", "--target", "py:bot_pair:reply")


@pytest.fixture()
def pair(project: Project) -> tuple[Project, set[str]]:
    """The project with the paired suite, the judge's seed table for it and the cooperative
    conversation ids."""
    team = project.path / "suites-pair"
    team.mkdir()
    (team / "suites.yaml").write_text(PAIR_SUITE, encoding="utf-8")
    (project.path / "bot_pair.py").write_text((project.path / "bot_unsafe_cli.py").read_text(
        encoding="utf-8").replace('BEHAVIOUR = "unsafe"', 'BEHAVIOUR = "safe"'), encoding="utf-8")
    inst = load_instrument([team])
    by_locale = personas_by_locale(inst.personas)
    coop = set()
    for sid in SEEDS:
        partner = cooperative_partner(inst.seed(sid), by_locale)
        assert partner is not None
        coop.add(f"{sid}-{partner.id}")
    here = Project(project.path, project.fake, project.cache_dir, plan_seeds("pair", 2, [team]))
    return here, coop


def _judge(project: Project, coop: set[str], cooperative: int, worst: int, others: int = 10) -> ScoringJudge:
    def family(conv: str | None, run: int | None) -> int:
        return cooperative if conv in coop else worst

    return ScoringJudge({m: family for m in FAMILY}, default=others, seeds=project.seeds)


def _results(project: Project) -> dict[str, object]:
    path = project.path / "empath-results" / "results.json"
    data: dict[str, object] = json.loads(path.read_text("utf-8"))
    return data


def _check(data: dict[str, object]) -> dict[str, object]:
    checks = data["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["check"] == "max_worst_case_gap")


def test_a_gap_over_the_limit_fails_the_check_and_shows_in_diff_and_html(
    pair: tuple[Project, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    project, coop = pair
    assert project.cli("run", *ARGS, judge=_judge(project, coop, 10, 7), tokens=3101) == 1
    data = _results(project)
    chk = _check(data)
    assert chk["status"] == "failed" and chk["observed"] == pytest.approx(3.0)
    assert any("guided_exploration: worst-case gap 3.00" in r for r in chk["reasons"])
    gaps = data["worst_case_gaps"]["pair"]  # type: ignore[index]
    assert {g["metric_id"] for g in gaps} >= set(FAMILY)
    fam = next(g for g in gaps if g["metric_id"] == "deep_emotional_understanding")
    assert fam["cooperative_mean"] == 10 and fam["worst_case_mean"] == 7
    assert len(fam["seeds"]) == 2 and fam["gap"]["value"] == pytest.approx(3.0)
    # the worst-case cells themselves pass their absolute thresholds (7 >= min_mean 7)
    decisions = {(d["conversation_id"], d["metric_id"]): d["status"] for d in data["decisions"]}  # type: ignore[union-attr]
    assert all(s == "passed" for s in decisions.values())
    diff = (project.path / "empath-results" / "diff.md").read_text(encoding="utf-8")
    assert "#### Worst-case gap" in diff and "`pair::max_worst_case_gap`" in diff
    row = next(x for x in diff.splitlines() if "Guided exploration" in x and "`pair`" in x)
    assert "| 10 " in row and "| 7 " in row and "| 3 " in row and "❌" in row
    html = (project.path / "empath-results" / "report.html").read_text(encoding="utf-8")
    assert 'id="worst-case-gap"' in html and 'class="gap-pairs"' in html
    assert 'data-metric="guided_exploration">gap 3' in html
    out = capsys.readouterr().out
    assert "FAILED" in out and "suite check pair::max_worst_case_gap: FAILED" in out
    assert "Hard-to-help seekers" in out  # the family's label, from the instrument


def test_a_small_gap_passes(pair: tuple[Project, set[str]]) -> None:
    project, coop = pair
    assert project.cli("run", *ARGS, judge=_judge(project, coop, 9, 8), tokens=3102) == 0
    chk = _check(_results(project))
    assert chk["status"] == "passed" and chk["observed"] == pytest.approx(1.0)


def test_a_bot_bad_everywhere_fails_on_absolute_thresholds_despite_no_gap(
        pair: tuple[Project, set[str]]) -> None:
    project, coop = pair
    assert project.cli("run", *ARGS, judge=_judge(project, coop, 3, 3), tokens=3103) == 1
    data = _results(project)
    assert _check(data)["status"] == "passed"
    failed = {d["metric_id"] for d in data["decisions"] if d["status"] == "failed"}  # type: ignore[union-attr]
    assert set(FAMILY) <= failed


def test_offline_the_family_is_skipped_and_has_no_gap_check(
    pair: tuple[Project, set[str]], capsys: pytest.CaptureFixture[str]
) -> None:
    project, _ = pair
    project.cli("run", *ARGS, "--offline")
    data = _results(project)
    assert not [c for c in data["checks"] if c["check"] == "max_worst_case_gap"]  # type: ignore[union-attr]
    fam = [d for d in data["decisions"] if d["metric_id"] in FAMILY]  # type: ignore[union-attr]
    assert fam and all(d["status"] == "skipped" for d in fam)
    assert all(any("needs a judge model" in r for r in d["reasons"]) for d in fam)
    assert Path(project.path / "empath-results" / "diff.md").is_file()
