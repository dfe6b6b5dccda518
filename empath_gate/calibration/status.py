"""The judge's calibration status: a small JSON file, and what a results file says about it.

``empath-gate calibrate --gold G --results R --save PATH`` (the judge of ``R`` against gold
labels) and ``empath-gate agreement A B --save PATH`` (the judge of ``A`` against the peer
judge of ``B``) write a :class:`CalibrationStatus`. The setting ``judge_calibration`` (file key
in ``[tool.empath-gate]``, env ``EMPATH_JUDGE_CALIBRATION``) points a run at such a file;
:func:`calibration_for` turns it into ``metadata.judge.calibration`` of the results, which the
PR comment footer, the terminal summary and the HTML report print
(:func:`empath_gate.report.view.calibration_text`).

File shape (``version`` = :data:`STATUS_VERSION`; UTF-8 JSON)::

    {"version": 1, "judge_model": "openai/gpt-4o", "rubric": "strict" | null,
     "kind": "gold" | "peer_judge", "against": "gold labels gold.jsonl" | "peer judge <model>",
     "reference": "gold.jsonl" | "<peer model>", "date": "2026-02-20", "n": 120,
     "figures": {...}, "inflated_vs_gold": [...], "sources": ["gold.jsonl", "results.json"],
     "tool_version": "0.1.0"}

``figures`` holds the pooled key figures: for ``gold`` ``bias`` (judge - gold, points),
``bias_ci_low``/``bias_ci_high`` (its bootstrap 95 % interval), ``mae``, ``within_1`` (share,
0-1) and ``spearman``; for ``peer_judge`` ``exact`` and ``within_1`` (shares, 0-1),
``mean_abs_diff`` (points), ``pearson``, ``spearman``, ``kappa`` (quadratic-weighted Cohen's
kappa) and ``alpha`` (Krippendorff's ordinal alpha). A figure undefined on the data is null.
``sources`` are file names only (no folders).

``metadata.judge.calibration`` (:func:`calibration_for`) is the file's content plus
``status``, ``calibrated``, ``file`` and ``note``: ``status`` is ``"calibrated"`` only when the
file's judge model equals the configured judge model (and, when both are known, its rubric the
configured rubric), otherwise ``"stale: calibrated for <model>"`` with ``calibrated`` false; an
unreadable or missing file gives ``status`` ``"not_calibrated"`` with the reason in ``note``
(visible, never silently dropped). No ``judge_calibration`` setting, or no judge model: ``None``
(the reports say "not calibrated").
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empath_gate.bounded import read_json
from empath_gate.calibration.agreement import AgreementReport
from empath_gate.calibration.calibrate import CalibrationReport
from empath_gate.errors import ConfigError

STATUS_VERSION = 1
"""Version of the calibration status file (this module's docstring)."""

CALIBRATED = "calibrated"
NOT_CALIBRATED = "not_calibrated"


class CalibrationStatus(BaseModel):
    """A judge's calibration status (module docstring for every field)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: int = STATUS_VERSION
    judge_model: str = Field(min_length=1)
    rubric: str | None = None
    kind: Literal["gold", "peer_judge"]
    against: str
    reference: str
    date: str = Field(pattern=r"^\d{4}-\d{2}-\d{2}$")
    n: int = Field(ge=0)
    figures: dict[str, float | None]
    inflated_vs_gold: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()
    tool_version: str


def _today(today: dt.date | None) -> str:
    return (today or dt.datetime.now(dt.timezone.utc).date()).isoformat()


def _judge_of(path: Path) -> tuple[str | None, str | None]:
    """``(judge model, rubric)`` from a results file's ``metadata.judge``, read defensively
    (either may be None); ConfigError when the file is not JSON."""
    try:
        doc = read_json(Path(path))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the results file ({exc})") from exc
    judge = doc.get("metadata", {}).get("judge") if isinstance(doc, dict) else None
    if isinstance(judge, str):
        return judge, None
    if not isinstance(judge, dict):
        return None, None
    model, rubric = judge.get("model"), judge.get("rubric")
    return (model if isinstance(model, str) else None), (rubric if isinstance(rubric, str) else None)


def _tool_version() -> str:
    from empath_gate import __version__

    return __version__


def status_from_gold(
    report: CalibrationReport,
    *,
    results_path: Path,
    gold_path: Path,
    judge_model: str | None = None,
    today: dt.date | None = None,
) -> CalibrationStatus:
    """The status of the judge of ``results_path`` calibrated against the gold labels of
    ``gold_path`` (``report``: :func:`empath_gate.calibration.calibrate.calibrate` of them).
    ``judge_model``: as read from the results (default: its ``metadata.judge.model``).
    Raises ConfigError when the results name no judge model (offline results have none)."""
    model, rubric = _judge_of(results_path)
    model = model or judge_model
    if not model:
        raise ConfigError(
            f"{results_path}: the results name no judge model (criteria-only results cannot be "
            "calibrated); calibrate a results file scored by a judge model"
        )
    p = report.pooled
    return CalibrationStatus(
        judge_model=model,
        rubric=rubric,
        kind="gold",
        against=f"gold labels {Path(gold_path).name}",
        reference=Path(gold_path).name,
        date=_today(today),
        n=p.n,
        figures={
            "bias": p.bias.value,
            "bias_ci_low": p.bias.ci_low,
            "bias_ci_high": p.bias.ci_high,
            "mae": p.mae,
            "within_1": p.within_one,
            "spearman": p.spearman,
        },
        inflated_vs_gold=tuple(report.inflated_vs_gold),
        sources=(Path(gold_path).name, Path(results_path).name),
        tool_version=_tool_version(),
    )


def status_from_agreement(
    report: AgreementReport,
    *,
    results_a: Path,
    results_b: Path,
    today: dt.date | None = None,
) -> CalibrationStatus:
    """The status of the judge of ``results_a`` calibrated against the peer judge of
    ``results_b`` (``report``: :func:`empath_gate.calibration.agreement.agreement` of their paired
    first judgings). Raises ConfigError when either file names no judge model."""
    model_a, rubric_a = _judge_of(results_a)
    model_b, _ = _judge_of(results_b)
    if not model_a or not model_b:
        raise ConfigError(
            f"{results_a if not model_a else results_b}: the results name no judge model; "
            "agreement --save needs two results files scored by judge models"
        )
    p = report.pooled
    return CalibrationStatus(
        judge_model=model_a,
        rubric=rubric_a,
        kind="peer_judge",
        against=f"peer judge {model_b}",
        reference=model_b,
        date=_today(today),
        n=p.n,
        figures={
            "exact": p.exact.value,
            "within_1": p.within_one.value,
            "mean_abs_diff": p.mean_abs_diff.value,
            "pearson": p.pearson.value,
            "spearman": p.spearman.value,
            "kappa": p.kappa_quadratic.value,
            "alpha": p.krippendorff_alpha.value,
        },
        sources=(Path(results_a).name, Path(results_b).name),
        tool_version=_tool_version(),
    )


def write_status(status: CalibrationStatus, path: Path) -> Path:
    """Write ``status`` to ``path`` (UTF-8 JSON, atomically); returns the path."""
    from empath_gate.results import write_json_atomic

    write_json_atomic(Path(path), status.model_dump(mode="json"))
    return Path(path)


def read_status(path: Path) -> CalibrationStatus:
    """Read a calibration status file. Raises ConfigError naming the file when it is missing,
    not JSON, or not a status of this version."""
    p = Path(path)
    try:
        data = read_json(p)
    except FileNotFoundError as exc:
        raise ConfigError(f"{p}: calibration status file not found (judge_calibration)") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{p}: cannot read the calibration status file ({exc})") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{p}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    try:
        return CalibrationStatus.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"]) or "(top level)"
        raise ConfigError(
            f"{p}: not a calibration status file ({where}: {first['msg']}); write one with "
            "`empath-gate calibrate --gold G --results R --save PATH` or `agreement A B --save PATH`"
        ) from exc


def calibration_for(
    path: Path | None, judge_model: str | None, rubric: str | None = None
) -> dict[str, Any] | None:
    """``metadata.judge.calibration`` for a run whose judge is ``judge_model`` (and ``rubric``)
    and whose ``judge_calibration`` setting is ``path`` (module docstring). Never raises: a
    missing or invalid file becomes a ``not_calibrated`` status with the reason in ``note``."""
    if path is None or not judge_model:
        return None
    try:
        status = read_status(path)
    except ConfigError as exc:  # the note names the file, never its folder (it reaches PR comments)
        note = str(exc).replace(str(path), Path(path).name)
        return {"status": NOT_CALIBRATED, "calibrated": False, "file": Path(path).name, "note": note}
    out: dict[str, Any] = status.model_dump(mode="json")
    out["file"] = Path(path).name
    mismatch: list[str] = []
    if status.judge_model != judge_model:
        mismatch.append(f"calibrated for {status.judge_model}")
    elif rubric is not None and status.rubric is not None and status.rubric != rubric:
        mismatch.append(f"calibrated for {status.judge_model} with the {status.rubric} rubric")
    if mismatch:
        out["status"] = f"stale: {mismatch[0]}"
        out["calibrated"] = False
        out["note"] = (
            f"on {status.date}; the configured judge is {judge_model}"
            + (f" with the {rubric} rubric" if rubric and status.judge_model == judge_model else "")
            + ": calibrate it again"
        )
    else:
        out["status"] = CALIBRATED
        out["calibrated"] = True
        out["note"] = None
    return out
