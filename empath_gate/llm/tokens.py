"""Offline token counts and the reservation of one call, for the budget and the dry-run.

Tokens are counted with tiktoken's ``cl100k_base`` encoding as litellm ships it inside its
package (``litellm/litellm_core_utils/tokenizers``; litellm points ``TIKTOKEN_CACHE_DIR`` there,
so nothing is downloaded). Where that encoding cannot be loaded, :func:`count_tokens` falls back
to :data:`CHARS_PER_TOKEN` characters per token (a deterministic approximation).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping
from typing import Any

CHARS_PER_TOKEN = 4
"""Fallback rule of thumb for English and Spanish text with GPT-style tokenizers."""

MESSAGE_OVERHEAD_TOKENS = 4
"""Tokens a chat message costs beyond its text (role and separators; OpenAI's cookbook,
"How to count tokens with tiktoken": 3 per message for gpt-4-class models, rounded up)."""

RESERVED_COMPLETION_TOKENS = 1024
"""Completion tokens reserved for a call whose ``max_tokens`` is unset (no upper bound is
known; project choice: several paragraphs, far above a supportive reply or a user turn)."""

_lock = threading.Lock()
_encoder: Any = None


def _encoding() -> Any:
    """The bundled cl100k_base encoding, loaded once (False when it cannot be loaded)."""
    global _encoder
    if _encoder is None:
        with _lock:
            if _encoder is None:
                try:
                    from empath_gate.llm.client import litellm_module

                    litellm_module()  # sets the offline environment before litellm's modules load
                    from litellm.litellm_core_utils.default_encoding import encoding

                    _encoder = encoding
                except Exception:
                    _encoder = False
    return _encoder


def tokenizer_name() -> str:
    """Which counter :func:`count_tokens` uses: ``tiktoken cl100k_base (bundled with litellm)`` or
    the fallback ``characters/4``."""
    return "tiktoken cl100k_base (bundled with litellm)" if _encoding() else f"characters/{CHARS_PER_TOKEN}"


def count_tokens(text: str) -> int:
    """Tokens of ``text`` (>= 0) with the offline tokenizer (see the module docstring)."""
    enc = _encoding()
    if not text:
        return 0
    if enc:
        return len(enc.encode(text, disallowed_special=()))
    return max(1, len(text) // CHARS_PER_TOKEN)


def message_tokens(messages: Iterable[Mapping[str, Any]]) -> int:
    """Prompt tokens of chat ``messages``: their text plus :data:`MESSAGE_OVERHEAD_TOKENS` each."""
    return sum(count_tokens(str(m.get("content") or "")) + MESSAGE_OVERHEAD_TOKENS for m in messages)


def reservation_usd(
    model: str | None, messages: Iterable[Mapping[str, Any]], max_tokens: int | None
) -> float:
    """The cost reserved for one attempt: the prompt's tokens plus ``max_tokens`` (else
    :data:`RESERVED_COMPLETION_TOKENS`) completion tokens, priced from litellm's local cost map;
    0.0 for models the map does not price (their spend is unknown and cannot count)."""
    from empath_gate.llm.client import estimate_cost

    if not model:
        return 0.0
    completion = max_tokens if max_tokens is not None else RESERVED_COMPLETION_TOKENS
    cost = estimate_cost(model, message_tokens(messages), completion)
    return cost or 0.0
