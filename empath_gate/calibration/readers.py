"""Reading the files that calibration and agreement work on (with
:mod:`~empath_gate.calibration.preferences`, the only file input of this package).

Every reader raises :class:`~empath_gate.errors.ConfigError` naming the file (and the line or
row) and what to fix. Shapes read:

* **Gold labels** (:func:`read_gold`): JSONL (one object per line) or CSV with a header, with
  ``conversation_id``, ``run`` (0-based int), ``metric`` (or ``metric_id``) and ``score``
  (1-10). Blank lines are skipped.
* **Results files** (:func:`read_results`): a JSON document written by ``empath-gate run`` or
  the pytest plugin. Its schema lives with the results module; this reader picks only what it
  needs, defensively (:func:`results_adapter`): verdict dicts with ``transcript_id``,
  ``metric_id``, ``status``, ``score``, optional ``judge_model``, ``rubric``, ``failure`` and
  ``rejudge``, found in a top-level ``verdicts`` list, or in the ``verdicts`` of each entry of
  ``records`` (the results schema's :class:`~empath_gate.results.RunRecord` list, whose
  ``content_hash`` each verdict keeps), ``runs`` or ``transcripts``; the judge model from
  ``metadata.judge.model`` (or ``metadata.judge`` when it is a string, else the verdicts'
  ``judge_model``), and the judge's ``rubric``, ``granularity`` and ``template_hash`` from
  ``metadata.judge``. :func:`results_or_none` tells a results file from the other shapes.
* **Paired scores** (:func:`read_pairs`): the peer release's
  ``s2_grid_and_interjudge.json`` shape, recognised by its keys ``grid_A``, ``grid_B`` and
  ``pairs_by_model``: ``pairs_by_model[model]`` lists ``[judge_A, judge_B]`` pairs in **sorted
  metric-id order** (checked against the grids); its ``agreement`` block is kept as the
  published figures. Otherwise a JSON list, JSONL or CSV of rows with ``metric`` (or
  ``metric_id``), ``a`` and ``b``, and optional ``item_id`` and ``group``.
* **Standard vs strict** (:func:`read_standard_vs_strict`): a JSON list of rows ``{id, metric,
  original_score, strict_score, error, target}`` (the peer's ``s1_calibration.json``), or the
  same with ``standard``/``strict``; scores are read as they are (a 0 stays 0).
* **Preferences**: :mod:`empath_gate.calibration.preferences`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.stats import parse_transcript_id
from empath_gate.bounded import JsonLineError, iter_csv, iter_jsonl, loads_json
from empath_gate.bounded import read_text as read_bounded_text
from empath_gate.calibration.agreement import PairedScore
from empath_gate.calibration.calibrate import RubricRow
from empath_gate.errors import ConfigError


class GoldScore(AnalysisModel):
    """A gold label: the score (1-10) a reference rater gave a conversation's run on a metric."""

    conversation_id: str
    run: int
    metric_id: str
    score: float


class JudgedScore(AnalysisModel):
    """One verdict picked from a results file. ``score`` is set only for ``status == "scored"``;
    ``failure`` is a judge failure's reason; ``rubric`` the verdict's own (``None`` when it
    names none); ``content_hash`` the transcript's, from its record (``None`` when unknown)."""

    transcript_id: str
    conversation_id: str
    run: int
    metric_id: str
    status: str
    score: float | None
    rejudge: int = 0
    judge_model: str | None = None
    rubric: str | None = None
    failure: str | None = None
    content_hash: str | None = None


class ResultsScores(AnalysisModel):
    """What :func:`read_results` keeps of a results file: its verdicts, and the judge of
    ``metadata.judge`` (each ``None`` when the file does not say)."""

    path: str
    judge_model: str | None
    scores: tuple[JudgedScore, ...]
    rubric: str | None = None
    granularity: str | None = None
    template_hash: str | None = None

    @property
    def judge_identity(self) -> tuple[str | None, str | None, str | None, str | None]:
        """``(model, rubric, granularity, template_hash)``: what makes two judgings of one
        transcript and re-judge index the same judging (same seed and cache key)."""
        return (self.judge_model, self.rubric, self.granularity, self.template_hash)


