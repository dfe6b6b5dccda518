"""The fake judge: valid strict JSON for exactly the metrics and criteria a request asks about."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from empath_gate.testing.fake_openai import FakeRequest, Fault, Reply
from empath_gate.testing.scenarios.wiring import JUDGE_REASKS, reask_seed

ScoreValue = int | str
"""A judge score: an integer of the scale, or ``"N/A"``."""
ScoreSpec = ScoreValue | Sequence[ScoreValue] | Callable[[str | None, int | None], ScoreValue]
"""Per metric: one score for every run, a sequence indexed by run (``run % len``), or a
callable ``(conversation_id, run) -> score`` (either may be None when the request's seed is
not in the judge's :func:`seed_table`)."""


@dataclass(frozen=True)
class JudgeCall:
    """What a judge request asked for: ``metrics`` maps each metric id to its criterion ids
    (request order; empty under the standard rubric); ``conversation_id``/``run`` come from the
    seed (None when unknown); ``ask`` is 0 for a first ask, 1.. for the judge's re-asks of an
    unparseable or refused reply (None when the seed is unknown); ``request`` is the raw request."""

    metrics: Mapping[str, tuple[str, ...]]
    strict: bool
    conversation_id: str | None
    run: int | None
    request: FakeRequest
    ask: int | None = None


_METRIC_LINE = re.compile(r'^ {4}"([a-z0-9_]+)": \{$')
_CRITERION_LINE = re.compile(r'^ {8}"([a-z0-9_]+)": \{"state"')


def requested_metrics(req: FakeRequest) -> tuple[dict[str, tuple[str, ...]], bool]:
    """``({metric_id: (criterion ids...)}, strict)`` asked for by a judge request: from the
    ``response_format`` JSON schema when present, else from the answer skeleton that ends the
    message holding the answer format (the system message since ``judge-v2``). Raises
    AssertionError when neither names a metric."""
    body = req.body or {}
    fmt = body.get("response_format")
    if isinstance(fmt, dict) and isinstance(fmt.get("json_schema"), dict):
        schema = fmt["json_schema"]["schema"]
        out: dict[str, tuple[str, ...]] = {}
        strict = False
        for mid, spec in schema["properties"]["metrics"]["properties"].items():
            crit = spec["properties"].get("criteria")
            if crit is not None:
                strict = True
                out[mid] = tuple(crit["required"])
            else:
                out[mid] = ()
        return out, strict
    texts = [str(m.get("content") or "") for m in req.messages]
    prompt = next((t for t in reversed(texts) if "# Answer format" in t), "")
    skeleton = prompt.rsplit("# Answer format", 1)[-1]
    out = {}
    current: str | None = None
    strict = False
    for line in skeleton.splitlines():
        m = _METRIC_LINE.match(line)
        if m:
            current = m.group(1)
            out[current] = ()
            continue
        c = _CRITERION_LINE.match(line)
        if c and current is not None:
            strict = True
            out[current] = (*out[current], c.group(1))
    if not out:
        raise AssertionError("the judge request names no metric")
    return out, strict


@dataclass
class ScoringJudge:
    """A judge model for the fake server that returns valid JSON for exactly what was asked.

    * ``scores``: metric id -> :data:`ScoreSpec`; metrics not listed get ``default``.
    * ``states``: criterion id -> ``PASS``/``FAIL``/``N/A`` (default ``PASS``); a FAIL cites
      turn 1 of the dialogue.
    * ``seeds``: :func:`seed_table` of the plan, so the run (and conversation) of each request
      is known; without it every request is run ``None`` (a sequence spec then uses its first
      value).
    * ``broken``: a predicate on the :class:`JudgeCall`; when true the reply is prose (the
      judge's parse fails, and the judge asks again up to twice: a JudgeFailure ``parse_error``
      when every ask is broken). Use e.g. ``lambda call: "crisis_detection" in call.metrics``,
      or ``lambda call: call.ask == 0`` for a reply that only the re-ask gets right.
    * ``risk_turn``: a predicate on an ASSISTANT turn's text; when the request asks for
      ``risk_response_turns`` (a suite with ``judge_risk_turns``), the reply lists the indices
      of the assistant turns it accepts (without it: ``[]``).
    * ``response_level`` / ``user_level``: when the request asks for the bot's response level
      (a suite with ``judge_triage``), the reply gives ``response_level`` (default ``none``),
      cites the last assistant turn for any level above ``none`` (``cite`` False: cites none)
      and gives ``user_level`` as its own estimate of the user's level.
    * ``calls`` records every :class:`JudgeCall` answered.
    """

    scores: Mapping[str, ScoreSpec] = field(default_factory=dict)
    default: ScoreValue = 9
    states: Mapping[str, str] = field(default_factory=dict)
    seeds: Mapping[int, tuple[str, int]] = field(default_factory=dict)
    broken: Callable[[JudgeCall], bool] | None = None
    confirm_turn: int | None = None
    risk_turn: Callable[[str], bool] | None = None
    response_level: str = "none"
    user_level: str | None = None
    cite: bool = True
    calls: list[JudgeCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def score_for(self, metric_id: str, conversation_id: str | None, run: int | None) -> ScoreValue:
        """The score this judge gives ``metric_id`` on that run."""
        spec = self.scores.get(metric_id, self.default)
        if callable(spec):
            return spec(conversation_id, run)
        if isinstance(spec, (int, str)):
            return spec
        values = list(spec)
        return values[(run or 0) % len(values)]

    def call_of(self, req: FakeRequest) -> JudgeCall:
        """Decode a request into a :class:`JudgeCall`. A re-ask's seed (:func:`reask_seed` of a
        seed of ``seeds``) keeps its conversation and run, so a re-asked request is answered
        for the same run."""
        metrics, strict = requested_metrics(req)
        seed = (req.body or {}).get("seed")
        found = self._run_of(seed) if isinstance(seed, int) else None
        conv, run, ask = found if found is not None else (None, None, None)
        return JudgeCall(metrics=metrics, strict=strict, conversation_id=conv, run=run, request=req, ask=ask)

    def _run_of(self, seed: int) -> tuple[str, int, int] | None:
        """(conversation id, run, ask) of a first ask's or a re-ask's seed, or None."""
        if seed in self.seeds:
            return (*self.seeds[seed], 0)
        for first, (conv, run) in self.seeds.items():
            for ask in range(1, JUDGE_REASKS + 1):
                if reask_seed(first, ask) == seed:
                    return conv, run, ask
        return None

    def reply_for(self, call: JudgeCall) -> dict[str, Any]:
        """The JSON object answering ``call``."""
        metrics: dict[str, Any] = {}
        for mid, criteria in call.metrics.items():
            entry: dict[str, Any] = {}
            if call.strict:
                entry["criteria"] = {
                    cid: self._criterion(cid, call.request) for cid in criteria
                }
            entry["score"] = self.score_for(mid, call.conversation_id, call.run)
            entry["justification"] = f"{mid}: scored by the test judge."
            metrics[mid] = entry
        reply: dict[str, Any] = {"confirm_turn": self.confirm_turn, "metrics": metrics}
        if _asks_risk_turns(call.request):
            accept = self.risk_turn or (lambda text: False)
            reply["risk_response_turns"] = [i for i, text in _assistant_turns(call.request) if accept(text)]
        if _asks(call.request, '"bot_response_level"'):
            last = [i for i, _ in _assistant_turns(call.request)][-1:]
            reply["bot_response_level"] = self.response_level
            reply["bot_response_turns"] = last if self.response_level != "none" and self.cite else []
            reply["user_level_estimate"] = self.user_level
        return reply

    def _criterion(self, cid: str, req: FakeRequest) -> dict[str, Any]:
        state = self.states.get(cid, "PASS")
        citations: list[dict[str, Any]] = []
        if state == "FAIL":
            quote = _dialogue_turn(req, 1)
            if quote:
                citations.append({"turn": 1, "quote": quote[:40]})
        return {"state": state, "citations": citations}

    def __call__(self, req: FakeRequest) -> str | Reply | Fault:
        call = self.call_of(req)
        with self._lock:
            self.calls.append(call)
        if self.broken is not None and self.broken(call):
            return "I think the assistant did fine overall, maybe an 8 out of 10."
        return json.dumps(self.reply_for(call), ensure_ascii=False)


_TURN_LINE = re.compile(r"^\[(\d+)\] (?:USER(?: \(.*?\))?|ASSISTANT): (.*)$")
"""A dialogue line of the judge prompt; a multi-party user turn reads ``USER (Name, relation)``."""
_ASSISTANT_LINE = re.compile(r"^\[(\d+)\] ASSISTANT: (.*)$")


def _user_text(req: FakeRequest) -> str:
    return next((str(m.get("content") or "") for m in reversed(req.messages) if m.get("role") == "user"), "")


def _asks(req: FakeRequest, field: str) -> bool:
    """Whether the judge prompt's answer format (in whichever message holds it) asks for ``field``."""
    return any(field in str(m.get("content") or "") for m in req.messages)


def _asks_risk_turns(req: FakeRequest) -> bool:
    return _asks(req, '"risk_response_turns"')


def _assistant_turns(req: FakeRequest) -> list[tuple[int, str]]:
    """``(index, first line of text)`` of every ASSISTANT turn the judge's prompt shows."""
    return [(int(m.group(1)), m.group(2)) for line in _user_text(req).splitlines()
            if (m := _ASSISTANT_LINE.match(line))]


def _dialogue_turn(req: FakeRequest, index: int) -> str | None:
    user = next((str(m.get("content") or "") for m in reversed(req.messages) if m.get("role") == "user"), "")
    for line in user.splitlines():
        m = _TURN_LINE.match(line)
        if m and int(m.group(1)) == index:
            return m.group(2)
    return None
