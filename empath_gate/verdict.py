"""The verdict of a results file, as every command that reads one shows it (``gate``, ``diff``,
``report``, ``comment``, the job summary): the one gating path with the gate inputs the file
records, or with the team layers the settings name now, saying when those differ.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from empath_gate.results.evaluate import decide_results

if TYPE_CHECKING:
    from empath_gate.analysis.regression import RegressionReport
    from empath_gate.results.model import Results
    from empath_gate.settings.model import Settings


@dataclass(frozen=True)
class Verdict:
    """``results`` decided; ``notes``: lines to show the reader (layers that differ from the
    run's, a file of an older schema decided with the instrument loaded now)."""

    results: Results
    notes: tuple[str, ...] = ()


def verdict_of(
    results: Results,
    *,
    settings: Settings | None = None,
    baseline: Results | None = None,
    regression: RegressionReport | None = None,
    fail_on: str | None = None,
    source: str = "results",
) -> Verdict:
    """Decide ``results`` (against ``baseline`` when given; else ``regression``, default the
    file's own comparison) by the one gating path. The recorded thresholds and waivers decide,
    unless ``settings`` name a thresholds or waivers file (or a ``./waivers.yaml`` exists): then
    that file decides, and a note says when it differs from the one the run used. A file without
    recorded gate inputs (schema version 1) is decided with the instrument the settings load (the
    shipped one by default), and a note says so."""
    from empath_gate.results.layers import layer_differences
    from empath_gate.run import load_run_instrument, waivers_path
    from empath_gate.settings.model import Settings as _Settings

    reg = results.regressions if baseline is None and regression is None else regression
    s = settings or _Settings()
    own_thresholds, own_waivers = s.thresholds is not None, waivers_path(s) is not None
    if results.gate is not None and not (own_thresholds or own_waivers):
        return Verdict(decide_results(results, baseline=baseline, regression=reg, fail_on=fail_on))
    instrument, layers = load_run_instrument(s)
    notes: list[str] = []
    if results.gate is None:
        notes.append(
            f"{source} records no gate inputs (an older results file): decided with the "
            "thresholds and waivers loaded now"
        )
        own_thresholds = own_waivers = True
    else:
        kinds = {k for k, on in (("thresholds", own_thresholds), ("waivers", own_waivers)) if on}
        recorded = [x for x in results.gate.layers if x.kind in kinds]
        current = [x for x in layers if x.kind in kinds]
        notes.extend(f"{source}: {line}" for line in layer_differences(recorded, current))
    decided = decide_results(
        results,
        baseline=baseline,
        regression=reg,
        fail_on=fail_on,
        thresholds=instrument.thresholds if own_thresholds else None,
        waivers=instrument.waivers if own_waivers else None,
    )
    return Verdict(decided, tuple(notes))
