"""The fake server itself: programming replies per model, its lifecycle and serving."""

from __future__ import annotations

import itertools
import threading
import time
from collections import Counter, deque
from collections.abc import Mapping
from http.server import ThreadingHTTPServer
from types import TracebackType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from empath_gate.settings import RoleSettings
from empath_gate.testing.fake_openai.batches import BatchStore
from empath_gate.testing.fake_openai.faults import RandomFaults, request_fingerprint
from empath_gate.testing.fake_openai.handler import _Handler, _Server
from empath_gate.testing.fake_openai.limiter import ModelLimit
from empath_gate.testing.fake_openai.replies import FakeRequest, Reply, ReplySpec, Responder

FAKE_API_KEY = "sk-empath-fake-key"
"""A dummy key to pass explicitly to clients of the fake server (it never checks keys)."""

PROMPT_CACHE_MIN_TOKENS = 1024
"""Shortest prefix the fake reports as cached: OpenAI's prompt caching applies to prompts of
1,024 tokens or more (OpenAI's prompt-caching guide)."""


class _Route:
    """The answers of one model: a FIFO of scripted replies, then an optional callable."""

    def __init__(self) -> None:
        self.queue: deque[ReplySpec] = deque()
        self.responder: Responder | None = None


class FakeOpenAIServer:
    """A threaded OpenAI-compatible chat server on ``127.0.0.1`` and a free port.

    Use as a context manager (``start()``/``close()`` also work). ``base_url`` is
    ``http://127.0.0.1:<port>/v1``; ``requests`` lists every request received, in arrival
    order; ``latency_s`` delays every reply (seconds; per-reply latency adds to it);
    ``problems`` lists misuse seen while serving (exhausted script, unknown model), raised as
    ``AssertionError`` on exit unless ``strict=False``; ``faults_served`` lists
    ``(request, fault name)`` for every request a :meth:`random_faults` mix answered.

    Prompt caching: like OpenAI's automatic prefix cache, every reply's usage has
    ``prompt_tokens_details.cached_tokens``: the word count of the request's leading system
    message when the server already saw that message for the same model and it is at least
    ``prompt_cache_min_tokens`` long (default :data:`PROMPT_CACHE_MIN_TOKENS`), else 0 (a reply's
    own ``usage`` may set ``prompt_tokens_details``). ``prompt_cache = False`` always reports 0.
    Tokens are counted as whitespace-separated words throughout.

    Batches: ``/v1/files`` and ``/v1/batches`` (:mod:`empath_gate.testing.fake_openai.batches`);
    ``batch_store`` holds them, and a batch reads ``in_progress`` for its first
    ``batch_pending_polls`` polls (default 1), then ``completed``.
    """

    def __init__(self, *, latency_s: float = 0.0, strict: bool = True) -> None:
        self.latency_s = latency_s
        self.strict = strict
        self.requests: list[FakeRequest] = []
        self.problems: list[str] = []
        self._routes: dict[str, _Route] = {}
        self._faults: dict[str, RandomFaults] = {}
        self._limits: dict[str, ModelLimit] = {}
        self._limit_template: tuple[float, int, float | None] | None = None
        self._sightings: Counter[tuple[str, str]] = Counter()
        self.prompt_cache = True
        self.batch_store = BatchStore()
        self.batch_pending_polls = 1
        self.prompt_cache_min_tokens = PROMPT_CACHE_MIN_TOKENS
        self._prefixes: set[tuple[str, str]] = set()
        self.faults_served: list[tuple[FakeRequest, str]] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ programming replies

    def script(self, model: str, *replies: ReplySpec) -> FakeOpenAIServer:
        """Queue ``replies`` for ``model`` (served in order, one per request). Once the queue is
        empty the model's callable answers if one was set with :meth:`on`; otherwise the
        request fails loudly (HTTP 500 and a recorded problem)."""
        with self._lock:
            route = self._routes.setdefault(model, _Route())
            route.queue.extend(replies)
        return self

    def on(self, model: str, responder: Responder | ReplySpec) -> FakeOpenAIServer:
        """Answer every request for ``model`` (``"*"``: any model without its own route) with
        ``responder`` (a callable of :class:`FakeRequest`, or a fixed reply), after any
        scripted replies queued for it."""
        if callable(responder):
            fn: Responder = responder
        else:
            fixed: ReplySpec = responder

            def fn(_req: FakeRequest) -> ReplySpec:
                return fixed

        with self._lock:
            self._routes.setdefault(model, _Route()).responder = fn
        return self

    def random_faults(
        self, model: str, faults: Mapping[str, tuple[float, ReplySpec]], *, seed: int = 0
    ) -> FakeOpenAIServer:
        """Answer a seeded random share of ``model``'s requests (``"*"``: of every model without
        a mix of its own) with faults, before its scripted replies or responder (which a faulted
        request does not consume). ``faults`` maps a fault name to ``(probability per request,
        reply)``, e.g. ``{"rate_limit": (0.2, Fault.rate_limit(retry_after=1)), "timeout":
        (0.05, Fault.timeout(3))}``; see :class:`RandomFaults` for the draw, which depends only
        on ``seed``, the model, the request's body and how many times that body was seen (a
        retry draws again), never on arrival order. Replaces the model's previous mix; an empty
        ``faults`` turns faults off for it. Raises ValueError for bad probabilities."""
        mix = RandomFaults(dict(faults), seed)
        with self._lock:
            if faults:
                self._faults[model] = mix
            else:
                self._faults.pop(model, None)
        return self

    def limit(
        self, model: str, *, rps: float, concurrent: int, burst: float | None = None
    ) -> ModelLimit:
        """Rate-limit ``model`` (``"*"``: every model without a limit of its own; each model
        gets its own bucket) like a provider under load: a token bucket of ``rps`` requests per
        second (``burst`` tokens at most, default ``rps``) and at most ``concurrent`` requests
        in service; a request above either is answered 429 at once, with ``Retry-After`` and
        ``retry-after-ms`` computed from the bucket or the earliest request in service (see
        :mod:`~empath_gate.testing.fake_openai.limiter`), before any fault mix or script.
        Returns the limiter (its ``refused`` counts the 429s). Replaces a previous limit."""
        made = ModelLimit(rps=rps, concurrent=concurrent, burst=burst, service_s=self.latency_s)
        with self._lock:
            self._limits[model] = made
            self._limit_template = (rps, concurrent, burst) if model == "*" else self._limit_template
        return made

    @property
    def throttled(self) -> int:
        """429s the limiters (:meth:`limit`) answered so far, all models together."""
        with self._lock:
            return sum(m.refused for m in self._limits.values())

    def _limit_for(self, model: str | None) -> ModelLimit | None:
        with self._lock:
            name = model or ""
            found = self._limits.get(name)
            if found is None and self._limit_template is not None:
                rps, concurrent, burst = self._limit_template
                found = self._limits[name] = ModelLimit(
                    rps=rps, concurrent=concurrent, burst=burst, service_s=self.latency_s
                )
            return found

    def pending(self, model: str) -> int:
        """How many scripted replies of ``model`` have not been served yet."""
        with self._lock:
            route = self._routes.get(model)
            return len(route.queue) if route else 0

    @property
    def request_count(self) -> int:
        """How many chat-completion requests the server received so far (answered or failed:
        every HTTP request counts, faults, retries and script misuse included)."""
        with self._lock:
            return len(self.requests)

    def requests_for(self, model: str) -> list[FakeRequest]:
        """The recorded requests whose body named ``model``, in arrival order."""
        with self._lock:
            return [r for r in self.requests if r.model == model]

    def role_settings(self, model: str, **fields: Any) -> RoleSettings:
        """``RoleSettings`` pointing litellm at this server: model ``openai/<model>``,
        ``api_base=self.base_url``, the dummy key passed explicitly, short retry delays.
        ``fields`` override any RoleSettings field."""
        from pydantic import SecretStr

        from empath_gate.settings import RoleSettings

        values: dict[str, Any] = {
            "model": f"openai/{model}",
            "api_base": self.base_url,
            "api_key": SecretStr(FAKE_API_KEY),
            "retry_base_delay_s": 0.01,
            "retry_max_delay_s": 0.05,
            "timeout_s": 10.0,
        }
        values.update(fields)
        return RoleSettings(**values)

    # ------------------------------------------------------------------ lifecycle

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("the fake server is not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1`` (litellm's ``api_base``)."""
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> FakeOpenAIServer:
        """Bind a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._httpd is not None:
            return self
        server = self

        class Handler(_Handler):
            fake = server

        httpd = _Server(("127.0.0.1", 0), Handler)
        self._httpd = httpd
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, name="fake-openai", daemon=True
        )
        self._thread.start()
        return self

    def close(self) -> None:
        """Stop serving; sleeping timeout faults wake up and their connections close."""
        self._closing.set()
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
        if exc_type is None:
            self.check()

    def check(self) -> None:
        """Raise ``AssertionError`` listing the problems seen (when ``strict``)."""
        if self.strict and self.problems:
            raise AssertionError("fake OpenAI server: " + "; ".join(self.problems))

    # ------------------------------------------------------------------ serving

    def _record(self, req: FakeRequest) -> None:
        with self._lock:
            self.requests.append(req)

    def _random_fault(self, req: FakeRequest) -> ReplySpec | None:
        """The fault a :meth:`random_faults` mix draws for ``req``, or None."""
        model = req.model or ""
        with self._lock:
            mix = self._faults.get(model) or self._faults.get("*")
            if mix is None:
                return None
            fingerprint = request_fingerprint(req)
            repeat = self._sightings[(model, fingerprint)]
            self._sightings[(model, fingerprint)] += 1
            drawn = mix.draw(model, fingerprint, repeat)
            if drawn is None:
                return None
            self.faults_served.append((req, drawn[0]))
            return drawn[1]

    def _next_reply(self, req: FakeRequest) -> ReplySpec | None:
        fault = self._random_fault(req)
        if fault is not None:
            return fault
        with self._lock:
            route = self._routes.get(req.model or "") or self._routes.get("*")
            if route is not None and route.queue:
                return route.queue.popleft()
            responder = route.responder if route is not None else None
        if responder is not None:
            return responder(req)
        if route is not None:
            problem = f"the script for model {req.model!r} is exhausted (request {len(self.requests)})"
        else:
            problem = f"no reply programmed for model {req.model!r}"
        with self._lock:
            self.problems.append(problem)
        return None

    def _sleep(self, seconds: float) -> None:
        if seconds > 0:
            self._closing.wait(seconds)

    def _cached_prefix_words(self, req: FakeRequest) -> int:
        """Words of ``req``'s leading system message when this server already saw it for the
        same model and it has at least ``prompt_cache_min_tokens`` words (its stand-in for a
        provider's prompt cache), else 0; remembers it."""
        system = req.system
        words = len(system.split())
        if not system or not self.prompt_cache or words < self.prompt_cache_min_tokens:
            return 0
        key = (req.model or "", system)
        with self._lock:
            seen = key in self._prefixes
            self._prefixes.add(key)
        return words if seen else 0

    def _completion_body(self, req: FakeRequest, reply: Reply) -> dict[str, Any]:
        prompt_words = sum(len(str(m.get("content") or "").split()) for m in req.messages)
        completion_words = len((reply.content or "").split())
        usage: dict[str, Any] = {"prompt_tokens": prompt_words, "completion_tokens": completion_words}
        if reply.usage is not None:
            usage.update(reply.usage)
        if "prompt_tokens_details" not in usage:
            cached = min(self._cached_prefix_words(req), usage["prompt_tokens"])
            usage["prompt_tokens_details"] = {"cached_tokens": cached}
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        message: dict[str, Any] = {"role": "assistant", "content": reply.content}
        if reply.tool_calls:
            message["tool_calls"] = reply.tool_calls
        message.update(reply.extra_message)
        body: dict[str, Any] = {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": req.model or "fake",
            "choices": [{"index": 0, "message": message, "finish_reason": reply.finish_reason}],
            "usage": usage,
        }
        if reply.system_fingerprint is not None:
            body["system_fingerprint"] = reply.system_fingerprint
        return body
