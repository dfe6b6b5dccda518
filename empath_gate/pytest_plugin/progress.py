"""What the plugin adds to pytest's terminal while a run goes on: its progress lines, and
result lines without pytest's blank progress lines.

* :func:`progress_reporter`: the engine's progress lines, throttled as on the command line
  (:class:`~empath_gate.report.progress.ThrottledProgress`: at most one every 2 s, never a
  blank one, the run's last line always), through the terminal reporter (on stderr when the
  reporter cannot take it, e.g. from the xdist controller's channel thread).
* :func:`mend_result_lines`: each conversation is one "file" of pytest's result lines
  (``empath/<suite>/<conversation> ....``), and conversation ids are long. When a line
  reaches the terminal's edge on its last test, pytest writes its progress (``[ 25%]``) and a
  newline, then, at the next file, writes the same progress again, right-aligned on an empty
  line, and a blank line before the next file's name. The wrapper starts the next conversation's
  line at once in that case (its progress was already written), so every line of the run's
  output is a result line with its progress, as for short file names.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from empath_gate.report.progress import ThrottledProgress


def progress_reporter(config: pytest.Config) -> ThrottledProgress:
    """A ``progress(line)`` callable for :func:`empath_gate.run.run_plan` (module docstring);
    call its ``finish()`` once the run ends so its last line is shown."""
    from empath_gate.report.console import console_text

    tr = config.pluginmanager.get_plugin("terminalreporter")

    def write(text: str) -> None:
        if tr is None:
            return
        try:
            tr.write_line(console_text(text))
        except Exception:
            print(console_text(text), file=sys.stderr, flush=True)

    return ThrottledProgress(write)


def mend_result_lines(config: pytest.Config) -> None:
    """Wrap the terminal reporter's ``write_fspath_result`` (module docstring); only the
    plugin's own tests (node ids ``empath/...``) are touched, and nothing when there is no
    terminal reporter or it has no such method."""
    tr: Any = config.pluginmanager.get_plugin("terminalreporter")
    original = getattr(tr, "write_fspath_result", None)
    writer = getattr(tr, "_tw", None)
    if original is None or writer is None or getattr(original, "_empath_mended", False):
        return

    def write_fspath_result(nodeid: str, res: str, **markup: bool) -> None:
        fspath = config.rootpath / nodeid.split("::", 1)[0]
        if (
            nodeid.startswith("empath/")
            and tr.currentfspath is not None
            and fspath != tr.currentfspath
            and writer.width_of_current_line == 0
        ):
            # the previous line ended at the edge with its progress: no second progress, no blank
            tr.currentfspath = fspath
            writer.write(_relative(tr, fspath) + " ")
        original(nodeid, res, **markup)

    write_fspath_result._empath_mended = True  # type: ignore[attr-defined]
    tr.write_fspath_result = write_fspath_result


def _relative(tr: Any, fspath: Any) -> str:
    return os.path.relpath(str(fspath), str(tr.startpath))


__all__ = ["mend_result_lines", "progress_reporter"]
