"""The collected tests: one item per seed x persona x metric under its conversation, and one per
suite check (``<suite>::<check>``) under its suite; each asserts on the gate's decision."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from empath_gate.pytest_plugin.session import EmpathSession

SESSION_KEY = pytest.StashKey["EmpathSession"]()


def session_of(config: pytest.Config) -> EmpathSession | None:
    """This pytest session's empath-gate state, or None without ``--empath-suite``."""
    return config.stash.get(SESSION_KEY, None)


class EmpathGateFailure(AssertionError):
    """A gate condition failed (threshold, run-to-run limit, regression)."""


class EmpathInfrastructureError(RuntimeError):
    """The test could not be evaluated: provider unreachable, budget exhausted, judge failures."""


def _conclude(outcome: str, message: str) -> None:
    """Turn a decision into pytest's outcome (pass, skip, xfail, error or failure); the message
    (it may quote a target's error or a judge) carries no secret and no CI log command."""
    if outcome == "passed":
        return
    from empath_gate.report.console import console_text

    message = console_text(message)
    if outcome == "skipped":
        pytest.skip(message)
    if outcome == "xfail":
        pytest.xfail(message)
    if outcome == "error":
        raise EmpathInfrastructureError(message)
    raise EmpathGateFailure(message)


class EmpathScope(pytest.Collector):
    """A conversation (``empath/<suite>/<conversation>``) or a suite (``empath/<suite>``): the
    scope its tests share."""

    def collect(self) -> list[pytest.Item]:  # pragma: no cover - items are added directly
        return []


class _EmpathTest(pytest.Item):
    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> str:
        if isinstance(excinfo.value, (EmpathGateFailure, EmpathInfrastructureError)):
            return str(excinfo.value)
        return str(super().repr_failure(excinfo))

    def _session(self) -> EmpathSession:
        es = session_of(self.config)
        assert es is not None
        return es


class EmpathItem(_EmpathTest):
    """One seed x persona x metric test; it asserts on the gate decision of its cell."""

    def __init__(self, *, info: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.info = info
        self.user_properties.append(("empath_item", info.id))

    def setup(self) -> None:
        problem = self._session().infrastructure_problem(self.info)
        if problem:
            from empath_gate.report.console import console_text

            # the test errors (a setup failure) with the reason alone, not pytest's own traceback
            pytest.fail(console_text(problem), pytrace=False)

    def runtest(self) -> None:
        es = self._session()
        self.user_properties.extend(es.properties(self.info))  # into the JUnit XML
        _conclude(*es.outcome(self.info))

    def reportinfo(self) -> tuple[str, int | None, str]:
        # the same path as the node id's, so the progress line stays on the conversation's line
        path = f"empath/{self.info.suite}/{self.info.conversation_id}"
        return (path, None, f"{self.info.id} [{self.info.label}]")


class EmpathCheckItem(_EmpathTest):
    """One suite check ``<suite>::<check>``; it asserts on the check's decision."""

    def __init__(self, *, check_id: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.check_id = check_id
        self.user_properties.append(("empath_check", check_id))

    def runtest(self) -> None:
        _conclude(*self._session().check_outcome(self.check_id))

    def reportinfo(self) -> tuple[str, int | None, str]:
        suite = self.check_id.split("::", 1)[0]
        return (f"empath/{suite}", None, self.check_id)


def make_items(
    session: pytest.Session, es: EmpathSession
) -> tuple[list[pytest.Item], dict[str, list[pytest.Item]]]:
    """Every test of the plan, in plan order (conversation tests, then each suite's checks), and
    the items per scope node id."""
    from empath_gate.gate.checks import applicable_checks

    items: list[pytest.Item] = []
    scopes: dict[str, EmpathScope] = {}
    children: dict[str, list[pytest.Item]] = {}

    def scope(nodeid: str) -> EmpathScope:
        if nodeid not in scopes:
            scopes[nodeid] = EmpathScope.from_parent(session, name=nodeid, nodeid=nodeid)
            children[nodeid] = []
        return scopes[nodeid]

    for info in es.setup.plan.items:
        parent = scope(f"empath/{info.suite}/{info.conversation_id}")
        item = EmpathItem.from_parent(parent, name=info.id, info=info)
        for marker in info.markers:
            item.add_marker(marker)
        items.append(item)
        children[parent.nodeid].append(item)
    for suite in dict.fromkeys(i.suite for i in es.setup.plan.items):
        parent = scope(f"empath/{suite}")
        st = es.setup.settings
        paired = es.setup.instrument.suite(suite).personas.cooperative_pairing
        llm_auditor = bool(st.auditor.model) and not st.offline
        for check in applicable_checks(st.judge.model, es.setup.instrument.thresholds, suite, paired=paired,
                                       llm_auditor=llm_auditor, annotator=st.dynamics_annotator):
            chk = EmpathCheckItem.from_parent(parent, name=check, check_id=f"{suite}::{check}")
            chk.add_marker("empath")
            items.append(chk)
            children[parent.nodeid].append(chk)
    return items, children
