"""Pairing scorings of the same items: what agreement and calibration compare.

Pure functions over what :mod:`empath_gate.calibration.readers` read. They return
:class:`~empath_gate.calibration.agreement.PairedScore` lists (agreement, judge vs gold) and
:class:`~empath_gate.calibration.calibrate.RubricRow` lists (standard vs strict), and raise
:class:`~empath_gate.errors.ConfigError`, naming the files and what to do, when a pairing would
compare nothing, or would compare a judging with itself.

* **One transcript.** Two verdicts are of the same transcript when the transcript ids match
  and, when both files record it, so does the transcript's content hash: two runs of one plan
  give transcripts with the same ids but other text, and those are never paired (they are
  counted as ``different_transcripts``).
* **One judge** (:func:`same_judge`): equal judge model, rubric, granularity and judge template
  hash. The judge's seed and cache key follow from these, the transcript and the re-judge
  index (:func:`empath_gate.judging.llm_judge.judge_run_seed`), so two files of one judge hold,
  at one re-judge index, *the same judging* (``rejudge --times K`` keeps the first judgings as
  they were; a plain ``rejudge`` with the same judge replays them from the cache).
* **Two judges** (:func:`judge_pairs`, files of different judges): each file's first scored
  judging (lowest re-judge index) of each transcript x metric, one pair per transcript x metric.
* **A judge with itself** (:func:`rejudging_pairs`; :func:`judge_pairs` on two files of one
  judge): the scored judgings of each transcript x metric at distinct re-judge indices (a
  judging present in both files counted once), every unordered pair ``i < j`` of them one
  pair (``a`` the lower index). K + 1 judgings give K(K+1)/2 pairs; the pairs of one transcript
  x metric share a ``cluster``, so the bootstrap resamples them together
  (:func:`empath_gate.calibration.agreement.agreement_figures`). A judging without a score
  (judge failure) pairs with nothing and is counted in ``judge_failures``.
* **Judge vs gold** (:func:`gold_pairs`): the first scored judging of a conversation, run and
  metric against its gold label.
* **Standard vs strict** (:func:`rubric_rows`): per transcript x metric, the first scored
  judging under each rubric (a verdict's ``rubric``, else its file's), from one judge model;
  a transcript x metric without a score under a rubric is kept as a row with an ``error`` (the
  report lists it as left out); ``na`` under both rubrics is not a row.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from empath_gate.analysis.base import AnalysisModel
from empath_gate.calibration.agreement import PairedScore
from empath_gate.calibration.calibrate import RubricRow
from empath_gate.calibration.readers import GoldScore, JudgedScore, ResultsScores
from empath_gate.errors import ConfigError

RUBRICS = ("standard", "strict")
"""The judge's two rubrics (``MetricVerdict.rubric``)."""


class JudgingPairs(AnalysisModel):
    """Paired judgings (module docstring).

    ``kind``: ``two_judges`` or ``rejudgings`` (a judge with itself); ``judges``: the judge
    model of each file; ``pairs``; ``only_in_a``/``only_in_b``: transcript x metric scored in
    one file only (two judges); ``different_transcripts``: transcript ids present in both files
    with different content; ``judgings``: scored judgings pooled and ``indices`` their re-judge
    indices (rejudgings); ``unpaired``: transcript x metric with a single scored judging;
    ``judge_failures``: judgings left out because the judge gave no score.
    """

    kind: Literal["two_judges", "rejudgings"]
    judges: tuple[str | None, ...]
    pairs: tuple[PairedScore, ...]
    only_in_a: int = 0
    only_in_b: int = 0
    different_transcripts: int = 0
    judgings: int = 0
    indices: tuple[int, ...] = ()
    unpaired: int = 0
    judge_failures: int = 0


class GoldPairs(AnalysisModel):
    """Judge vs gold pairs (``a`` the judge, ``b`` the gold label) and the scores of either
    side without a partner (same conversation, run and metric)."""

    pairs: tuple[PairedScore, ...]
    unmatched_judge: int
    unmatched_gold: int


