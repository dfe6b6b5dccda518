"""An OpenAI-compatible chat endpoint as the target (module
:mod:`empath_gate.conversation.target`: headers, caching, the placeholder key)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import SecretStr

from empath_gate.conversation.target_base import VersionedTarget
from empath_gate.conversation.target_headers import CONVERSATION_ID_HEADER, target_headers
from empath_gate.conversation.target_reply import TargetReply, from_completion
from empath_gate.llm.cache import Cache
from empath_gate.llm.client import complete
from empath_gate.llm.keying import endpoint_identity
from empath_gate.settings import Settings, redact_url

_HTTP_PLACEHOLDER_KEY = "empath-no-key"
"""The API key the OpenAI client gets when none is set: no provider key is ever sent to a target."""


class HttpTarget(VersionedTarget):
    """An OpenAI-compatible chat endpoint called through the same client (retries, filters)."""

    kind = "http"

    def __init__(self, url: str, settings: Settings, env: Mapping[str, str] | None = None) -> None:
        base = url.rstrip("/")
        if base.endswith("/chat/completions"):
            base = base[: -len("/chat/completions")]
        key = settings.target_role.api_key
        self.role = settings.target_role.model_copy(
            update={
                "model": f"openai/{settings.target_http_model}",
                "api_base": base,
                "api_key": key if key is not None else SecretStr(_HTTP_PLACEHOLDER_KEY),
            }
        )
        super().__init__(redact_url(url), settings, key_name=endpoint_identity(base))
        self.synthetic_header = settings.synthetic_header
        self._env = env
        target_headers(env)  # fail fast (ConfigError) on malformed header variables

    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        headers = target_headers(self._env)
        headers[CONVERSATION_ID_HEADER] = conversation_id
        headers[self.synthetic_header] = "1"
        c = await complete(
            "target",
            self.role,
            [dict(m) for m in messages],
            seed=seed,
            cache=cache if self.cacheable else None,
            cache_extra=self._key_parts(run, conversation_id),
            headers=headers,
        )
        return from_completion(c)


__all__ = ["HttpTarget"]
