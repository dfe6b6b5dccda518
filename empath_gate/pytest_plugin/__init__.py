"""The pytest plugin: ``pytest --empath-suite crisis`` turns every seed x persona x metric into a test.

Registered through the ``pytest11`` entry point. Without ``--empath-suite`` it only adds its
options and markers: nothing heavy is imported (litellm alone takes seconds), no item is added,
a project's own tests are untouched. The plugin is split by process role, as pytest-xdist's is:

* hooks (this module): options (:mod:`.options`, generated from the option table), markers,
  collection (:mod:`.items`), and dispatch to the role;
* single process: generate and judge every selected conversation, decide, run the tests, write
  the artifacts (:mod:`.session`, over the library entry point :mod:`empath_gate.run`);
* xdist controller (:mod:`.controller`, :mod:`.scheduler`): slots, the channel, the artifacts;
* xdist worker (:mod:`.worker`): its slot's share, then every decision with all records.

Items: ``empath/<suite>/<conversation>::<seed>-<persona>-<metric>`` in plan order, marked
``empath``, the dimension id, the locale (``es_mx``/``en_us``) and ``critical``; then each
suite's checks ``empath/<suite>::<check>``. Exit status follows pytest: 0 passed/skipped,
1 gate failures, 4 usage errors (``pytest.UsageError`` saying what to fix), 5 nothing collected;
infrastructure problems make the affected tests *error*.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from empath_gate.pytest_plugin.items import (
    SESSION_KEY,
    EmpathGateFailure,
    EmpathInfrastructureError,
    EmpathItem,
    make_items,
    session_of,
)
from empath_gate.pytest_plugin.options import add_options, selection

if TYPE_CHECKING:
    from empath_gate.report.progress import ThrottledProgress

_CONTROLLER_KEY = pytest.StashKey[Any]()
DIMENSION_MARKERS = (
    "crisis_safety",
    "therapeutic_quality",
    "conversational",
    "emotional_safety",
    "cultural_boundaries",
)


def pytest_addoption(parser: pytest.Parser) -> None:
    add_options(parser)


def _active(config: pytest.Config) -> bool:
    return bool(selection(config, "suites"))


def _xdist_controller(config: pytest.Config) -> bool:
    return getattr(config, "workerinput", None) is None and config.pluginmanager.hasplugin("dsession")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "empath: an empath-gate safety test (seed x persona x metric)")
    config.addinivalue_line("markers", "critical: a critical empath-gate metric")
    for dim in DIMENSION_MARKERS:
        config.addinivalue_line("markers", f"{dim}: empath-gate dimension {dim}")
    for loc in ("es_mx", "en_us"):
        config.addinivalue_line("markers", f"{loc}: empath-gate locale {loc}")
    if not _active(config):
        return
    from empath_gate.errors import ConfigError, SuiteError, printed
    from empath_gate.judging.hygiene import check_judge_hygiene
    from empath_gate.llm.local import check_installed
    from empath_gate.pytest_plugin.session import EmpathSession

    try:
        es = EmpathSession.from_pytest(config)
        if not config.option.collectonly:  # a missing extra is a usage error before any transcript
            check_installed(es.setup.settings)
            if getattr(config, "workerinput", None) is None:  # judge-batch settings: once, here
                _check_run(config, es)
        check_judge_hygiene(es.setup.settings)  # strict_families: a usage error now
    except (ConfigError, SuiteError) as exc:
        from empath_gate.report.console import console_text

        raise pytest.UsageError(console_text(f"empath-gate: {printed(exc)}")) from exc
    config.stash[SESSION_KEY] = es
    inst = es.setup.instrument
    for group in (*inst.dimensions, *inst.families):  # the instrument's groups, team layers included
        if group.id not in DIMENSION_MARKERS:
            config.addinivalue_line("markers", f"{group.id}: empath-gate metric group {group.label}")
    if getattr(config, "workerinput", None) is None:
        config.pluginmanager.register(_StopCommands(), "empath-gate-stop-commands")


def _check_run(config: pytest.Config, es: Any) -> None:
    """The run's usage errors found before any transcript (:func:`empath_gate.run.check_run`),
    and batch judging under pytest-xdist workers (``-n``). Raises ConfigError."""
    from empath_gate.errors import ConfigError
    from empath_gate.run import check_run

    if es.setup.settings.judge_batch != "off" and getattr(config.option, "numprocesses", None):
        from empath_gate.judging.batch_mode import XDIST_MESSAGE

        raise ConfigError(XDIST_MESSAGE)
    check_run(es.setup)


def pytest_sessionstart(session: pytest.Session) -> None:
    # xdist's controller ("dsession") exists once every pytest_configure ran, and starts its
    # workers in its own (trylast) pytest_sessionstart: the controller's hooks come in between.
    config = session.config
    es = session_of(config)
    if es is None or getattr(config, "workerinput", None) is not None:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and not _header_shown(reporter):  # else pytest_report_header says it
        for line in _warnings(es, hygiene=False):
            reporter.write_line(line)
    if config.option.collectonly:
        return
    from empath_gate.pytest_plugin.progress import mend_result_lines

    mend_result_lines(config)
    if not _xdist_controller(config):
        return
    from xdist.workermanage import parse_tx_spec_config  # type: ignore[import-untyped]

    from empath_gate.pytest_plugin.controller import Controller

    controller = Controller(es, len(parse_tx_spec_config(config)), progress=_reporter(config))
    config.stash[_CONTROLLER_KEY] = controller
    config.pluginmanager.register(_XdistControllerHooks(controller), "empath-gate-xdist")


class _XdistControllerHooks:
    """Registered only on an xdist controller (so the xdist hooks exist)."""

    def __init__(self, controller: Any) -> None:
        self.controller = controller

    def pytest_configure_node(self, node: Any) -> None:
        self.controller.pytest_configure_node(node)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        self.controller.pytest_testnodedown(node, error)

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        from empath_gate.pytest_plugin.controller import make_scheduler

        return make_scheduler(self.controller, config, log)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # With --empath-suite and no path arguments, only the suite's items run.
    if session_of(config) is not None and config.args_source != pytest.Config.ArgsSource.ARGS:
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    es = session_of(config)
    if es is None:
        return
    new_items, children = make_items(session, es)
    items[:0] = new_items
    # report each scope as collected, so "collected N items" counts the suite's tests
    for scope, kids in children.items():
        config.hook.pytest_collectreport(report=pytest.CollectReport(scope, "passed", None, list(kids)))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    es = session_of(session.config)
    if (
        es is None
        or session.config.option.collectonly
        or not session.items
        or _xdist_controller(session.config)
    ):
        return
    infos = [i.info for i in session.items if isinstance(i, EmpathItem)]
    workerinput = getattr(session.config, "workerinput", None)
    if workerinput is not None and "empath_slot" in workerinput:
        from empath_gate.pytest_plugin.worker import run_worker

        run_worker(es, infos, workerinput)
        return
    progress = _reporter(session.config)
    try:
        es.generate(es.conversations(infos), progress)
    finally:  # the run's last progress line, when the throttle held it
        progress.finish()
    if es.error is None:
        es.decide()


def _reporter(config: pytest.Config) -> ThrottledProgress:
    from empath_gate.pytest_plugin.progress import progress_reporter

    return progress_reporter(config)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    es = session_of(session.config)
    if es is None or getattr(session.config, "workerinput", None) is not None:
        return
    if session.config.option.collectonly:
        return
    controller = session.config.stash.get(_CONTROLLER_KEY, None)
    if controller is not None:
        controller.finish()
        if controller.lost and session.exitstatus == 0:
            # lost conversations' tests may never have run: the session must not end green
            session.exitstatus = pytest.ExitCode.TESTS_FAILED
        return
    es.finish()


class _StopCommands:
    """Under GitHub Actions, pytest's error and failure sections, the empath-gate summary and
    the short test summary (all of which quote model and target text) print as one
    stop-commands block (:func:`empath_gate.report.console.stop_commands_lines`)."""

    @pytest.hookimpl(wrapper=True, tryfirst=True)
    def pytest_terminal_summary(self, terminalreporter: Any) -> Any:
        from empath_gate.report.console import stop_commands_lines

        pair = stop_commands_lines()
        if pair is not None:
            terminalreporter.write_line(pair[0])
        try:
            return (yield)
        finally:
            if pair is not None:
                terminalreporter.write_line(pair[1])


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    from empath_gate.report.console import console_text

    es = session_of(config)
    if es is None or getattr(config, "workerinput", None) is not None:
        return
    controller = config.stash.get(_CONTROLLER_KEY, None)
    if controller is not None:
        for line in controller.summary_lines():
            terminalreporter.write_line(console_text(line))
    for line in es.summary_lines():
        terminalreporter.write_line(console_text(line))


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    es = session_of(config)
    if es is None:
        return None
    from empath_gate.report.console import console_text
    from empath_gate.run import header_lines

    return [console_text(line) for line in header_lines(es.setup)] + _warnings(es, hygiene=True)


def _header_shown(reporter: Any) -> bool:
    """Whether pytest prints the report header (not under ``-q`` nor ``--no-header``)."""
    return bool(getattr(reporter, "showheader", True)) and not getattr(reporter, "no_header", False)


def _warnings(es: Any, *, hygiene: bool) -> list[str]:
    """The run's warnings, each once and on one line (not a Python warning per process): the
    judge-hygiene problems (``hygiene``, header only) and runs below a tested metric's
    ``min_judged_runs`` (:func:`empath_gate.run.short_runs`; in the header, or at session start
    when pytest prints no header)."""
    from empath_gate.judging.hygiene import check_judge_hygiene
    from empath_gate.report.console import console_text
    from empath_gate.run import short_runs

    problems = list(check_judge_hygiene(es.setup.settings)) if hygiene else []
    short = short_runs(es.setup, "--empath-runs")
    if short is not None:
        problems.append(short)
    return [console_text(f"empath-gate: warning: {p}") for p in problems]


__all__ = ["EmpathGateFailure", "EmpathInfrastructureError", "EmpathItem"]
