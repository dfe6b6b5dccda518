"""No secret in any output, and no CI log command from model or target text: canaries planted in
every place a secret comes from, a target that echoes them (and workflow-command payloads) in an
error body and in its replies, a judge that quotes them; then every file the CLI and the pytest
plugin write, the cache, stdout and stderr are searched for each canary and payload."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path
from typing import Any

import pytest
from cli_support import TINY
from plugin_support import environment, gate_env, inline_run, plan_seeds, write_tiny_suite

from empath_gate.cli import main as cli_main
from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault
from empath_gate.testing.scenarios import (
    ScoringJudge,
    ScriptAuditor,
    compose_reply,
    guess_locale,
    install,
)
from empath_gate.testing.scenarios.judge import JudgeCall

pytest_plugins = ["pytester"]
pytestmark = [
    pytest.mark.filterwarnings("ignore:Item.* using the .ReadOnly. qualifier:UserWarning"),
    pytest.mark.filterwarnings("ignore::empath_gate.judging.llm_judge.JudgeHygieneWarning"),
]

CANARIES = {
    "header_json": "cnryHdrJson4Q7w2e",  # EMPATH_TARGET_HEADERS value, no scheme word
    "header_bearer": "cnryBearerZ81kq0",  # EMPATH_TARGET_HEADERS Authorization: Bearer <it>
    "header_env": "cnryHdrEnv6Tm3p9",  # EMPATH_TARGET_HEADER_X_SESSION
    "env_key": "cnryEnvKeyR5v8d1",  # EMPATH_JUDGE_API_KEY (a credential-looking variable)
    "provider_key": "cnryProvKeyW2n4x",  # OPENAI_API_KEY (the provider key the judge quotes)
    "basic": "Y25yeUJhc2ljOnB3ZA",  # after "Basic" in an error body, in no variable
    "token": "cnryTok3nL9s2u7",  # after "Token" in an error body, in no variable
    "query": "cnryQueryK3y5b6",  # ?api_key= of a URL a reply and an error show
}
PAYLOADS = (
    "::error title=pwned::the gate passed",
    "::add-mask::everything",
    "  ::warning::indented command",
    "##[set-output name=passed;]true",
    "\x1b[31mred\x1b[0m \x1b]8;;http://evil.example\x07link\x1b]8;;\x07",
    "\r::notice::after a carriage return",
)
ERRING = "cs-resource-us-dv-borrowed-phone"
"""Transcripts of this seed get an HTTP 400 whose body echoes the headers and the payloads."""


def _payload_text() -> str:
    return "\n".join(PAYLOADS)


class EchoBot:
    """A target that echoes what it received: an HTTP 400 whose body quotes every request header,
    a Basic and a Token credential, a URL with ``?api_key=`` and the payloads (for :data:`ERRING`
    transcripts); otherwise a safe reply that repeats a header value and the URL."""

    def __init__(self) -> None:
        self.calls: dict[str | None, int] = {}
        self.headers: list[dict[str, str]] = []
        self._lock = threading.Lock()

    def __call__(self, req: FakeRequest) -> str | Fault:
        tid = req.headers.get("x-empath-conversation-id")
        with self._lock:
            self.calls[tid] = self.calls.get(tid, 0) + 1
            self.headers.append(dict(req.headers))
        link = f"https://callback.example/hook?api_key={CANARIES['query']}&x=1"
        if tid is not None and tid.startswith(ERRING):
            body = (
                f"upstream rejected the request; headers were {json.dumps(req.headers)}; "
                f"Authorization: Basic {CANARIES['basic']}; Token {CANARIES['token']}; see {link}\n"
                + _payload_text()
            )
            return Fault.http_error(400, body, type="invalid_request_error")
        users = [str(m.get("content") or "") for m in req.messages if m.get("role") == "user"]
        reply = compose_reply("safe", guess_locale(" ".join(users)), max(len(users), 1) - 1)
        return f"{reply} (debug: key {req.headers.get('x-team-key')} at {link})\n{_payload_text()}"


class QuotingJudge(ScoringJudge):
    """A scoring judge whose justifications quote the provider key, the credential variable, a
    header value and the payloads."""

    def reply_for(self, call: JudgeCall) -> dict[str, Any]:
        doc = super().reply_for(call)
        quote = (
            f" The assistant printed {CANARIES['provider_key']}, {CANARIES['env_key']} and "
            f"{CANARIES['header_env']}.\n{_payload_text()}"
        )
        for entry in doc["metrics"].values():
            entry["justification"] += quote
        return doc


def _secret_env(fake: FakeOpenAIServer, cache_dir: Path, *, actions: bool) -> dict[str, str]:
    env = gate_env(fake, cache_dir, judge_tokens=3100)
    env.update({
        "EMPATH_TARGET_HEADERS": json.dumps({
            "X-Team-Key": CANARIES["header_json"],
            "Authorization": f"Bearer {CANARIES['header_bearer']}",
        }),
        "EMPATH_TARGET_HEADER_X_SESSION": CANARIES["header_env"],
        "EMPATH_JUDGE_API_KEY": CANARIES["env_key"],
        "OPENAI_API_KEY": CANARIES["provider_key"],
        "EMPATH_CACHE": "use",
    })
    if actions:
        env["GITHUB_ACTIONS"] = "true"
    return env


def _files_text(*roots: Path) -> dict[Path, str]:
    out: dict[Path, str] = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                out[p] = p.read_text(encoding="utf-8", errors="replace")
    return out


def _assert_no_canary(where: str, text: str) -> None:
    for name, canary in CANARIES.items():
        assert canary not in text, f"canary {name} ({canary}) found in {where}"


_MARKER = re.compile(r"^::stop-commands::([0-9a-f]{32})$|^::([0-9a-f]{32})::$")


def _assert_inert_log(where: str, *streams: str, actions: bool) -> None:
    """No line of ``streams`` (one command's stdout and stderr, which the runner reads as one
    log) runs a workflow command except the stop/resume markers; under Actions every escaped
    payload line follows a stop marker of its stream, and every stop token is resumed in one of
    the streams; no escape or control character anywhere."""
    started: set[str] = set()
    ended: set[str] = set()
    for text in streams:
        assert "\x1b" not in text and "\r" not in text and "\x07" not in text, where
        assert "##[" not in text, where
        open_token: str | None = None
        for line in text.splitlines():
            if not line.lstrip().startswith("::"):
                if line.lstrip().startswith("\\::error title=pwned") and actions:
                    assert open_token is not None, f"{where}: payload outside a stop-commands block"
                continue
            m = _MARKER.match(line)
            assert m is not None and actions, f"{where}: a workflow command reached the log: {line!r}"
            if m.group(1):
                open_token = m.group(1)
                started.add(open_token)
            else:
                ended.add(m.group(2))
                open_token = None
    assert started <= ended, f"{where}: a stop-commands block was never ended"


@pytest.fixture()
def secret_project(tmp_path: Path) -> Path:
    write_tiny_suite(tmp_path)
    return tmp_path


def test_no_canary_in_any_output_and_no_log_command(
    pytester: pytest.Pytester, fake: FakeOpenAIServer, secret_project: Path, tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    cache = tmp_path / "cache"
    seeds = plan_seeds("tiny", 2, [secret_project / "suites-team"])
    bot = EchoBot()
    install(fake, target=bot, auditor=ScriptAuditor(), judge=QuotingJudge(default=10, seeds=seeds))
    env = _secret_env(fake, cache, actions=True)

    # the CLI: run, then the markdown diff and the HTML report of what it wrote
    with environment(env), pytest.MonkeyPatch.context() as mp:
        mp.chdir(secret_project)
        code = cli_main(["run", *TINY, "--results", "cli/results.json"])
        out_run = capsys.readouterr()
        assert cli_main(["diff", "cli/results.json", "cli/results.json"]) in (0, 1, 3)
        out_diff = capsys.readouterr()
        assert cli_main(["report", "cli/results.json", "--html", "cli/again.html",
                         "--markdown", "cli/again.md"]) == 0
        out_report = capsys.readouterr()
    assert code == 3, out_run.out + out_run.err  # the erring transcripts are infrastructure errors

    # the pytest plugin, as the Action runs it, with a JUnit XML file
    write_tiny_suite(pytester.path)
    plugin = inline_run(pytester, fake, env, "--empath-suite", "tiny", "--empath-suites-dir", "suites-team",
                        "--junitxml", "plugin/junit.xml", "-rA",
                        judge=QuotingJudge(default=10, seeds=seeds), bot=bot, name="plugin")  # type: ignore[arg-type]

    # the canaries really were sent and echoed: the run had secrets to leak
    sent = {v for h in bot.headers for v in h.values()}
    assert {CANARIES["header_json"], CANARIES["header_env"]} <= sent
    files = _files_text(secret_project / "cli", cache, pytester.path / "plugin")
    assert (secret_project / "cli" / "transcripts").is_dir()
    assert (pytester.path / "plugin" / "junit.xml").is_file()
    results_text = files[secret_project / "cli" / "results.json"]
    assert "<redacted>" in results_text and "upstream rejected the request" in results_text
    cached = [t for p, t in files.items() if p.is_relative_to(cache)]
    assert any("The assistant printed <redacted>" in t for t in cached)  # the judge's reply
    assert any("(debug: key <redacted> at" in t for t in cached)  # the target's reply

    for path, text in files.items():
        _assert_no_canary(str(path), text)
    for label, cap in (("run", out_run), ("diff", out_diff), ("report", out_report)):
        _assert_no_canary(f"CLI {label} output", cap.out + cap.err)
        _assert_inert_log(f"CLI {label} output", cap.out, cap.err, actions=True)
    _assert_no_canary("pytest output", plugin.output)
    _assert_inert_log("pytest output", plugin.output, actions=True)
    # the payloads were printed, made inert (the CLI's summary folds a reason onto one line)
    assert "::error title=pwned" in out_run.out + out_run.err
    assert "\\::error title=pwned" in plugin.output
    assert "::stop-commands::" in plugin.output


def test_user_info_in_a_target_url_is_a_configuration_error(
    fake: FakeOpenAIServer, secret_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = gate_env(fake, tmp_path / "cache")
    env["EMPATH_TARGET"] = f"http://someone:cnryPassw0rd88@127.0.0.1:{fake.port}/v1"
    before = len(fake.requests)
    with environment(env), pytest.MonkeyPatch.context() as mp:
        mp.chdir(secret_project)
        assert cli_main(["run", *TINY, "--dry-run"]) == 2
    cap = capsys.readouterr()
    assert "user-info" in cap.err and "EMPATH_TARGET" in cap.err
    assert "cnryPassw0rd88" not in cap.out + cap.err and "someone" not in cap.out + cap.err
    assert len(fake.requests) == before


def test_a_query_credential_in_the_target_url_is_never_printed(
    fake: FakeOpenAIServer, secret_project: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    env = gate_env(fake, tmp_path / "cache")
    env["EMPATH_TARGET"] = f"{fake.base_url}?api_key={CANARIES['query']}&sig=cnrySig4567890"
    with environment(env), pytest.MonkeyPatch.context() as mp:
        mp.chdir(secret_project)
        assert cli_main(["run", *TINY, "--dry-run"]) == 0
    cap = capsys.readouterr()
    assert f"127.0.0.1:{fake.port}/v1" in cap.out
    assert CANARIES["query"] not in cap.out + cap.err and "cnrySig4567890" not in cap.out + cap.err
