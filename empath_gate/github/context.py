"""The GitHub Actions context empath-gate needs, and the Action's inputs mapped to pytest flags.

Read from the environment the runner sets (GitHub Actions documentation, "Variables"):
``GITHUB_API_URL`` (default ``https://api.github.com``; GitHub Enterprise Server sets its
own, tests point it at a fake server), ``GITHUB_REPOSITORY`` (``owner/name``),
``GITHUB_EVENT_NAME``, ``GITHUB_EVENT_PATH`` (the webhook payload as JSON),
``GITHUB_SERVER_URL``, ``GITHUB_RUN_ID``. The token comes from ``GITHUB_TOKEN`` (or
``GH_TOKEN``); it is kept out of every ``repr`` and never printed.

A pull request is *from a fork* when the payload's ``pull_request.head.repo.full_name``
differs from ``pull_request.base.repo.full_name`` (or the head repository was deleted). Such
a run gets a read-only token and no secrets (GitHub Actions documentation, "Events that
trigger workflows: pull_request", workflows in forked repositories). The Action's ``fork-pr``
input decides what happens then (:data:`FORK_PR_POLICIES`, :func:`fork_decision`): by
default the job fails as not evaluated, so a required check never passes unevaluated.

The composite Action passes each input it maps as an environment variable
``EMPATH_INPUT_<NAME>`` (upper case, ``-`` as ``_``), never the GitHub token, and runs
``python -m empath_gate.github.context pytest-args`` to get the pytest command line
(:func:`action_args`), one argument per NUL-terminated record.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empath_gate.bounded import read_json
from empath_gate.errors import ConfigError
from empath_gate.settings.options import OptionSpec, action_inputs

DEFAULT_API_URL = "https://api.github.com"
ACTION_INPUTS: tuple[str, ...] = tuple(
    o.action for o in action_inputs() if o.action and o.action != "github-token"
)
"""The Action inputs read from ``EMPATH_INPUT_*``: the option table's (``github-token`` is
deliberately absent)."""

FORK_PR_POLICIES: tuple[str, ...] = ("fail", "skip", "run")
"""Values of the ``fork-pr`` input, default first: ``fail`` the job as not evaluated, ``skip``
(opt-in) succeed without evaluating, ``run`` the suite anyway (e.g. fully offline)."""

FORK_NOT_EVALUATED = "not evaluated: a pull request from a fork has no secrets"
"""The one-line verdict of a fork's pull request that did not run (summary, annotation, log)."""

_SLUG = re.compile(r"^[a-z0-9]+(?:[_-][a-z0-9]+)*$")
_SHARD = re.compile(r"^(\d+)/(\d+)$")
_TRUE = ("true", "yes", "1", "on")
_FALSE = ("false", "no", "0", "off", "")


@dataclass(frozen=True)
class GitHubContext:
    """What a step knows about its run. ``pr_number`` is ``None`` outside pull-request events;
    ``fork`` is True for a pull request whose head repository is not the base repository."""

    api_url: str = DEFAULT_API_URL
    repository: str | None = None
    event_name: str | None = None
    pr_number: int | None = None
    fork: bool = False
    server_url: str = "https://github.com"
    run_id: str | None = None
    token: str | None = field(default=None, repr=False)

    @property
    def run_url(self) -> str | None:
        """``<server>/<repo>/actions/runs/<id>`` (where the artifacts are), when known."""
        if self.repository and self.run_id:
            return f"{self.server_url.rstrip('/')}/{self.repository}/actions/runs/{self.run_id}"
        return None


def is_fork_pull_request(payload: Mapping[str, Any]) -> bool:
    """True when the payload is a pull request whose head repository differs from its base
    repository, or whose head repository is gone (``null``). False for other events."""
    pr = payload.get("pull_request")
    if not isinstance(pr, Mapping):
        return False
    head, base = pr.get("head"), pr.get("base")
    head_repo = head.get("repo") if isinstance(head, Mapping) else None
    base_repo = base.get("repo") if isinstance(base, Mapping) else None
    if not isinstance(head_repo, Mapping):
        return True
    if not isinstance(base_repo, Mapping):
        return False
    return bool(head_repo.get("full_name") != base_repo.get("full_name"))


