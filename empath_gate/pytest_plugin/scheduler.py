"""The xdist scheduler of an empath-gate run: every conversation, with all of its tests, goes to
the worker holding its slot, all at once, before any test runs.

A conversation's slot is its index among the selected conversations (plan order, which is the
collection order) modulo the number of slots: the rule the workers use to choose what to
generate (:func:`~empath_gate.pytest_plugin.session.share`). Scopes that are not conversations
(suite checks, a project's own tests) are spread round-robin. After a crash, xdist's own
rescheduling hands the dead worker's unfinished scopes to its replacement, all at once (every other
worker has already been sent all its work and is shutting down).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]


def _is_conversation(scope: str) -> bool:
    return scope.startswith("empath/") and scope.count("/") >= 2


class SlotScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """:class:`LoadScopeScheduling` with the initial distribution by slot (module docstring)."""

    def __init__(
        self, config: Any, log: Any = None, *, slots: int, slot_of: Callable[[], dict[str, int]]
    ) -> None:
        super().__init__(config, log)
        self.collection: list[str] | None = None
        self.slots = max(1, slots)
        self._slot_of = slot_of

    def _split_scope(self, nodeid: str) -> str:
        return str(nodeid.rsplit("::", 1)[0])

    def _reschedule(self, node: Any) -> None:
        # After the initial distribution only a replacement worker is not shutting down: it takes
        # every unfinished scope at once (a worker runs a test only once it holds the next one or
        # its shutdown, so handing out one single-test scope at a time would stall it).
        if node.shutting_down:
            return
        while self.workqueue:
            self._assign_work_unit(node)
        node.shutdown()

    def schedule(self) -> None:
        assert self.collection_is_completed
        if getattr(self, "collection", None) is not None:
            for node in self.nodes:
                self._reschedule(node)
            return
        if not self._check_nodes_have_same_collection():
            self.log("**Different tests collected, aborting run**")
            return
        collection: list[str] = list(next(iter(self.registered_collections.values())))
        self.collection = collection
        if not collection:
            return
        units: dict[str, dict[str, bool]] = {}
        for nodeid in collection:
            units.setdefault(self._split_scope(nodeid), {})[nodeid] = False
        slot_of = self._slot_of()
        nodes = sorted(self.nodes, key=lambda n: slot_of.get(str(n.gateway.id), 1 << 30))
        by_slot = {slot_of.get(str(n.gateway.id)): n for n in nodes}
        conv_index = other_index = 0
        for scope, unit in units.items():
            if _is_conversation(scope):
                node = by_slot.get(conv_index % self.slots) or nodes[conv_index % len(nodes)]
                conv_index += 1
            else:
                node = nodes[other_index % len(nodes)]
                other_index += 1
            self.assigned_work.setdefault(node, {})[scope] = unit
        for node in nodes:
            work = self.assigned_work.get(node, {})
            pos = {nid: i for i, nid in enumerate(self.registered_collections[node])}
            indices = [pos[nid] for unit in work.values() for nid in unit]
            if indices:
                node.send_runtest_some(indices)
            node.shutdown()
