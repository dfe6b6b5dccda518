"""The progress lines a run prints while it goes on, for every front-end (the ``run`` command's
stderr, the pytest plugin's terminal reporter): the repeating progress count at most once every
:data:`PROGRESS_EVERY_S` seconds, every other line (a note) always, never a blank one, and the
run's last count always.

:class:`ThrottledProgress` is called with each line the engine reports
(:data:`empath_gate.run.Progress`). Only the progress count, a
:class:`~empath_gate.conversation.plan_stats.ProgressLine` (:func:`is_count_line`), is throttled:
a count inside the interval after the last one shown is held, not shown. Any other line is a
one-off note (a judge batch's status, a cache notice) and is shown at once, in order: a count
held when a note comes is shown first, so the lines keep the order they came in.
:meth:`ThrottledProgress.finish`, called once the run ends (finished, failed or interrupted),
shows the last count offered when it was held, so the final state (e.g. ``transcripts 48/48``)
is always printed once, and never twice when it was shown as it came. A count equal to the
last one shown is never shown again (the engine reports the run's final totals once more when
it ends: :meth:`empath_gate.conversation.engine.Generator.report_final`), and it supersedes a
count held since, which would tell an older state.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

PROGRESS_EVERY_S = 2.0
"""Shortest interval between two progress lines, in seconds (project choice: readable in a CI
log, which keeps every line)."""

PREFIX = "empath-gate"
"""Every progress line starts with it; a line that does not is shown as ``empath-gate: <line>``."""


def is_count_line(line: str) -> bool:
    """Whether ``line`` is the repeating progress count (a
    :class:`~empath_gate.conversation.plan_stats.ProgressLine`, which the engine reports after
    every transcript), the only kind of line that is throttled; any other line is a note."""
    from empath_gate.conversation.plan_stats import ProgressLine

    return isinstance(line, ProgressLine)


class ThrottledProgress:
    """A ``progress(line)`` callable that passes lines to ``sink`` (module docstring).

    ``sink`` receives the line to show, prefixed (:data:`PREFIX`); ``every_s`` is the shortest
    interval in seconds between two progress counts shown (None: :data:`PROGRESS_EVERY_S` as it
    is when the printer is made), measured on ``clock`` (seconds, monotonic; injectable for
    tests). The first count is shown at once; a note is never held. Safe to call from several
    threads (the xdist controller's channel thread and the main thread)."""

    def __init__(
        self,
        sink: Callable[[str], None],
        *,
        every_s: float | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sink = sink
        self._every_s = PROGRESS_EVERY_S if every_s is None else every_s
        self._clock = clock
        self._lock = threading.Lock()
        self._shown_at: float | None = None
        self._shown: str | None = None
        self._held: str | None = None

    def __call__(self, line: str) -> None:
        if not line.strip():
            return
        text = line if line.startswith(PREFIX) else f"{PREFIX}: {line}"
        with self._lock:
            if not is_count_line(line):
                self._note(text)
                return
            if text == self._shown:
                self._held = None  # the state shown is the latest again
                return
            now = self._clock()
            if self._shown_at is not None and now - self._shown_at < self._every_s:
                self._held = text
                return
            self._shown_at, self._shown, self._held = now, text, None
            self._sink(text)  # under the lock: lines from two threads keep their order

    def _note(self, text: str) -> None:
        """With the lock held: show a note at once, after the count held before it (if any)."""
        if self._held is not None:
            self._shown_at, self._shown = self._clock(), self._held
            self._sink(self._held)
            self._held = None
        self._sink(text)

    def finish(self) -> None:
        """Show the last count offered if it was held (the run's final state); nothing when it
        was already shown or no count came. A second call shows nothing."""
        with self._lock:
            text, self._held = self._held, None
            if text is not None:
                self._shown_at, self._shown = self._clock(), text
                self._sink(text)


__all__ = ["PREFIX", "PROGRESS_EVERY_S", "ThrottledProgress", "is_count_line"]
