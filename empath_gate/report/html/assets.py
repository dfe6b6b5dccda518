"""The report page's own style sheet and script, and their Content-Security-Policy hashes."""

from __future__ import annotations

import base64
import hashlib

_CSS = """
:root{--bg:#fff;--fg:#1f2328;--muted:#59636e;--line:#d1d9e0;--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;
--err:#8250df;--skip:#59636e;--mark:#fff8c5}
*{box-sizing:border-box}
body{font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);
background:var(--bg);margin:0;padding:0 24px 48px;max-width:1280px}
h1{font-size:22px;margin:16px 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid var(--line)}
h3{font-size:15px;margin:16px 0 6px}
table{border-collapse:collapse;margin:6px 0 12px;display:block;max-width:100%;overflow-x:auto}
th,td{border:1px solid var(--line);padding:3px 8px;text-align:left;vertical-align:top;
overflow-wrap:break-word}
th code{overflow-wrap:anywhere}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:1px 4px;
border-radius:4px}
.verdict{padding:12px 16px;border-radius:8px;margin:12px 0;border:2px solid}
.verdict.passed{border-color:var(--pass)}.verdict.failed,.verdict.usage_error{border-color:var(--fail)}
.verdict.not_evaluated{border-color:var(--warn)}.verdict.judging_pending{border-color:var(--warn)}.verdict.infrastructure_error{border-color:var(--err)}
.verdict h1{margin:0}.muted{color:var(--muted)}.note{border-left:4px solid var(--warn);padding:4px 12px;
background:#fff8e6;margin:6px 0}
.st-passed{color:var(--pass)}.st-failed{color:var(--fail);font-weight:600}.st-error{color:var(--err)}
.st-xfail,.st-advisory{color:var(--warn)}.st-skipped,.st-criteria_only{color:var(--skip)}
.plots{display:flex;flex-wrap:wrap;gap:12px}.plot{border:1px solid var(--line);border-radius:6px;padding:6px}
.plot h3{margin:0 0 4px;font-size:13px}
.runs span{display:inline-block;min-width:22px;margin:1px;padding:0 3px;border-radius:3px;text-align:center;
font-size:12px;color:#fff}
.s-low{background:#cf222e}.s-mid{background:#bc4c00}.s-ok{background:#4d8b31}.s-high{background:#1a7f37}
.s-na{background:#8c959f}.s-co{background:#6e7781}.s-jf{background:#8250df}.s-missing{background:#24292f}
details.gate>summary{cursor:pointer;padding:10px 14px;background:#fff8e6;border:1px solid var(--warn);
border-radius:6px;font-weight:600}
details.transcript{border:1px solid var(--line);border-radius:6px;margin:8px 0;padding:4px 10px}
details.transcript>summary{cursor:pointer}
.turn{border-left:4px solid var(--line);margin:6px 0;padding:4px 10px;white-space:pre-wrap;
overflow-wrap:anywhere}.turn.user{border-color:#0969da;background:#f6f8fa}.turn.user.sp-1{border-color:#8250df}.turn.user.sp-2{border-color:#bf8700}.turn.user.sp-3{border-color:#cf222e}.speaker{font-weight:600;color:#0969da}.speaker.sp-1{color:#8250df}.speaker.sp-2{color:#9a6700}.speaker.sp-3{color:#cf222e}.turn.assistant{border-color:#1a7f37}
.turn .who{font-size:12px;color:var(--muted);white-space:normal}
mark.cite{background:var(--mark);border-bottom:2px solid var(--fail)}
.badge{display:inline-block;font-size:11px;padding:0 6px;border-radius:10px;margin-left:4px;color:#fff;
white-space:normal}
.b-filtered{background:var(--fail)}.b-handoff{background:#0969da}.b-error,.b-budget{background:var(--err)}
.b-other{background:#6e7781}.b-jf{background:#8250df}
.b-cue{background:#9a6700;margin:0 2px;font-style:italic}
.triage-matrix td{text-align:right}.triage-matrix td[data-kind=under]{color:#b42318;font-weight:bold}
.crit-FAIL{color:var(--fail);font-weight:600}.crit-PASS{color:var(--pass)}.missing{color:var(--fail)}
input#transcript-filter{padding:4px 8px;width:320px;margin:8px 0}
.transcript-body{display:flex;gap:12px;align-items:flex-start}
.transcript-body>.turns{flex:1 1 auto;min-width:0}
.transcript-body>aside{flex:0 0 270px;position:sticky;top:8px}.dynamics-strip{max-width:100%;overflow-x:auto}
footer{margin-top:32px;border-top:1px solid var(--line);padding-top:8px;color:var(--muted)}
"""

_JS = """
(function () {
  'use strict';
  var gate = document.getElementById('transcripts');
  function reveal(id, scroll) {
    if (gate) { gate.open = true; }
    if (id) {
      var el = document.getElementById(id);
      if (el) {
        el.open = true;
        if (scroll) { el.scrollIntoView(); }
      }
    }
  }
  var hash = window.location.hash;
  if (hash === '#show-transcripts') { reveal(null, false); }
  else if (hash === '#show-all-transcripts') {
    reveal(null, false);
    var all = document.querySelectorAll('details.transcript');
    for (var k = 0; k < all.length; k++) { all[k].open = true; }
  }
  else if (hash.indexOf('#t-') === 0) { reveal(hash.slice(1), false); }
  var links = document.querySelectorAll('a.open-transcript');
  for (var i = 0; i < links.length; i++) {
    links[i].addEventListener('click', function (ev) {
      ev.preventDefault();
      reveal(this.getAttribute('href').slice(1), true);
    });
  }
  var box = document.getElementById('transcript-filter');
  if (box) {
    box.addEventListener('input', function () {
      var q = box.value.toLowerCase();
      var items = document.querySelectorAll('details.transcript');
      for (var j = 0; j < items.length; j++) {
        var hay = items[j].getAttribute('data-search') || '';
        items[j].hidden = q !== '' && hay.indexOf(q) < 0;
      }
    });
  }
  document.documentElement.setAttribute('data-ready', '1');
}());
"""


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")
