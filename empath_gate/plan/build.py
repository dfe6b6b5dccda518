"""The plan: which conversations, runs and metric tests a selection of suites asks for.

A pure function of the instrument (no I/O, no randomness, no hash-order iteration), so ids and
order are identical on every machine, xdist worker and ``PYTHONHASHSEED``:

* conversation = seed x persona, id ``<seed>-<persona>``;
* transcript = one run of a conversation, id ``<seed>-<persona>-r<k>`` (k 0-based);
* item (one test) = seed x persona x metric, id ``<seed>-<persona>-<metric>``: the seed's
  primary metrics by default (EMPATH judges each seed on the metric it was written for), EMPATH's
  19 when the suite says ``metrics: all``, plus every metric of each family the suite names in
  ``families`` (a family is never judged otherwise).

Order: suite order as requested, then seed file order, then persona id, then the instrument's
metric order. A conversation selected by several suites belongs to the first; its metrics are
the union of what every selecting suite asks for.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from empath_gate.errors import ConfigError, SuiteError
from empath_gate.instrument.diagnostics import did_you_mean
from empath_gate.instrument.models import Instrument, Locale
from empath_gate.instrument.selection import assign_personas, personas_by_locale, suite_seeds


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def locale_marker(locale: str) -> str:
    """The pytest marker of a locale: ``es-MX`` -> ``es_mx``."""
    return locale.replace("-", "_").lower()


class PlanConversation(_Frozen):
    """A seed x persona: ``max_turns`` is the override, else the seed's, else the suite's;
    ``metric_ids`` are the metrics its items judge, in instrument order."""

    conversation_id: str
    seed_id: str
    persona_id: str
    suite: str
    locale: Locale
    max_turns: int = Field(ge=1)
    metric_ids: tuple[str, ...]
    skip: str | None = Field(
        default=None, description="why this profile cannot run it (its tests are skipped with this reason)"
    )


class PlanTranscript(_Frozen):
    """One run (0-based ``run``) of a conversation; ``transcript_id`` = ``<conversation>-r<run>``."""

    transcript_id: str
    conversation_id: str
    run: int = Field(ge=0)


class PlanItem(_Frozen):
    """One test, seed x persona x metric. ``label`` is for display (may hold accents); ``markers``
    are ``empath``, the dimension id (for a family metric the family id, also in ``dimension``),
    the locale marker and ``critical`` when the resolved threshold of (metric, suite) says
    critical."""

    id: str
    suite: str
    conversation_id: str
    seed_id: str
    persona_id: str
    metric_id: str
    dimension: str
    locale: Locale
    label: str
    critical: bool
    markers: tuple[str, ...]
    skip: str | None = None


class ShardSpec(_Frozen):
    """Shard ``index`` (1-based) of ``count``."""

    index: int = Field(ge=1)
    count: int = Field(ge=1)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"


class Plan(_Frozen):
    """Everything a selection asks for. ``plan_id`` identifies the full plan (shards keep it)
    so that results of shards from different plans are never merged."""

    plan_id: str
    instrument_version: str
    suites: tuple[str, ...]
    runs: int = Field(ge=1)
    conversations: tuple[PlanConversation, ...]
    transcripts: tuple[PlanTranscript, ...]
    items: tuple[PlanItem, ...]
    shard: ShardSpec | None = None

    def metrics_for(self) -> dict[str, tuple[str, ...]]:
        """conversation id -> metric ids its items judge."""
        return {c.conversation_id: c.metric_ids for c in self.conversations}

    def conversation(self, conversation_id: str) -> PlanConversation:
        """The conversation with this id; KeyError if absent."""
        for c in self.conversations:
            if c.conversation_id == conversation_id:
                return c
        raise KeyError(conversation_id)


def compute_plan_id(
    instrument_version: str, suites: Sequence[str], runs: int, transcript_ids: Sequence[str],
    item_ids: Sequence[str],
) -> str:
    """sha256 (hex) over the instrument version, the suite ids, the run count and the sorted
    transcript and item ids: equal plans, equal ids; any change in selection changes it."""
    h = hashlib.sha256()
    h.update(f"empath-plan/1\x00{instrument_version}\x00{','.join(suites)}\x00{runs}\x00".encode())
    for tid in sorted(transcript_ids):
        h.update(tid.encode())
        h.update(b"\n")
    h.update(b"\x00")
    for iid in sorted(item_ids):
        h.update(iid.encode())
        h.update(b"\n")
    return h.hexdigest()


def _resolve_runs(instrument: Instrument, suite_ids: Sequence[str], runs: int | None) -> int:
    if runs is not None:
        if runs < 1:
            raise ConfigError(f"runs must be at least 1 (got {runs})")
        return runs
    per_suite = {s: instrument.suite(s).runs for s in suite_ids}
    values = sorted(set(per_suite.values()))
    if len(values) > 1:
        detail = ", ".join(f"{s} runs {n}" for s, n in per_suite.items())
        raise ConfigError(f"the suites disagree on the run count ({detail}); choose one with --empath-runs N")
    return values[0]


def _ordered_suites(instrument: Instrument, suite_ids: Sequence[str]) -> list[str]:
    """``suite_ids`` in order without repeats; ConfigError for an unknown id (with a suggestion)
    or an empty selection."""
    ordered: list[str] = []
    known = [s.id for s in instrument.suites]
    for sid in suite_ids:
        if sid not in known:
            guess = did_you_mean(sid, known)
            hint = f"did you mean {guess!r}?" if guess else f"choose one of: {', '.join(known)}"
            raise ConfigError(f"unknown suite {sid!r} — {hint}")
        if sid not in ordered:
            ordered.append(sid)
    if not ordered:
        raise ConfigError(f"no suite selected — choose one of: {', '.join(known)}")
    return ordered


def _plan_rows(
    instrument: Instrument,
    convs: dict[str, tuple[dict[str, object], set[str]]],
    metric_order: dict[str, int],
    n_runs: int,
) -> tuple[list[PlanConversation], list[PlanTranscript], list[PlanItem]]:
    """The plan's conversations, transcripts and tests from the selected conversations (their
    fields and metric ids), in conversation order then the instrument's metric order."""
    critical: dict[tuple[str, str], bool] = {}
    seeds = {s.id: s for s in instrument.seeds}
    personas = {p.id: p for p in instrument.personas}
    metrics = {m.id: m for m in instrument.metrics}
    conversations: list[PlanConversation] = []
    transcripts: list[PlanTranscript] = []
    items: list[PlanItem] = []
    for cid, (fields, metric_set) in convs.items():
        metric_ids = tuple(sorted(metric_set, key=metric_order.__getitem__))
        conv = PlanConversation.model_validate({**fields, "metric_ids": metric_ids})
        conversations.append(conv)
        transcripts += [PlanTranscript(transcript_id=f"{cid}-r{k}", conversation_id=cid, run=k)
                        for k in range(n_runs)]
        persona = personas[conv.persona_id]
        seed = seeds[conv.seed_id]
        loc = locale_marker(conv.locale)
        for mid in metric_ids:
            key = (mid, conv.suite)
            if key not in critical:
                critical[key] = instrument.thresholds.resolve(mid, conv.suite).critical
            metric = metrics[mid]
            mlabel = metric.label_es if conv.locale == "es-MX" else metric.label
            markers = ("empath", metric.group, loc, "critical") if critical[key] else (
                "empath", metric.group, loc)
            items.append(PlanItem(
                id=f"{cid}-{mid}", suite=conv.suite, conversation_id=cid, seed_id=seed.id,
                persona_id=persona.id, metric_id=mid, dimension=metric.group, locale=conv.locale,
                label=f"{mlabel} · {persona.name} · {seed.id} ({conv.locale})",
                critical=critical[key], markers=markers,
            ))
    return conversations, transcripts, items


