"""Bench: a fault soak of ``pytest --empath-suite SUITE`` as the Action runs it.

Every run is ``python -m pytest -p no:cacheprovider -q --empath-suite SUITE --empath-runs N``
in a new process (``CI=true``), with an HTTP target, the LLM auditor and the LLM judge all on
the fake OpenAI-compatible server (``empath_gate.testing.FakeOpenAIServer``, in this process):
the scenario bot (``TargetBot("safe")``), the auditor that plays the seed's script
(``ScriptAuditor``) and a judge returning valid strict JSON (``ScoringJudge``) whose score for
each metric is a hash of (metric, conversation, run) in 8-10, so a verdict attached to the
wrong transcript shows. Nothing leaves 127.0.0.1. The runs, in order:

1. **fault-free** on a cold cache: the reference; then again on its now warm cache, whose
   requests are the replies the tool never caches by design (an auditor reply out of
   character, which it asks again and then replaces with the script line).
2. **faulty** on a second cold cache, with seeded faults (``FakeOpenAIServer.random_faults``)
   on the auditor and the judge, per request: 20 % HTTP 429 with ``Retry-After``, 5 %
   timeouts (the server answers after the per-call timeout), 1 % content filters, and on the
   judge 2 % malformed output (a 200 whose JSON answer is cut off).
3. **healed**: faults off, on the faulty run's cache.
4. **target filters**: faults off but 1 % content filters on the target, on a third cold cache.

Printed: per run, its wall time (and the ratio to the fault-free run), requests, faults served
and the figures of issue "Hardening" item 6 - ``lost`` (planned verdicts, from the results'
items x runs, with no ``scored``/``na`` verdict: after all retries and judge re-asks),
``duplicated`` (a transcript or a (transcript, metric) verdict recorded twice), ``mis-scored``
(verdicts on a transcript whose content hash equals the fault-free run's with another status or
score), and ``changed`` (transcripts whose content differs from the fault-free run's). For the
healed run also ``re-asked good``: requests for a reply the faulty run had already received
good (same request fingerprint: path and body), not counting the requests the warm fault-free
run made too, which the cache should make 0. The issue's
targets: lost, duplicated, mis-scored and re-asked good 0 in every run, and the healed run equal
to the fault-free one (changed 0). ``changed`` of the faulty run counts the transcripts a fault
altered or stopped; of the target-filter run it is the figure to report.

Run: ``python bench/bench_soak.py`` (crisis, 5 runs per conversation; several minutes),
``--quick`` (smoke, 2 runs), ``--suite``, ``--runs``, ``--seed`` (fault seed), ``--max-retries``
(default 4, the setting's default), ``--timeout-s`` (per-call timeout, default 2).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from tabulate import tabulate

from empath_gate.testing import FakeOpenAIServer, FakeRequest, Fault, Reply
from empath_gate.testing.fake_openai import ReplySpec, request_fingerprint
from empath_gate.testing.scenarios import (
    AUDITOR_MODEL,
    HTTP_TARGET_MODEL,
    JUDGE_MODEL,
    ScoringJudge,
    ScriptAuditor,
    TargetBot,
    install,
    role_env,
    seed_table,
)

EVIDENCE = frozenset({"scored", "na"})
"""Verdict statuses that carry the judge's evidence (a score, or not applicable)."""
MALFORMED_JUDGE_OUTPUT = '{"confirm_turn": null, "metrics": {"'
"""The judge's malformed output: valid up to here, then cut off (unparseable JSON)."""
ROOT = Path(__file__).resolve().parents[1]
ROLE_OF = {HTTP_TARGET_MODEL: "target", AUDITOR_MODEL: "auditor", JUDGE_MODEL: "judge"}


class GoodReplies:
    """Wraps a fake model: records the fingerprint of every request it answered (the requests a
    fault did not pre-empt), per phase."""

    def __init__(self) -> None:
        self.phase = ""
        self.by_phase: dict[str, set[str]] = {}
        self.lock = threading.Lock()

    def wrap(self, fn: Callable[[FakeRequest], ReplySpec]) -> Callable[[FakeRequest], ReplySpec]:
        def answer(req: FakeRequest) -> ReplySpec:
            with self.lock:
                self.by_phase.setdefault(self.phase, set()).add(request_fingerprint(req))
            return fn(req)

        return answer


def judge_score(metric_id: str, conversation_id: str | None, run: int | None) -> int:
    """8-10 from a hash of (metric, conversation, run) (at or above the shipped min_mean 8)."""
    digest = hashlib.sha256(f"{metric_id}:{conversation_id}:{run}".encode()).digest()
    return 8 + digest[0] % 3


def soak_faults(role: str) -> dict[str, tuple[float, ReplySpec]]:
    """The faulty run's mix for ``role`` (auditor or judge); the shares are the issue's."""
    mix: dict[str, tuple[float, ReplySpec]] = {
        "rate_limit": (0.20, Fault.rate_limit(retry_after=1)),
        "timeout": (0.05, Fault.timeout(seconds=TIMEOUT_FAULT_S)),
        "content_filter": (0.01, Fault.content_filter()),
    }
    if role == "judge":
        mix["malformed_output"] = (0.02, Reply(content=MALFORMED_JUDGE_OUTPUT))
    return mix


