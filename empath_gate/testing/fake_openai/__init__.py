"""A fake OpenAI-compatible chat-completions server for tests (real HTTP on 127.0.0.1).

It speaks enough of ``POST /v1/chat/completions`` (also ``/chat/completions``) for litellm's
``openai/`` provider and for plain HTTP clients, answers from per-model scripts or callables,
injects provider faults, and records every request it received. It needs no API key and
never reaches the internet.

Usage (copy this into your own tests)::

    from empath_gate.testing import Fault, FakeOpenAIServer

    with FakeOpenAIServer() as server:
        server.script("fake-target", "Hello, I am here with you.", Fault.rate_limit(), "Second reply")
        server.on("fake-auditor", lambda request: "I can't sleep again")  # any number of calls
        settings = server.role_settings("fake-target")   # RoleSettings(model="openai/fake-target", ...)
        ...                                              # run the engine or call litellm
        assert server.requests[0].model == "fake-target"

or, with the pytest fixture (``pytest_plugins = ["empath_gate.testing.fixtures"]``)::

    def test_my_bot(fake_openai):
        fake_openai.script("fake-target", "Hi")

Routing: a request is answered by the responder registered for its body's ``model`` field
(litellm strips the ``openai/`` prefix, so ``openai/fake-target`` arrives as ``fake-target``);
``"*"`` matches any model without its own responder. A scripted queue that runs out fails
loudly: the request gets HTTP 500 with an explanatory message, the problem is appended to
``server.problems``, and leaving the context manager raises ``AssertionError``. A request for
a model with no responder fails the same way.

Replies: a ``str`` (content, ``finish_reason="stop"``), a :class:`Reply` (content,
finish_reason, tool calls, usage, fingerprint, latency), a :class:`Fault`, or a callable
``(FakeRequest) -> str | Reply | Fault``. Usage tokens are reported as whitespace-separated
word counts of the prompt messages and of the reply (a stand-in for a tokenizer, stable
across runs).

Faults (see :class:`Fault`): latency, HTTP 429, HTTP 5xx, any HTTP error with an OpenAI-style
error body (e.g. 400 ``context_length_exceeded``, 401), a timeout (the server sleeps past the
client's timeout), ``content_filter`` (finish_reason ``content_filter``, empty content),
truncated output (finish_reason ``length``), a malformed JSON body, and a dropped connection.
``server.random_faults(model, {"rate_limit": (0.2, Fault.rate_limit(retry_after=1))}, seed=7)``
answers a seeded random share of a model's requests with faults (:class:`RandomFaults`:
reproducible given the seed, whatever the arrival order; a retry draws again).

``server.limit(model, rps=20, concurrent=8)`` makes a model behave like a provider at its
limit: a token bucket of 20 requests per second and 8 in service at once; a request above
either gets HTTP 429 with ``Retry-After``/``retry-after-ms`` computed from the bucket
(:mod:`~empath_gate.testing.fake_openai.limiter`); ``server.throttled`` counts those 429s.

The server is a :class:`http.server.ThreadingHTTPServer` (one thread per connection, HTTP/1.1
keep-alive, listen backlog 1024) and sustains well over 128 concurrent connections each
waiting 1 s of injected latency.
"""


from __future__ import annotations

from empath_gate.testing.fake_openai.faults import RandomFaults, request_fingerprint
from empath_gate.testing.fake_openai.replies import FakeRequest, Fault, FaultKind, Reply, ReplySpec, Responder
from empath_gate.testing.fake_openai.server import FAKE_API_KEY, FakeOpenAIServer

__all__ = [
    "FAKE_API_KEY",
    "FakeOpenAIServer",
    "FakeRequest",
    "Fault",
    "FaultKind",
    "RandomFaults",
    "Reply",
    "ReplySpec",
    "Responder",
    "request_fingerprint",
]
