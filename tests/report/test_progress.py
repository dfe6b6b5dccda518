"""The throttled progress printer shared by the ``run`` command and the pytest plugin: at most
one progress count per interval, never a blank line, the run's last count always shown exactly
once, and every other line (a note: a judge batch's status) always shown, in order."""

from __future__ import annotations

from empath_gate.conversation.plan_stats import PlanStats, ProgressLine
from empath_gate.report.progress import ThrottledProgress, is_count_line


class Clock:
    """A clock the test moves by hand (seconds)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def count(done: int, total: int, calls: int = 0, stopped: int = 0) -> ProgressLine:
    """The engine's progress count line for these totals."""
    return PlanStats(total=total, done=done, calls=calls, stopped=stopped).progress_line()


def make(every_s: float = 2.0) -> tuple[ThrottledProgress, list[str], Clock]:
    shown: list[str] = []
    clock = Clock()
    return ThrottledProgress(shown.append, every_s=every_s, clock=clock), shown, clock


def test_lines_inside_the_window_are_held_and_the_last_one_is_shown_at_the_end() -> None:
    progress, shown, clock = make()
    for done in range(1, 7):  # a fast run: every line within 2 s of the first
        progress(count(done, 6))
        clock.now += 0.1
    assert shown == [count(1, 6)]
    progress.finish()
    assert shown == [count(1, 6), count(6, 6)]
    progress.finish()  # a second end shows nothing more
    assert shown[-1] == count(6, 6) and len(shown) == 2


def test_a_last_line_already_shown_is_not_shown_again() -> None:
    progress, shown, clock = make()
    progress(count(1, 2))
    clock.now += 2.5
    progress(count(2, 2))
    progress.finish()
    assert shown == [count(1, 2), count(2, 2)]


def test_spacing_blank_lines_prefix_and_a_run_without_lines() -> None:
    progress, shown, clock = make()
    progress.finish()
    assert shown == []
    progress("judge batch submitted")  # a note, prefixed
    progress("   ")  # never shown, never held over a real line
    clock.now += 1.9
    progress(count(1, 3))  # the first count: shown, a note does not start the window
    clock.now += 0.2
    progress(count(2, 3))  # held
    progress("")
    progress.finish()
    assert shown == ["empath-gate: judge batch submitted", count(1, 3), count(2, 3)]


def test_the_final_totals_repeated_at_the_end_show_once_and_a_changed_total_shows_at_the_end() -> None:
    progress, shown, clock = make()
    progress(count(2, 2, calls=10))
    clock.now += 0.1
    progress(count(2, 2, calls=10))  # the final totals, unchanged
    progress.finish()
    assert shown == [count(2, 2, calls=10)]
    clock.now += 0.1
    progress(count(2, 2, calls=11))  # the last judge call settled since
    progress.finish()
    assert shown == [count(2, 2, calls=10), count(2, 2, calls=11)]


def test_a_held_line_superseded_by_the_line_shown_is_dropped() -> None:
    progress, shown, clock = make()
    progress(count(1, 3, stopped=1))
    clock.now += 0.1
    progress(count(1, 3, stopped=2))  # held
    progress(count(1, 3, stopped=1))  # the shown state is the latest again
    progress.finish()
    assert shown == [count(1, 3, stopped=1)]


def test_notes_are_never_held_and_keep_their_order_with_the_counts() -> None:
    # a judge batch's status lines come within the window of the last count: each one shows
    # at once, after the count held before it; only the counts are throttled
    progress, shown, clock = make()
    done = "empath-gate: judge batch b1: completed, 2 results"
    running = ("empath-gate: judge batch b2: in_progress (0 of 2 done): not finished; its transcripts "
               "stay pending, run collect again later")
    progress(count(1, 4))
    clock.now += 0.1
    progress(count(2, 4))  # held
    progress(done)
    progress(running)
    progress(running)  # a note is shown every time it comes
    clock.now += 0.1
    progress(count(3, 4))  # inside the window of the count shown before the notes: held
    progress(count(4, 4))
    progress.finish()
    assert shown == [count(1, 4), count(2, 4), done, running, running, count(4, 4)]


def test_only_the_engines_progress_count_is_a_count_line() -> None:
    assert is_count_line(count(1, 2))
    assert not is_count_line(str(count(1, 2)))  # the same text without its totals: a note
    assert not is_count_line("empath-gate: judge batch b1: submitted 2 judge requests")
