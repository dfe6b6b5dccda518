"""Text from models cannot drive a terminal or the CI log: log_text, log_block and the command
line's guarded output."""

from __future__ import annotations

import io
import re
import sys

import pytest

from empath_gate.report.console import command_output, console_text, guarded_output, stop_commands_lines
from empath_gate.report.escape import log_block, log_text
from empath_gate.secrets import register

PAYLOAD = (
    "ok\n::error title=x::boom\n  ::add-mask::abc\r::warning::cr\u2028::notice::ls\n"
    "\x1b[31mred\x1b[0m \x1b]8;;http://e\x07link ##[set-output name=a]b\u202eevil\tend"
)


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.lstrip().startswith("::") or "##[" in line]


def test_log_text_neutralises_commands_and_escapes() -> None:
    out = log_text(PAYLOAD)
    assert _commands(out) == []
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", out)
    assert "\\::error title=x::boom" in out and "  \\::add-mask::abc" in out
    assert "\\::warning::cr" in out and "\\::notice::ls" in out and "#\\#[set-output" in out
    assert "\tend" in out and out.startswith("ok\n")
    assert log_text("a :: b\nplain") == "a :: b\nplain"


def test_log_block_wraps_under_github_actions_only() -> None:
    assert log_block("x\n::error::y", env={}) == "x\n\\::error::y"
    out = log_block("x\n::error::y", env={"GITHUB_ACTIONS": "true"})
    first, *body, last = out.splitlines()
    token = first.removeprefix("::stop-commands::")
    assert re.fullmatch("[0-9a-f]{32}", token) and last == f"::{token}::"
    assert body == ["x", "\\::error::y"]
    assert log_block("x", env={"GITHUB_ACTIONS": "true"}) != out  # a fresh token each time
    pair = stop_commands_lines({"GITHUB_ACTIONS": "true"})
    assert pair is not None and pair[1] == f"::{pair[0].removeprefix('::stop-commands::')}::"
    assert stop_commands_lines({}) is None


def test_console_text_redacts_then_neutralises() -> None:
    register(["console-canary-99"])
    assert console_text("::error::console-canary-99") == "\\::error::<redacted>"


def _guarded(env: dict[str, str], write: object) -> tuple[str, str]:
    out, err = io.StringIO(), io.StringIO()
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(sys, "stdout", out)
        mp.setattr(sys, "stderr", err)
        with guarded_output(env):
            write()  # type: ignore[operator]
        assert sys.stdout is out and sys.stderr is err
    return out.getvalue(), err.getvalue()


def test_guarded_output_outside_actions_is_inert_and_redacted() -> None:
    register(["guarded-canary-55"])

    def write() -> None:
        print("line one guarded-canary-55")
        sys.stdout.write("::err")  # a line start split over two writes
        sys.stdout.write("or::split\n")
        print(PAYLOAD, file=sys.stderr)

    out, err = _guarded({}, write)
    assert out == "line one <redacted>\n\\::error::split\n"
    assert _commands(err) == [] and "\x1b" not in err


def test_guarded_output_under_actions_is_one_block_and_lets_annotations_out() -> None:
    def write() -> None:
        print("model text\n::error::forged")
        print("progress", file=sys.stderr)
        with command_output():
            print("::error title=empath-gate::metric failed")
        print("more text")

    out, err = _guarded({"GITHUB_ACTIONS": "true"}, write)
    lines = out.splitlines()
    t1 = lines[0].removeprefix("::stop-commands::")
    assert lines[1:4] == ["model text", "\\::error::forged", f"::{t1}::"]
    assert lines[4] == "::error title=empath-gate::metric failed"
    t2 = lines[5].removeprefix("::stop-commands::")
    assert t2 != t1 and lines[6:] == ["more text", f"::{t2}::"]
    assert err.splitlines() == [f"::stop-commands::{t1}", "progress"]