class RubricPairing(AnalysisModel):
    """Rows of one judge under both rubrics (:func:`rubric_rows`). ``sources``: rubric ->
    the files holding its judgings; ``only_standard``/``only_strict``: transcript x metric
    judged under one rubric only; ``different_transcripts`` as in :class:`JudgingPairs`."""

    rows: tuple[RubricRow, ...]
    judge_model: str | None
    sources: dict[str, tuple[str, ...]]
    only_standard: int
    only_strict: int
    different_transcripts: int


def first_judgings(results: ResultsScores) -> dict[tuple[str, str], float]:
    """``(transcript_id, metric_id) -> score`` of each transcript's scored judging with the
    lowest re-judge index (re-judgings are for reliability; N/A, criteria-only and
    JudgeFailure verdicts have no score and are left out)."""
    best: dict[tuple[str, str], tuple[int, float]] = {}
    for s in results.scores:
        if s.score is None:
            continue
        key = (s.transcript_id, s.metric_id)
        if key not in best or s.rejudge < best[key][0]:
            best[key] = (s.rejudge, s.score)
    return {k: v for k, (_, v) in best.items()}


def pair_scores(
    a: Mapping[tuple[str, str], float], b: Mapping[tuple[str, str], float]
) -> tuple[tuple[PairedScore, ...], int, int]:
    """Join two ``(item_id, metric_id) -> score`` maps: ``(pairs, only_in_a, only_in_b)``,
    pairs sorted by item then metric."""
    keys = sorted(set(a) & set(b))
    pairs = tuple(PairedScore(item_id=k[0], metric_id=k[1], a=a[k], b=b[k]) for k in keys)
    return pairs, len(set(a) - set(b)), len(set(b) - set(a))


def same_judge(a: ResultsScores, b: ResultsScores) -> bool:
    """True when ``a`` and ``b`` are scored by one judge (module docstring): same judge
    model (known), rubric, granularity and template hash."""
    return a.judge_model is not None and a.judge_identity == b.judge_identity


def _hashes(results: ResultsScores) -> dict[str, str | None]:
    return {s.transcript_id: s.content_hash for s in results.scores}


def _different(a: ResultsScores, b: ResultsScores) -> set[str]:
    """Transcript ids in both files whose recorded content hashes differ."""
    ha, hb = _hashes(a), _hashes(b)
    return {t for t in set(ha) & set(hb) if ha[t] is not None and hb[t] is not None and ha[t] != hb[t]}


def judge_pairs(a: ResultsScores, b: ResultsScores) -> JudgingPairs:
    """Pairs of two results files (module docstring): two judges' first judgings, or, when
    one judge scored both, its re-judgings pooled (:func:`rejudging_pairs`). Raises
    ConfigError when nothing pairs."""
    if same_judge(a, b):
        return rejudging_pairs((a, b))
    different = _different(a, b)

    def firsts(r: ResultsScores) -> dict[tuple[str, str], float]:
        return {k: v for k, v in first_judgings(r).items() if k[0] not in different}

    pairs, only_a, only_b = pair_scores(firsts(a), firsts(b))
    if not pairs:
        extra = f" ({len(different)} transcript ids hold other text in each)" if different else ""
        raise ConfigError(f"{a.path} and {b.path} share no scored transcript x metric{extra}")
    return JudgingPairs(
        kind="two_judges",
        judges=(a.judge_model, b.judge_model),
        pairs=pairs,
        only_in_a=only_a,
        only_in_b=only_b,
        different_transcripts=len(different),
    )


def _check_one_judge(files: Sequence[ResultsScores]) -> None:
    models = sorted({s.judge_model for f in files for s in f.scores if s.judge_model is not None})
    if len(models) > 1:
        names = " and ".join(f.path for f in files)
        raise ConfigError(
            f"{names}: judgings by {', '.join(models)}; the agreement of a judge with itself needs "
            "the judgings of one judge (give two files of different judges for inter-judge agreement)"
        )


