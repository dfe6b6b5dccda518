"""The dynamics report of a set of conversations: every level in one frozen document (pure).

:func:`build_report` takes the labelled conversations and the annotator failures of one set
(a suite of a run, or the files given to ``empath-gate dynamics``) and computes the
transitions (per conversation, pooled per group and overall), the role interplay, the
trajectories with their shapes, the clusters, the intervention units per strategy, the risky
interventions and the profile x strategy table. A failed conversation contributes nothing and
is listed in ``failures``. The JSON Schema of the document ships as
``empath_gate/schemas/dynamics.schema.json`` (:func:`dynamics_json_schema`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from pydantic import Field

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.dynamics.archetypes import (
    DELTA,
    MIN_REVERSALS,
    MIN_USER_TURNS,
    NEGATIVE_MEAN,
    SHAPES,
    SWING,
    TRAJECTORY_POINTS,
    Shape,
    resample,
    shape_of,
)
from empath_gate.analysis.dynamics.clusters import SEED, Clustering, cluster_trajectories
from empath_gate.analysis.dynamics.feeling import (
    FeelingTrajectory,
    feeling_agreement,
    feeling_trajectory,
    paired_feelings,
)
from empath_gate.analysis.dynamics.inputs import LabelledConversation
from empath_gate.analysis.dynamics.interventions import (
    ESCALATION_DELTA,
    ProfileStrategyCell,
    RiskyIntervention,
    StrategyOutcome,
    summarise_units,
)
from empath_gate.analysis.dynamics.transitions import (
    DEFAULT_ALPHA,
    Interplay,
    TransitionMatrix,
    conversation_counts,
    pooled_interplay,
    pooled_transitions,
    sparse,
    states_of,
)
from empath_gate.turns.external import InputProblem
from empath_gate.turns.model import AnnotatorFailure, TurnLabel

DYNAMICS_SCHEMA_VERSION = "1"
"""Version of the dynamics document; a change of shape bumps it."""


class Parameters(AnalysisModel):
    """The constants the report was computed with (their sources are in the modules):
    smoothing ``alpha``, the shape thresholds, the escalation delta, the cluster seed and the
    grouping keys of the pooled statistics."""

    alpha: float
    trajectory_points: int
    min_user_turns: int
    shape_delta: float
    swing: float
    min_reversals: int
    negative_mean: float
    escalation_delta: float
    cluster_seed: int
    group_keys: tuple[str, ...]


class ConversationDynamics(AnalysisModel):
    """One labelled conversation: its ``keys`` and ``profiles``, annotator and version, the
    per-message ``labels``, ``user_messages`` (count), the resampled ``trajectory`` (10
    valences; ``None`` without user messages), its ``shape``, its ``cluster`` (``None`` when
    not clustered), ``risk_messages`` (1-based positions of explicit risk statements),
    ``risk_speakers`` (multi-party conversations: who wrote each of them; empty otherwise), and its
    own transition counts as ``(from, to, count)`` (``user_transitions``,
    ``bot_transitions``; smoothed probabilities: :func:`~.transitions.smoothed` of the
    counts); ``feeling``: the seeker's own feeling trajectory when the input carries one
    (:mod:`.feeling`; ``None`` otherwise)."""

    conversation_id: str
    keys: dict[str, str]
    profiles: tuple[str, ...]
    annotator: str
    version: str
    labels: tuple[TurnLabel, ...]
    user_messages: int
    trajectory: tuple[float, ...] | None
    shape: Shape
    cluster: int | None
    risk_messages: tuple[int, ...]
    risk_speakers: tuple[str, ...] = ()
    user_transitions: tuple[tuple[str, str, int], ...]
    bot_transitions: tuple[tuple[str, str, int], ...]
    feeling: FeelingTrajectory | None = None


class FailureEntry(AnalysisModel):
    """A conversation the annotator could not label: it contributes nothing to any statistic."""

    conversation_id: str
    keys: dict[str, str]
    annotator: str
    reason: str
    detail: str


class DynamicsReport(AnalysisModel):
    """Every level of the dynamics of one set of conversations (module docstring).

    Counts: ``conversations`` given, ``labelled``, ``failed`` (= ``len(failures)``).
    ``annotators``: ``"<kind> <version>" -> conversations labelled``. ``transitions``: pooled
    per group of ``parameters.group_keys`` and role; ``overall``: pooled over everything, per
    role. ``interplay``: per group. ``shapes``: every shape label -> conversations (zeros
    included). ``clustering``: the clusters (``assignment`` is empty here; each conversation
    carries its ``cluster``). ``strategies``: one outcome per support strategy. ``risky``: the
    risky interventions. ``profile_strategy``: the profile x strategy cells.
    ``input_problems``: rows of the input that were not analysed (set by the reader).
    ``feeling_shapes``: shape -> conversations whose seeker reported a feeling (empty when none
    did); ``feeling_agreement``: Spearman's rho of feeling vs annotator valence over the user
    messages with both (``None`` when not computable).
    """

    schema_version: str = DYNAMICS_SCHEMA_VERSION
    parameters: Parameters
    conversations: int
    labelled: int
    failed: int
    annotators: dict[str, int]
    failures: tuple[FailureEntry, ...]
    transitions: tuple[TransitionMatrix, ...]
    overall: tuple[TransitionMatrix, ...]
    interplay: tuple[Interplay, ...]
    shapes: dict[str, int]
    clustering: Clustering
    strategies: tuple[StrategyOutcome, ...]
    risky: tuple[RiskyIntervention, ...]
    profile_strategy: tuple[ProfileStrategyCell, ...]
    per_conversation: tuple[ConversationDynamics, ...]
    input_problems: tuple[InputProblem, ...] = ()
    feeling_shapes: dict[str, int] = Field(default_factory=dict)
    feeling_agreement: float | None = None


def build_report(
    labelled: Sequence[LabelledConversation],
    failures: Sequence[tuple[AnnotatorFailure, dict[str, str]]] = (),
    *,
    group_keys: Sequence[str] = ("suite", "locale"),
    alpha: float = DEFAULT_ALPHA,
    seed: int = SEED,
    input_problems: Sequence[InputProblem] = (),
) -> DynamicsReport:
    """The :class:`DynamicsReport` of ``labelled`` conversations, with ``failures`` (each an
    annotator failure and its conversation's keys) listed and counted. Integration into a run
    is one call per suite (its conversations, ``group_keys`` such as ``("locale",)``).
    ValueError when ``alpha < 0``."""
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    valences = [[t.valence for t in c.labels if t.role == "user"] for c in labelled]
    trajectories = [resample(v) if v else None for v in valences]
    shapes = [shape_of(v) for v in valences]
    clusterable = [i for i, t in enumerate(trajectories) if t is not None and shapes[i] != "too_short"]
    clustering = cluster_trajectories(
        np.array([trajectories[i] for i in clusterable]).reshape(len(clusterable), TRAJECTORY_POINTS),
        seed=seed,
    )
    cluster_of: dict[int, int] = (
        dict(zip(clusterable, clustering.assignment, strict=True)) if clustering.k is not None else {}
    )
    per_conv = []
    feelings = [feeling_trajectory(c.feelings) for c in labelled]
    pairs = [p for i, c in enumerate(labelled) for p in paired_feelings(c.feelings, valences[i])]
    for i, c in enumerate(labelled):
        traj = trajectories[i]
        per_conv.append(
            ConversationDynamics(
                conversation_id=c.conversation_id,
                keys=c.keys,
                profiles=c.profiles,
                annotator=c.annotator,
                version=c.version,
                labels=c.labels,
                user_messages=len(valences[i]),
                trajectory=tuple(round(float(x), 4) for x in traj) if traj is not None else None,
                shape=shapes[i],
                cluster=cluster_of.get(i),
                risk_messages=tuple(t + 1 for t in c.risk_turns),
                risk_speakers=c.risk_speakers,
                user_transitions=sparse(conversation_counts(c, "user"), states_of("user")),
                bot_transitions=sparse(conversation_counts(c, "assistant"), states_of("assistant")),
                feeling=feelings[i],
            )
        )
    counted = Counter(shapes)
    summary = summarise_units(labelled)
    return DynamicsReport(
        parameters=Parameters(
            alpha=alpha,
            trajectory_points=TRAJECTORY_POINTS,
            min_user_turns=MIN_USER_TURNS,
            shape_delta=DELTA,
            swing=SWING,
            min_reversals=MIN_REVERSALS,
            negative_mean=NEGATIVE_MEAN,
            escalation_delta=ESCALATION_DELTA,
            cluster_seed=seed,
            group_keys=tuple(group_keys),
        ),
        conversations=len(labelled) + len(failures),
        labelled=len(labelled),
        failed=len(failures),
        annotators=dict(sorted(Counter(f"{c.annotator} {c.version}".strip() for c in labelled).items())),
        failures=tuple(
            FailureEntry(
                conversation_id=f.conversation_id,
                keys=dict(keys),
                annotator=f.annotator,
                reason=f.reason,
                detail=f.detail,
            )
            for f, keys in failures
        ),
        transitions=pooled_transitions(labelled, group_keys, alpha),
        overall=pooled_transitions(labelled, (), alpha),
        interplay=pooled_interplay(labelled, group_keys, alpha),
        shapes={s: counted.get(s, 0) for s in SHAPES},
        clustering=clustering.model_copy(update={"assignment": ()}),
        strategies=summary.outcomes,
        risky=summary.risky,
        profile_strategy=summary.profile_strategy,
        per_conversation=tuple(per_conv),
        input_problems=tuple(input_problems),
        feeling_shapes=_feeling_shapes(feelings),
        feeling_agreement=feeling_agreement(pairs),
    )


def _feeling_shapes(feelings: Sequence[FeelingTrajectory | None]) -> dict[str, int]:
    """Shape -> conversations with a feeling (every shape listed), ``{}`` when none has one."""
    known = Counter(f.shape for f in feelings if f is not None)
    return {s: known.get(s, 0) for s in SHAPES} if known else {}


def dynamics_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of the dynamics document, generated from the models."""
    schema = DynamicsReport.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://empath-gate.dev/schemas/dynamics-{DYNAMICS_SCHEMA_VERSION}.json"
    return schema
