"""The LLM annotator's prompt: its own versioned template files and their rendering.

Template ``annotate-v1`` is two files in ``empath_gate/turns/prompts/``:
``annotate-v1.system.md`` (the system message) and ``annotate-v1.user.md`` (the user message,
with ``$placeholders``). :func:`annotate_template_hash` is the sha256 of both; it goes into the
cache key and into :attr:`TurnLabels.version`. The metric judge's template
(:mod:`empath_gate.judging.prompts`) is separate and unchanged by this one. The rendering below
(label lists, turn lines) is part of the template: a change to it that alters the prompt text
must bump :data:`ANNOTATE_TEMPLATE_VERSION`.

What the annotator sees: the dialogue's turns (role and text, indexed from 0), the label set's
ids with their English definitions, and the locale. Never the auditor's own feeling report,
the turn's source, model names, costs or timings: a :class:`~empath_gate.turns.model.Dialogue`
carries none of them.
"""

from __future__ import annotations

import functools
import hashlib
from importlib import resources
from string import Template

from empath_gate.instrument.emotion_models import EmotionSet
from empath_gate.turns.model import Dialogue

ANNOTATE_TEMPLATE_VERSION = "annotate-v1"
"""Version of the annotator's prompt template; bump it whenever the rendered prompt changes."""

_FILES = ("system", "user")


@functools.cache
def _template(part: str) -> str:
    name = f"{ANNOTATE_TEMPLATE_VERSION}.{part}.md"
    return (resources.files("empath_gate.turns") / "prompts" / name).read_text(encoding="utf-8")


@functools.lru_cache(maxsize=1)
def annotate_template_hash() -> str:
    """sha256 (hex) of the template files of :data:`ANNOTATE_TEMPLATE_VERSION`, each as its
    name, a NUL byte and its UTF-8 text, in the order system, user."""
    h = hashlib.sha256()
    for part in _FILES:
        h.update(f"{ANNOTATE_TEMPLATE_VERSION}.{part}.md".encode())
        h.update(b"\0")
        h.update(_template(part).encode("utf-8"))
    return h.hexdigest()


def _turn_line(i: int, role: str, text: str) -> str:
    body = " ".join(text.split()) or "(empty)"
    return f"[{i}] {role.upper()}: {body}"


def build_annotate_messages(dialogue: Dialogue, labels: EmotionSet, locale: str) -> list[dict[str, str]]:
    """The system and user messages asking for the labels of every turn of ``dialogue`` with
    the label set ``labels``; ``locale`` as the annotator resolved it."""
    def lines(items: tuple[object, ...]) -> str:
        return "\n".join(
            f"- {x.id}: {x.definition.get('en-US').strip()}" for x in items  # type: ignore[attr-defined]
        )

    user = Template(_template("user")).substitute(
        locale=locale,
        user_labels=lines(labels.user_labels),
        bot_labels=lines(labels.bot_labels),
        strategies=lines(labels.strategies),
        dialogue="\n".join(_turn_line(i, t.role, t.text) for i, t in enumerate(dialogue.turns)),
        count=len(dialogue.turns),
    )
    return [{"role": "system", "content": _template("system").strip()}, {"role": "user", "content": user}]


__all__ = ["ANNOTATE_TEMPLATE_VERSION", "annotate_template_hash", "build_annotate_messages"]
