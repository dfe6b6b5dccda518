"""Judge calls answered by a provider batch instead of a live call (pure but for a context variable).

Batch judging runs in two phases (:mod:`empath_gate.judging.batch_mode`). While a
:class:`BatchSession` is active (:func:`batch_session`), :func:`empath_gate.llm.client.complete`
hands every judge call that the reply cache cannot answer to :meth:`BatchSession.answer`
instead of calling the provider:

* ``submit``: the request is recorded (its cache key, its provider body, the transcript, metrics,
  re-judge index and template hash it serves) and :class:`JudgePending` is raised; a request an
  earlier submit already put in a batch is not recorded again (it is pending in that batch).
* ``collect``: the stored reply of the request's batch result is returned (the client checks it
  with the caller's ``usable`` rule and stores a usable one in the cache, so the next run hits
  the cache); a request whose batch is unfinished raises :class:`JudgePending`; a request whose
  result is an error, or that no batch holds (the transcript or the judge settings changed since
  the submit), raises :class:`~empath_gate.errors.ProviderError` of kind ``batch``: the judge
  records a visible ``provider_error``, never a score. No live judge call is made in either phase.

Only judge calls are diverted; the session lives in a context variable, so the tasks a judging
pass spawns inherit it and nothing outside the pass sees it.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from empath_gate.errors import EmpathGateError, ProviderError
from empath_gate.llm.accounting import current_scope

BatchMode = Literal["submit", "collect"]


class JudgePending(EmpathGateError):
    """A judge request waits in a provider batch (``batch_id``; None: recorded for the batch this
    submit is about to create). Not a provider failure: the transcript's judging is pending."""

    def __init__(self, key: str, batch_id: str | None) -> None:
        where = f"batch {batch_id}" if batch_id else "the judge batch being submitted"
        super().__init__(f"judge request {key[:12]} is pending in {where}")
        self.key = key
        self.batch_id = batch_id


@dataclass(frozen=True)
class DeferredRequest:
    """One judge request recorded in ``submit``: ``key`` (its reply-cache key, also the batch
    line's ``custom_id``), ``body`` (the OpenAI chat request body: no credential), the
    ``transcript_id`` it judges, its ``metrics``, ``rejudge`` index and ``template_sha256`` (the
    judge template hash)."""

    key: str
    body: dict[str, Any]
    transcript_id: str | None
    metrics: tuple[str, ...]
    rejudge: int
    template_sha256: str | None


@dataclass
class BatchSession:
    """The state of one batch-judging pass (module docstring).

    ``submitted``: cache key -> batch id of every request the state file holds; ``unfinished``:
    the batch ids not completed yet (collect); ``replies``: key -> stored reply of a completed
    batch's successful result; ``errors``: key -> why its result is unusable (an error line, a
    missing line, a body that is not a chat completion). Filled as the pass runs: ``recorded``
    (submit: key -> new request), ``pending`` (transcript ids whose judging waits), ``served``
    (collect: keys answered from a batch), ``unheld`` (collect: key -> transcript id of each
    judge request no batch of the state file holds)."""

    mode: BatchMode
    submitted: dict[str, str] = field(default_factory=dict)
    unfinished: frozenset[str] = frozenset()
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)
    errors: dict[str, str] = field(default_factory=dict)
    recorded: dict[str, DeferredRequest] = field(default_factory=dict)
    pending: set[str] = field(default_factory=set)
    served: set[str] = field(default_factory=set)
    unheld: dict[str, str | None] = field(default_factory=dict)

    def answer(
        self, key: str, body: Callable[[], dict[str, Any]], cache_extra: Mapping[str, object]
    ) -> dict[str, Any]:
        """The stored reply of the judge request ``key`` (collect), else raise: JudgePending
        (submit; collect on an unfinished batch) or ProviderError of kind ``batch`` (collect: an
        unusable or missing result). ``body``: builds the provider body (called once, submit
        only); ``cache_extra``: the judge's key parts (metrics, re-judge index, template hash)."""
        if self.mode == "collect":
            if key in self.replies:
                self.served.add(key)
                return self.replies[key]
            if key in self.errors:
                raise ProviderError(f"judge batch: {self.errors[key]}", kind="batch")
        batch_id = self.submitted.get(key)
        if self.mode == "submit" or (batch_id is not None and batch_id in self.unfinished):
            if batch_id is None and key not in self.recorded:
                metrics = cache_extra.get("metrics")
                rejudge = cache_extra.get("rejudge")
                template = cache_extra.get("judge_template_sha256")
                self.recorded[key] = DeferredRequest(
                    key=key, body=body(), transcript_id=current_scope(),
                    metrics=tuple(str(m) for m in metrics) if isinstance(metrics, (list, tuple)) else (),
                    rejudge=rejudge if isinstance(rejudge, int) else 0,
                    template_sha256=str(template) if template is not None else None,
                )
            raise JudgePending(key, batch_id)
        if batch_id is not None:
            raise ProviderError(f"judge batch: batch {batch_id} has no result for this request", kind="batch")
        self.unheld[key] = current_scope()
        raise ProviderError(
            "judge batch: no submitted batch holds this judge request (the transcript or the judge "
            "settings changed since the submit); run --judge-batch submit again to send it in a new "
            "batch, or run without --judge-batch to judge it live",
            kind="batch",
        )


_session: contextvars.ContextVar[BatchSession | None] = contextvars.ContextVar(
    "empath_judge_batch", default=None
)


def active_batch(role: str) -> BatchSession | None:
    """The batch session that answers ``role``'s cache misses: the active one for the judge,
    None for every other role or outside a session."""
    return _session.get() if role == "judge" else None


def batch_mode() -> BatchMode | None:
    """The active session's mode, or None outside one (the judge then re-asks as usual)."""
    s = _session.get()
    return s.mode if s is not None else None


@contextlib.contextmanager
def batch_session(session: BatchSession | None) -> Iterator[BatchSession | None]:
    """Make ``session`` active for the block (None: no session, judge calls go live)."""
    token = _session.set(session)
    try:
        yield session
    finally:
        _session.reset(token)


__all__ = [
    "BatchMode",
    "BatchSession",
    "DeferredRequest",
    "JudgePending",
    "active_batch",
    "batch_mode",
    "batch_session",
]
