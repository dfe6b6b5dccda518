"""The target interface every adapter implements, and what the adapters share: the system
prompt's digest and the cache-key parts of a target whose code can change behind an unchanged
prompt (module :mod:`empath_gate.conversation.target`, "Caching")."""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from empath_gate.conversation.target_reply import TargetReply
from empath_gate.errors import ConfigError
from empath_gate.llm.cache import Cache
from empath_gate.settings import Settings


def prompt_hash(path: Path) -> str:
    """sha256 hex digest of the file's bytes; ConfigError when it cannot be read."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise ConfigError(
            f"target_system_prompt: cannot read {path} ({exc.strerror}); fix the path "
            "(setting target_system_prompt / EMPATH_TARGET_SYSTEM_PROMPT)"
        ) from None


def optional_prompt_hash(path: Path | None) -> str | None:
    """:func:`prompt_hash` of ``path``, or None when no system prompt is set."""
    return prompt_hash(path) if path else None


class RestartTranscript(Exception):
    """Raised by a target whose replies so far came from the cache when the next one is not
    cached and the bot keeps the dialogue itself (a session): going on live would leave the bot
    without the earlier turns. The engine generates the transcript again from its first turn."""


class Target(ABC):
    """A chatbot under test. ``description`` goes into ``Transcript.target`` (never a key);
    ``prompt_hash`` into ``Transcript.target_prompt_hash``; ``cacheable`` tells whether replies
    are cached."""

    kind: str = "target"
    description: str = ""
    prompt_hash: str | None = None
    cacheable: bool = False

    @abstractmethod
    async def reply(
        self,
        messages: Sequence[Mapping[str, Any]],
        *,
        conversation_id: str,
        run: int,
        seed: int | None,
        cache: Cache | None,
    ) -> TargetReply:
        """The target's reply to the dialogue ``messages`` (user/assistant turns, oldest first).
        Raises ProviderError (provider failures) or TypeError/any exception from user code;
        the engine turns either into an ``error`` transcript."""


class VersionedTarget(Target):
    """A target whose code can change behind an unchanged prompt (HTTP, callable): replies are
    cached only when ``Settings.target_version`` is set, keyed by it (module docstring)."""

    def __init__(self, description: str, settings: Settings, key_name: str | None = None) -> None:
        self.description = description
        self.key_name = key_name or description
        self.version = settings.target_version
        self.cacheable = settings.target_version is not None
        self.prompt_hash = optional_prompt_hash(settings.target_system_prompt)

    def _key_parts(self, run: int, conversation_id: str) -> dict[str, object]:
        """The cache-key parts naming this target's reply in run ``run`` of ``conversation_id``."""
        return {
            "target": self.key_name,
            "target_version": self.version,
            "run": run,
            "conversation_id": conversation_id,
            "system_prompt_hash": self.prompt_hash,
        }


__all__ = ["RestartTranscript", "Target", "VersionedTarget", "optional_prompt_hash", "prompt_hash"]
