"""One pytest session's empath-gate state, in every process role: the run setup, the records
this process knows, and the decisions its tests assert on. All the work is the library's
(:mod:`empath_gate.run`); this only holds what the hooks need between them."""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from empath_gate.errors import ConfigError, SuiteError

if TYPE_CHECKING:
    from empath_gate.gate.checks import SuiteCheck
    from empath_gate.gate.decide import CellDecision
    from empath_gate.plan.build import PlanItem
    from empath_gate.results.model import Results, RunRecord
    from empath_gate.run import RunSetup


def share(conversations: Sequence[str], slot: int, slots: int) -> list[str]:
    """The conversations of worker slot ``slot`` of ``slots``: every ``slots``-th one from
    ``slot``, in plan order (a replacement worker with the same slot gets the same share)."""
    if slots <= 1:
        return list(conversations)
    return [c for i, c in enumerate(conversations) if i % slots == slot]


def lost_records(setup: RunSetup, conversations: Sequence[str], reason: str) -> list[RunRecord]:
    """Error records for every planned transcript of ``conversations`` (no verdict: their tests
    error with ``reason``)."""
    from empath_gate.results.model import RunRecord

    wanted = set(conversations)
    out: list[RunRecord] = []
    for conv in setup.plan.conversations:
        if conv.conversation_id not in wanted:
            continue
        seed = setup.instrument.seed(conv.seed_id)
        for run in range(setup.plan.runs):
            out.append(
                RunRecord(
                    transcript_id=f"{conv.conversation_id}-r{run}",
                    conversation_id=conv.conversation_id,
                    suite=conv.suite,
                    seed_id=conv.seed_id,
                    persona_id=conv.persona_id,
                    locale=seed.locale,
                    run=run,
                    status="error",
                    error=reason,
                )
            )
    return out


