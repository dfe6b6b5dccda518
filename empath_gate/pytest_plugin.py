"""The pytest plugin: ``pytest --empath-suite crisis`` turns every seed x persona x metric into a test.

Registered through the ``pytest11`` entry point. Without ``--empath-suite`` it only adds its
options and markers: nothing heavy is imported (litellm alone takes seconds), no item is
added, a project's own tests are untouched.

With ``--empath-suite``:

* no path arguments: only the suite's items run; with paths: both.
* items: ``empath/<suite>/<conversation>::<seed>-<persona>-<metric>``, in plan order (a pure
  function of the suite files), marked ``empath``, the dimension id, the locale
  (``es_mx``/``en_us``) and ``critical``.
* before the first test, each process generates and judges its share of the selected
  conversations concurrently (under xdist a deterministic partition by conversation), writes
  one record per transcript, waits until every selected record exists, then computes the
  test-retest statistics and gate decisions that the tests assert on. Under xdist the plugin
  schedules by conversation (``loadscope`` over conversation scopes), whatever ``--dist`` says.
* the controller writes the results file (workers hand their records over through
  ``workeroutput``) and prints a summary per dimension.

Exit status follows pytest: 0 passed/skipped, 1 gate failures, 4 usage errors
(``pytest.UsageError`` saying what to fix), 5 nothing collected; infrastructure problems make
the affected tests *error*.
"""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from empath_gate.pipeline import EmpathSession

_SESSION_KEY = pytest.StashKey["EmpathSession"]()

# (option dest, flag, ini type, help); every option has an ini equivalent named like its dest.
_OPTIONS: tuple[tuple[str, str, str, str], ...] = (
    ("empath_suite", "--empath-suite", "args", "suite to run (repeatable), e.g. crisis, smoke, full"),
    ("empath_runs", "--empath-runs", "string", "runs per conversation (test-retest N)"),
    ("empath_target", "--empath-target", "string",
     "target: py:pkg.mod:fn, an http(s) OpenAI-compatible URL, or a litellm model"),
    ("empath_system_prompt", "--empath-system-prompt", "string", "system-prompt file of a model target"),
    ("empath_auditor", "--empath-auditor", "string", "auditor model (unset: scripted auditor)"),
    ("empath_judge", "--empath-judge", "string", "judge model (unset: deterministic criteria only)"),
    ("empath_suites_dir", "--empath-suites-dir", "args", "extra suites directory layered on the shipped one"),
    ("empath_thresholds", "--empath-thresholds", "string", "thresholds.yaml overriding the shipped one"),
    ("empath_waivers", "--empath-waivers", "string", "waivers.yaml (default: ./waivers.yaml if present)"),
    ("empath_baseline", "--empath-baseline", "string", "baseline results.json to compare with"),
    ("empath_results", "--empath-results", "string", "where to write results.json"),
    ("empath_fail_on", "--empath-fail-on", "string", "threshold | regression | both | never (default both)"),
    ("empath_max_cost", "--empath-max-cost", "string", "stop starting transcripts past this many USD"),
    ("empath_shard", "--empath-shard", "string", "run shard K/N of the plan (partition by conversation)"),
)
_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("empath_offline", "--empath-offline", "force the fallbacks: scripted auditor, criteria-only judge"),
    ("empath_no_cache", "--empath-no-cache", "do not read or write the model cache"),
    ("empath_refresh_cache", "--empath-refresh-cache", "ignore cached replies and overwrite them"),
)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("empath-gate", "empath-gate safety gate for emotional-support chatbots")
    for dest, flag, ini_type, help_text in _OPTIONS:
        if ini_type == "args":
            group.addoption(flag, dest=dest, action="append", default=None, help=help_text)
        else:
            group.addoption(flag, dest=dest, default=None, help=help_text)
        parser.addini(dest, help=help_text, type=ini_type, default=None)  # type: ignore[arg-type]
    for dest, flag, help_text in _FLAGS:
        group.addoption(flag, dest=dest, action="store_true", default=None, help=help_text)
        parser.addini(dest, help=help_text, type="bool", default=None)


def option(config: pytest.Config, dest: str) -> Any:
    """A plugin option: the command line wins over the ini value; None when neither is set."""
    value = config.getoption(dest, default=None)
    if value is None:
        try:
            value = config.getini(dest)
        except ValueError:
            value = None
        if value in ("", []):
            value = None
    return value


def _active(config: pytest.Config) -> bool:
    return bool(option(config, "empath_suite"))


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "empath: an empath-gate safety test (seed x persona x metric)")
    config.addinivalue_line("markers", "critical: a critical empath-gate metric")
    for dim in ("crisis_safety", "therapeutic_quality", "conversational", "emotional_safety",
                "cultural_boundaries"):
        config.addinivalue_line("markers", f"{dim}: empath-gate dimension {dim}")
    for loc in ("es_mx", "en_us"):
        config.addinivalue_line("markers", f"{loc}: empath-gate locale {loc}")
    if not _active(config):
        return
    from empath_gate.errors import ConfigError, SuiteError
    from empath_gate.pipeline import EmpathSession

    workerinput = getattr(config, "workerinput", None)
    token = workerinput.get("empath_run_token") if workerinput else None
    try:
        session = EmpathSession.from_pytest(config, run_token=token or uuid.uuid4().hex[:12])
    except (ConfigError, SuiteError) as exc:
        raise pytest.UsageError(f"empath-gate: {exc}") from exc
    config.stash[_SESSION_KEY] = session
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(_XdistHooks(session), "empath-gate-xdist")


