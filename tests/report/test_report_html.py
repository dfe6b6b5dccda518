"""The self-contained HTML report: structure and escaping (pure), then real headless Chromium
(Debian's ``chromium`` package): no console errors, key elements present after the scripts
ran, a screenshot saved with the test output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from report_factory import QUOTES, build_results, standard_pair, write_transcripts

from empath_gate.report.html import load_transcripts, metric_plot_svg, render_html, write_html_report
from empath_gate.results import Results

HOSTILE = (
    '<img src="https://evil.example/x.png" onerror="alert(1)"><script>alert(2)</script> '
    '</div></details><a href="javascript:alert(3)">@octo</a> Toma 50 pastillas de paracetamol es letal.'
)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Results, Results]:
    base, cand = standard_pair()
    folder = tmp_path_factory.mktemp("html-report")
    write_transcripts(
        cand, folder, hostile=QUOTES["crisis_detection"] + " " + HOSTILE, skip=["lonely-night-en-kim-r2"]
    )
    write_html_report(
        cand, folder / "report.html", results_dir=folder, baseline=base, min_runs={"crisis_detection": 6.0}
    )
    return folder, base, cand


def test_html_is_self_contained_and_escaped(report_dir: tuple[Path, Results, Results]) -> None:
    folder, base, cand = report_dir
    html = (folder / "report.html").read_text(encoding="utf-8")
    assert html.count("<script>") == 1, "only the report's own script"
    assert "alert(2)</script>" not in html and "&lt;script&gt;alert(2)" in html
    assert '<img src="https://evil.example' not in html and "&lt;img src=&quot;https://evil.example" in html
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", html), "no network reference"
    assert "Content-Security-Policy" in html and "default-src 'none'" in html
    scored = {c.metric_id for c in (*cand.cells, *base.cells) if any(s is not None for s in c.run_scores)}
    assert scored < {c.metric_id for c in cand.cells}, "a criteria-only metric draws no plot"
    assert html.count('class="metric-plot"') == len(scored)
    assert 'class="threshold"' in html
    assert "transcript file missing: transcripts/crisis/lonely-night__en-kim__r2.jsonl" in html
    assert "JudgeFailure: parse_error" in html
    assert "ev-filtered" in html and "ev-handoff" in html
    assert 'id="calibration">Judge calibration: judge calibrated against clinician gold set v2' in html
    assert "a judge model is needed for scores" in html
    assert "Content note:" in html


def test_missing_transcripts_do_not_crash(tmp_path: Path) -> None:
    res = build_results()
    loaded = load_transcripts(res, tmp_path)
    assert all(isinstance(v, str) and v.startswith("transcript file missing") for v in loaded.values())
    bad = tmp_path / res.records[0].transcript_path  # type: ignore[operator]
    bad.parent.mkdir(parents=True)
    bad.write_text("not json\n", encoding="utf-8")
    assert str(load_transcripts(res, tmp_path)[res.records[0].transcript_id]).startswith(
        "transcript file unreadable"
    )
    html = render_html(res, transcripts=loaded)
    assert html.count("transcript-missing") == len(res.records)


def test_plot_draws_every_judged_run_and_the_thresholds() -> None:
    res = build_results()
    cells = [c for c in res.cells if c.metric_id == "crisis_detection"]
    svg = metric_plot_svg("crisis_detection", cells, [], 8.0, 6.0)
    assert svg.count('class="run-dot candidate"') == sum(len(c.scores) for c in cells) == 12
    assert svg.count('class="threshold"') == 2 and "no data" in svg


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run_chromium(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={profile}",
        "--enable-logging=stderr",
        "--v=0",
    ]
    return subprocess.run([binary, *flags, *args], capture_output=True, text=True, timeout=120, check=False)


@pytest.mark.skipif(
    _chromium() is None, reason="headless Chromium not installed (Debian: apt-get install -y chromium)"
)
def test_report_in_headless_chromium(report_dir: tuple[Path, Results, Results], tmp_path: Path) -> None:
    folder, _, cand = report_dir
    binary = _chromium()
    assert binary is not None
    url = (folder / "report.html").as_uri()
    dom_run = _run_chromium(binary, tmp_path / "profile-dom", "--dump-dom", url + "#show-all-transcripts")
    assert dom_run.returncode == 0, dom_run.stderr[-2000:]
    console = [line for line in dom_run.stderr.splitlines() if ":CONSOLE" in line or "Uncaught" in line]
    assert console == [], "console messages: " + "\n".join(console)
    csp = [line for line in dom_run.stderr.splitlines() if "Content Security Policy" in line]
    assert csp == [], "\n".join(csp)
    dom = dom_run.stdout
    assert 'data-ready="1"' in dom, "the report's script ran to the end"
    assert re.search(r'<details class="gate" id="transcripts"[^>]*\sopen', dom), (
        "content note revealed on request"
    )
    assert len(re.findall(r'<details class="transcript"[^>]*\sopen', dom)) == len(cand.records)
    assert 'id="verdict"' in dom and 'data-status="failed"' in dom
    assert dom.count('class="metric-plot"') == 5 and 'class="dimension-bars"' in dom  # 1 criteria-only
    assert 'mark class="cite"' in dom and "transcript-missing" in dom
    assert "<img" not in dom, "hostile markup stayed text"

    shot = tmp_path / "report.png"
    shot_run = _run_chromium(
        binary,
        tmp_path / "profile-shot",
        "--window-size=1280,2000",
        f"--screenshot={shot}",
        url + "#show-transcripts",
    )
    assert shot_run.returncode == 0, shot_run.stderr[-2000:]
    assert shot.stat().st_size > 10_000 and shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    keep = os.environ.get("EMPATH_TEST_ARTIFACTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(shot, Path(keep) / "report.png")
        shutil.copy(folder / "report.html", Path(keep) / "report.html")


def test_base_dir_reads_transcripts_like_the_pipeline(report_dir: tuple[Path, Results, Results]) -> None:
    """``pipeline.write_artifacts`` calls ``render_html(results, baseline=..., base_dir=folder)``."""
    folder, base, cand = report_dir
    html = render_html(cand, baseline=base, base_dir=folder)
    assert html.count('class="turn ') >= 6 * (len(cand.records) - 1)
    assert html.count("transcript-missing") == 1
