"""Target adapters: how the chatbot under test is called, chosen by the target string
(:func:`make_target`). Each adapter lives in its own module (``model_target``, ``http_target``,
``callable_target``, ``template_target``) over the interface in ``target_base``; the reply
model and its reading are in ``target_reply``, the headers in ``target_headers``. The names
below are importable from here as well.

* ``py:package.module:function`` → :class:`CallableTarget`: the function receives the
  dialogue (``[{"role": "user"|"assistant", "content": str}, ...]``, no system message: the
  team's code owns its prompt) and a conversation id, sync or async, and returns the reply.
* ``http://…`` / ``https://…`` → :class:`HttpTarget`: an OpenAI-compatible chat endpoint (the
  URL is the base, e.g. ``https://bot.example/v1``, or the full ``…/chat/completions``).
* ``http://…`` with ``target_template`` set → a bot with its own JSON API
  (:mod:`empath_gate.conversation.template_target`).
* anything else → :class:`ModelTarget`: a litellm model with the team's system-prompt file.

**The conversation id** given to callables and sent to HTTP targets is the transcript id
(``<seed>-<persona>-r<run>``): stable across re-runs, different for each run, so a stateful
bot starts every run from a fresh session.

**Replies** may be plain text or structured: a mapping or object with ``content`` (str or
None) and ``events`` (a list of ``{"kind": "handoff"|"tool_call"|"filtered"|"risk"|"triage",
"detail": {...}}`` or :class:`Event`), and optionally ``tool_calls`` (each becomes a
``tool_call`` event). A hand-off is recorded as an event the judge sees (it is often the right
action). A ``risk`` event is the target's own risk detector on that turn: ``{"labels":
[{"category": ..., "timing": "ongoing"|"past"}]}`` (:mod:`empath_gate.instrument.risk_labels`;
an empty list: no risk); a ``triage`` event carries the level its triage classifier gave:
``{"level": "non_urgent"|"urgent"|"emergency"}`` (:mod:`empath_gate.instrument.crisis_levels`;
any other level ends the transcript as an error, as an unknown risk label does).

**HTTP headers** come from the environment at call time, never from settings files:
``EMPATH_TARGET_HEADERS`` (a JSON object) and ``EMPATH_TARGET_HEADER_<NAME>=value`` (``_`` in
the name becomes ``-``). Every request also carries ``X-Empath-Conversation-Id`` and the
synthetic-traffic header (``Settings.synthetic_header``, value ``1``) so the backend can keep
generated crisis traffic away from real counsellors. Never point the tool at a production
deployment that routes to people. No provider key from the environment is ever sent to an
HTTP target (the OpenAI client gets a placeholder key; authenticate through the headers).

**Caching**: model targets are cached (the system prompt's sha256 is in the target's key,
with the endpoint). Callable and HTTP targets are cached only when ``Settings.target_version``
is set, because their code can change behind an unchanged prompt; an HTTP target's key holds
its URL without credentials and the names and value digests of its non-secret headers
(:mod:`empath_gate.llm.keying`). A reply a content filter blocked is cached like any other: it
is evidence of the target's behaviour. A reply that raised is never cached.

**Reply size**: a reply longer than ``max_field_chars`` (:mod:`empath_gate.bounded`) ends
the transcript as an error (a :class:`ProviderError`), never a truncated reply.
"""

from __future__ import annotations

from collections.abc import Mapping

from empath_gate.conversation.callable_target import CallableTarget, load_callable
from empath_gate.conversation.http_target import HttpTarget
from empath_gate.conversation.model_target import ModelTarget
from empath_gate.conversation.target_base import RestartTranscript, Target, prompt_hash
from empath_gate.conversation.target_headers import CONVERSATION_ID_HEADER, target_headers
from empath_gate.conversation.target_reply import TargetReply, coerce_reply
from empath_gate.errors import ConfigError, ProviderError
from empath_gate.settings import Settings


def make_target(settings: Settings, env: Mapping[str, str] | None = None) -> Target:
    """The adapter for ``settings.target``; ConfigError when no target is set or it cannot
    be loaded. ``env`` (default ``os.environ``) supplies HTTP-target headers. With
    ``target_template`` set, the http(s) target is a
    :class:`~empath_gate.conversation.template_target.TemplateTarget`."""
    kind = settings.target_kind
    if settings.target_template is not None and settings.target is not None:
        from empath_gate.conversation.template_spec import template_of
        from empath_gate.conversation.template_target import TemplateTarget

        template = template_of(settings)
        assert template is not None
        return TemplateTarget(settings.target, template, settings, env)
    if kind is None or settings.target is None:
        raise ConfigError(
            "no target: set 'target' in [tool.empath-gate], EMPATH_TARGET_MODEL, or --empath-target "
            "(py:pkg.mod:fn, an http(s) URL, or a litellm model)"
        )
    if kind == "callable":
        return CallableTarget(settings.target, settings)
    if kind == "http":
        return HttpTarget(settings.target, settings, env)
    return ModelTarget(settings.target, settings.target_role, settings.target_system_prompt)


__all__ = [
    "CONVERSATION_ID_HEADER",
    "CallableTarget",
    "HttpTarget",
    "ModelTarget",
    "ProviderError",
    "RestartTranscript",
    "Target",
    "TargetReply",
    "coerce_reply",
    "load_callable",
    "make_target",
    "prompt_hash",
    "target_headers",
]
