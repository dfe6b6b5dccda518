"""A litellm model as the target, with the team's system prompt (module
:mod:`empath_gate.conversation.target`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empath_gate.conversation.target_base import Target, optional_prompt_hash
from empath_gate.conversation.target_reply import TargetReply, from_completion
from empath_gate.llm.cache import Cache
from empath_gate.llm.client import complete
from empath_gate.settings import RoleSettings


class ModelTarget(Target):
    """A litellm model with the team's system prompt (optional) prepended to every call."""

    kind = "model"

    def __init__(self, model: str, role: RoleSettings, system_prompt: Path | None) -> None:
        self.role = role.model_copy(update={"model": model})
        self.prompt_hash = optional_prompt_hash(system_prompt)
        self.system_prompt = system_prompt.read_text(encoding="utf-8") if system_prompt else None
        self.description = model
        self.cacheable = True

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
        if self.system_prompt is not None:
            msgs.insert(0, {"role": "system", "content": self.system_prompt})
        c = await complete(
            "target",
            self.role,
            msgs,
            seed=seed,
            cache=cache,
            cache_extra={"system_prompt_hash": self.prompt_hash, "run": run},
        )
        return from_completion(c)


__all__ = ["ModelTarget"]