def pull_request_number(payload: Mapping[str, Any]) -> int | None:
    """The pull-request number of a ``pull_request``/``pull_request_target`` payload (or an
    ``issue_comment`` on a pull request), else ``None``."""
    pr = payload.get("pull_request")
    if isinstance(pr, Mapping) and isinstance(pr.get("number"), int):
        return int(pr["number"])
    if isinstance(payload.get("number"), int) and isinstance(pr, Mapping):
        return int(payload["number"])
    issue = payload.get("issue")
    if (
        isinstance(issue, Mapping)
        and isinstance(issue.get("pull_request"), Mapping)
        and isinstance(issue.get("number"), int)
    ):
        return int(issue["number"])
    return None


def read_event(path: str | os.PathLike[str] | None) -> dict[str, Any]:
    """The event payload at ``path`` (``GITHUB_EVENT_PATH``); ``{}`` when unset, missing or
    not a JSON object."""
    if not path:
        return {}
    try:
        data = read_json(Path(path))
    except (OSError, ValueError, ConfigError):  # ConfigError: over an input limit
        return {}
    return data if isinstance(data, dict) else {}


def load_context(env: Mapping[str, str] | None = None) -> GitHubContext:
    """The context from ``env`` (default: ``os.environ``); see the module docstring."""
    e = os.environ if env is None else env
    payload = read_event(e.get("GITHUB_EVENT_PATH"))
    return GitHubContext(
        api_url=(e.get("GITHUB_API_URL") or DEFAULT_API_URL).rstrip("/"),
        repository=e.get("GITHUB_REPOSITORY") or None,
        event_name=e.get("GITHUB_EVENT_NAME") or None,
        pr_number=pull_request_number(payload),
        fork=is_fork_pull_request(payload),
        server_url=e.get("GITHUB_SERVER_URL") or "https://github.com",
        run_id=e.get("GITHUB_RUN_ID") or None,
        token=e.get("GITHUB_TOKEN") or e.get("GH_TOKEN") or None,
    )


# ------------------------------------------------------------------------------ forks


@dataclass(frozen=True)
class ForkDecision:
    """What the Action does for this event: ``policy`` is the validated ``fork-pr`` value,
    ``skip`` is True when the suite does not run (a fork under ``fail`` or ``skip``) and
    ``fail`` is True when the job must then fail (``fail``)."""

    policy: str
    skip: bool
    fail: bool


def fork_policy(value: str) -> str:
    """The ``fork-pr`` input, validated: one of :data:`FORK_PR_POLICIES` (surrounding space and
    case ignored); empty means the default ``fail``. Raises ConfigError naming the input."""
    v = value.strip().lower() or FORK_PR_POLICIES[0]
    if v not in FORK_PR_POLICIES:
        raise ConfigError(
            f"action input 'fork-pr': {value.strip()!r}; use one of {', '.join(FORK_PR_POLICIES)} "
            "(fail is the default; skip passes the check without evaluating)"
        )
    return v


def fork_decision(fork: bool, policy: str) -> ForkDecision:
    """The decision for a run that is (``fork``) or is not a fork's pull request under the
    ``fork-pr`` input ``policy`` (validated by :func:`fork_policy`, so a typo fails every run,
    not only the first fork's). Not a fork, or ``run``: the suite runs."""
    p = fork_policy(policy)
    skip = fork and p != "run"
    return ForkDecision(policy=p, skip=skip, fail=skip and p == "fail")


def fork_not_evaluated_reason(policy: str) -> str:
    """The job summary's explanation for a fork's pull request that did not run under
    ``policy`` (``fail`` or ``skip``)."""
    why = (
        f"{FORK_NOT_EVALUATED}. GitHub runs a fork's pull_request workflow with a read-only token "
        "and without the repository's secrets, so the suite did not run."
    )
    if fork_policy(policy) == "skip":
        return (
            f"{why} This job still succeeds because the workflow sets fork-pr: skip: a required "
            "check on it passes although nothing was evaluated. A maintainer can evaluate the "
            "change safely (docs/github.md, Pull requests from forks)."
        )
    return (
        f"{why} The job fails so that a required check never passes unevaluated. A maintainer can "
        "evaluate the change safely (docs/github.md, Pull requests from forks); fork-pr: skip makes "
        "this job succeed instead."
    )


