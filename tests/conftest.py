"""Every test starts with no configured input limits: loading settings sets them for the whole
process (`bounded.configure_limits`), and a later test would read them instead of its environment.

Ctrl-C reaches the test process and the processes it starts, however the suite was launched
(:func:`pytest_configure`)."""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator

import pytest

from empath_gate import bounded


def pytest_configure(config: pytest.Config) -> None:
    """Put Python's SIGINT handler back when the suite starts with SIGINT ignored. A shell starts
    a background job without job control (``make test &`` in a script) with SIGINT ignored, an
    ignored signal stays ignored in every process started from it, and the tests that press
    Ctrl-C (``signal.raise_signal``, ``Popen.send_signal``) would see nothing happen. Runs in
    each process pytest starts (xdist's workers too), in its main thread."""
    del config
    in_main = threading.current_thread() is threading.main_thread()
    if in_main and signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _limits_from_the_environment() -> Iterator[None]:
    bounded.configure_limits(None)
    yield
    bounded.configure_limits(None)