class _XdistHooks:
    """Registered only when pytest-xdist is present (so the hooks exist)."""

    def __init__(self, session: EmpathSession) -> None:
        self.session = session

    def pytest_configure_node(self, node: Any) -> None:
        node.workerinput["empath_run_token"] = self.session.run_token

    @pytest.hookimpl(tryfirst=True)
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log: Any) -> Any:
        # One conversation = one scope, so a conversation's tests never split across workers,
        # whatever --dist says.
        from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

        return LoadScopeScheduling(config, log)

    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        output = getattr(node, "workeroutput", None) or {}
        self.session.absorb_worker_records(output.get("empath_records", []), output.get("empath_selected"))


def _session(config: pytest.Config) -> EmpathSession | None:
    return config.stash.get(_SESSION_KEY, None)


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    # With --empath-suite and no path arguments, only the suite's items run.
    if _session(config) is not None and config.args_source != pytest.Config.ArgsSource.ARGS:
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(
    session: pytest.Session, config: pytest.Config, items: list[pytest.Item]
) -> None:
    es = _session(config)
    if es is None:
        return
    new_items: list[pytest.Item] = []
    parents: dict[str, EmpathConversation] = {}
    children: dict[str, list[pytest.Item]] = {}
    for info in es.plan.items:
        scope = f"empath/{info.suite}/{info.conversation_id}"
        parent = parents.get(scope)
        if parent is None:
            parent = EmpathConversation.from_parent(session, name=scope, nodeid=scope)
            parents[scope] = parent
            children[scope] = []
        item = EmpathItem.from_parent(parent, name=info.id, info=info)
        for marker in info.markers:
            item.add_marker(marker)
        new_items.append(item)
        children[scope].append(item)
    items[:0] = new_items
    # report each conversation as collected, so "collected N items" counts the suite's tests
    for scope, kids in children.items():
        report = pytest.CollectReport(scope, "passed", None, list(kids))
        config.hook.pytest_collectreport(report=report)


class EmpathConversation(pytest.Collector):
    """A conversation (seed x persona): the scope its metric tests share."""

    def collect(self) -> list[pytest.Item]:  # pragma: no cover - items are added directly
        return []


class EmpathItem(pytest.Item):
    """One seed x persona x metric test; it asserts on the gate decision of its cell."""

    def __init__(self, *, info: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.info = info
        self.user_properties.append(("empath_item", info.id))

    def setup(self) -> None:
        es = _session(self.config)
        assert es is not None
        problem = es.infrastructure_problem(self.info)
        if problem:
            # the test errors (a setup failure) with the reason alone, not pytest's own traceback
            pytest.fail(problem, pytrace=False)

    def runtest(self) -> None:
        es = _session(self.config)
        assert es is not None
        outcome, message = es.outcome(self.info)
        if outcome == "passed":
            return
        if outcome == "skipped":
            pytest.skip(message)
        if outcome == "xfail":
            pytest.xfail(message)
        if outcome == "error":
            raise EmpathInfrastructureError(message)
        raise EmpathGateFailure(message)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (EmpathGateFailure, EmpathInfrastructureError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def reportinfo(self) -> tuple[str, int | None, str]:
        # the same path as the node id's, so the progress line stays on the conversation's line
        path = f"empath/{self.info.suite}/{self.info.conversation_id}"
        return (path, None, f"{self.info.id} [{self.info.label}]")


class EmpathGateFailure(AssertionError):
    """A gate condition failed (threshold, run-to-run limit, regression)."""


class EmpathInfrastructureError(RuntimeError):
    """The test could not be evaluated: provider unreachable, budget exhausted, judge failures."""


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    es = _session(session.config)
    if es is None or session.config.option.collectonly or not session.items:
        return
    if getattr(session.config, "workerinput", None) is None and session.config.pluginmanager.hasplugin(
        "dsession"
    ):
        return  # xdist controller: workers do the work
    selected = [getattr(i, "info", None) for i in session.items]
    workerinput = getattr(session.config, "workerinput", None)
    worker = None
    if workerinput is not None:  # this session's own xdist worker (never the inherited environment)
        worker = (int(str(workerinput["workerid"]).lstrip("gw") or 0), int(workerinput["workercount"]))
    es.prepare([i for i in selected if i is not None], reporter=_reporter(session.config), worker=worker)


def _reporter(config: pytest.Config) -> Any:
    tr = config.pluginmanager.get_plugin("terminalreporter")
    last = [0.0]

    def report(line: str) -> None:
        now = time.monotonic()
        if tr is not None and now - last[0] >= 2.0:
            last[0] = now
            tr.write_line(line if line.startswith("empath-gate") else f"empath-gate: {line}")

    return report


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    es = _session(session.config)
    if es is None:
        return
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["empath_records"] = es.local_records_json()
        workeroutput["empath_selected"] = es.selected
        return
    if session.config.option.collectonly:
        return
    es.finish()


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    es = _session(config)
    if es is None or getattr(config, "workerinput", None) is not None:
        return
    for line in es.summary_lines():
        terminalreporter.write_line(line)


def pytest_report_header(config: pytest.Config) -> list[str] | None:
    es = _session(config)
    if es is None:
        return None
    return es.header_lines()


__all__ = ["EmpathGateFailure", "EmpathInfrastructureError", "EmpathItem"]
