"""Registering the fake roles on a server, the environment that points a run at them, and the
per-run seeds that tell which run a request belongs to."""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from typing import Literal

from empath_gate.testing.fake_openai import FAKE_API_KEY, FakeOpenAIServer, FakeRequest, Fault, Reply

TARGET_MODEL = "fake-target"
"""Model name of a litellm model target on the fake server (``openai/fake-target``)."""
HTTP_TARGET_MODEL = "empath-target"
"""Model name an HTTP target sends (``Settings.target_http_model``'s default)."""
AUDITOR_MODEL = "fake-auditor"
JUDGE_MODEL = "fake-judge"


def derive_seed(base_seed: int, conversation_id: str, run: int) -> int:
    """The per-run seed every role sends (same formula as
    ``empath_gate.conversation.engine.derive_seed``, repeated here so this module stays cheap
    to import; a test keeps them equal)."""
    digest = hashlib.sha256(f"{base_seed}:{conversation_id}:{run}".encode()).hexdigest()
    return int(digest[:8], 16) & 0x7FFFFFFF


JUDGE_REASKS = 2
"""How many times the judge asks an unparseable or refused reply again
(``empath_gate.judging.judge_call.MAX_REASKS``, repeated here; a test keeps them equal)."""


def reask_seed(seed: int, ask: int) -> int:
    """The judge's seed for ask ``ask`` of a request first asked with ``seed`` (same formula as
    ``empath_gate.judging.judge_call.reask_seed``; a test keeps them equal)."""
    return seed if ask == 0 else derive_seed(seed, "reask", ask)


def seed_table(conversation_ids: Iterable[str], runs: int, base_seed: int = 0) -> dict[int, tuple[str, int]]:
    """``seed -> (conversation_id, run)`` for every run of ``conversation_ids``: what a fake
    model needs to tell which transcript and run a request belongs to."""
    return {derive_seed(base_seed, c, r): (c, r) for c in conversation_ids for r in range(runs)}


def install(
    server: FakeOpenAIServer,
    *,
    target: Callable[[FakeRequest], str | Reply | Fault] | None = None,
    auditor: Callable[[FakeRequest], str | Reply | Fault] | None = None,
    judge: Callable[[FakeRequest], str | Reply | Fault] | None = None,
) -> FakeOpenAIServer:
    """Register the given programs on ``server``: the target under both :data:`TARGET_MODEL`
    (litellm model target) and :data:`HTTP_TARGET_MODEL` (HTTP target), the auditor under
    :data:`AUDITOR_MODEL`, the judge under :data:`JUDGE_MODEL`. Returns the server."""
    if target is not None:
        server.on(TARGET_MODEL, target)
        server.on(HTTP_TARGET_MODEL, target)
    if auditor is not None:
        server.on(AUDITOR_MODEL, auditor)
    if judge is not None:
        server.on(JUDGE_MODEL, judge)
    return server


def role_env(
    server: FakeOpenAIServer,
    *,
    target: Literal["http", "model"] | None = "http",
    auditor: bool = True,
    judge: bool = True,
    retries: int = 0,
    timeout_s: float = 10.0,
) -> dict[str, str]:
    """The ``EMPATH_*`` environment pointing a run at ``server``.

    ``target="http"``: the server's URL as an HTTP target (with ``EMPATH_TARGET_VERSION`` set so
    its replies are cached); ``"model"``: ``openai/fake-target`` with ``EMPATH_TARGET_API_BASE``;
    ``None``: no target variable. ``auditor``/``judge``: set ``openai/fake-auditor`` /
    ``openai/fake-judge`` with their ``*_API_BASE``. Also a dummy ``OPENAI_API_KEY``, ``retries``
    retries with millisecond backoff, and a per-call timeout of ``timeout_s`` seconds."""
    env = {
        "OPENAI_API_KEY": FAKE_API_KEY,
        "EMPATH_MAX_RETRIES": str(retries),
        "EMPATH_RETRY_BASE_DELAY_S": "0.01",
        "EMPATH_RETRY_MAX_DELAY_S": "0.05",
        "EMPATH_REQUEST_TIMEOUT_S": str(timeout_s),
    }
    if target == "http":
        env["EMPATH_TARGET"] = server.base_url
        env["EMPATH_TARGET_VERSION"] = "fake-1"
    elif target == "model":
        env["EMPATH_TARGET"] = f"openai/{TARGET_MODEL}"
        env["EMPATH_TARGET_API_BASE"] = server.base_url
    if auditor:
        env["EMPATH_AUDITOR_MODEL"] = f"openai/{AUDITOR_MODEL}"
        env["EMPATH_AUDITOR_API_BASE"] = server.base_url
    if judge:
        env["EMPATH_JUDGE_MODEL"] = f"openai/{JUDGE_MODEL}"
        env["EMPATH_JUDGE_API_BASE"] = server.base_url
    return env
