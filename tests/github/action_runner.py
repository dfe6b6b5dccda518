"""Runs a composite action's steps the way a GitHub runner does, for tests of the step logic.

What is mirrored (GitHub Actions documentation: "Metadata syntax" for composite actions,
"Workflow syntax" for ``shell`` and ``if``, "Evaluate expressions", "Workflow commands"):

* each step's ``if:`` is evaluated; without a status function (``always()``, ``success()``,
  ``failure()``, ``cancelled()``) it means ``success() && (...)``: the step is skipped once an
  earlier step failed;
* ``${{ ... }}`` in ``env`` values, input defaults and output values is evaluated against
  ``inputs``, ``steps.<id>.outputs`` / ``.outcome`` and ``github``; the subset of the expression
  language the action uses is supported (``||``, ``&&``, ``!``, ``==``, ``!=`` comparing
  strings case-insensitively, string literals, parentheses, the status functions) and anything
  else raises, so a new construct in ``action.yml`` cannot be silently misread;
* ``shell: bash`` runs ``bash --noprofile --norc -eo pipefail FILE`` with the script in FILE;
* every step gets fresh ``GITHUB_OUTPUT`` and ``GITHUB_STEP_SUMMARY`` files; outputs are read
  in both the ``name=value`` and the ``name<<DELIMITER`` form; the summaries are concatenated.

Not run: steps with ``uses:`` (setting up Python, uploading an artifact) and the steps named in
``simulate`` (the installation: the test's interpreter already has empath-gate); they count as
successful.
"""

from __future__ import annotations

import re
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

_EXPR = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_TOKEN = re.compile(
    r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<op>\|\||&&|==|!=|!|\(|\))|(?P<name>[A-Za-z_][A-Za-z0-9_.-]*))"
)
STATUS_FUNCTIONS = ("always", "success", "failure", "cancelled")


class ExpressionError(ValueError):
    """An expression outside the supported subset (module docstring)."""


class _Parser:
    def __init__(self, text: str, contexts: Mapping[str, Any], job_failed: bool) -> None:
        self.tokens = self._tokenize(text)
        self.pos = 0
        self.contexts = contexts
        self.job_failed = job_failed

    @staticmethod
    def _tokenize(text: str) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        i = 0
        while i < len(text):
            if text[i:].strip() == "":
                break
            m = _TOKEN.match(text, i)
            if m is None:
                raise ExpressionError(f"cannot read the expression at {text[i:]!r}")
            kind = m.lastgroup or ""
            out.append((kind, m.group(kind)))
            i = m.end()
        return out

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> tuple[str, str]:
        tok = self.peek()
        if tok is None:
            raise ExpressionError("unexpected end of the expression")
        self.pos += 1
        return tok

    def parse(self) -> Any:
        value = self.or_expr()
        if self.peek() is not None:
            raise ExpressionError(f"unexpected {self.peek()!r}")
        return value

    def or_expr(self) -> Any:
        value = self.and_expr()
        while self.peek() == ("op", "||"):
            self.take()
            right = self.and_expr()
            value = value if truthy(value) else right
        return value

    def and_expr(self) -> Any:
        value = self.comparison()
        while self.peek() == ("op", "&&"):
            self.take()
            right = self.comparison()
            value = right if truthy(value) else value
        return value

    def comparison(self) -> Any:
        left = self.unary()
        tok = self.peek()
        if tok in (("op", "=="), ("op", "!=")):
            self.take()
            right = self.unary()
            same = _equal(left, right)
            return same if tok == ("op", "==") else not same
        return left

    def unary(self) -> Any:
        if self.peek() == ("op", "!"):
            self.take()
            return not truthy(self.unary())
        return self.primary()

    def primary(self) -> Any:
        kind, text = self.take()
        if kind == "str":
            return text[1:-1].replace("''", "'")
        if (kind, text) == ("op", "("):
            value = self.or_expr()
            if self.take() != ("op", ")"):
                raise ExpressionError("missing )")
            return value
        if kind != "name":
            raise ExpressionError(f"unexpected {text!r}")
        if self.peek() == ("op", "("):
            if text not in STATUS_FUNCTIONS:
                raise ExpressionError(f"unsupported function {text}()")
            self.take()
            if self.take() != ("op", ")"):
                raise ExpressionError(f"{text}() takes no arguments")
            return {
                "always": True,
                "success": not self.job_failed,
                "failure": self.job_failed,
                "cancelled": False,
            }[text]
        if text in ("true", "false"):
            return text == "true"
        if text == "null":
            return None
        return lookup(self.contexts, text)


