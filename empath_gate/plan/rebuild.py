"""The plan of a run: made once from the suites, run count, offline subset, turn cap and shard,
and rebuilt from a results file's metadata by the same function (``gate``, ``merge``,
``rejudge``, ``diff`` all rebuild here, so they see the plan the run saw)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from empath_gate.errors import ConfigError
from empath_gate.plan.build import Plan, build_plan, offline_subset, parse_shard, shard

if TYPE_CHECKING:
    from empath_gate.instrument.models import Instrument
    from empath_gate.results.model import ResultsMetadata
    from empath_gate.settings.profile import Profile


def make_plan(
    instrument: Instrument,
    suites: Sequence[str],
    *,
    runs: int | None,
    subset: int | None = None,
    shard_spec: str | None = None,
    turn_cap: Callable[[str, int], int] | None = None,
) -> Plan:
    """The plan of ``suites`` x ``runs`` (None: the suites' own), restricted to ``subset``
    conversations per (primary metric, locale) when given, with each conversation's
    ``max_turns`` passed through ``turn_cap``, then shard ``K/N`` when given. Raises ConfigError
    for an unknown suite or a malformed shard."""
    plan = build_plan(instrument, list(suites), runs=runs)
    if subset:
        plan = offline_subset(plan, instrument, subset)
    if turn_cap is not None:
        plan = cap_turns(plan, turn_cap)
    if shard_spec:
        spec = parse_shard(shard_spec)
        plan = shard(plan, spec.index, spec.count)
    return plan


def plan_for_profile(
    instrument: Instrument, profile: Profile, suites: Sequence[str], *, shard_spec: str | None = None
) -> Plan:
    """The plan a run under ``profile`` makes (the offline profile's run count, subset and turn cap
    on the embedded bot, :mod:`empath_gate.settings.profile`)."""
    from empath_gate.settings.profile import OFFLINE_RUNS, offline_subset_size, turn_cap

    runs = profile.settings.runs
    if runs is None and profile.embedded_target and profile.scripted_auditor:
        runs = OFFLINE_RUNS
    plan = make_plan(
        instrument,
        suites,
        runs=runs,
        subset=offline_subset_size(profile),
        shard_spec=shard_spec,
        turn_cap=turn_cap(instrument, profile),
    )
    return mark_skips(plan, instrument, scripted=profile.scripted_auditor)


SKIP_NEEDS_LLM_AUDITOR = (
    "needs an LLM auditor: the seed has no script (auditor: llm), so the scripted auditor cannot "
    "play it; configure an auditor model"
)
"""Why a test of an ``auditor: llm`` seed is skipped under the scripted auditor (offline)."""


def mark_skips(plan: Plan, instrument: Instrument, *, scripted: bool) -> Plan:
    """``plan`` with ``skip`` set on the conversations (and their tests) this profile cannot run:
    with the scripted auditor, those of seeds marked ``auditor: llm`` (no script). The plan id
    is unchanged (the same tests, some of them skipped); ``plan`` itself when nothing is skipped."""
    if not scripted:
        return plan
    skipped = {c.conversation_id for c in plan.conversations if instrument.seed(c.seed_id).auditor == "llm"}
    if not skipped:
        return plan
    reason = SKIP_NEEDS_LLM_AUDITOR
    return plan.model_copy(update={
        "conversations": tuple(c.model_copy(update={"skip": reason}) if c.conversation_id in skipped else c
                               for c in plan.conversations),
        "items": tuple(i.model_copy(update={"skip": reason}) if i.conversation_id in skipped else i
                       for i in plan.items),
    })


def rebuild_plan(
    metadata: ResultsMetadata, instrument: Instrument, *, source: str, whole: bool = False
) -> Plan:
    """The plan a results file was made from, rebuilt from its metadata's suites, run count,
    offline subset and (unless ``whole``) shard. Raises ConfigError naming ``source`` when these
    instrument files give another plan (another instrument version, other suites or seeds)."""
    if metadata.instrument_version != instrument.version:
        raise ConfigError(
            f"{source}: made with instrument version {metadata.instrument_version}, but the instrument "
            f"files here are version {instrument.version}; use the same empath-gate version and suites"
        )
    try:
        plan = make_plan(instrument, metadata.suites, runs=metadata.runs, subset=metadata.offline_subset)
    except ConfigError as exc:
        raise ConfigError(
            f"{source}: cannot rebuild its plan: {exc}; give the suites files the run used "
            "(--suites-dir, [tool.empath-gate] suites_dirs)"
        ) from None
    if plan.plan_id != metadata.plan_id:
        raise ConfigError(
            f"{source}: its plan ({metadata.plan_id[:12]}) does not match the instrument loaded now, "
            f"which gives another plan for suites {', '.join(metadata.suites)} x {metadata.runs} runs "
            f"({plan.plan_id[:12]}); use the same empath-gate version and suites files as the run "
            "(--suites-dir, [tool.empath-gate] suites_dirs)"
        )
    if metadata.shard and not whole:
        spec = parse_shard(metadata.shard)
        plan = shard(plan, spec.index, spec.count)
    return plan


def cap_turns(plan: Plan, cap: Callable[[str, int], int]) -> Plan:
    """``plan`` with each conversation's ``max_turns`` replaced by ``cap(seed_id, max_turns)``."""
    convs = tuple(c.model_copy(update={"max_turns": cap(c.seed_id, c.max_turns)}) for c in plan.conversations)
    if all(a.max_turns == b.max_turns for a, b in zip(convs, plan.conversations, strict=True)):
        return plan
    return plan.model_copy(update={"conversations": convs})


def select_items(plan: Plan, item_ids: Sequence[str] | None) -> Plan:
    """The plan restricted to the selected tests (``-k``, ``-m``, ``--lf``): a deselected test is
    not run, so it is neither decided nor counted. ``None`` or every id: ``plan`` itself. The
    plan id stays the full plan's."""
    if item_ids is None or len(item_ids) == len(plan.items):
        return plan
    wanted = set(item_ids)
    items = tuple(i for i in plan.items if i.id in wanted)
    convs = {i.conversation_id for i in items}
    return plan.model_copy(
        update={
            "items": items,
            "conversations": tuple(c for c in plan.conversations if c.conversation_id in convs),
            "transcripts": tuple(t for t in plan.transcripts if t.conversation_id in convs),
        }
    )