class PairsFile(AnalysisModel):
    """Paired scores read from one file; ``shape`` is ``interjudge-grid`` (the peer release's
    s2 file) or ``rows``; ``published``: the file's own agreement figures, when it has them."""

    path: str
    shape: str
    pairs: tuple[PairedScore, ...]
    published: dict[str, float] | None = None


# ----------------------------------------------------------------------------- helpers


def read_text(path: Path) -> str:
    """The UTF-8 text of ``path`` (a byte-order mark dropped); ConfigError naming the file when it
    is missing, not UTF-8 text or over ``max_json_bytes`` (:mod:`empath_gate.bounded`)."""
    try:
        return read_bounded_text(path)
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: file not found") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot be read as UTF-8 text ({exc})") from exc


def _json(path: Path) -> Any:
    try:
        return loads_json(read_text(path), str(path))
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc


def _records(path: Path) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """``(location, row)`` of a CSV (header row), JSONL or JSON-list file, chosen by suffix
    (``.csv``; ``.jsonl``; ``.json``) or, for another suffix, by the first character."""
    text = read_text(path)
    suffix = path.suffix.lower()
    first = text.lstrip()[:1]
    if suffix == ".csv" or (suffix not in (".json", ".jsonl") and first not in ("{", "[")):
        for i, row in iter_csv(text, str(path)):
            yield f"{path}:{i}", row
        return
    if suffix == ".json" or first == "[":
        try:
            data = loads_json(text, str(path))
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
        if not isinstance(data, list):
            raise ConfigError(f"{path}: expected a JSON list of rows")
        for i, row in enumerate(data):
            if not isinstance(row, dict):
                raise ConfigError(f"{path}: row {i} is not an object")
            yield f"{path}: row {i}", row
        return
    try:
        rows = list(iter_jsonl(text, str(path)))
    except JsonLineError as exc:
        raise ConfigError(str(exc)) from exc
    for i, row in rows:
        if not isinstance(row, dict):
            raise ConfigError(f"{path}:{i}: expected a JSON object")
        yield f"{path}:{i}", row


def _field(row: Mapping[str, Any], where: str, *names: str) -> Any:
    for n in names:
        if n in row and row[n] not in (None, ""):
            return row[n]
    raise ConfigError(f"{where}: missing {' or '.join(repr(n) for n in names)}")


def _number(value: Any, where: str, name: str) -> float:
    try:
        return float(value)
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"{where}: {name} {value!r} is not a number") from exc


# ----------------------------------------------------------------------------- gold


def read_gold(path: str | Path) -> tuple[GoldScore, ...]:
    """Gold labels from JSONL or CSV (module docstring). Raises ConfigError for a missing
    field, a non-numeric score or run, a score outside 1-10, or a repeated key."""
    p = Path(path)
    out: list[GoldScore] = []
    seen: set[tuple[str, int, str]] = set()
    for where, row in _records(p):
        conv = str(_field(row, where, "conversation_id"))
        run_value = _number(_field(row, where, "run"), where, "run")
        if not run_value.is_integer() or run_value < 0:
            raise ConfigError(f"{where}: run {run_value!r} must be a 0-based integer")
        metric = str(_field(row, where, "metric", "metric_id"))
        score = _number(_field(row, where, "score"), where, "score")
        if not 1 <= score <= 10:
            raise ConfigError(f"{where}: score {score:g} is outside the 1-10 scale")
        key = (conv, int(run_value), metric)
        if key in seen:
            raise ConfigError(f"{where}: {conv} run {int(run_value)} {metric} is labelled twice")
        seen.add(key)
        out.append(GoldScore(conversation_id=conv, run=int(run_value), metric_id=metric, score=score))
    if not out:
        raise ConfigError(f"{p}: no gold labels found")
    return tuple(out)


# ----------------------------------------------------------------------------- results


def _verdict_dicts(doc: Mapping[str, Any]) -> list[tuple[Mapping[str, Any], str | None]]:
    """Every verdict dict of a results document with its record's content hash."""
    if isinstance(doc.get("verdicts"), list):
        return [(v, None) for v in doc["verdicts"] if isinstance(v, dict)]
    found: list[tuple[Mapping[str, Any], str | None]] = []
    for key in ("records", "runs", "transcripts"):
        entries = doc.get(key)
        if isinstance(entries, list):
            for e in entries:
                if isinstance(e, dict) and isinstance(e.get("verdicts"), list):
                    h = e.get("content_hash")
                    found.extend(
                        (v, h if isinstance(h, str) else None) for v in e["verdicts"] if isinstance(v, dict)
                    )
    return found