# ------------------------------------------------------------------------------ action inputs


def parse_bool(name: str, value: str) -> bool:
    """``true/yes/1/on`` -> True, ``false/no/0/off`` or empty -> False (case-insensitive);
    raises ConfigError naming the input otherwise."""
    v = value.strip().lower()
    if v in _TRUE:
        return True
    if v in _FALSE:
        return False
    raise ConfigError(f"action input {name!r}: {value!r} is not a boolean; use true or false")


def _single_line(name: str, value: str) -> str:
    v = value.strip()
    if any(ch in v for ch in "\r\n\0"):
        raise ConfigError(f"action input {name!r} must be one line")
    return v


def _setting_arg(o: OptionSpec, raw: str) -> str | None:
    """``--empath-<flag>=<value>`` for an Action input that sets a setting, checked by the same
    conversion and bounds as every other front-end's (None: a false switch)."""
    from empath_gate.settings.load import load_settings

    try:
        settings = load_settings(pyproject=None, env={}, overrides={o.key: raw})
    except ConfigError as exc:
        raise ConfigError(f"action input {o.action!r}: {raw!r} is not valid ({exc})") from None
    if o.kind == "bool":
        return o.pytest_flag if getattr(settings, o.key) else None
    return f"{o.pytest_flag}={raw}"


_MAPPED_APART = frozenset({"suite", "shard", "baseline", "results-dir"})
"""Action inputs whose pytest argument is not a plain ``--empath-<flag>=<value>``."""


def action_args(
    inputs: Mapping[str, str],
    *,
    baseline_path: str | None = None,
    results_path: str | None = None,
) -> list[str]:
    """The pytest command line (after ``python -m pytest``) for the Action's ``inputs``.

    The mapping is the option table's (:func:`empath_gate.settings.options.action_inputs`):
    each input that sets a setting becomes ``--empath-<flag>=<value>`` (a true switch the bare
    flag), checked by the settings' own conversion and bounds; empty inputs are left out.
    Apart: ``suite`` (required; several ids separated by commas or spaces) -> one
    ``--empath-suite=ID`` each; ``shard`` (``K/N``, 1 <= K <= N); the baseline is
    ``baseline_path`` (the Action resolves an artifact name to a file first) else the
    ``baseline`` input when it names a ``.json`` file; ``results_path`` (default
    ``<results-dir>/results.json``, ``results-dir`` defaulting to ``empath-results``) ->
    ``--empath-results``. Values are joined to their flag with ``=`` so none can be read as
    another flag. Inputs only the Action's own steps read (``comment``, ``fork-pr``,
    ``python-version``, the token...) are not pytest's business.

    Raises ConfigError naming the input and the fix for a missing suite or a malformed value.
    """
    from empath_gate.settings.options import action_inputs

    def get(name: str) -> str:
        return _single_line(name, inputs.get(name, "") or "")

    suites = [s for s in re.split(r"[,\s]+", get("suite")) if s]
    if not suites:
        raise ConfigError("action input 'suite' is required, e.g. suite: crisis")
    args: list[str] = []
    for s in suites:
        if not _SLUG.match(s):
            raise ConfigError(
                f"action input 'suite': {s!r} is not a suite id (lowercase letters, digits, - or _)"
            )
        args.append(f"--empath-suite={s}")
    for o in action_inputs():
        if o.scope != "setting" or o.action in _MAPPED_APART or o.action is None:
            continue
        raw = get(o.action)
        if o.choices:
            raw = raw.lower()
        arg = _setting_arg(o, raw) if raw else None
        if arg:
            args.append(arg)
    shard = get("shard")
    if shard:
        m = _SHARD.match(shard)
        if m is None or not 1 <= int(m.group(1)) <= int(m.group(2)):
            raise ConfigError(f"action input 'shard': {shard!r}; use K/N with 1 <= K <= N, e.g. 2/4")
        args.append(f"--empath-shard={int(m.group(1))}/{int(m.group(2))}")
    baseline = baseline_path or (get("baseline") if get("baseline").endswith(".json") else "")
    if baseline:
        args.append(f"--empath-baseline={baseline}")
    if results_path is None:
        folder = get("results-dir") or "empath-results"
        results_path = f"{folder.rstrip('/')}/results.json"
    args.append(f"--empath-results={results_path}")
    return args