def _select_conversations(instrument: Instrument, ordered: Sequence[str], max_turns: int | None
                          ) -> dict[str, tuple[dict[str, object], set[str]]]:
    """Conversation id -> (its fields, the metric ids its items judge) for the suites ``ordered``,
    in plan order; SuiteError when two different seed x persona pairs would share an id."""
    all_metrics = tuple(m.id for m in instrument.empath_metrics)
    dimension_of = {m.id: m.dimension for m in instrument.empath_metrics if m.dimension}
    by_locale = personas_by_locale(instrument.personas)

    # conversation id -> [conversation fields, metric id set]
    convs: dict[str, tuple[dict[str, object], set[str]]] = {}
    pair_of: dict[str, tuple[str, str]] = {}
    for sid in ordered:
        suite = instrument.suite(sid)
        for seed in suite_seeds(suite, instrument.seeds, dimension_of):
            wanted = (*(all_metrics if suite.metrics == "all" else seed.primary_metrics),
                      *(m.id for f in suite.families for m in instrument.family_metrics(f)))
            for persona in assign_personas(suite.personas, seed, by_locale):
                cid = f"{seed.id}-{persona.id}"
                pair = (seed.id, persona.id)
                if pair_of.setdefault(cid, pair) != pair:
                    other_seed, other_persona = pair_of[cid]
                    raise SuiteError(f"seed {seed.id!r} x persona {persona.id!r} and seed {other_seed!r} x "
                                     f"persona {other_persona!r} both give the id {cid!r}; rename one")
                if cid not in convs:
                    turns = max_turns or seed.max_turns or suite.max_turns
                    fields: dict[str, object] = {
                        "conversation_id": cid, "seed_id": seed.id, "persona_id": persona.id,
                        "suite": sid, "locale": seed.locale, "max_turns": turns,
                    }
                    convs[cid] = (fields, set())
                convs[cid][1].update(wanted)
    return convs


