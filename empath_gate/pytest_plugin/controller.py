"""The xdist controller role: give every worker a slot, own the channel the workers hand their
records over, answer them once every slot has delivered, and notice dead workers.

Mechanism (documented in docs/architecture.md): each conversation belongs to one slot by a
stable rule over plan order (:func:`~empath_gate.pytest_plugin.session.share`), and the
scheduler (:mod:`.scheduler`) sends all of a conversation's tests to the worker holding its
slot before any test runs. A worker that dies frees its slot; xdist's replacement worker is
given that slot and takes over exactly its conversations. When no replacement takes the slot
within :data:`~.channel.LOST_AFTER_S` seconds, the waiting workers are told which conversations
were lost (their tests error naming them), so the run ends well within a minute.
"""

from __future__ import annotations

import secrets
import threading
from typing import TYPE_CHECKING, Any

from empath_gate.pytest_plugin.channel import LOST_AFTER_S, ChannelServer, Connection
from empath_gate.pytest_plugin.session import EmpathSession, lost_records, share

if TYPE_CHECKING:
    from empath_gate.conversation.plan_stats import PlanStats
    from empath_gate.report.progress import ThrottledProgress


class Controller:
    """The controller's state and its xdist hooks (registered only when xdist runs workers)."""

    def __init__(
        self,
        es: EmpathSession,
        slots: int,
        progress: ThrottledProgress | None = None,
        lost_after_s: float = LOST_AFTER_S,
    ) -> None:
        self.es = es
        self.slots = max(1, slots)
        self.progress = progress
        self.lost_after_s = lost_after_s
        self.token = secrets.token_hex(16)
        self._lock = threading.Lock()
        self._slot_of: dict[str, int] = {}
        self._free: list[int] = []
        self._next = 0
        self.conversations: list[str] | None = None
        self.delivered: dict[int, list[dict[str, Any]]] = {}
        self.lost: dict[int, str] = {}
        self.error: tuple[str, str] | None = None
        self._waiting: list[Connection] = []
        self._answer: dict[str, Any] | None = None
        self._progress_lock = threading.Lock()
        self._shares: dict[int, tuple[PlanStats, float | None]] = {}
        """Slot -> its worker's latest progress totals and elapsed seconds (a replacement
        worker's replace the dead one's: it redoes the same share)."""
        self.server = ChannelServer(self.token, self._handle)

    # ---- xdist hooks

    def pytest_configure_node(self, node: Any) -> None:
        with self._lock:
            if self._free:
                slot = self._free.pop(0)
            else:
                slot, self._next = self._next, self._next + 1
            self._slot_of[str(node.gateway.id)] = slot
        node.workerinput.update(
            {
                "empath_slot": slot,
                "empath_slots": self.slots,
                "empath_token": self.token,
                "empath_channel": list(self.server.address),
            }
        )

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        if error is None:
            return
        worker = str(node.gateway.id)
        with self._lock:
            slot = self._slot_of.pop(worker, None)
            if slot is None or slot in self.delivered:
                return
            self._free.append(slot)
        timer = threading.Timer(self.lost_after_s, self._give_up, args=(slot, worker))
        timer.daemon = True
        timer.start()

    @property
    def scheduler_slots(self) -> dict[str, int]:
        """Worker id -> slot, for the scheduler."""
        with self._lock:
            return dict(self._slot_of)

    # ---- the channel

    def _handle(self, msg: dict[str, Any], conn: Connection) -> None:
        kind = msg.get("type")
        if kind == "progress":
            with self._progress_lock:  # the totals and the line shown stay in order across workers
                line = self._total_line(msg)
                if self.progress is not None:
                    self.progress(line)
            return
        with self._lock:
            if kind == "hello" and self.conversations is None:
                self.conversations = list(msg.get("conversations") or [])
                self.es.selected = msg.get("selected")
            elif kind == "records":
                self.delivered[int(msg["slot"])] = list(msg.get("records") or [])
                if msg.get("error") and self.error is None:
                    self.error = (str(msg["error"]), str(msg.get("error_kind") or "infrastructure"))
                self._waiting.append(conn)
                self._maybe_answer()

    def _total_line(self, msg: dict[str, Any]) -> str:
        """The line to show for a worker's ``progress`` message: with its share's totals, the
        run's totals (every slot's latest totals added up, the longest elapsed time for the time
        left) as a :class:`~empath_gate.conversation.plan_stats.ProgressLine`, which the printer
        throttles; else the worker's line as it came (a note, a cache notice), a plain string the
        printer always shows."""
        from empath_gate.conversation.plan_stats import PlanStats

        stats, slot = msg.get("stats"), msg.get("slot")
        if not isinstance(stats, dict) or not isinstance(slot, int):
            return str(msg.get("line", ""))
        elapsed = msg.get("elapsed_s")
        seconds = float(elapsed) if isinstance(elapsed, (int, float)) else None
        self._shares[slot] = (PlanStats.from_dict(stats), seconds)
        times = [t for _, t in self._shares.values() if t is not None]
        total = PlanStats.combined(s for s, _ in self._shares.values())
        return total.progress_line(max(times) if times else None)  # a count: the only line throttled

    def _give_up(self, slot: int, worker: str) -> None:
        with self._lock:
            if slot in self.delivered or slot not in self._free:
                return  # delivered, or a replacement took the slot
            convs = share(self.conversations or [], slot, self.slots)
            self.lost[slot] = (
                f"infrastructure: xdist worker {worker} died and no replacement took over; lost "
                f"conversations: {', '.join(convs) or 'none'}"
            )
            self._maybe_answer()

    def _maybe_answer(self) -> None:
        """With the lock held: once every slot delivered or was lost, answer every waiting worker."""
        if any(s not in self.delivered and s not in self.lost for s in range(self.slots)):
            return
        if self._answer is None:
            if self.progress is not None:  # every worker's generation is over: its last line
                self.progress.finish()
            answer: dict[str, Any] = {
                "type": "lost" if self.lost else "all",
                "records": [r for recs in self.delivered.values() for r in recs],
            }
            if self.lost:
                answer["conversations"] = self.lost_conversations()
                answer["reason"] = "; ".join(self.lost.values())
            if self.error is not None:
                answer["error"], answer["error_kind"] = self.error
            self._answer = answer
        for conn in self._waiting:
            conn.send(self._answer)
        self._waiting.clear()

    def lost_conversations(self) -> list[str]:
        """The conversations of every lost slot, in plan order."""
        lost = {c for s in self.lost for c in share(self.conversations or [], s, self.slots)}
        return [c for c in self.conversations or [] if c in lost]

    # ---- the end of the session

    def finish(self) -> None:
        """Take every delivered record (and error records for lost conversations) into the
        session, write the artifacts, stop the channel."""
        from empath_gate.results.model import RunRecord

        with self._lock:
            records = [RunRecord.model_validate(r) for recs in self.delivered.values() for r in recs]
            lost, reason, error = self.lost_conversations(), "; ".join(self.lost.values()), self.error
        self.server.close()
        if self.progress is not None:  # shown once: nothing when the answer already showed it
            self.progress.finish()
        self.es.absorb(records)
        if lost:
            self.es.absorb(lost_records(self.es.setup, lost, reason))
        if error is not None:
            self.es.error, self.es.error_kind = error
            return
        self.es.finish()

    def summary_lines(self) -> list[str]:
        """Lines naming lost conversations, for the terminal summary."""
        return [f"empath-gate: {why}" for why in self.lost.values()]


def make_scheduler(controller: Controller, config: Any, log: Any) -> Any:
    """The slot scheduler (:mod:`.scheduler`) bound to ``controller``'s slots."""
    from empath_gate.pytest_plugin.scheduler import SlotScheduling

    return SlotScheduling(config, log, slots=controller.slots, slot_of=lambda: controller.scheduler_slots)
