"""The files a run leaves beside ``results.json``: ``diff.md`` and ``report.html``."""

from __future__ import annotations

from pathlib import Path

from empath_gate.bounded import well_formed
from empath_gate.results.io import write_results
from empath_gate.results.model import Results


def write_artifacts(results: Results, results_path: Path, *, baseline: Results | None) -> list[Path]:
    """Write results.json, then diff.md and report.html beside it. Returns the paths written."""
    from empath_gate.report.html import render_html
    from empath_gate.report.markdown import render_markdown

    written = [write_results(results, results_path)]
    folder = results_path.parent
    md = folder / "diff.md"
    md.write_text(well_formed(render_markdown(results, baseline=baseline)), encoding="utf-8")
    html = folder / "report.html"
    html.write_text(well_formed(render_html(results, baseline=baseline, base_dir=folder)), encoding="utf-8")
    return [*written, md, html]
