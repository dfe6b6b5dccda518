"""The plan: building it from the instrument (:mod:`.build`), choosing it for a run's profile and
rebuilding it from a results file (:mod:`.rebuild`), and the dry-run estimate (:mod:`.estimate`)."""

from empath_gate.plan.build import (
    Plan,
    PlanConversation,
    PlanCounts,
    PlanItem,
    PlanTranscript,
    ShardSpec,
    build_plan,
    compute_plan_id,
    locale_marker,
    offline_subset,
    parse_shard,
    plan_counts,
    shard,
)

__all__ = [
    "Plan",
    "PlanConversation",
    "PlanCounts",
    "PlanItem",
    "PlanTranscript",
    "ShardSpec",
    "build_plan",
    "compute_plan_id",
    "locale_marker",
    "offline_subset",
    "parse_shard",
    "plan_counts",
    "shard",
]
