"""The xdist worker role: generate and judge this worker's share, hand the records to the
controller over the channel, wait for everyone's, then decide every test with all records.

The share is the worker's slot's (:func:`~empath_gate.pytest_plugin.session.share`), given by
the controller in ``workerinput``; a replacement for a dead worker gets the same slot, so it
takes over exactly that worker's conversations (from the cache where they were finished).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from empath_gate.pytest_plugin.channel import ChannelClient
from empath_gate.pytest_plugin.session import EmpathSession, lost_records, share

if TYPE_CHECKING:
    from empath_gate.plan.build import PlanItem


def progress_message(slot: int, line: str) -> dict[str, Any]:
    """The channel message of one progress ``line`` of slot ``slot``: with the share's totals
    when the line carries them (a :class:`~empath_gate.conversation.plan_stats.ProgressLine`),
    which the controller adds up over every slot; other lines (notes) go as text."""
    from empath_gate.conversation.plan_stats import ProgressLine

    message: dict[str, Any] = {"type": "progress", "slot": slot, "line": str(line)}
    if isinstance(line, ProgressLine):
        message.update(stats=line.stats.to_dict(), elapsed_s=line.elapsed_s)
    return message


def run_worker(
    es: EmpathSession,
    infos: Sequence[PlanItem],
    workerinput: dict[str, Any],
    progress: Callable[[str], None] | None = None,
) -> None:
    """The worker's whole share of the work (module docstring). A channel failure or a lost
    slot makes the affected tests error with the reason; nothing raises."""
    from empath_gate.results.model import RunRecord

    conversations = es.conversations(infos)
    slot, slots = int(workerinput["empath_slot"]), int(workerinput["empath_slots"])
    try:
        client = ChannelClient(tuple(workerinput["empath_channel"]), str(workerinput["empath_token"]))
    except OSError as exc:
        es.error, es.error_kind = (
            f"infrastructure: cannot reach the xdist controller: {exc}",
            "infrastructure",
        )
        return
    try:
        client.send(
            {
                "type": "hello",
                "worker": workerinput.get("workerid"),
                "slot": slot,
                "selected": es.selected,
                "conversations": conversations,
            }
        )

        def forward(line: str) -> None:
            client.send(progress_message(slot, line))

        mine = share(conversations, slot, slots)
        records = es.generate(mine, forward)
        client.send(
            {
                "type": "records",
                "slot": slot,
                "error": es.error,
                "error_kind": es.error_kind,
                "records": [r.model_dump(mode="json") for r in records],
            }
        )
        answer = client.receive()
    except (OSError, ConnectionError, ValueError) as exc:
        es.error = es.error or f"infrastructure: the xdist controller's channel failed: {exc}"
        es.error_kind = es.error_kind or "infrastructure"
        return
    finally:
        client.close()
    if es.error:
        return
    es.absorb([RunRecord.model_validate(r) for r in answer.get("records", [])])
    if answer.get("type") == "lost":
        es.absorb(lost_records(es.setup, answer.get("conversations", []), str(answer.get("reason"))))
    if answer.get("error"):
        es.error, es.error_kind = str(answer["error"]), str(answer.get("error_kind") or "infrastructure")
        return
    es.decide()