@dataclass
class EmpathSession:
    """State of one pytest session with ``--empath-suite``."""

    setup: RunSetup
    records: dict[str, RunRecord] = field(default_factory=dict)
    selected: list[str] | None = None
    """Ids of the selected tests (after ``-k``/``-m``/``--lf``); None: every test of the plan."""
    results: Results | None = None
    decisions: dict[tuple[str, str], CellDecision] = field(default_factory=dict)
    checks: dict[str, SuiteCheck] = field(default_factory=dict)
    error: str | None = None
    error_kind: str | None = None
    """``usage`` (a setting the user must fix, e.g. a target that cannot be loaded) or
    ``infrastructure``, when ``error`` is set."""
    written: list[Path] = field(default_factory=list)

    @classmethod
    def from_pytest(cls, config: Any) -> EmpathSession:
        """Read the plugin's options (command line > ini) and the settings layers; raises
        ConfigError/SuiteError for anything a user must fix."""
        from empath_gate.commands.options import name_options, split_suites
        from empath_gate.pytest_plugin.options import flag_names, overrides, selection
        from empath_gate.run import prepare
        from empath_gate.settings.load import load_settings

        rootdir = Path(str(config.rootpath))
        try:
            settings = load_settings(pyproject=rootdir / "pyproject.toml", overrides=overrides(config))
        except ConfigError as exc:  # name the option as the user wrote it, not the setting key
            raise ConfigError(name_options(str(exc), flag_names())) from None
        setup = prepare(
            settings,
            split_suites(selection(config, "suites")),
            shard=selection(config, "shard"),
            project=rootdir,
        )
        return cls(setup=setup)

    def conversations(self, items: Sequence[PlanItem]) -> list[str]:
        """The conversations of the selected ``items``, in plan order; remembers the selection."""
        self.selected = [i.id for i in items]
        seen: dict[str, None] = {}
        for i in items:
            seen.setdefault(i.conversation_id, None)
        return list(seen)

    def generate(
        self, conversation_ids: Sequence[str], progress: Callable[[str], None] | None
    ) -> list[RunRecord]:
        """Generate and judge ``conversation_ids``; a usage or infrastructure problem sets
        ``error`` (every selected test then errors with it) and returns no record. On Ctrl-C
        the records of what finished are kept (the unfinished are interrupted ``error``
        records) and the interrupt goes on."""
        from empath_gate.judging.hygiene import JudgeHygieneWarning
        from empath_gate.run import run_plan
        from empath_gate.runner import RunInterrupted

        try:
            with warnings.catch_warnings():  # the header said it once, on one line
                warnings.simplefilter("ignore", JudgeHygieneWarning)
                recs = run_plan(self.setup, conversations=conversation_ids, progress=progress)
        except RunInterrupted as stop:  # Ctrl-C: the session's end writes what finished
            if stop.finished:
                self.absorb(stop.records)
            raise
        except (ConfigError, SuiteError) as exc:  # e.g. a target that cannot be loaded
            self.error, self.error_kind = f"configuration: {exc}", "usage"
            return []
        except Exception as exc:  # infrastructure: every selected test errors with the reason
            self.error, self.error_kind = f"infrastructure: {type(exc).__name__}: {exc}", "infrastructure"
            return []
        self.absorb(recs)
        return recs

    def absorb(self, records: Sequence[RunRecord]) -> None:
        """Take ``records`` in (later ones replace earlier ones of the same transcript)."""
        for r in records:
            self.records[r.transcript_id] = r

    def decide(self) -> Results:
        """Evaluate every record known here over the selected tests (the one gating path)."""
        from empath_gate.run import evaluate_run

        self.results = evaluate_run(self.setup, list(self.records.values()), item_ids=self.selected)
        self.decisions = {(d.conversation_id, d.metric_id): d for d in self.results.decisions}
        self.checks = {c.id: c for c in self.results.checks}
        return self.results

    # ---- per test

    def infrastructure_problem(self, info: PlanItem) -> str | None:
        """Why this test cannot be evaluated (it then errors), or None."""
        if self.error:
            return self.error
        d = self.decisions.get((info.conversation_id, info.metric_id))
        if d is None:
            return "infrastructure: no decision was made for this test (its transcripts are missing)"
        if d.status == "error":
            return "; ".join(d.reasons) or "infrastructure error"
        return None

    def outcome(self, info: PlanItem) -> tuple[str, str]:
        """(status, message) of this test: passed, failed, skipped, xfail or error."""
        d = self.decisions[(info.conversation_id, info.metric_id)]
        message = "; ".join(d.reasons)
        if d.status == "passed" and d.advisories:
            message = "; ".join(d.advisories)
        failed = self.failed_criteria(info.conversation_id, info.metric_id)
        if d.status in ("failed", "xfail") and failed:
            message += "\nfailed criteria: " + "; ".join(failed)
        return self._pending(d.status, message, info.conversation_id)

    def _pending(self, status: str, message: str, conversation_id: str | None = None) -> tuple[str, str]:
        """An incomplete test whose judging a ``--empath-judge-batch submit`` left pending in a
        provider batch is skipped as pending (never passed; collect decides it); else as is."""
        if status != "incomplete" or self.setup.settings.judge_batch != "submit":
            return status, message
        if any(r.status == "pending" and conversation_id in (None, r.conversation_id)
               for r in self.records.values()):
            return "skipped", "pending: judging submitted in a judge batch; " + message
        return status, message

    def properties(self, info: PlanItem) -> list[tuple[str, object]]:
        """The JUnit XML properties of this test (pytest's ``record_property``): ``verdict``
        (the cell status), ``mean`` (1-10, 2 decimals), ``run_min``/``run_max`` (the judged runs'
        range), ``flip_rate`` (0-1, 3 decimals), ``judged_runs`` of ``runs``, and the cell's
        thresholds ``min_mean``, ``min_run``, ``max_range``, ``max_flip_rate``. A statistic with
        no judged run is left out, never written as 0."""
        d = self.decisions.get((info.conversation_id, info.metric_id))
        if d is None or self.results is None:
            return []
        out: list[tuple[str, object]] = [("verdict", d.status)]
        cell = next((c for c in self.results.cells if (c.conversation_id, c.metric_id)
                     == (info.conversation_id, info.metric_id)), None)
        if cell is not None:
            out += [("runs", cell.n_runs), ("judged_runs", cell.n_judged)]
            for name, value, digits in (("mean", cell.mean, 2), ("run_min", cell.min, 0),
                                        ("run_max", cell.max, 0), ("flip_rate", cell.flip_rate, 3)):
                if value is not None:
                    out.append((name, round(value, digits) if digits else value))
        gate = self.results.gate
        t = gate.resolved.get(info.suite, {}).get(info.metric_id) if gate is not None else None
        if t is not None:
            out += [("min_mean", t.min_mean), ("min_run", t.min_run), ("max_range", t.max_range),
                    ("max_flip_rate", t.max_flip_rate)]
        return out

    def check_outcome(self, check_id: str) -> tuple[str, str]:
        """(status, message) of the suite check ``<suite>::<check>``."""
        if self.error:
            return "error", self.error
        c = self.checks.get(check_id)
        if c is None:
            return "error", "infrastructure: no decision was made for this suite check"
        return self._pending(c.status, "; ".join(c.reasons))

    def failed_criteria(self, conversation_id: str, metric_id: str) -> list[str]:
        """``<criterion> (critical) in run(s) 0, 1: <check detail>`` for each criterion of this
        cell whose effective state was FAIL, in criterion order (first judgings only)."""
        runs: dict[str, list[int]] = {}
        detail: dict[str, str] = {}
        critical: dict[str, bool] = {}
        for r in self.records.values():
            if r.conversation_id != conversation_id:
                continue
            for v in r.verdicts:
                if v.metric_id != metric_id or v.rejudge:
                    continue
                for c in v.criteria:
                    if c.state == "FAIL":
                        runs.setdefault(c.criterion_id, []).append(r.run)
                        critical[c.criterion_id] = c.critical
                        if c.check_detail and c.criterion_id not in detail:
                            detail[c.criterion_id] = c.check_detail
        out = []
        for cid, rs in runs.items():
            run_list = ", ".join(map(str, sorted(rs)))
            line = f"{cid}{' (critical)' if critical[cid] else ''} in run(s) {run_list}"
            out.append(line + (f": {detail[cid]}" if cid in detail else ""))
        return out

    # ---- the end of the session (controller or single process)

    def finish(self) -> None:
        """Evaluate everything known here and write the artifacts (nothing without records)."""
        from empath_gate.run import write_run

        if not self.records:
            return
        results = self.decide()
        self.written = write_run(self.setup, results)

    def summary_lines(self) -> list[str]:
        """The terminal summary per dimension, then the files written."""
        from empath_gate.report.terminal import render_terminal

        if self.results is None:
            return [f"empath-gate: {self.error}"] if self.error else []
        lines = render_terminal(self.results).splitlines()
        lines.extend(f"empath-gate: wrote {p}" for p in self.written)
        return lines