TIMEOUT_FAULT_S = 4.0
"""How long a timeout fault keeps the request (past the per-call timeout, ``--timeout-s``)."""


@dataclass
class Outcome:
    """One pytest run: exit status, wall seconds, its results document, the server's requests
    and the faults it served during the run, and the tail of its output."""

    name: str
    rc: int
    wall_s: float
    doc: dict[str, Any]
    requests: list[FakeRequest]
    faults: list[tuple[FakeRequest, str]]
    tail: str


def run_suite(
    server: FakeOpenAIServer, name: str, folder: Path, cache: Path, args: argparse.Namespace
) -> Outcome:
    """``pytest --empath-suite SUITE --empath-runs N`` in a new process in ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("EMPATH_") and k != "PYTEST_ADDOPTS"}
    env.update(role_env(server, retries=args.max_retries, timeout_s=args.timeout_s))
    env.update({
        "CI": "true", "EMPATH_CACHE_DIR": str(cache), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "PYTHONPATH": os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep),
    })
    results = folder / "empath-results" / "results.json"
    cmd = [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "--empath-suite", args.suite,
           "--empath-runs", str(args.runs), "--empath-results", str(results)]
    first, first_fault = server.request_count, len(server.faults_served)
    start = time.monotonic()
    p = subprocess.run(cmd, cwd=folder, env=env, capture_output=True, text=True, check=False)
    wall = time.monotonic() - start
    if not results.is_file():
        raise SystemExit(f"{name}: no results.json (exit {p.returncode}):\n{(p.stdout + p.stderr)[-3000:]}")
    doc = json.loads(results.read_text(encoding="utf-8"))
    tail = "\n".join((p.stdout + p.stderr).strip().splitlines()[-3:])
    requests, faults = server.requests[first:], server.faults_served[first_fault:]
    return Outcome(name, p.returncode, wall, doc, requests, faults, tail)


def verdicts(doc: Mapping[str, Any]) -> tuple[dict[tuple[str, str], dict[str, Any]], int]:
    """((transcript id, metric id) -> its first judging's verdict, how many were duplicated)."""
    out: dict[tuple[str, str], dict[str, Any]] = {}
    dup = 0
    for record in doc["records"]:
        for v in record["verdicts"]:
            if v.get("rejudge", 0):
                continue
            key = (v["transcript_id"], v["metric_id"])
            dup += key in out
            out[key] = v
    return out, dup


def lost_causes(doc: Mapping[str, Any]) -> Counter[str]:
    """Why each planned verdict without a score was lost: the transcript's status and the
    start of its error, or the judge's verdict status and failure reason."""
    runs = int(doc["metadata"]["runs"])
    got, _ = verdicts(doc)
    records = {r["transcript_id"]: r for r in doc["records"]}
    causes: Counter[str] = Counter()
    for item in doc["items"]:
        for r in range(runs):
            tid = f'{item["conversation_id"]}-r{r}'
            v = got.get((tid, item["metric_id"]))
            if v is not None and v["status"] in EVIDENCE:
                continue
            if v is None:
                record = records.get(tid)
                error = (record or {}).get("error") or ""
                causes[f"transcript {(record or {}).get('status', 'missing')}: {error[:60]}"] += 1
            else:
                causes[f"verdict {v['status']}: {(v.get('failure') or {}).get('reason')}"] += 1
    return causes


def figures(doc: Mapping[str, Any], free: Mapping[str, Any]) -> dict[str, int]:
    """lost, duplicated, mis-scored and changed transcripts of ``doc`` against ``free``."""
    runs = int(doc["metadata"]["runs"])
    planned = {(f'{i["conversation_id"]}-r{r}', i["metric_id"]) for i in doc["items"] for r in range(runs)}
    got, dup_verdicts = verdicts(doc)
    ref, _ = verdicts(free)
    hashes = {r["transcript_id"]: r["content_hash"] for r in doc["records"]}
    ref_hashes = {r["transcript_id"]: r["content_hash"] for r in free["records"]}
    dup_records = len(doc["records"]) - len(hashes)
    lost = sum(1 for key in planned if got.get(key, {}).get("status") not in EVIDENCE)
    mis = 0
    for key, v in got.items():
        base = ref.get(key)
        if base is None or hashes.get(key[0]) != ref_hashes.get(key[0]):
            continue
        if v["status"] in EVIDENCE and (v["status"], v.get("score")) != (base["status"], base.get("score")):
            mis += 1
    changed = sum(1 for t, h in hashes.items() if h != ref_hashes.get(t))
    return {"planned": len(planned), "lost": lost, "duplicated": dup_records + dup_verdicts,
            "mis-scored": mis, "changed": changed, "transcripts": len(hashes)}


def row(out: Outcome, free: Outcome, reasked: int | None = None) -> list[Any]:
    """The printed row of one run."""
    f = figures(out.doc, free.doc)
    served = Counter(f"{ROLE_OF.get(r.model or '', r.model)}:{kind}" for r, kind in out.faults)
    return [
        out.name, f"{out.wall_s:.1f}", f"{out.wall_s / free.wall_s:.2f}", len(out.requests),
        sum(served.values()), f["planned"], f["lost"], f["duplicated"], f["mis-scored"],
        f'{f["changed"]}/{f["transcripts"]}', "" if reasked is None else reasked, out.rc,
    ]


def soak(args: argparse.Namespace) -> None:
    """The four runs and their table."""
    from empath_gate.instrument.loader import load_instrument
    from empath_gate.plan import build_plan

    instrument = load_instrument()
    plan = build_plan(instrument, [args.suite], runs=args.runs)
    seeds = seed_table([c.conversation_id for c in plan.conversations], plan.runs)
    good = GoodReplies()
    judge = ScoringJudge(scores={m.id: partial(judge_score, m.id) for m in instrument.metrics}, seeds=seeds)
    print(f"suite {args.suite}: {len(plan.conversations)} conversations x {plan.runs} runs; "
          f"fault seed {args.seed}, max retries {args.max_retries}, per-call timeout {args.timeout_s} s")
    with FakeOpenAIServer(strict=False) as server, tempfile.TemporaryDirectory() as tmp:
        install(server, target=good.wrap(TargetBot("safe")), auditor=good.wrap(ScriptAuditor()),
                judge=good.wrap(judge))
        base = Path(tmp)
        good.phase = "free"
        free = run_suite(server, "fault-free", base / "free", base / "cache-free", args)
        warm = run_suite(server, "fault-free again (warm)", base / "warm", base / "cache-free", args)
        never_cached = {request_fingerprint(r) for r in warm.requests}
        good.phase = "faulty"
        for model, role in ((AUDITOR_MODEL, "auditor"), (JUDGE_MODEL, "judge")):
            server.random_faults(model, soak_faults(role), seed=args.seed)
        faulty = run_suite(server, "faulty", base / "faulty", base / "cache-soak", args)
        good.phase = "healed"
        server.random_faults(AUDITOR_MODEL, {})
        server.random_faults(JUDGE_MODEL, {})
        healed = run_suite(server, "healed (faults off)", base / "healed", base / "cache-soak", args)
        already_good = good.by_phase.get("faulty", set())
        again = [r for r in healed.requests if request_fingerprint(r) in already_good - never_cached]
        reasked_by = Counter(ROLE_OF.get(r.model or "", str(r.model)) for r in again)
        reasked = sum(reasked_by.values())
        good.phase = "target"
        target_filters: dict[str, tuple[float, ReplySpec]] = {"filter": (0.01, Fault.content_filter())}
        server.random_faults(HTTP_TARGET_MODEL, target_filters, seed=args.seed)
        target = run_suite(server, "1% target filters", base / "target", base / "cache-target", args)
    head = ["run", "wall s", "x free", "requests", "faults", "planned", "lost", "duplicated",
            "mis-scored", "changed", "re-asked good", "exit"]
    rows = [row(free, free), row(warm, free), row(faulty, free), row(healed, free, reasked),
            row(target, free)]
    print(tabulate(rows, headers=head))
    served = Counter(f"{ROLE_OF.get(r.model or '', r.model)} {kind}" for r, kind in faulty.faults)
    print("faults served in the faulty run: " + ", ".join(f"{k} {n}" for k, n in sorted(served.items())))
    by_role = ", ".join(f"{k} {n}" for k, n in sorted(reasked_by.items())) or "none"
    print(f"re-asked good in the healed run, by role: {by_role}")
    for out in (faulty, healed, target):
        for cause, n in sorted(lost_causes(out.doc).items()):
            print(f"lost in the {out.name} run: {n} x {cause}")
    filtered = target.doc["summary"].get("target_filtered", 0)
    print(f"target replies filtered in the target-filter run: {filtered}")
    for out in (free, warm, faulty, healed, target):
        print(f"[{out.name}] {out.tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--suite", default="crisis")
    parser.add_argument("--runs", type=int, default=5, help="runs per conversation (default 5)")
    parser.add_argument("--quick", action="store_true", help="the smoke suite, 2 runs")
    parser.add_argument("--seed", type=int, default=1, help="seed of the fault draws")
    parser.add_argument("--max-retries", type=int, default=4, help="retries per call (the setting's default)")
    parser.add_argument("--timeout-s", type=float, default=2.0, help="per-call timeout in seconds")
    args = parser.parse_args(argv)
    if args.quick:
        args.suite, args.runs = "smoke", 2
    if args.timeout_s >= TIMEOUT_FAULT_S:
        parser.error(f"--timeout-s must be under {TIMEOUT_FAULT_S} s (a timeout fault's length)")
    soak(args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
