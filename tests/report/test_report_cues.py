"""Spoken transcripts in the HTML report: declared cues are badges with the locale's display
label, escaped, never the typed token; an undeclared bracket stays text."""

from __future__ import annotations

from pathlib import Path

from report_factory import QUOTES, build_results, write_transcripts

from empath_gate.instrument.models import Cue
from empath_gate.report.html import load_transcripts, render_html

CUES = (
    Cue(id="sigh", token="[sigh]", labels={"es-MX": "suspiro", "en-US": "sigh"},
        definition='An audible breath out <"quoted">.'),
    Cue(id="crying", token="[crying]", labels={"es-MX": "llanto", "en-US": "crying"},
        definition="Weeping heard while speaking."),
)


def _viewer(tmp_path: Path, cues: tuple[Cue, ...] | None) -> str:
    res = build_results()
    hostile = f"[sigh] <b>no</b> [sobbing] {QUOTES['crisis_detection']} [crying]"
    write_transcripts(res, tmp_path, hostile=hostile)
    html = render_html(res, transcripts=load_transcripts(res, tmp_path), cues=cues)
    return html.split('id="transcript-viewer"', 1)[1]


def test_cues_are_badges_with_the_locale_label(tmp_path: Path) -> None:
    viewer = _viewer(tmp_path, CUES)
    locales = {r.locale for r in build_results().records}
    title = "An audible breath out &lt;&quot;quoted&quot;&gt;."
    assert f'class="badge b-cue cue" data-cue="sigh" title="{title}"' in viewer
    if "es-MX" in locales:
        assert ">suspiro</span>" in viewer and ">llanto</span>" in viewer
    if "en-US" in locales:
        assert ">sigh</span>" in viewer and ">crying</span>" in viewer
    assert "[sigh]" not in viewer and "[crying]" not in viewer
    assert "&lt;b&gt;no&lt;/b&gt;" in viewer and "<b>no</b>" not in viewer
    assert "[sobbing]" in viewer  # not declared: shown as typed
    assert 'mark class="cite"' in viewer  # citations still highlighted beside the badges


def test_without_a_vocabulary_tokens_are_shown_as_typed(tmp_path: Path) -> None:
    viewer = _viewer(tmp_path, ())
    assert "[sigh]" in viewer and "b-cue" not in viewer