def _optional_str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _judged_score(v: Mapping[str, Any], content_hash: str | None, where: str) -> JudgedScore:
    tid = str(_field(v, where, "transcript_id"))
    try:
        conv, run = parse_transcript_id(tid)
    except ValueError as exc:
        raise ConfigError(f"{where}: {exc}") from exc
    status = str(_field(v, where, "status"))
    raw = v.get("score")
    score = _number(raw, where, "score") if status == "scored" and raw is not None else None
    if status == "scored" and score is None:
        raise ConfigError(f"{where}: a scored verdict without a score")
    rejudge = v.get("rejudge", 0)
    failure = v.get("failure")
    return JudgedScore(
        transcript_id=tid,
        conversation_id=conv,
        run=run,
        metric_id=str(_field(v, where, "metric_id", "metric")),
        status=status,
        score=score,
        rejudge=int(rejudge) if isinstance(rejudge, int) else 0,
        judge_model=_optional_str(v.get("judge_model")),
        rubric=_optional_str(v.get("rubric")),
        failure=_optional_str(failure.get("reason")) if isinstance(failure, dict) else None,
        content_hash=content_hash,
    )


def results_adapter(doc: Any, *, source: str = "results") -> ResultsScores:
    """Pick the verdicts and the judge out of a parsed results document (module docstring).
    Raises ConfigError when no verdict is found or one lacks a field it needs."""
    if not isinstance(doc, dict):
        raise ConfigError(f"{source}: a results file is a JSON object")
    verdicts = _verdict_dicts(doc)
    if not verdicts:
        raise ConfigError(
            f"{source}: no verdicts found (expected 'verdicts', or 'verdicts' inside 'records' or 'runs')"
        )
    scores = tuple(_judged_score(v, h, f"{source}: verdict {i}") for i, (v, h) in enumerate(verdicts))
    meta = doc.get("metadata")
    j = meta.get("judge") if isinstance(meta, dict) else None
    info: Mapping[str, Any] = j if isinstance(j, dict) else {}
    judge = _optional_str(j) or _optional_str(info.get("model"))
    if judge is None:
        judge = next((s.judge_model for s in scores if s.judge_model), None)
    return ResultsScores(
        path=source,
        judge_model=judge,
        scores=scores,
        rubric=_optional_str(info.get("rubric")),
        granularity=_optional_str(info.get("granularity")),
        template_hash=_optional_str(info.get("template_hash")),
    )


def read_results(path: str | Path) -> ResultsScores:
    """The verdicts of a results file (module docstring)."""
    p = Path(path)
    return results_adapter(_json(p), source=str(p))


RESULTS_KEYS = frozenset({"records", "verdicts", "metadata"})
"""Top-level keys that mark a JSON object as a results document (``empath-gate run`` writes
all three of ``metadata``, ``records``; a hand-made file may hold ``verdicts`` only)."""


def results_or_none(path: str | Path) -> ResultsScores | None:
    """The verdicts of ``path`` when it is a results document (one JSON object with one of
    :data:`RESULTS_KEYS`), else ``None`` (a list or CSV of rows, JSONL, a peer grid). Raises
    ConfigError for a missing file, or a ``.json`` file that is not valid JSON."""
    p = Path(path)
    text = read_text(p)
    if not text.lstrip().startswith("{"):
        return None
    try:
        doc = loads_json(text, str(p))
    except json.JSONDecodeError as exc:
        if p.suffix.lower() == ".json":
            raise ConfigError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
        return None  # JSONL rows
    if isinstance(doc, dict) and RESULTS_KEYS & set(doc):
        return results_adapter(doc, source=str(p))
    return None


# ----------------------------------------------------------------------------- pairs