def rejudging_pairs(files: Sequence[ResultsScores]) -> JudgingPairs:
    """Every unordered pair of distinct judgings of each transcript x metric in ``files``
    (one judge; module docstring). Raises ConfigError when the files mix judges or no
    transcript x metric has two scored judgings."""
    _check_one_judge(files)
    different = _different(files[0], files[1]) if len(files) == 2 else set()
    judged: dict[tuple[str, str], dict[int, float]] = {}
    failed: set[tuple[str, str, int]] = set()
    for n, f in enumerate(files):
        for s in f.scores:
            if n > 0 and s.transcript_id in different:
                continue  # another transcript under the same id
            if s.score is not None:
                judged.setdefault((s.transcript_id, s.metric_id), {}).setdefault(s.rejudge, s.score)
            elif s.status == "judge_failure":
                failed.add((s.transcript_id, s.metric_id, s.rejudge))
    pairs: list[PairedScore] = []
    for (tid, metric), by_index in sorted(judged.items()):
        ks = sorted(by_index)
        pairs.extend(
            PairedScore(
                item_id=f"{tid}#{i}-{j}",
                metric_id=metric,
                a=by_index[i],
                b=by_index[j],
                cluster=f"{tid}/{metric}",
            )
            for pos, i in enumerate(ks)
            for j in ks[pos + 1 :]
        )
    if not pairs:
        names = " and ".join(f.path for f in files)
        raise ConfigError(
            f"{names}: one judging per transcript x metric, so there is nothing to compare the judge "
            "with; re-judge K more times (`empath-gate rejudge RESULTS --times K -o OUT`) and run "
            "`empath-gate agreement OUT`"
            + (f" ({len(different)} transcript ids hold other text in each file)" if different else "")
        )
    return JudgingPairs(
        kind="rejudgings",
        judges=tuple(f.judge_model for f in files),
        pairs=tuple(pairs),
        different_transcripts=len(different),
        judgings=sum(len(v) for v in judged.values()),
        indices=tuple(sorted({k for v in judged.values() for k in v})),
        unpaired=sum(1 for v in judged.values() if len(v) == 1),
        judge_failures=sum(1 for t, m, k in failed if k not in judged.get((t, m), {})),
    )


def gold_pairs(gold: Sequence[GoldScore], results: ResultsScores) -> GoldPairs:
    """The first scored judging of each conversation, run and metric of ``results`` paired
    with its gold label (``item_id`` ``<conversation>-r<run>``), in the gold labels' order."""
    judged = first_judgings(results)
    by_key: dict[tuple[str, int, str], float] = {}
    for s in results.scores:
        if (s.transcript_id, s.metric_id) in judged:
            by_key[(s.conversation_id, s.run, s.metric_id)] = judged[(s.transcript_id, s.metric_id)]
    pairs = tuple(
        PairedScore(item_id=f"{g.conversation_id}-r{g.run}", metric_id=g.metric_id, a=by_key[key], b=g.score)
        for g in gold
        if (key := (g.conversation_id, g.run, g.metric_id)) in by_key
    )
    gold_keys = {(g.conversation_id, g.run, g.metric_id) for g in gold}
    return GoldPairs(
        pairs=pairs,
        unmatched_judge=len(set(by_key) - gold_keys),
        unmatched_gold=len(gold_keys - set(by_key)),
    )


# ----------------------------------------------------------------------------- standard vs strict


_Chosen = dict[tuple[str, str, str], tuple[JudgedScore, str | None]]
"""``(transcript, metric, rubric) -> (verdict, judge model)``."""