def truthy(value: Any) -> bool:
    """The expression language's truthiness: ``null``, ``false``, ``''`` and 0 are false."""
    return value not in (None, False, "", 0)


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, str) and isinstance(b, str):
        return a.lower() == b.lower()
    return bool(a == b)


def lookup(contexts: Mapping[str, Any], dotted: str) -> Any:
    """``inputs.suite``, ``steps.fork.outputs.skip``, ``github.event.repository.x``: ``None`` for
    a missing property (as GitHub answers ``null``); an unknown context raises."""
    head, *rest = dotted.split(".")
    if head not in contexts:
        raise ExpressionError(f"unknown context {head!r} in {dotted!r}")
    value: Any = contexts[head]
    for part in rest:
        value = value.get(part) if isinstance(value, Mapping) else None
    return value


def evaluate(expression: str, contexts: Mapping[str, Any], *, job_failed: bool = False) -> Any:
    """The value of one expression (without ``${{ }}``)."""
    return _Parser(expression, contexts, job_failed).parse()


def interpolate(text: str, contexts: Mapping[str, Any]) -> str:
    """``text`` with each ``${{ expr }}`` replaced by its value (``null`` as ``''``)."""

    def one(m: re.Match[str]) -> str:
        value = evaluate(m.group(1), contexts)
        if value is None:
            return ""
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value)

    return _EXPR.sub(one, text)


def should_run(condition: str | None, contexts: Mapping[str, Any], job_failed: bool) -> bool:
    """Whether a step with ``if: condition`` runs (module docstring)."""
    cond = (condition or "").strip()
    if cond.startswith("${{") and cond.endswith("}}"):
        cond = cond[3:-2].strip()
    if not cond:
        return not job_failed
    if not any(f"{f}()" in cond for f in STATUS_FUNCTIONS):
        cond = f"success() && ({cond})"
    return truthy(evaluate(cond, contexts, job_failed=job_failed))


def read_outputs(text: str) -> dict[str, str]:
    """The outputs a step wrote to ``GITHUB_OUTPUT`` (``name=value`` and heredoc forms)."""
    out: dict[str, str] = {}
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            continue
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            body: list[str] = []
            while i < len(lines) and lines[i] != delimiter:
                body.append(lines[i])
                i += 1
            if i >= len(lines):
                raise ValueError(f"GITHUB_OUTPUT: no closing {delimiter!r} for {name!r}")
            i += 1
            out[name] = "\n".join(body)
        else:
            name, _, value = line.partition("=")
            out[name] = value
    return out


@dataclass
class StepResult:
    """One step: ``ran`` False when skipped by its ``if`` or not run (``uses:``/simulated);
    ``exit_code`` of its script; its ``outputs``, ``summary`` and log (``stdout``, ``stderr``)."""

    name: str
    id: str | None
    ran: bool
    exit_code: int | None = None
    outputs: dict[str, str] = field(default_factory=dict)
    summary: str = ""
    stdout: str = ""
    stderr: str = ""
    seconds: float = 0.0

    @property
    def outcome(self) -> str:
        if not self.ran:
            return "skipped" if self.exit_code is None else "success"
        return "success" if self.exit_code == 0 else "failure"


@dataclass
class ActionRun:
    """The whole run: every step in order, the action's ``outputs`` and whether the job
    ``failed`` (a step's script exited non-zero)."""

    steps: list[StepResult]
    outputs: dict[str, str]
    failed: bool

    def step(self, key: str) -> StepResult:
        """The step whose id or name is ``key``."""
        for s in self.steps:
            if key in (s.id, s.name):
                return s
        raise KeyError(key)

    @property
    def summary(self) -> str:
        return "".join(s.summary for s in self.steps)

    @property
    def log(self) -> str:
        return "\n".join(s.stdout + s.stderr for s in self.steps)

    @property
    def last_run(self) -> StepResult:
        """The last step whose script ran."""
        return [s for s in self.steps if s.ran][-1]


