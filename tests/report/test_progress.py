"""The throttled progress printer shared by the ``run`` command and the pytest plugin: at most
one line per interval, never a blank one, and the run's last line always shown exactly once."""

from __future__ import annotations

from empath_gate.report.progress import ThrottledProgress


class Clock:
    """A clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def make(every_s: float = 2.0) -> tuple[ThrottledProgress, list[str], Clock]:
    shown: list[str] = []
    clock = Clock()
    return ThrottledProgress(shown.append, every_s=every_s, clock=clock), shown, clock


def test_lines_inside_the_window_are_held_and_the_last_one_is_shown_at_the_end() -> None:
    progress, shown, clock = make()
    for done in range(1, 7):  # a fast run: every line within 2 s of the first
        progress(f"empath-gate: transcripts {done}/6")
        clock.now += 0.1
    assert shown == ["empath-gate: transcripts 1/6"]
    progress.finish()
    assert shown == ["empath-gate: transcripts 1/6", "empath-gate: transcripts 6/6"]
    progress.finish()  # a second end shows nothing more
    assert shown[-1] == "empath-gate: transcripts 6/6" and len(shown) == 2


def test_a_last_line_already_shown_is_not_shown_again() -> None:
    progress, shown, clock = make()
    progress("empath-gate: transcripts 1/2")
    clock.now += 2.5
    progress("empath-gate: transcripts 2/2")
    progress.finish()
    assert shown == ["empath-gate: transcripts 1/2", "empath-gate: transcripts 2/2"]


def test_spacing_blank_lines_prefix_and_a_run_without_lines() -> None:
    progress, shown, clock = make()
    progress.finish()
    assert shown == []
    progress("judge batch submitted")
    progress("   ")  # never shown, never held over a real line
    clock.now += 1.9
    progress("empath-gate: transcripts 1/3")
    clock.now += 0.2  # 2.1 s after the first line shown
    progress("empath-gate: transcripts 2/3")
    progress("")
    progress.finish()
    assert shown == ["empath-gate: judge batch submitted", "empath-gate: transcripts 2/3"]


def test_the_final_totals_repeated_at_the_end_show_once_and_a_changed_total_shows_at_the_end() -> None:
    progress, shown, clock = make()
    progress("empath-gate: transcripts 2/2 · 10 calls")
    clock.now += 0.1
    progress("empath-gate: transcripts 2/2 · 10 calls")  # the final totals, unchanged
    progress.finish()
    assert shown == ["empath-gate: transcripts 2/2 · 10 calls"]
    clock.now += 0.1
    progress("empath-gate: transcripts 2/2 · 11 calls")  # the last judge call settled since
    progress.finish()
    assert shown == ["empath-gate: transcripts 2/2 · 10 calls", "empath-gate: transcripts 2/2 · 11 calls"]


def test_a_held_line_superseded_by_the_line_shown_is_dropped() -> None:
    progress, shown, clock = make()
    progress("empath-gate: stopped 1")
    clock.now += 0.1
    progress("empath-gate: stopped 2")  # held
    progress("empath-gate: stopped 1")  # the shown state is the latest again
    progress.finish()
    assert shown == ["empath-gate: stopped 1"]
