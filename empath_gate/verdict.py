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


def layers_configured(settings: Settings) -> bool:
    """True when the settings name any team layer (suites directory, thresholds, waivers, or a
    ``./waivers.yaml``)."""
    from empath_gate.run import waivers_path

    return bool(settings.suites_dirs or settings.thresholds or waivers_path(settings))


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
    file's own comparison). With ``settings`` that name team layers, their thresholds and waivers
    decide and every layer that differs from the recorded ones is noted; otherwise the recorded
    gate inputs decide. A file without recorded gate inputs (schema version 1) is decided with
    the instrument the settings load (the shipped one by default), and a note says so."""
    from empath_gate.results.layers import layer_differences
    from empath_gate.run import load_run_instrument
    from empath_gate.settings.model import Settings as _Settings

    reg = regression if baseline is None and regression is not None else None
    if baseline is None and regression is None:
        reg = results.regressions
    notes: list[str] = []
    if results.gate is not None and (settings is None or not layers_configured(settings)):
        return Verdict(decide_results(results, baseline=baseline, regression=reg, fail_on=fail_on))
    instrument, layers = load_run_instrument(settings or _Settings())
    if results.gate is None:
        notes.append(
            f"{source} records no gate inputs (an older results file): decided with the "
            "thresholds and waivers loaded now"
        )
    else:
        notes.extend(f"{source}: {line}" for line in layer_differences(results.gate.layers, layers))
    decided = decide_results(
        results,
        baseline=baseline,
        regression=reg,
        fail_on=fail_on,
        thresholds=instrument.thresholds,
        waivers=instrument.waivers,
    )
    return Verdict(decided, tuple(notes))