def action_inputs(
    doc: Mapping[str, Any], given: Mapping[str, str], contexts: Mapping[str, Any]
) -> dict[str, str]:
    """The inputs a step sees: ``given`` over the evaluated defaults; raises KeyError for an
    input the action does not declare."""
    declared = doc.get("inputs") or {}
    unknown = set(given) - set(declared)
    if unknown:
        raise KeyError(f"the action declares no input {sorted(unknown)}")
    out = {}
    for name, spec in declared.items():
        default = str((spec or {}).get("default", ""))
        out[name] = given[name] if name in given else interpolate(default, contexts)
    return out


def run_action(
    action: Path,
    *,
    inputs: Mapping[str, str],
    env: Mapping[str, str],
    github: Mapping[str, Any],
    workdir: Path,
    simulate: Sequence[str] = ("Install empath-gate (hash-pinned dependencies)",),
    timeout: float = 600,
) -> ActionRun:
    """Run the steps of the composite action at ``action`` in ``workdir`` with the job
    environment ``env`` (it must hold ``RUNNER_TEMP``; ``GITHUB_OUTPUT`` and
    ``GITHUB_STEP_SUMMARY`` are set per step) and the ``github`` context (``token``,
    ``event``...)."""
    doc = yaml.safe_load(action.read_text(encoding="utf-8"))
    steps_ctx: dict[str, Any] = {}
    contexts: dict[str, Any] = {"github": dict(github), "steps": steps_ctx}
    contexts["inputs"] = action_inputs(doc, inputs, contexts)
    state = Path(env["RUNNER_TEMP"]) / "step-files"
    state.mkdir(parents=True, exist_ok=True)
    results: list[StepResult] = []
    failed = False
    for index, step in enumerate(doc["runs"]["steps"]):
        name = str(step.get("name") or step.get("uses") or f"step {index}")
        sid = step.get("id")
        if not should_run(step.get("if"), contexts, failed):
            result = StepResult(name, sid, ran=False)
        elif "run" not in step or name in simulate:
            result = StepResult(name, sid, ran=False, exit_code=0)
        else:
            result = _run_script(index, step, name, sid, env, contexts, state, workdir, timeout)
            failed = failed or result.exit_code != 0
        results.append(result)
        if sid:
            steps_ctx[sid] = {"outputs": result.outputs, "outcome": result.outcome}
    outputs = {
        k: interpolate(str(v.get("value", "")), contexts) for k, v in (doc.get("outputs") or {}).items()
    }
    return ActionRun(results, outputs, failed)


def _run_script(
    index: int,
    step: Mapping[str, Any],
    name: str,
    sid: str | None,
    env: Mapping[str, str],
    contexts: Mapping[str, Any],
    state: Path,
    workdir: Path,
    timeout: float,
) -> StepResult:
    if step.get("shell") != "bash":
        raise ExpressionError(f"step {name!r}: only shell: bash is supported")
    script = state / f"step-{index}.sh"
    script.write_text(str(step["run"]), encoding="utf-8")
    output, summary = state / f"output-{index}", state / f"summary-{index}"
    output.write_text("", encoding="utf-8")
    summary.write_text("", encoding="utf-8")
    full = dict(env)
    full.update({k: interpolate(str(v), contexts) for k, v in (step.get("env") or {}).items()})
    full.update({"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)})
    start = time.monotonic()
    p = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
        cwd=workdir,
        env=full,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    return StepResult(
        name,
        sid,
        ran=True,
        exit_code=p.returncode,
        outputs=read_outputs(output.read_text(encoding="utf-8")),
        summary=summary.read_text(encoding="utf-8"),
        stdout=p.stdout,
        stderr=p.stderr,
        seconds=time.monotonic() - start,
    )
