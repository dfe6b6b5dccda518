"""An HTTP bot with its own JSON API, described by a request template and response paths
(:mod:`empath_gate.conversation.template_spec`): ``target`` is the bot's URL and
``target_template`` the template file.

**Each turn** fills the template's body with the dialogue so far, sends it with the
environment's target headers (``EMPATH_TARGET_HEADER_<NAME>``, as for every HTTP target), the
template's fixed headers, ``X-Empath-Conversation-Id``, the synthetic-traffic header and the
session header, and reads the reply (and events, and the session id) at the template's paths,
from one JSON body or from server-sent events (:mod:`empath_gate.llm.http_transport`).

**Failures** take the path of every model call (:func:`empath_gate.llm.direct.call_direct`):
the concurrency limit, retries with backoff or ``Retry-After``, the provider's circuit breaker,
and the ledger (every attempt counted; the budget). A non-2xx status is a ProviderError of the
status's kind; a body that is not JSON, a missing reply path or a first response without its
session id is a ``server`` error (retried, like any unparsable provider body); a reply that is
not text likewise. A stream that reports an error (an ``event: error``, or a value at the
template's ``stream_error`` path) is a ``server`` error, retried only for a stateless bot unless
``stream_error_retry`` says otherwise (:mod:`~empath_gate.conversation.template_spec`): its
pieces so far are never a reply. An **empty reply** is a ProviderError of kind
``empty_reply``, not retried: the transcript ends in error and shows it, never an empty turn.
A body or stream over ``max_json_bytes``, or a reply over ``max_field_chars``, is a
``bad_request`` (not retried). URLs are shown without user-info and query; header values and
the session id are taken out of every message.

**Conversation id**: ``{{conversation_id}}`` and ``X-Empath-Conversation-Id`` carry the
transcript id plus a random suffix, new each time a transcript is generated, so a bot that
keys its memory by it never continues a session of an earlier run.

**Caching** (only with ``target_version`` set, as for every HTTP target; the key holds the
URL's identity, the template's digest, the non-secret headers, the run and the dialogue):

* a **stateless** bot (the body sends ``{{messages}}``, no session) is cached reply by reply;
* a **stateful** bot (a session, or only ``{{message}}``: the bot remembers the rest) is
  cached **per whole transcript**: replies are served from the cache only while every earlier
  reply of the transcript was, and when the first uncached turn comes after cached ones the
  target raises :class:`~empath_gate.conversation.target_base.RestartTranscript`; the engine then
  generates the transcript again from its first turn, calling the bot for every turn (the
  cache is not read for it, its entries are rewritten). So a bot never receives a turn whose
  earlier turns it did not see.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from pydantic import ValidationError

from empath_gate.bounded import InputLimitError, current_limits, loads_json, well_formed, well_formed_tree
from empath_gate.conversation.json_paths import find_all, parse_path
from empath_gate.conversation.target_base import RestartTranscript, VersionedTarget
from empath_gate.conversation.target_headers import CONVERSATION_ID_HEADER, target_headers
from empath_gate.conversation.target_reply import TargetReply, bounded_reply, triage_detail
from empath_gate.conversation.template_spec import (
    MissingPath,
    TargetTemplate,
    events_of,
    fill,
    placeholder_values,
    reply_text,
    session_of,
    speaker_problem,
    stream_error_of,
)
from empath_gate.conversation.transcript import Event
from empath_gate.errors import ConfigError, ProviderError
from empath_gate.llm.accounting import active_ledger
from empath_gate.llm.cache import Cache
from empath_gate.llm.classify import redact_secrets
from empath_gate.llm.client import CacheStatus, utc_now
from empath_gate.llm.direct import call_direct, status_error
from empath_gate.llm.http_transport import HttpRequest, HttpResult, send
from empath_gate.llm.keying import endpoint_identity, header_identity, is_secret_header
from empath_gate.settings import Settings, redact_url


@dataclass
class _Generation:
    """One generation of one transcript: its conversation id, the bot's session id, whether the
    bot was called (``live``), how many replies came from the cache, whether the cache is read."""

    conversation_id: str
    session_id: str | None = None
    live: bool = False
    cached: int = 0
    bypass: bool = False


@dataclass(frozen=True)
class _Parsed:
    content: str
    events: tuple[tuple[str, dict[str, Any]], ...]
    session_id: str | None


def url_secrets(url: str) -> list[str]:
    """The credentials in ``url``: its user-info password and the values of its
    credential-named query parameters (:func:`~empath_gate.llm.keying.is_secret_header`)."""
    try:
        parts = urlsplit(url)
        found = [parts.password] if parts.password else []
    except ValueError:
        return []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if v and is_secret_header(k)]
    return found


def _stored_reply(stored: Mapping[str, Any] | None) -> tuple[str, tuple[Event, ...]] | None:
    """``(content, events)`` of a cache entry; None for no entry or one this version cannot read
    (no text, an event it does not know): a miss, asked again."""
    if stored is None or not isinstance(stored.get("content"), str) or not stored["content"].strip():
        return None
    try:
        events = tuple(Event.model_validate(e) for e in stored.get("events") or ())
    except (ValidationError, TypeError):
        return None
    return stored["content"], events


def _server(message: str) -> ProviderError:
    return ProviderError(message, kind="server", retryable=True)


class TemplateTarget(VersionedTarget):
    """A bot with its own JSON API (module docstring). ``url``: the bot's endpoint (credentials
    in it are sent, never shown); ``template``: the parsed template; ``env`` (default
    ``os.environ``): where the target headers come from. Raises ConfigError for malformed
    header variables."""

    kind = "template"

    def __init__(
        self, url: str, template: TargetTemplate, settings: Settings, env: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(redact_url(url), settings, key_name=endpoint_identity(url))
        self.url = url
        self.template = template
        self.role = settings.target_role
        self.synthetic_header = settings.synthetic_header
        self.stateful = template.stateful
        self._env = env
        self._digest = template.digest()
        self._generations: dict[str, _Generation] = {}
        self._restart: set[str] = set()
        target_headers(env)  # fail fast (ConfigError) on malformed header variables

    # ------------------------------------------------------------------ the turn

    def _generation(self, transcript_id: str, msgs: Sequence[Mapping[str, Any]]) -> _Generation:
        """The generation of ``transcript_id``; a new one on its first turn (no reply yet)."""
        gen = self._generations.get(transcript_id)
        if gen is None or not any(m.get("role") == "assistant" for m in msgs):
            bypass = transcript_id in self._restart
            self._restart.discard(transcript_id)
            gen = _Generation(f"{transcript_id}-{secrets.token_hex(6)}", bypass=bypass)
            self._generations[transcript_id] = gen
        return gen

    def _headers(self) -> dict[str, str]:
        headers = target_headers(self._env)
        headers.update(self.template.headers)
        return headers

    def _key(
        self, cache: Cache | None, msgs: list[dict[str, Any]], run: int, transcript_id: str
    ) -> str | None:
        if cache is None or not self.cacheable or cache.mode == "off":
            return None
        return cache.key({
            "role": "target",
            "messages": msgs,
            "template_sha256": self._digest,
            "request_headers": header_identity(self._headers()),
            **self._key_parts(run, transcript_id),
        })

    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        msgs = [dict(m) for m in messages]
        if (problem := speaker_problem(self.template, msgs)) is not None:
            raise ConfigError(problem)
        gen = self._generation(conversation_id, msgs)
        started = utc_now()
        key = self._key(cache, msgs, run, conversation_id)
        may_read = not (self.stateful and (gen.live or gen.bypass))
        if cache is not None and key is not None and may_read:
            hit = _stored_reply(cache.get(key))
            if hit is not None:
                gen.cached += 1
                if (ledger := active_ledger()) is not None:
                    ledger.hit("target")
                return TargetReply(content=hit[0], events=hit[1], cache="hit", model=self.description,
                                   started_at=started, ended_at=utc_now())
            if self.stateful and gen.cached:
                self._restart.add(conversation_id)
                raise RestartTranscript(
                    f"{self.description}: turn {len(msgs) // 2 + 1} is not cached after {gen.cached} "
                    "cached turns; the bot keeps a session, so the transcript is generated again"
                )
        parsed, attempts, retries = await self._call(gen, msgs)
        gen.live = True
        if parsed.session_id is not None:
            gen.session_id = parsed.session_id
        events = tuple(
            Event.model_validate({"kind": k, "role": "target", "detail": d}) for k, d in parsed.events
        )
        status: CacheStatus = "off"
        if cache is not None and key is not None:
            try:
                stored_events = [e.model_dump(mode="json") for e in events]
                cache.put(key, {"content": parsed.content, "events": stored_events})
                status = "miss"
            except (ValueError, TypeError):  # event details that cannot or must not be stored
                status = "off"
        return TargetReply(content=parsed.content, events=(*retries, *events), cache=status,
                           model=self.description, calls=attempts, started_at=started, ended_at=utc_now())

    async def _call(
        self, gen: _Generation, msgs: list[dict[str, Any]]
    ) -> tuple[_Parsed, int, tuple[Event, ...]]:
        """One turn through the retry rules: ``(parsed reply, attempts, retry events)``."""
        t = self.template
        body = fill(t.body, placeholder_values(msgs, gen.conversation_id, gen.session_id))
        env_headers = target_headers(self._env)
        headers = {**env_headers, **t.headers, CONVERSATION_ID_HEADER: gen.conversation_id,
                   self.synthetic_header: "1"}
        hidden = [*env_headers.values(), *url_secrets(self.url)]
        if gen.session_id is not None:
            hidden.append(gen.session_id)
            if t.session is not None and t.session.header:
                headers[t.session.header] = gen.session_id
        request = HttpRequest(t.method, self.url, headers, body, t.stream, t.stream_done)
        limits = current_limits()

        async def attempt() -> _Parsed:
            result = await send(request, timeout_s=self.role.timeout_s, max_bytes=limits.max_json_bytes,
                                url_shown=self.description)
            if not result.ok:
                raise status_error(result.status, result.reason, result.headers, self.description,
                                   result.text)
            return self._parse(result, gen)

        return await call_direct("target", self.role, attempt, model=f"template/{self.description}",
                                 endpoint=self.description, secrets=hidden)

    # ------------------------------------------------------------------ reading a response

    def _json(self, text: str, *, keep_surrogates: bool = False) -> Any:
        try:
            return loads_json(text, f"the response of {self.description}", keep_surrogates=keep_surrogates)
        except InputLimitError as exc:
            raise ProviderError(str(exc), kind="bad_request", retryable=False) from None

    def _parse(self, result: HttpResult, gen: _Generation) -> _Parsed:
        """The reply, events and session id of a 2xx response; ProviderError (module doc)."""
        t = self.template
        docs: list[Any] = []
        if t.stream:  # surrogates kept until the pieces are joined: a pair split between two
            # events (a server that slices by UTF-16 units) is then one character
            for n, event in enumerate(result.events, 1):
                if event.error:  # its data may name the session too: parsed to take it out
                    try:
                        doc: Any = self._json(event.data)
                    except (ValueError, ProviderError):
                        doc = event.data
                    raise self._stream_failure(n, "is an 'error' event", event.data, [*docs, doc], gen)
                try:
                    docs.append(self._json(event.data, keep_surrogates=True))
                except ValueError:
                    docs.append(event.data)  # a plain-text chunk: a JSON string for the paths
                if (error := stream_error_of(docs[-1], t)) is not None:
                    where = f"reports an error at {t.stream_error!r} (stream_error)"
                    raise self._stream_failure(n, where, error, docs, gen)
            content = self._stream_text(docs, result)
            docs = [well_formed_tree(doc) for doc in docs]  # the events and session id
        else:
            try:
                docs.append(self._json(result.text))
            except ValueError as exc:
                raise _server(f"the response of {self.description} is not JSON ({exc})") from None
            try:
                content = reply_text(docs[0], t)
            except MissingPath as exc:
                keys = sorted(docs[0])[:20] if isinstance(docs[0], dict) else type(docs[0]).__name__
                raise _server(f"{exc} in the response of {self.description} (it has {keys})") from None
            except TypeError as exc:
                raise _server(f"{exc} in the response of {self.description}") from None
        content = bounded_reply(content, f"the reply of {self.description}")
        if not content.strip():
            raise ProviderError(
                f"the reply of {self.description} at {t.reply_path!r} is empty (recorded as an error, "
                "never as an empty turn)",
                kind="empty_reply",
                retryable=False,
            )
        events: dict[str, dict[str, Any]] = {}
        session = None
        for doc in docs:
            for kind, detail in events_of(doc, t):
                events.setdefault(kind, detail)
            session = session or session_of(doc, t)
        if t.session is not None and gen.session_id is None and session is None:
            raise _server(
                f"no session id at {t.session.id_path!r} in the first response of {self.description}"
            )
        if "triage" in events:  # the level at the template's path: {"level": value, "path": path}
            found = events["triage"]
            try:
                events["triage"] = triage_detail({"level": found.get("value"), "path": found.get("path")},
                                                 f"the response of {self.description}")
            except TypeError as exc:
                raise ProviderError(str(exc), kind="bad_request", retryable=False) from None
        return _Parsed(content, tuple(events.items()), session)

    def _stream_failure(
        self, n: int, what: str, error: Any, docs: list[Any], gen: _Generation
    ) -> ProviderError:
        """The ProviderError of a stream's ``n``-th event reporting ``error`` (module docstring):
        the first 300 characters of it, without the session ids seen so far."""
        text = error if isinstance(error, str) else json.dumps(well_formed_tree(error), ensure_ascii=False)
        sessions = [s for s in (gen.session_id, *(session_of(d, self.template) for d in docs)) if s]
        snippet = redact_secrets(" ".join(well_formed(text).split()), extra=sessions)[:300]
        return ProviderError(
            f"{self.template.source or 'target_template'}: event {n} of the stream of {self.description} "
            f"{what}: {snippet or '(no detail)'}; the reply broke off, so the turn fails",
            kind="server",
            retryable=self.template.stream_error_retried,
        )

    def _stream_text(self, docs: list[Any], result: HttpResult) -> str:
        """The reply assembled from the events' pieces at the reply path (``docs`` decoded with
        their surrogates), made :func:`well_formed` once joined."""
        steps = parse_path(self.template.reply_path)
        pieces: list[str] = []
        matched = False
        for doc in docs:
            for v in find_all(doc, steps):
                matched = True
                if v is None:
                    continue
                if not isinstance(v, str):
                    raise _server(f"a piece of the reply at {self.template.reply_path!r} from "
                                  f"{self.description} is {type(v).__name__}, not text")
                pieces.append(v)
        if not matched:
            ctype = result.headers.get("content-type", "no content-type")
            what = f"none of its {len(docs)} events had it" if docs else f"it carried no event ({ctype})"
            raise _server(
                f"no reply at {self.template.reply_path!r} in the stream of {self.description}: {what}"
            )
        return well_formed("".join(pieces))


__all__ = ["TemplateTarget"]
