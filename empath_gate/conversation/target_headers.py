"""Headers of HTTP targets: the team's headers from the environment (never from settings
files), and the header that carries the conversation id (module
:mod:`empath_gate.conversation.target`, "HTTP headers")."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping

from empath_gate.errors import ConfigError

CONVERSATION_ID_HEADER = "X-Empath-Conversation-Id"
"""The header every HTTP request to a target carries with the conversation id."""


def target_headers(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """Headers for HTTP targets from ``EMPATH_TARGET_HEADERS`` (JSON object of strings) and
    ``EMPATH_TARGET_HEADER_<NAME>`` (``X_API_TOKEN`` → ``X-Api-Token``); the latter win.
    Raises ConfigError for malformed JSON (without echoing the value). Every value (and the
    credential after a ``Bearer``/``Basic``/``Token`` scheme) of at least 8 characters is
    registered as a secret (:func:`empath_gate.secrets.header_secrets`), whatever the header's
    name, as issue rule "no secret in any output" has it."""
    from empath_gate.secrets import header_secrets, register

    env = os.environ if env is None else env
    headers: dict[str, str] = {}
    raw = env.get("EMPATH_TARGET_HEADERS")
    if raw:
        try:
            parsed = json.loads(raw)
        except json.JSONDecodeError:
            raise ConfigError(
                "EMPATH_TARGET_HEADERS is not valid JSON; set it to an object such as "
                '{"Authorization": "Bearer ..."}'
            ) from None
        if not isinstance(parsed, dict) or not all(isinstance(v, str) for v in parsed.values()):
            raise ConfigError("EMPATH_TARGET_HEADERS must be a JSON object of string values")
        headers.update({str(k): v for k, v in parsed.items()})
    prefix = "EMPATH_TARGET_HEADER_"
    for name in sorted(env):
        if name.startswith(prefix) and len(name) > len(prefix):
            header = "-".join(p.capitalize() for p in name[len(prefix) :].split("_"))
            headers[header] = env[name]
    register(v for value in headers.values() for v in header_secrets(value))
    return headers


__all__ = ["CONVERSATION_ID_HEADER", "target_headers"]
