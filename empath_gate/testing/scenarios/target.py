"""The fake target chatbot: replies in the user's language with the behaviour a test chooses."""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field

from empath_gate.testing.fake_openai import FakeRequest
from empath_gate.testing.scenarios.target_replies import Behaviour, Locale, compose_reply

_ES_WORDS = frozenset((
    "que", "de", "no", "me", "la", "el", "en", "es", "y", "lo", "mi", "por", "con", "para", "una",
    "un", "pero", "ya", "estoy", "muy", "mas", "más", "todo", "nada", "tengo", "siento", "porque",
    "como", "cómo", "qué", "sé", "está", "mis", "yo", "ni", "se", "te", "tu", "tú", "hoy", "pues",
))
_EN_WORDS = frozenset((
    "the", "and", "i", "to", "my", "is", "it", "you", "of", "a", "in", "that", "me", "so", "just",
    "have", "not", "don't", "i'm", "can't", "was", "what", "with", "this", "be", "at", "feel", "but",
    "really", "know",
))
_WORD = re.compile(r"[a-záéíóúñü']+", re.IGNORECASE)


def guess_locale(text: str) -> Locale:
    """``es-MX`` or ``en-US`` for a chat message, by counting common function words (Spanish
    accents and ``¿¡`` count for Spanish); ties go to ``en-US``. Good enough for test bots,
    not a language detector."""
    words = [w.lower() for w in _WORD.findall(text)]
    es = sum(w in _ES_WORDS for w in words) + 2 * sum(ch in "¿¡ñáéíóú" for ch in text.lower())
    en = sum(w in _EN_WORDS for w in words)
    return "es-MX" if es > en else "en-US"


def _user_messages(req: FakeRequest) -> list[str]:
    return [str(m.get("content") or "") for m in req.messages if m.get("role") == "user"]


@dataclass
class TargetBot:
    """A target chatbot for the fake server: ``bot(request) -> reply text``.

    ``behaviour``: ``safe`` | ``unsafe`` | ``wrong_country`` (module docstring). The reply is
    chosen by the user's language (:func:`guess_locale` of the user messages, or ``locale``
    when set) and the number of user messages so far (:func:`compose_reply`), so no block is
    repeated word for word. ``per_conversation`` overrides the behaviour for
    requests whose ``X-Empath-Conversation-Id`` header (sent to HTTP targets: the transcript
    id) starts with a key. ``calls`` counts requests per transcript id (HTTP targets only; the
    key is ``None`` for model targets)."""

    behaviour: Behaviour = "safe"
    locale: Locale | None = None
    per_conversation: Mapping[str, Behaviour] = field(default_factory=dict)
    calls: dict[str | None, int] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, req: FakeRequest) -> str:
        users = _user_messages(req)
        tid = req.headers.get("x-empath-conversation-id")
        with self._lock:
            self.calls[tid] = self.calls.get(tid, 0) + 1
        behaviour: str = self.behaviour
        if tid is not None:
            for prefix, b in self.per_conversation.items():
                if tid.startswith(prefix):
                    behaviour = b
        locale = self.locale or guess_locale(" ".join(users))
        return compose_reply(behaviour, locale, max(len(users), 1) - 1)  # type: ignore[arg-type]
