"""The controller-owned channel of an xdist run: workers hand their records to the controller
and wait there for everyone's, so every worker decides with all records.

A TCP server on 127.0.0.1 (an ephemeral port), owned by the controller, speaking one JSON
object per line. Every message carries the run's random token; a connection with another token
is closed. Messages:

* worker -> controller: ``hello`` (worker id, slot, the selected test ids, the selected
  conversations in plan order), ``progress`` (a line to print; a progress line of the engine
  also carries the slot and its share's totals, which the controller adds up over the slots
  heard from so far, so the last line tells the whole run), ``records`` (the slot's records as plain JSON);
* controller -> worker: ``all`` (every record of the run) once every slot has delivered, or
  ``lost`` (the conversations of a slot whose worker died with no replacement, and why).

The controller answers a waiting worker at most :data:`LOST_AFTER_S` seconds after a worker
died without a replacement, so a run never outlives a dead worker by more than a minute.
"""

from __future__ import annotations

import json
import socket
import socketserver
import sys
import threading
from collections.abc import Callable
from typing import Any

from empath_gate.bounded import well_formed

LOST_AFTER_S = 20.0
"""Seconds the controller waits, after a worker died, for a replacement to take its slot."""
MAX_LINE = 512 * 1024 * 1024
"""Largest message accepted (bytes): the records of a whole run as JSON."""

Handler = Callable[[dict[str, Any], "Connection"], None]


class Connection:
    """One worker's connection, seen from the controller: :meth:`send` is thread-safe."""

    def __init__(self, wfile: Any) -> None:
        self._wfile = wfile
        self._lock = threading.Lock()
        self.closed = False

    def send(self, message: dict[str, Any]) -> None:
        """Send one message; a closed connection (a dead worker) is ignored."""
        data = (well_formed(json.dumps(message, ensure_ascii=False)) + "\n").encode("utf-8")
        with self._lock:
            if self.closed:
                return
            try:
                self._wfile.write(data)
                self._wfile.flush()
            except (OSError, ValueError):  # the worker went away (ValueError: file closed meanwhile)
                self.closed = True


class ChannelServer:
    """The controller's server: ``handler(message, connection)`` runs for every message, on the
    connection's own thread."""

    def __init__(self, token: str, handler: Handler) -> None:
        self.token = token
        outer = self

        class _Req(socketserver.StreamRequestHandler):
            def handle(self) -> None:
                conn = Connection(self.wfile)
                try:
                    for raw in self.rfile:
                        if len(raw) > MAX_LINE:
                            return
                        msg = json.loads(raw)
                        if not isinstance(msg, dict) or msg.get("token") != outer.token:
                            return
                        try:
                            handler(msg, conn)
                        except Exception as exc:  # a handler bug must not cut a worker off
                            print(f"empath-gate: channel: {type(exc).__name__}: {exc}", file=sys.stderr)
                except (OSError, ValueError):
                    return
                finally:
                    conn.closed = True

        class _Server(socketserver.ThreadingTCPServer):
            daemon_threads = True
            allow_reuse_address = True

        self._server = _Server(("127.0.0.1", 0), _Req)
        self.address: tuple[str, int] = self._server.server_address[:2]  # type: ignore[assignment]
        self._thread = threading.Thread(target=self._server.serve_forever, name="empath-channel", daemon=True)
        self._thread.start()

    def close(self) -> None:
        """Stop serving (idempotent)."""
        self._server.shutdown()
        self._server.server_close()


class ChannelClient:
    """A worker's end: :meth:`send` messages, :meth:`receive` the controller's answer."""

    def __init__(self, address: tuple[str, int], token: str, timeout_s: float = 30.0) -> None:
        self.token = token
        self._sock = socket.create_connection(address, timeout=timeout_s)
        self._sock.settimeout(None)
        self._rfile = self._sock.makefile("rb")
        self._lock = threading.Lock()

    def send(self, message: dict[str, Any]) -> None:
        """Send one message (with the token)."""
        text = json.dumps({**message, "token": self.token}, ensure_ascii=False)
        data = (well_formed(text) + "\n").encode("utf-8")
        with self._lock:
            self._sock.sendall(data)

    def receive(self) -> dict[str, Any]:
        """The next message from the controller; ConnectionError when the controller is gone."""
        raw = self._rfile.readline()
        if not raw:
            raise ConnectionError("the xdist controller closed the empath-gate channel")
        msg = json.loads(raw)
        if not isinstance(msg, dict):
            raise ConnectionError("the empath-gate channel sent something that is not a message")
        return msg

    def close(self) -> None:
        """Close the connection."""
        try:
            self._rfile.close()
        finally:
            self._sock.close()
