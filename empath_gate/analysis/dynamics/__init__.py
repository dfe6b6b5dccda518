"""How a conversation unfolds: turn-label transitions, trajectory shapes and clusters,
intervention units (pure statistics over labelled conversations).

* :mod:`.inputs`: :class:`LabelledConversation` and the check of an annotation;
* :mod:`.transitions`: transition matrices (add-alpha smoothed) and the role interplay;
* :mod:`.archetypes`: trajectories resampled to 10 points and their rule-based shape;
* :mod:`.clusters`: k-means archetypes with k chosen by silhouette (descriptive only);
* :mod:`.interventions`: intervention units, per-strategy outcomes, risky interventions and
  the profile x strategy table;
* :mod:`.report`: :class:`DynamicsReport` and :func:`build_report`.
"""

from __future__ import annotations

from empath_gate.analysis.dynamics.archetypes import SHAPES, resample, shape_of
from empath_gate.analysis.dynamics.clusters import Clustering, cluster_trajectories, silhouette
from empath_gate.analysis.dynamics.inputs import LabelledConversation, checked_annotation, labelled
from empath_gate.analysis.dynamics.interventions import (
    InterventionUnit,
    RiskyIntervention,
    intervention_units,
    risky_interventions,
    strategy_outcomes,
)
from empath_gate.analysis.dynamics.report import (
    DynamicsReport,
    build_report,
    dynamics_json_schema,
)
from empath_gate.analysis.dynamics.transitions import (
    DEFAULT_ALPHA,
    TransitionMatrix,
    conversation_matrix,
    pooled_interplay,
    pooled_transitions,
    smoothed,
    transition_counts,
)
from empath_gate.turns.external import InputProblem

__all__ = [
    "DEFAULT_ALPHA",
    "SHAPES",
    "Clustering",
    "DynamicsReport",
    "InputProblem",
    "InterventionUnit",
    "LabelledConversation",
    "RiskyIntervention",
    "TransitionMatrix",
    "build_report",
    "checked_annotation",
    "cluster_trajectories",
    "conversation_matrix",
    "dynamics_json_schema",
    "intervention_units",
    "labelled",
    "pooled_interplay",
    "pooled_transitions",
    "resample",
    "risky_interventions",
    "shape_of",
    "silhouette",
    "smoothed",
    "strategy_outcomes",
    "transition_counts",
]