def _first_by_rubric(files: Sequence[ResultsScores]) -> tuple[_Chosen, dict[str, list[str]]]:
    """Per transcript, metric and rubric the first scored judging (else the first judging)
    with its judge model, and ``rubric -> files`` holding judgings under it."""
    chosen: _Chosen = {}
    sources: dict[str, list[str]] = {}
    for f in files:
        for s in f.scores:
            rubric = s.rubric or f.rubric
            if rubric not in RUBRICS:
                raise ConfigError(
                    f"{f.path}: the verdict of {s.transcript_id} ({s.metric_id}) names no rubric "
                    f"(expected {' or '.join(RUBRICS)})"
                )
            if f.path not in sources.setdefault(rubric, []):
                sources[rubric].append(f.path)
            key = (s.transcript_id, s.metric_id, rubric)
            old = chosen.get(key)
            if old is None or (s.score is not None, -s.rejudge) > (old[0].score is not None, -old[0].rejudge):
                chosen[key] = (s, s.judge_model or f.judge_model)
    return chosen, sources


def _side_error(rubric: str, s: JudgedScore) -> str | None:
    if s.score is not None:
        return None
    return f"{rubric}: {s.status}" + (f" ({s.failure})" if s.failure else "")


def _one_model(chosen: _Chosen, files: Sequence[ResultsScores]) -> str | None:
    by_rubric: dict[str, set[str]] = {}
    for (_, _, rubric), (_, model) in chosen.items():
        if model is not None:
            by_rubric.setdefault(rubric, set()).add(model)
    models = sorted({m for ms in by_rubric.values() for m in ms})
    if len(models) > 1:
        detail = "; ".join(f"{r}: {', '.join(sorted(m))}" for r, m in sorted(by_rubric.items()))
        raise ConfigError(
            f"{' and '.join(f.path for f in files)}: scored by more than one judge ({detail}); the "
            "standard-vs-strict comparison holds the judge fixed: re-judge the strict results with "
            "their own judge (`empath-gate rejudge RESULTS --rubric standard -o standard.json`)"
        )
    return models[0] if models else None


def rubric_rows(files: Sequence[ResultsScores]) -> RubricPairing:
    """One :class:`RubricRow` per transcript x metric judged under both rubrics in ``files``
    (module docstring; ``id`` ``<transcript_id>/<metric_id>``). Raises ConfigError when the
    files hold one rubric only, or judgings of more than one judge model."""
    chosen, sources = _first_by_rubric(files)
    missing = [r for r in RUBRICS if r not in sources]
    if missing:
        raise ConfigError(
            f"{' and '.join(f.path for f in files)}: judgings under the {', '.join(sources) or 'no'} "
            f"rubric only; give the same transcripts judged under the {' and '.join(missing)} rubric "
            "too, e.g. `empath-gate rejudge RESULTS --rubric standard -o standard.json` and "
            "`empath-gate calibrate --standard-vs-strict RESULTS standard.json`"
        )
    model = _one_model(chosen, files)
    rows: list[RubricRow] = []
    only = dict.fromkeys(RUBRICS, 0)
    different: set[str] = set()
    for tid, metric in sorted({(t, m) for (t, m, _) in chosen}):
        std, strict = chosen.get((tid, metric, "standard")), chosen.get((tid, metric, "strict"))
        if std is None or strict is None:
            only["standard" if strict is None else "strict"] += 1
            continue
        (vs, _), (vt, _) = std, strict
        if vs.content_hash is not None and vt.content_hash is not None and vs.content_hash != vt.content_hash:
            different.add(tid)
            continue
        if vs.status == "na" and vt.status == "na":
            continue
        errors = [e for e in (_side_error("standard", vs), _side_error("strict", vt)) if e]
        rows.append(
            RubricRow(
                id=f"{tid}/{metric}",
                metric_id=metric,
                standard=vs.score,
                strict=vt.score,
                error="; ".join(errors) or None,
            )
        )
    return RubricPairing(
        rows=tuple(rows),
        judge_model=model,
        sources={r: tuple(sources[r]) for r in RUBRICS},
        only_standard=only["standard"],
        only_strict=only["strict"],
        different_transcripts=len(different),
    )
