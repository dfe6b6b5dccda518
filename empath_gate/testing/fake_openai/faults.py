"""Seeded random faults: a share of a model's requests answered with a fault drawn from a seed.

A :class:`RandomFaults` mix maps fault names to ``(probability, reply)``; the fake server
(:meth:`FakeOpenAIServer.random_faults`) consults it before a model's scripted replies or
responder. The draw for a request is a pure function of the seed, the model, the request's
fingerprint (:func:`request_fingerprint`: its path and JSON body) and how many times the same
request was seen before, so:

* a retry of the same call (identical body) draws again: a transient fault heals after some
  attempts, as on a real provider;
* the same requests meet the same faults under the same seed whatever order they arrive in
  (concurrent runs stay reproducible).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field

from empath_gate.testing.fake_openai.replies import FakeRequest, ReplySpec

_SCALE = float(2**64)
"""The draw is the first 64 bits of a sha256 over this scale: a uniform number in [0, 1)."""


def request_fingerprint(req: FakeRequest) -> str:
    """sha256 hex of the request's path and JSON body (keys sorted): equal for every retry of
    one call, different for calls that differ in any field (messages, seed, model...)."""
    body = json.dumps(req.body, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(f"{req.path}\x00{body}".encode()).hexdigest()


@dataclass(frozen=True)
class RandomFaults:
    """A fault mix: ``faults`` maps a fault name (any label, e.g. ``"rate_limit"``) to
    ``(probability, reply)``, where the probability is per request (0-1, the sum at most 1)
    and the reply any :data:`ReplySpec` (usually a :class:`Fault`, or a :class:`Reply` with
    broken content). ``seed`` makes the draws reproducible. Raises ValueError for a
    probability outside [0, 1] or a sum above 1."""

    faults: Mapping[str, tuple[float, ReplySpec]]
    seed: int = 0
    _order: tuple[str, ...] = field(default=(), init=False, repr=False)

    def __post_init__(self) -> None:
        total = 0.0
        for name, (p, _spec) in self.faults.items():
            if not 0.0 <= p <= 1.0:
                raise ValueError(f"fault {name!r}: probability {p} is outside [0, 1]")
            total += p
        if total > 1.0 + 1e-9:
            raise ValueError(f"fault probabilities sum to {total:.3f}, more than 1")
        object.__setattr__(self, "_order", tuple(sorted(self.faults)))

    def uniform(self, model: str, fingerprint: str, repeat: int) -> float:
        """The draw in [0, 1) for the ``repeat``-th sighting (0-based) of a request of ``model``
        with ``fingerprint``."""
        key = f"{self.seed}\x00{model}\x00{fingerprint}\x00{repeat}".encode()
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / _SCALE

    def draw(self, model: str, fingerprint: str, repeat: int) -> tuple[str, ReplySpec] | None:
        """``(name, reply)`` of the fault this sighting gets, or None (answer normally). The
        names are laid out on [0, 1) in sorted order, each over its probability."""
        u = self.uniform(model, fingerprint, repeat)
        edge = 0.0
        for name in self._order:
            p, spec = self.faults[name]
            edge += p
            if u < edge:
                return name, spec
        return None
