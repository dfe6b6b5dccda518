"""The fake auditor: replays the seed's script listed in the auditor prompt."""

from __future__ import annotations

import re
from dataclasses import dataclass

from empath_gate.testing.fake_openai import FakeRequest

END_TOKEN = "<<END>>"
"""The LLM auditor's end token (``empath_gate.conversation.auditor.END_TOKEN``)."""


_TURN = re.compile(r"This is message (\d+) of at most (\d+)\.")
_SCRIPT_LINE = re.compile(r"^(\d+)\. (.+)$")


def auditor_script(system_prompt: str) -> list[str]:
    """The seed's script lines listed in an auditor system prompt (``"1. ..."`` lines between the
    instruction and ``## How to write``)."""
    body = system_prompt.split("## How to write", 1)[0]
    lines = []
    for line in body.splitlines():
        m = _SCRIPT_LINE.match(line.strip())
        if m:
            lines.append(m.group(2))
    return lines


@dataclass
class ScriptAuditor:
    """An auditor model for the fake server that replays the seed's script: message ``k`` of
    the conversation is script line ``k`` (read from the system prompt), and once the script is
    exhausted (or ``max_messages`` is reached) it answers :data:`END_TOKEN`. Raises
    AssertionError (HTTP 500 at the server) when the prompt lists no script."""

    max_messages: int | None = None

    def __call__(self, req: FakeRequest) -> str:
        system = next((str(m.get("content") or "") for m in req.messages if m.get("role") == "system"), "")
        script = auditor_script(system)
        m = _TURN.search(system)
        if not script or m is None:
            raise AssertionError("the auditor prompt lists no script or turn number")
        turn = int(m.group(1))
        limit = len(script) if self.max_messages is None else min(len(script), self.max_messages)
        if turn > limit:
            return END_TOKEN
        return script[turn - 1]
