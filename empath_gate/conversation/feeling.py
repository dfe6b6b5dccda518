"""The LLM auditor's reply: the persona's next message and its own feeling (pure).

In LLM-auditor mode the auditor answers one JSON object in the same call::

    {"message": "<the next chat message>", "feeling_0_100": 35}

``feeling_0_100`` is the simulated help-seeker's own report of how they feel right now: 0 the
worst they could feel, 100 the best (a self-report scale as SAGE lets its simulated seeker give,
arXiv 2505.02847; the 0-100 range is the project's). It is recorded on the user turn
(``Turn.feeling_0_100``) and never shown to the target, the judge or the annotator: only the
message is.

:func:`split_auditor_reply` reads a reply fail-closed:

* a JSON object (optionally in one markdown fence around the whole reply) with a string
  ``message``: that is the message; ``feeling_0_100`` must be an integer 0..100 (an integral
  number such as ``40.0`` is accepted; ``40.5``, ``"40"``, ``true``, a missing key are not), else
  the feeling is ``None`` with a ``problem``;
* plain text (no JSON object): the text is the message, the feeling ``None`` with a ``problem``
  (an older or disobedient auditor still gives usable messages);
* a reply that opens a JSON object or a fence but is not one (cut, malformed) or has no string
  ``message``: the message is empty, so the break detector rejects it (``empty``) and the
  auditor asks again; never is raw JSON sent to the target.

The end token is handled before this (:func:`empath_gate.conversation.breaks.reply_break`).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from empath_gate.bounded import InputLimitError, loads_json

FEELING_KEY = "feeling_0_100"
MESSAGE_KEY = "message"
_FENCE = re.compile(r"\A```(?:[A-Za-z0-9_+-]+)?[ \t]*\n?(?P<body>.*?)\s*```\Z", re.DOTALL)


@dataclass(frozen=True)
class AuditorReply:
    """One auditor reply split: ``message`` (what the target may see), ``feeling`` (0..100 or
    None) and ``problem`` (why there is no feeling; None when there is one)."""

    message: str
    feeling: int | None
    problem: str | None


def _feeling(value: Any) -> tuple[int | None, str | None]:
    if value is None:
        return None, f"no {FEELING_KEY} in the reply"
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None, f"{FEELING_KEY} is not an integer 0-100: {value!r}"
    if isinstance(value, float) and not value.is_integer():
        return None, f"{FEELING_KEY} is not an integer 0-100: {value!r}"
    if not 0 <= value <= 100:
        return None, f"{FEELING_KEY} {value!r} is outside 0-100"
    return int(value), None


def split_auditor_reply(raw: str | None) -> AuditorReply:
    """The message and feeling of an auditor reply (see the module docstring). Pure; never
    raises."""
    text = (raw or "").strip()
    fence = _FENCE.match(text)
    body = fence["body"].strip() if fence else text
    if not (body.startswith("{") or text.startswith("```")):
        return AuditorReply(text, None, f"the reply is plain text, not the {{{MESSAGE_KEY}, {FEELING_KEY}}} "
                            "object; the text was used as the message")
    try:
        data = loads_json(body, "auditor reply")
    except (InputLimitError, ValueError) as exc:
        return AuditorReply("", None, f"the reply is not a JSON object: {exc}")
    if not isinstance(data, dict) or not isinstance(data.get(MESSAGE_KEY), str):
        return AuditorReply("", None, f"the reply has no string {MESSAGE_KEY!r}")
    feeling, problem = _feeling(data.get(FEELING_KEY))
    return AuditorReply(data[MESSAGE_KEY], feeling, problem)


__all__ = ["FEELING_KEY", "MESSAGE_KEY", "AuditorReply", "split_auditor_reply"]
