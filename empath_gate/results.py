"""The results document: one JSON file per run of a plan (or per shard), versioned by a JSON Schema.

Layout (``RESULTS_SCHEMA_VERSION`` = "1")::

    {
      "schema_version": "1",
      "metadata": {...},          # ResultsMetadata: suite, git sha, models, hashes, versions, cost
      "items": [...],             # one per seed x persona x metric test, in plan order
      "records": [...],           # one RunRecord per transcript: reference + its MetricVerdicts
      "cells": [...],             # CellStats per conversation x metric (test-retest statistics)
      "metrics": [...],           # MetricStats per metric across conversations
      "decisions": [...],         # CellDecision per item (gate outcome, reasons)
      "regressions": {...} | null,# baseline comparison (per metric), when a baseline was given
      "waivers": [...],           # waivers in force
      "summary": {...}            # counts: passed, failed, skipped, error, xfail; judge failures; filtered
    }

The JSON Schema ships as ``empath_gate/schemas/results.schema.json`` (generated from these
models; a test keeps it in step). Files are written UTF-8 with ``ensure_ascii=False``,
atomically (temp file + rename), so an interrupted run never leaves half a file.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import tempfile
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from empath_gate.analysis.regression import RegressionReport
from empath_gate.analysis.stats import CellStats, MetricStats
from empath_gate.gate import CellDecision
from empath_gate.instrument.models import Waiver
from empath_gate.judging.verdict import MetricVerdict

RESULTS_SCHEMA_VERSION = "1"


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class JudgeInfo(_Model):
    """The judge as configured: ``model`` is None offline (criteria-only)."""

    model: str | None = None
    rubric: str = "strict"
    granularity: str = "transcript"
    template_version: str | None = None
    template_hash: str | None = None
    calibration: dict[str, Any] | None = Field(
        default=None, description="calibration status: against what, when, agreement figures"
    )


class CostInfo(_Model):
    """Cost of the run: ``known_usd`` sums priced calls; ``unpriced_calls`` counts calls whose
    price is unknown (so the true total is >= known_usd)."""

    known_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0
    budget_usd: float | None = None
    budget_exhausted: bool = False


class ResultsMetadata(_Model):
    """Who, what and how of a run. Never holds an API key or a header value."""

    tool_version: str
    instrument_version: str
    suites: tuple[str, ...]
    plan_id: str
    shard: str | None = Field(default=None, description="'K/N' when this file is one shard")
    offline_subset: int | None = Field(
        default=None,
        description="offline profile on the embedded bot: conversations kept per (primary metric, locale)",
    )
    runs: int
    git_sha: str | None = None
    target: str
    target_prompt_hash: str | None = None
    target_version: str | None = None
    auditor: str = Field(description="'scripted' or the auditor model")
    auditor_template_version: str | None = None
    judge: JudgeInfo = JudgeInfo()
    offline_roles: tuple[str, ...] = Field(default=(), description="roles that fell back offline")
    fail_on: str = "both"
    started_at: str
    ended_at: str | None = None
    cost: CostInfo = CostInfo()
    auditor_fallbacks: int = 0
    auditor_refusals: int = 0


class ItemInfo(_Model):
    """One test: ``id`` = ``<seed>-<persona>-<metric>``; labels are for display only."""

    id: str
    suite: str
    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    dimension: str
    locale: str
    label: str
    critical: bool = False


class RunRecord(_Model):
    """One transcript's reference and its verdicts.

    ``status`` mirrors :class:`~empath_gate.conversation.transcript.Transcript.status`;
    ``transcript_path`` is relative to the results file's folder when possible.
    ``content_hash`` is the sha256 of the dialogue text (user + target turns) so test-retest
    reliability can tell whether runs produced different transcripts.

    The LLM auditor (all 0 for the scripted one; see
    :class:`~empath_gate.conversation.transcript.AuditorTally`): ``auditor_turns`` user turns it
    was asked for; ``auditor_fallbacks`` turns the script replaced (or a fallback that ended the
    conversation), ``auditor_fallback_reasons`` their count per reason (``refusal``,
    ``narration``…); ``auditor_refusals`` refusals retried successfully (the turn stayed the
    auditor's: not a fallback). The transcript's ``fallback`` events give each one's turn and why.
    """

    transcript_id: str
    conversation_id: str
    suite: str
    seed_id: str
    persona_id: str
    locale: str
    run: int = Field(ge=0)
    transcript_path: str | None = None
    status: str
    error: str | None = None
    n_turns: int = 0
    target_filtered: int = 0
    handoffs: int = 0
    content_hash: str | None = None
    cost_usd: float = 0.0
    calls: int = 0
    unpriced_calls: int = 0
    auditor_fallbacks: int = 0
    auditor_refusals: int = 0
    auditor_turns: int = 0
    auditor_fallback_reasons: dict[str, int] = Field(default_factory=dict)
    verdicts: tuple[MetricVerdict, ...] = ()


class Summary(_Model):
    """Counts of the run: cells per gate status, judge failures by reason, target filter events,
    and whether the run gated (``passed``) and why not (``infrastructure_reasons``,
    ``usage_errors``). ``criteria_only_metrics`` lists metrics that got no LLM score (offline)."""

    passed: bool = False
    counts: dict[str, int] = Field(default_factory=dict)
    judge_failures: dict[str, int] = Field(default_factory=dict)
    target_filtered: int = 0
    transcripts: int = 0
    transcripts_failed: int = 0
    criteria_only_metrics: tuple[str, ...] = ()
    infrastructure_reasons: tuple[str, ...] = ()
    usage_errors: tuple[str, ...] = ()


class Results(_Model):
    """The whole results document (see the module docstring for the layout)."""

    schema_version: str = RESULTS_SCHEMA_VERSION
    metadata: ResultsMetadata
    items: tuple[ItemInfo, ...] = ()
    records: tuple[RunRecord, ...] = ()
    cells: tuple[CellStats, ...] = ()
    metrics: tuple[MetricStats, ...] = ()
    decisions: tuple[CellDecision, ...] = ()
    regressions: RegressionReport | None = None
    waivers: tuple[Waiver, ...] = ()
    reliability: dict[str, Any] | None = Field(
        default=None, description="test-retest reliability per metric (see analysis.reliability)"
    )
    summary: Summary = Field(default_factory=lambda: Summary())

    @property
    def verdicts(self) -> list[MetricVerdict]:
        """Every verdict of every record, in record order."""
        return [v for r in self.records for v in r.verdicts]


_UMASK = os.umask(0)
os.umask(_UMASK)
_FILE_MODE = 0o666 & ~_UMASK
"""Mode of written results files: what ``open()`` would give under the process umask."""


def now_iso() -> str:
    """Current UTC time as ISO-8601 with seconds precision."""
    return dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()


def write_json_atomic(path: Path, data: Any) -> None:
    """Write ``data`` as UTF-8 JSON (``ensure_ascii=False``) to ``path`` atomically."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, ensure_ascii=False, indent=2)
            fh.write("\n")
        os.chmod(tmp, _FILE_MODE)  # mkstemp makes 0600; results are shared like any report
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_results(results: Results, path: Path) -> Path:
    """Validate against the shipped JSON Schema and write ``results`` to ``path``; returns the path.

    Raises ``jsonschema.ValidationError`` if the document does not match its schema (a bug).
    """
    data = results.model_dump(mode="json")
    validate_results_json(data)
    write_json_atomic(path, data)
    return path


def read_results(path: Path) -> Results:
    """Read a results file. Raises ConfigError naming the file when it is missing, not JSON,
    of another schema version, or invalid."""
    from empath_gate.errors import ConfigError

    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise ConfigError(f"{path}: results file not found") from exc
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from exc
    if not isinstance(data, dict) or data.get("schema_version") != RESULTS_SCHEMA_VERSION:
        got = data.get("schema_version") if isinstance(data, dict) else type(data).__name__
        raise ConfigError(
            f"{path}: results schema_version {got!r} is not {RESULTS_SCHEMA_VERSION!r}; "
            "re-run the suite with this version of empath-gate"
        )
    try:
        return Results.model_validate(data)
    except Exception as exc:
        raise ConfigError(f"{path}: not a valid empath-gate results file: {exc}") from exc


def results_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the results document, generated from the models."""
    schema = Results.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://empath-gate.dev/schemas/results-{RESULTS_SCHEMA_VERSION}.json"
    return schema


def shipped_schema_path() -> Path:
    """Where the results schema ships inside the package."""
    return Path(__file__).parent / "schemas" / "results.schema.json"


def validate_results_json(data: Any) -> None:
    """Validate a results document (parsed JSON) against the shipped schema."""
    import jsonschema

    schema = json.loads(shipped_schema_path().read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator(schema).validate(data)
