"""The judge-validity studies from their input files: what ``calibrate`` and ``agreement`` run.

Each function reads its files (:mod:`~empath_gate.calibration.readers`), pairs what they hold
(:mod:`~empath_gate.calibration.pairing`) and computes the figures
(:mod:`~empath_gate.calibration.agreement`, :mod:`~empath_gate.calibration.calibrate`,
:mod:`~empath_gate.calibration.categorical`). Every one raises
:class:`~empath_gate.errors.ConfigError` naming the file and what to fix; none prints.

* :func:`gold_study`: the judge of a results file against gold labels.
* :func:`strict_study`: the standard against the strict rubric, from the peer release's rows
  (one file) or from the tool's own results (one or two results files holding both rubrics,
  such as a run and its ``rejudge --rubric standard`` output).
* :func:`ordinal_study`: agreement of two results files (two judges; or one judge's
  re-judgings when one judge scored both), of one results file's re-judgings (a ``rejudge
  --times K`` output), or of one file of paired scores.
* :func:`preference_study`: Gwet's AC1 between every pair of raters of preference CSVs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.bootstrap import DEFAULT_RESAMPLES, DEFAULT_SEED
from empath_gate.calibration.agreement import MIN_N, AgreementReport, agreement
from empath_gate.calibration.calibrate import CalibrationReport, StrictReport, calibrate, standard_vs_strict
from empath_gate.calibration.categorical import CategoricalAgreement, preference_agreement
from empath_gate.calibration.pairing import (
    JudgingPairs,
    RubricPairing,
    gold_pairs,
    judge_pairs,
    rejudging_pairs,
    rubric_rows,
)
from empath_gate.calibration.preferences import Preferences, read_preferences
from empath_gate.calibration.readers import (
    ResultsScores,
    read_gold,
    read_pairs,
    read_results,
    read_standard_vs_strict,
    results_or_none,
)
from empath_gate.errors import ConfigError


class GoldStudy(AnalysisModel):
    """The judge of ``results`` against gold labels: ``judge_model`` as the results name it."""

    report: CalibrationReport
    judge_model: str | None


class StrictStudy(AnalysisModel):
    """Standard vs strict: ``pairing`` is ``None`` for the peer release's rows."""

    report: StrictReport
    pairing: RubricPairing | None


class OrdinalStudy(AnalysisModel):
    """Ordinal agreement. ``shape``: ``results`` (two judges), ``rejudgings`` (a judge with
    itself), ``interjudge-grid`` or ``rows`` (a file of paired scores); ``judges``: each
    results file's judge model (``None`` for a file of pairs); ``published``: the file's own
    figures (peer grid only); ``pairing``: how results files were paired (``None`` for pairs)."""

    report: AgreementReport
    shape: str
    judges: tuple[str | None, ...] | None = None
    published: dict[str, float] | None = None
    pairing: JudgingPairs | None = None


class PreferenceStudy(AnalysisModel):
    """Gwet's AC1 for every pair of raters of ``preferences``."""

    preferences: Preferences
    pairs: tuple[CategoricalAgreement, ...]


def gold_study(
    gold: Path,
    results: Path,
    *,
    min_n: int = MIN_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> GoldStudy:
    """Calibrate the judge of ``results`` against the labels of ``gold``
    (:func:`~empath_gate.calibration.pairing.gold_pairs`, then
    :func:`~empath_gate.calibration.calibrate.calibrate`)."""
    scores = read_results(results)
    gp = gold_pairs(read_gold(gold), scores)
    report = calibrate(
        gp.pairs,
        min_n=min_n,
        unmatched_judge=gp.unmatched_judge,
        unmatched_gold=gp.unmatched_gold,
        n_resamples=n_resamples,
        seed=seed,
    )
    return GoldStudy(report=report, judge_model=scores.judge_model)


def strict_study(paths: Sequence[Path]) -> StrictStudy:
    """Standard vs strict from one file of rows, or from one or two results files (module
    docstring). Raises ConfigError for more than two files or a mix of the two kinds."""
    if not 1 <= len(paths) <= 2:
        raise ConfigError("--standard-vs-strict takes one file of rows, or one or two results files")
    found = [results_or_none(p) for p in paths]
    results = [r for r in found if r is not None]
    if not results:
        if len(paths) > 1:
            raise ConfigError(
                f"{paths[1]}: two files are two results files (a run and its rejudge --rubric "
                "standard output); a file of rows holds both rubrics already"
            )
        return StrictStudy(report=standard_vs_strict(read_standard_vs_strict(paths[0])), pairing=None)
    if len(results) != len(paths):
        other = next(p for p, r in zip(paths, found, strict=True) if r is None)
        raise ConfigError(f"{other}: not a results file; give results files only, or one file of rows")
    pairing = rubric_rows(results)
    if not pairing.rows:
        raise ConfigError(
            f"{' and '.join(str(p) for p in paths)}: no transcript x metric is judged under both rubrics"
        )
    return StrictStudy(report=standard_vs_strict(pairing.rows), pairing=pairing)


def _results_study(
    files: Sequence[ResultsScores], *, min_n: int, n_resamples: int, seed: int, two_judges: bool
) -> OrdinalStudy:
    pairing = judge_pairs(files[0], files[1]) if len(files) == 2 else rejudging_pairs(files)
    if two_judges and pairing.kind != "two_judges":
        raise ConfigError(
            f"{' and '.join(f.path for f in files)}: scored by one judge; its agreement with itself is "
            "not a calibration against a peer judge (this needs two results files of two judges)"
        )
    report = agreement(pairing.pairs, min_n=min_n, n_resamples=n_resamples, seed=seed)
    shape = "results" if pairing.kind == "two_judges" else "rejudgings"
    return OrdinalStudy(report=report, shape=shape, judges=pairing.judges, pairing=pairing)


def ordinal_study(
    paths: Sequence[Path],
    *,
    min_n: int = MIN_N,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
    two_judges: bool = False,
) -> OrdinalStudy:
    """Agreement of two results files, of one results file's re-judgings, or of one file of
    paired scores (module docstring). ``two_judges``: accept only two results files of two
    judges (what a peer-judge calibration status records), checked before any figure is
    computed. Raises ConfigError for another number of files, or unmet ``two_judges``."""

    def of_results(files: list[ResultsScores]) -> OrdinalStudy:
        return _results_study(files, min_n=min_n, n_resamples=n_resamples, seed=seed, two_judges=two_judges)

    if len(paths) == 2:
        return of_results([read_results(paths[0]), read_results(paths[1])])
    if len(paths) != 1 or two_judges:
        raise ConfigError("give two results files, one results file with re-judgings, or one file of pairs")
    results = results_or_none(paths[0])
    if results is not None:
        return of_results([results])
    pf = read_pairs(paths[0])
    report = agreement(pf.pairs, min_n=min_n, n_resamples=n_resamples, seed=seed)
    return OrdinalStudy(report=report, shape=pf.shape, published=pf.published)


def preference_study(
    directory: Path,
    *,
    categories: Sequence[str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = DEFAULT_SEED,
) -> PreferenceStudy:
    """Gwet's AC1 between every pair of raters of the preference CSVs of ``directory``."""
    prefs = read_preferences(directory, categories=categories)
    return PreferenceStudy(
        preferences=prefs, pairs=preference_agreement(prefs, n_resamples=n_resamples, seed=seed)
    )
