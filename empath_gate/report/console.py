"""What the command line prints: every line redacted of secrets and inert in a terminal or a CI
log, whichever command printed it.

:func:`guarded_output` replaces ``sys.stdout`` and ``sys.stderr`` for the duration of a command
with :class:`SafeStream` wrappers. Each complete line written goes out with its secrets taken
out (:func:`empath_gate.secrets.redact`) and made inert (:func:`~empath_gate.report.escape.log_text`:
no line starts with ``::``, no ``##[``, no escape or control character). Under GitHub Actions
the output is one block of possibly model or target text: the first line of either stream is
preceded by ``::stop-commands::<token>`` (one random token shared by both streams, so whichever
marker the runner reads first, the one ``::<token>::`` ends it) and the end of the command
prints ``::<token>::``. Workflow commands the tool means to send (annotations) are printed
inside :func:`command_output`, which ends the block first and lets the lines through redacted
but not neutralised.

Lines are buffered until their newline (or a flush), so a secret or a ``::`` line start is
never split between two writes.
"""

from __future__ import annotations

import contextlib
import io
import secrets as _random
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import TextIO

from empath_gate.report.escape import github_actions, log_text
from empath_gate.secrets import redact


class _Block:
    """The stop-commands block shared by the wrapped streams (``token`` None: none open)."""

    def __init__(self, actions: bool) -> None:
        self.actions = actions
        self.token: str | None = None
        self.opened: set[int] = set()
        self.lock = threading.RLock()


class SafeStream(io.TextIOBase):
    """A text stream writing to ``raw`` line by line, redacted and inert (module docstring)."""

    def __init__(self, raw: TextIO, block: _Block) -> None:
        super().__init__()
        self.raw = raw
        self._block = block
        self._pending = ""
        self._commands = False
        self._line_start = True

    # -- io.TextIOBase ---------------------------------------------------------------
    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.raw, "encoding", None) or "utf-8"

    def isatty(self) -> bool:
        return self.raw.isatty()

    def fileno(self) -> int:
        return self.raw.fileno()

    def writable(self) -> bool:
        return True

    def write(self, s: str) -> int:
        with self._block.lock:
            self._pending += s
            if "\n" in self._pending:
                head, _, self._pending = self._pending.rpartition("\n")
                self._emit(head + "\n")
        return len(s)

    def flush(self) -> None:
        with self._block.lock:
            if self._pending:
                text, self._pending = self._pending, ""
                self._emit(text)
            self.raw.flush()

    # -- the block -------------------------------------------------------------------
    def _raw_write(self, text: str) -> None:
        if text:
            self.raw.write(text)
            self._line_start = text.endswith("\n")

    def _marker(self, line: str) -> None:
        self._raw_write(("" if self._line_start else "\n") + line + "\n")

    def _emit(self, text: str) -> None:
        text = redact(text)
        if self._commands:
            self._raw_write(text)
            return
        text = log_text(text)
        b = self._block
        if b.actions and text.strip():
            if b.token is None:
                b.token = _random.token_hex(16)
                b.opened.clear()
            if id(self) not in b.opened:
                b.opened.add(id(self))
                self._marker(f"::stop-commands::{b.token}")
        self._raw_write(text)

    def end_block(self) -> None:
        """Flush, and print ``::<token>::`` when a stop-commands block is open."""
        with self._block.lock:
            self.flush()
            b = self._block
            if b.token is not None:
                self._marker(f"::{b.token}::")
                b.token = None
                b.opened.clear()
            self.raw.flush()


def console_text(text: str) -> str:
    """``text`` as any printed text must be: secrets taken out, then inert in a terminal or a CI
    log (:func:`~empath_gate.report.escape.log_text`); for output that does not go through
    :func:`guarded_output` (the pytest plugin's messages and terminal lines)."""
    return log_text(redact(text))


def stop_commands_lines(env: Mapping[str, str] | None = None) -> tuple[str, str] | None:
    """``("::stop-commands::<token>", "::<token>::")`` with a fresh random token under GitHub
    Actions, else None: the pair a caller prints around a block it does not write itself
    (pytest's failure sections)."""
    if not github_actions(env):
        return None
    token = _random.token_hex(16)
    return f"::stop-commands::{token}", f"::{token}::"


_active: list[tuple[SafeStream, SafeStream]] = []


@contextlib.contextmanager
def guarded_output(env: Mapping[str, str] | None = None) -> Iterator[None]:
    """Wrap ``sys.stdout``/``sys.stderr`` in :class:`SafeStream` for the block (module
    docstring); nested use keeps the outer wrappers. ``env``: where to look for
    ``GITHUB_ACTIONS`` (default: the environment)."""
    if isinstance(sys.stdout, SafeStream):
        yield
        return
    block = _Block(github_actions(env))
    old_out, old_err = sys.stdout, sys.stderr
    out, err = SafeStream(old_out, block), SafeStream(old_err, block)
    sys.stdout, sys.stderr = out, err
    _active.append((out, err))
    try:
        yield
    finally:
        _active.pop()
        with contextlib.suppress(Exception):
            err.flush()
            out.end_block()
        sys.stdout, sys.stderr = old_out, old_err


@contextlib.contextmanager
def command_output() -> Iterator[None]:
    """Let the workflow commands printed in the block through to the log (module docstring):
    the open stop-commands block is ended first, and lines are redacted but not neutralised.
    Outside :func:`guarded_output` nothing changes."""
    if not _active:
        yield
        return
    out, err = _active[-1]
    err.flush()
    out.end_block()
    out._commands = True
    try:
        yield
    finally:
        out.flush()
        out._commands = False
