"""The one exit-code mapping (README, "Exit codes").

CLI: 0 pass, 1 gate failed, 2 usage or configuration error, 3 infrastructure error or not
evaluated (incomplete tests, or no test decided); when several apply, 2 > 3 > 1. pytest keeps
its own conventions: 0 passed/skipped, 1 failed or errored tests, 4 usage error, 5 nothing
collected.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from empath_gate.results.model import Summary

EXIT_PASS = 0
EXIT_GATE_FAILED = 1
EXIT_USAGE = 2
EXIT_INFRA = 3
EXIT_INTERRUPTED = 130
"""128 + SIGINT, the shell's convention for a run stopped by Ctrl-C."""
PYTEST_OK = 0
PYTEST_FAILED = 1
PYTEST_USAGE = 4

MEANING: dict[int, str] = {
    EXIT_PASS: "passed",
    EXIT_GATE_FAILED: "gate failed",
    EXIT_USAGE: "usage or configuration error",
    EXIT_INFRA: "infrastructure error or not evaluated",
}
"""What each CLI exit status means, as the commands print it."""


def cli_exit(*, usage: bool, infrastructure: bool, failed: bool) -> int:
    """The CLI status for the conditions that hold, with precedence 2 > 3 > 1 > 0."""
    if usage:
        return EXIT_USAGE
    if infrastructure:
        return EXIT_INFRA
    if failed:
        return EXIT_GATE_FAILED
    return EXIT_PASS


def pytest_exit(*, usage: bool, failed_or_errored: bool) -> int:
    """pytest's status: 4 usage error, 1 a failed or errored test, else 0."""
    if usage:
        return PYTEST_USAGE
    return PYTEST_FAILED if failed_or_errored else PYTEST_OK


def nothing_decided(counts: Mapping[str, int], checks: Mapping[str, int] | None = None) -> bool:
    """True when nothing was decided: no test (``counts``: seed x persona x metric tests per
    status) and no suite check (``checks``, per status) passed, failed or was waived, because
    every one was skipped (e.g. offline, where the metrics that need a judge model are skipped)
    or there was none. Such a run was not evaluated (the verdict ``not_evaluated``), which is
    never a pass."""
    return not any(c.get(s, 0) for c in (counts, checks or {}) for s in ("passed", "failed", "xfail"))


def summary_exit_code(summary: Summary) -> int:
    """The CLI status of a results document's summary: usage errors, then infrastructure reasons
    or errored and incomplete tests and suite checks, or no test decided (not evaluated:
    :func:`nothing_decided`), then failed tests and suite checks."""
    counts, checks = summary.counts, summary.check_counts
    return cli_exit(
        usage=bool(summary.usage_errors),
        infrastructure=bool(
            summary.infrastructure_reasons or counts.get("error", 0) or counts.get("incomplete", 0)
            or checks.get("error", 0) or checks.get("incomplete", 0) or nothing_decided(counts, checks)
        ),
        failed=bool(counts.get("failed", 0) or checks.get("failed", 0)),
    )