def _grid_pairs(doc: Mapping[str, Any], source: str) -> PairsFile:
    grid_a, grid_b, by_model = doc["grid_A"], doc["grid_B"], doc["pairs_by_model"]
    if not (isinstance(grid_a, dict) and isinstance(grid_b, dict) and isinstance(by_model, dict)):
        raise ConfigError(f"{source}: grid_A, grid_B and pairs_by_model must be objects")
    pairs: list[PairedScore] = []
    for model, rows in by_model.items():
        metrics = sorted(grid_a.get(model, {}))
        if not isinstance(rows, list) or len(rows) != len(metrics):
            raise ConfigError(
                f"{source}: pairs_by_model[{model!r}] has {len(rows) if isinstance(rows, list) else 0} "
                f"pairs for {len(metrics)} metrics in grid_A[{model!r}]"
            )
        for metric, pair in zip(metrics, rows, strict=True):
            if not (isinstance(pair, list) and len(pair) == 2):
                raise ConfigError(f"{source}: pairs_by_model[{model!r}] holds a non-pair {pair!r}")
            a = _number(pair[0], source, "score")
            b = _number(pair[1], source, "score")
            ga, gb = grid_a[model].get(metric), grid_b.get(model, {}).get(metric)
            if ga is not None and gb is not None and (float(ga), float(gb)) != (a, b):
                raise ConfigError(
                    f"{source}: pairs_by_model[{model!r}] does not follow sorted metric-id order: "
                    f"{metric} is {ga}/{gb} in the grids but {a}/{b} in the pairs"
                )
            pairs.append(PairedScore(item_id=f"{model}/{metric}", metric_id=metric, a=a, b=b, group=model))
    published = doc.get("agreement")
    pub = (
        {k: float(v) for k, v in published.items() if isinstance(v, (int, float))}
        if isinstance(published, dict)
        else None
    )
    return PairsFile(path=source, shape="interjudge-grid", pairs=tuple(pairs), published=pub)


def read_pairs(path: str | Path) -> PairsFile:
    """A single file of paired scores (module docstring). Raises ConfigError for a malformed
    file or row, or when no pair is found."""
    p = Path(path)
    if p.suffix.lower() == ".json":
        doc = _json(p)
        if isinstance(doc, dict) and {"grid_A", "grid_B", "pairs_by_model"} <= set(doc):
            return _grid_pairs(doc, str(p))
        if isinstance(doc, dict):
            raise ConfigError(
                f"{p}: not a file of paired scores: expected a list of rows with metric, a, b, or an "
                "inter-judge grid with grid_A, grid_B and pairs_by_model"
            )
    pairs: list[PairedScore] = []
    for i, (where, row) in enumerate(_records(p)):
        metric = str(_field(row, where, "metric", "metric_id"))
        group = row.get("group")
        pairs.append(
            PairedScore(
                item_id=str(row.get("item_id") or f"row-{i}"),
                metric_id=metric,
                a=_number(_field(row, where, "a"), where, "a"),
                b=_number(_field(row, where, "b"), where, "b"),
                group=str(group) if group not in (None, "") else None,
            )
        )
    if not pairs:
        raise ConfigError(f"{p}: no paired scores found")
    return PairsFile(path=str(p), shape="rows", pairs=tuple(pairs))


# ----------------------------------------------------------------------------- standard vs strict


def read_standard_vs_strict(path: str | Path) -> tuple[RubricRow, ...]:
    """Rows scored under both rubrics (module docstring); scores read as they are."""
    p = Path(path)
    rows: list[RubricRow] = []
    for i, (where, row) in enumerate(_records(p)):

        def score(*names: str, _row: Mapping[str, Any] = row, _where: str = where) -> float | None:
            for n in names:
                if n in _row:
                    v = _row[n]
                    return None if v in (None, "") else _number(v, _where, n)
            raise ConfigError(f"{_where}: missing {' or '.join(repr(n) for n in names)}")

        err = row.get("error")
        rows.append(
            RubricRow(
                id=str(row.get("id") or f"row-{i}"),
                metric_id=str(_field(row, where, "metric", "metric_id")),
                standard=score("original_score", "standard", "standard_score"),
                strict=score("strict_score", "strict"),
                target=str(row["target"]) if row.get("target") not in (None, "") else None,
                error=None if err in (None, "") else str(err),
            )
        )
    if not rows:
        raise ConfigError(f"{p}: no rows found")
    return tuple(rows)
