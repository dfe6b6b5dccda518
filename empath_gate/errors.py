"""Errors raised by empath-gate, written for the person who has to fix them.

Hierarchy::

    EmpathGateError
    ├── ConfigError      bad settings or options (CLI exit 2, pytest exit 4)
    ├── SuiteError       an instrument file is invalid (CLI exit 2, pytest exit 4)
    ├── ProviderError    a model provider failed (CLI exit 3; tests error)
    │   └── ProviderUnavailable  its circuit breaker opened: every later call fails at once
    ├── JudgeError       no verdict could be obtained (becomes a JudgeFailure state)
    └── BudgetExceeded   the cost budget was reached (CLI exit 3)
"""

from __future__ import annotations


class EmpathGateError(Exception):
    """Base class of every error empath-gate raises on purpose."""


class ConfigError(EmpathGateError):
    """A setting, option or command-line value is wrong; the message says which and how to fix it."""


MAX_PRINTED_PROBLEMS = 50
"""Problems printed at most (then ``… and N more problems``); JSON output carries all of them."""


def printed_problems(problems: list[str], noun: str = "problem",
                     hint: str = " (empath-gate validate --format json lists all)") -> list[str]:
    """The first :data:`MAX_PRINTED_PROBLEMS` of ``problems``, plus one line counting the rest
    (``… and N more problems`` and ``hint``)."""
    if len(problems) <= MAX_PRINTED_PROBLEMS:
        return list(problems)
    rest = len(problems) - MAX_PRINTED_PROBLEMS
    return [*problems[:MAX_PRINTED_PROBLEMS], f"… and {rest} more {noun}{'s' if rest != 1 else ''}{hint}"]


class SuiteError(EmpathGateError):
    """An instrument file (suite, seed, persona, metric, thresholds, waivers) is invalid.

    ``problems`` holds one line per problem, each naming the file, the line or JSON
    pointer, and what to fix; ``str()`` joins all of them, :meth:`printed` the first
    :data:`MAX_PRINTED_PROBLEMS` and a count of the others (what the command line and pytest show).
    """

    def __init__(self, problems: list[str] | str) -> None:
        self.problems: list[str] = [problems] if isinstance(problems, str) else list(problems)
        super().__init__("\n".join(self.problems))

    def printed(self) -> str:
        """The problems as printed: at most :data:`MAX_PRINTED_PROBLEMS` lines and a count."""
        return "\n".join(printed_problems(self.problems))


def printed(exc: BaseException) -> str:
    """How an error is shown to the user: :meth:`SuiteError.printed` for a SuiteError, else ``str``."""
    return exc.printed() if isinstance(exc, SuiteError) else str(exc)


class ProviderError(EmpathGateError):
    """A model provider call failed after retries.

    ``kind`` is one of: ``rate_limit``, ``server``, ``connection``, ``timeout``,
    ``authentication``, ``bad_request``, ``context_exceeded``, ``content_policy``,
    ``not_found``, ``unknown``. ``retryable`` tells whether the engine may retry it.
    """

    def __init__(self, message: str, *, kind: str = "unknown", retryable: bool = False,
                 status_code: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.retryable = retryable
        self.status_code = status_code


class ProviderUnavailable(ProviderError):
    """A provider's circuit breaker opened (:mod:`empath_gate.llm.breaker`): its first ``calls``
    attempts all failed for a cause no retry can heal, so every later call to it fails at once
    (not retried) and the run ends in seconds, every transcript that needed it in error.

    ``provider``: the provider's name (endpoint without credentials); ``cause``: the most
    frequent cause (``connection refused``, ``DNS failure``, ``HTTP 401``, ``HTTP 403``,
    ``credentials in the URL``); ``role``: the role whose call opened it; ``last``: the last
    underlying error message (redacted). ``kind`` is ``authentication`` for the credential
    causes, else ``connection``.
    """

    def __init__(self, provider: str, cause: str, role: str, *, calls: int, last: str = "") -> None:
        self.provider, self.cause, self.role = provider, cause, role
        kind = "connection" if cause in ("connection refused", "DNS failure") else "authentication"
        super().__init__(
            f"provider {provider} is unavailable: its first {calls} calls ({role}) all ended in "
            f"{cause}, with no success; check its address, network and key, then run again"
            + (f" (last error: {last})" if last else ""),
            kind=kind,
            retryable=False,
        )


class JudgeError(EmpathGateError):
    """No verdict could be obtained from the judge.

    ``reason`` is one of ``parse_error``, ``truncated``, ``content_policy``,
    ``context_exceeded``, ``provider_error`` (the JudgeFailure reasons).
    """

    def __init__(self, message: str, *, reason: str) -> None:
        super().__init__(message)
        self.reason = reason


class BudgetExceeded(EmpathGateError):
    """The run reached ``max_cost_usd``; no new transcript is started."""
