"""Metric labels: the run's own diff.md and report.html and ``empath-gate diff`` name metrics
the same way (the shipped instrument's labels beside the ids)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from report_factory import build_results

from empath_gate.cli import main
from empath_gate.report.labels import instrument_labels
from empath_gate.report.markdown import render_markdown
from empath_gate.results.artifacts import write_artifacts


def metric_column(markdown: str) -> list[str]:
    """The Metric column of the "By metric" table."""
    table = markdown.split("#### By metric", 1)[1].split("\n\n", 2)[1]
    rows = [line for line in table.splitlines() if line.startswith("|")][2:]
    return [[c.strip() for c in row.strip("|").split("|")][1] for row in rows]


def test_run_artifacts_and_diff_use_the_same_labels(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    results = build_results()
    path = tmp_path / "results.json"
    write_artifacts(results, path, baseline=None)
    run_md = (tmp_path / "diff.md").read_text(encoding="utf-8")
    assert main(["diff", str(path), str(path)]) == 0
    diff_md = capsys.readouterr().out
    labels = instrument_labels()
    assert labels is not None and labels["crisis_detection"] == "Crisis detection"
    assert metric_column(run_md) == metric_column(diff_md)
    assert "Crisis detection (`crisis_detection`) ⚑" in metric_column(run_md)
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert re.search(r"<code>crisis_detection</code> Crisis detection", html)


def test_explicit_labels_win_and_empty_labels_show_ids() -> None:
    results = build_results()
    custom = metric_column(render_markdown(results, metric_labels={"crisis_detection": "Detección"}))
    assert "Detección (`crisis_detection`) ⚑" in custom and "`sycophancy`" in custom
    bare = metric_column(render_markdown(results, metric_labels={}))
    assert "`crisis_detection` ⚑" in bare and all(c.startswith("`") for c in bare)
