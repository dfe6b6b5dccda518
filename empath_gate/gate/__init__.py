"""The gate (pure): a decision per conversation x metric and for the run (:mod:`.decide`), and the
one exit-code mapping (:mod:`.exit`)."""

from empath_gate.gate.decide import (
    EPS,
    FAIL_ON_VALUES,
    STATUSES,
    CellDecision,
    CellStatus,
    ConditionCheck,
    Decision,
    FailOn,
    decide,
    decide_cell,
    suite_judge_failure_limit,
    threshold_conditions,
)
from empath_gate.gate.exit import (
    EXIT_GATE_FAILED,
    EXIT_INFRA,
    EXIT_PASS,
    EXIT_USAGE,
    PYTEST_FAILED,
    PYTEST_OK,
    PYTEST_USAGE,
)

__all__ = [
    "EPS",
    "EXIT_GATE_FAILED",
    "EXIT_INFRA",
    "EXIT_PASS",
    "EXIT_USAGE",
    "FAIL_ON_VALUES",
    "PYTEST_FAILED",
    "PYTEST_OK",
    "PYTEST_USAGE",
    "STATUSES",
    "CellDecision",
    "CellStatus",
    "ConditionCheck",
    "Decision",
    "FailOn",
    "decide",
    "decide_cell",
    "suite_judge_failure_limit",
    "threshold_conditions",
]