def build_plan(
    instrument: Instrument,
    suite_ids: Sequence[str],
    runs: int | None = None,
    max_turns: int | None = None,
) -> Plan:
    """The plan of ``suite_ids`` (in that order; repeats ignored).

    ``runs`` overrides the suites' run count (else they must agree); ``max_turns`` overrides
    every conversation's turn budget (else the seed's ``max_turns``, else the suite's).

    Raises ConfigError for an empty or unknown suite id, disagreeing run counts or a bad
    override; SuiteError when two different seed x persona pairs would share an id.
    Cost: linear in the number of items (45k items build in about a second).
    """
    ordered = _ordered_suites(instrument, suite_ids)
    if max_turns is not None and max_turns < 1:
        raise ConfigError(f"max_turns must be at least 1 (got {max_turns})")
    n_runs = _resolve_runs(instrument, ordered, runs)

    metric_order = {m.id: i for i, m in enumerate(instrument.metrics)}
    convs = _select_conversations(instrument, ordered, max_turns)
    conversations, transcripts, items = _plan_rows(instrument, convs, metric_order, n_runs)
    plan_id = compute_plan_id(instrument.version, ordered, n_runs,
                              [t.transcript_id for t in transcripts], [i.id for i in items])
    return Plan(plan_id=plan_id, instrument_version=instrument.version, suites=tuple(ordered), runs=n_runs,
                conversations=tuple(conversations), transcripts=tuple(transcripts), items=tuple(items))


class PlanCounts(_Frozen):
    """The sizes of a plan without its rows: distinct ``seeds``, ``conversations``, ``items``
    (tests) and ``runs``, equal to those of :func:`build_plan` on the same arguments."""

    seeds: int = Field(ge=0)
    conversations: int = Field(ge=0)
    items: int = Field(ge=0)
    runs: int = Field(ge=1)


def plan_counts(instrument: Instrument, suite_ids: Sequence[str], runs: int | None = None) -> PlanCounts:
    """The counts of ``build_plan(instrument, suite_ids, runs)`` by the same selection, without
    building its conversations, transcripts and items (what ``empath-gate validate`` prints:
    linear in the selected conversations, no model per test). Raises what :func:`build_plan` does."""
    ordered = _ordered_suites(instrument, suite_ids)
    n_runs = _resolve_runs(instrument, ordered, runs)
    convs = _select_conversations(instrument, ordered, None)
    return PlanCounts(seeds=len({str(fields["seed_id"]) for fields, _ in convs.values()}),
                      conversations=len(convs), items=sum(len(m) for _, m in convs.values()), runs=n_runs)


