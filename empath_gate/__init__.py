"""empath-gate: a safety regression gate for emotional-support and mental-health chatbots.

An auditor model role-plays a help-seeker (a seed x a persona) against the target chatbot,
a judge model scores each transcript against the 19 metrics of the EMPATH instrument, every
conversation runs N times (test-retest), and a gate compares scores with thresholds,
run-to-run limits and a baseline.

The public API (README, "Use it from Python")::

    from empath_gate import load_settings, prepare, run_plan, evaluate_run, write_run

Importing this package is cheap: each name below is imported on first use, and heavy
dependencies (litellm) load only when a run needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

_EXPORTS: dict[str, str] = {
    # settings
    "Settings": "empath_gate.settings.model",
    "RoleSettings": "empath_gate.settings.model",
    "load_settings": "empath_gate.settings.load",
    # the instrument
    "Instrument": "empath_gate.instrument.models",
    "load_instrument": "empath_gate.instrument.loader",
    # the plan
    "Plan": "empath_gate.plan.build",
    "build_plan": "empath_gate.plan.build",
    "rebuild_plan": "empath_gate.plan.rebuild",
    # running it
    "RunSetup": "empath_gate.run",
    "prepare": "empath_gate.run",
    "run_plan": "empath_gate.run",
    "evaluate_run": "empath_gate.run",
    "write_run": "empath_gate.run",
    "run_suites": "empath_gate.run",
    # results and their verdict
    "Results": "empath_gate.results.model",
    "RunRecord": "empath_gate.results.model",
    "read_results": "empath_gate.results.io",
    "write_results": "empath_gate.results.io",
    "evaluate": "empath_gate.results.evaluate",
    "decide_results": "empath_gate.results.evaluate",
    "verdict_of": "empath_gate.verdict",
    "summary_exit_code": "empath_gate.gate.exit",
    # errors
    "EmpathGateError": "empath_gate.errors",
    "ConfigError": "empath_gate.errors",
    "SuiteError": "empath_gate.errors",
    "ProviderError": "empath_gate.errors",
    "JudgeError": "empath_gate.errors",
    "BudgetExceeded": "empath_gate.errors",
}

__all__ = ["__version__", *_EXPORTS]

if TYPE_CHECKING:
    from empath_gate.errors import (  # noqa: F401
        BudgetExceeded,
        ConfigError,
        EmpathGateError,
        JudgeError,
        ProviderError,
        SuiteError,
    )
    from empath_gate.gate.exit import summary_exit_code  # noqa: F401
    from empath_gate.instrument.loader import load_instrument  # noqa: F401
    from empath_gate.instrument.models import Instrument  # noqa: F401
    from empath_gate.plan.build import Plan, build_plan  # noqa: F401
    from empath_gate.plan.rebuild import rebuild_plan  # noqa: F401
    from empath_gate.results.evaluate import decide_results, evaluate  # noqa: F401
    from empath_gate.results.io import read_results, write_results  # noqa: F401
    from empath_gate.results.model import Results, RunRecord  # noqa: F401
    from empath_gate.run import RunSetup, evaluate_run, prepare, run_plan, run_suites, write_run  # noqa: F401
    from empath_gate.settings.load import load_settings  # noqa: F401
    from empath_gate.settings.model import RoleSettings, Settings  # noqa: F401
    from empath_gate.verdict import verdict_of  # noqa: F401


def __getattr__(name: str) -> Any:
    """Import a public name on first use (module docstring)."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'empath_gate' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