def inputs_from_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Action inputs passed as ``EMPATH_INPUT_<NAME>`` variables (see the module
    docstring), keyed by their input names; absent ones are left out."""
    e = os.environ if env is None else env
    out: dict[str, str] = {}
    for name in ACTION_INPUTS:
        key = "EMPATH_INPUT_" + name.upper().replace("-", "_")
        if key in e:
            out[name] = e[key]
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m empath_gate.github.context SUBCOMMAND``; exit 2 with the message on stderr
    for a malformed input.

    * ``pytest-args [--baseline PATH] [--results PATH] [--format nul|lines|json]``: the pytest
      arguments for the inputs in the environment (:func:`action_args`);
    * ``context``: the run's context as JSON (without the token);
    * ``is-fork``: ``true``/``false``;
    * ``fork-pr``: the step outputs ``skip``, ``fail`` and ``policy`` (``key=value`` lines for
      ``GITHUB_OUTPUT``) of :func:`fork_decision` for this event and ``EMPATH_INPUT_FORK_PR``;
    * ``not-evaluated --suite S (--reason R | --fork-pr POLICY)``: the "not evaluated" summary,
      outputs and annotation of a run that did not happen (an error annotation under
      ``--fork-pr fail``, else a warning); the job's status is the caller's to set.
    """
    parser = argparse.ArgumentParser(prog="python -m empath_gate.github.context")
    sub = parser.add_subparsers(dest="what", required=True)
    pa = sub.add_parser("pytest-args", help="pytest arguments for the Action inputs in EMPATH_INPUT_*")
    pa.add_argument("--baseline", default=None, help="resolved baseline results file")
    pa.add_argument("--results", default=None, help="where pytest writes results.json")
    pa.add_argument("--format", choices=("nul", "lines", "json"), default="nul")
    sub.add_parser("context", help="the GitHub context as JSON (never the token)")
    sub.add_parser("is-fork", help="print true when the event is a pull request from a fork, else false")
    sub.add_parser("fork-pr", help="print the skip/fail/policy step outputs for EMPATH_INPUT_FORK_PR")
    ne = sub.add_parser("not-evaluated", help="write the 'not evaluated' summary, outputs and annotation")
    ne.add_argument("--suite", required=True)
    why = ne.add_mutually_exclusive_group(required=True)
    why.add_argument("--reason", help="why the run did not happen")
    why.add_argument("--fork-pr", choices=FORK_PR_POLICIES, help="a fork's pull request under this policy")
    ns = parser.parse_args(argv)
    if ns.what == "is-fork":
        print("true" if load_context().fork else "false")
        return 0
    if ns.what == "fork-pr":
        try:
            d = fork_decision(load_context().fork, inputs_from_env().get("fork-pr", ""))
        except ConfigError as exc:
            print(f"empath-gate action: {exc}", file=sys.stderr)
            return 2
        print(f"skip={str(d.skip).lower()}\nfail={str(d.fail).lower()}\npolicy={d.policy}")
        return 0
    if ns.what == "not-evaluated":
        from empath_gate.github.workflow import publish_not_evaluated

        if ns.fork_pr is not None:
            reason = fork_not_evaluated_reason(ns.fork_pr)
            publish_not_evaluated(ns.suite, reason, error=ns.fork_pr == "fail")
        else:
            publish_not_evaluated(ns.suite, ns.reason)
        return 0
    if ns.what == "context":
        ctx = load_context()
        print(
            json.dumps(
                {
                    "api_url": ctx.api_url,
                    "repository": ctx.repository,
                    "event_name": ctx.event_name,
                    "pr_number": ctx.pr_number,
                    "fork": ctx.fork,
                    "run_url": ctx.run_url,
                    "has_token": ctx.token is not None,
                }
            )
        )
        return 0
    try:
        args = action_args(inputs_from_env(), baseline_path=ns.baseline or None, results_path=ns.results)
    except ConfigError as exc:
        print(f"empath-gate action: {exc}", file=sys.stderr)
        return 2
    if ns.format == "json":
        print(json.dumps(args))
    elif ns.format == "lines":
        print("\n".join(args))
    else:
        sys.stdout.write("".join(a + "\0" for a in args))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