def parse_shard(text: str) -> ShardSpec:
    """Parse ``"K/N"`` (1 <= K <= N); raises ConfigError saying the expected form."""
    parts = text.strip().split("/")
    try:
        k, n = (int(p) for p in parts)
    except ValueError:
        raise ConfigError(f"shard {text!r} is not of the form K/N, e.g. 2/4") from None
    if not 1 <= k <= n:
        top = max(n, 1)
        raise ConfigError(f"shard {text!r}: K must be between 1 and N, e.g. 1/{top} ... {top}/{top}")
    return ShardSpec(index=k, count=n)


def shard(plan: Plan, k: int, n: int) -> Plan:
    """Shard ``k`` (1-based) of ``n``: a deterministic partition by conversation.

    Conversation ids are sorted and dealt round-robin (the i-th sorted id goes to shard
    ``i mod n + 1``), so shards differ in size by at most one conversation. The shards of a
    plan are disjoint and their union is the plan; each keeps the plan's order and ``plan_id``
    and records ``shard = k/n``. Raises ConfigError for a bad ``k``/``n`` or a plan that is
    already a shard.
    """
    if not 1 <= k <= n:
        raise ConfigError(f"shard {k}/{n}: K must be between 1 and N")
    if plan.shard is not None:
        raise ConfigError(f"this plan is already shard {plan.shard}; shard the full plan")
    ordered = sorted(c.conversation_id for c in plan.conversations)
    mine = {cid for i, cid in enumerate(ordered) if i % n == k - 1}
    return Plan(
        plan_id=plan.plan_id,
        instrument_version=plan.instrument_version,
        suites=plan.suites,
        runs=plan.runs,
        conversations=tuple(c for c in plan.conversations if c.conversation_id in mine),
        transcripts=tuple(t for t in plan.transcripts if t.conversation_id in mine),
        items=tuple(i for i in plan.items if i.conversation_id in mine),
        shard=ShardSpec(index=k, count=n),
    )


def offline_subset(plan: Plan, instrument: Instrument, per_metric_locale: int) -> Plan:
    """The plan restricted to the first ``per_metric_locale`` conversations (plan order) of each
    (seed's first primary metric, locale): the documented run size of the offline profile on
    the embedded bot. A different selection, so a new ``plan_id``. Raises ConfigError for a
    count below 1 or a plan that is already a shard (take the subset first)."""
    if per_metric_locale < 1:
        raise ConfigError(f"offline subset: per_metric_locale must be at least 1 (got {per_metric_locale})")
    if plan.shard is not None:
        raise ConfigError("take the offline subset of the full plan, then shard it")
    taken: dict[tuple[str, str], int] = {}
    keep: set[str] = set()
    for c in plan.conversations:
        key = (instrument.seed(c.seed_id).primary_metrics[0], c.locale)
        if taken.get(key, 0) < per_metric_locale:
            taken[key] = taken.get(key, 0) + 1
            keep.add(c.conversation_id)
    transcripts = tuple(t for t in plan.transcripts if t.conversation_id in keep)
    items = tuple(i for i in plan.items if i.conversation_id in keep)
    return Plan(
        plan_id=compute_plan_id(
            plan.instrument_version, plan.suites, plan.runs,
            [t.transcript_id for t in transcripts], [i.id for i in items],
        ),
        instrument_version=plan.instrument_version,
        suites=plan.suites,
        runs=plan.runs,
        conversations=tuple(c for c in plan.conversations if c.conversation_id in keep),
        transcripts=transcripts,
        items=items,
    )


__all__ = [
    "Plan", "PlanConversation", "PlanItem", "PlanTranscript", "ShardSpec", "build_plan",
    "compute_plan_id", "locale_marker", "offline_subset", "parse_shard", "shard",
]
