"""First-order transitions between turn labels, per conversation and pooled, and the role
interplay (pure).

Within one role, a transition is a pair of consecutive messages of that role: user message k
to user message k+1 (over :data:`~empath_gate.turns.model.USER_LABELS`), bot message k to bot
message k+1 (over :data:`~empath_gate.turns.model.BOT_LABELS`); messages of the other role in
between are skipped. The **role interplay** is the triple (user label at a user message ->
label of the next bot message -> label of the next user message after that bot message).

Probabilities use add-alpha smoothing: ``P(j | i) = (n_ij + alpha) / (n_i + K * alpha)`` for
``K`` states. :data:`DEFAULT_ALPHA` is 0.5, Jeffreys' prior for a multinomial (the
Krichevsky-Trofimov estimator): it keeps every probability above zero for transitions that
were not seen, and pulls a row with few observations less towards uniform than Laplace's
``alpha = 1``; a pooled row of hundreds of transitions is barely moved. A row with no
observation at all is uniform (``1/K``) under smoothing: read it with its count (``row
totals``), which every result carries; with ``alpha = 0`` such a row is NaN (no data).
"""

from __future__ import annotations

import itertools
from collections import defaultdict
from collections.abc import Iterable, Sequence

import numpy as np

from empath_gate.analysis.base import AnalysisModel
from empath_gate.analysis.dynamics.inputs import LabelledConversation
from empath_gate.turns.model import BOT_LABELS, USER_LABELS, Role, TurnLabel

DEFAULT_ALPHA = 0.5
"""Add-alpha smoothing constant: Jeffreys' prior (module docstring)."""


def states_of(role: Role) -> tuple[str, ...]:
    """The label set of a role: :data:`USER_LABELS` or :data:`BOT_LABELS`."""
    return USER_LABELS if role == "user" else BOT_LABELS


def transition_counts(sequence: Sequence[str], states: Sequence[str]) -> np.ndarray:
    """``K x K`` integer counts of consecutive pairs of ``sequence`` (labels of one role, in
    order); row = from, column = to, in the order of ``states``. KeyError for a label not in
    ``states``."""
    index = {s: i for i, s in enumerate(states)}
    counts = np.zeros((len(states), len(states)), dtype=np.int64)
    for a, b in itertools.pairwise(sequence):
        counts[index[a], index[b]] += 1
    return counts


def smoothed(counts: np.ndarray, alpha: float = DEFAULT_ALPHA) -> np.ndarray:
    """Row-normalised add-alpha probabilities of a ``K x K`` (or ``... x K``) count array:
    ``(n + alpha) / (row total + K * alpha)`` along the last axis. ``alpha >= 0`` (ValueError
    otherwise); with ``alpha = 0`` a row without counts is NaN."""
    if alpha < 0:
        raise ValueError(f"alpha must be >= 0, got {alpha}")
    k = counts.shape[-1]
    totals = counts.sum(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        out: np.ndarray = (counts + alpha) / (totals + k * alpha)
    return out


def role_labels(labels: Iterable[TurnLabel], role: Role) -> list[str]:
    """The primary labels of ``role``'s messages, in order."""
    return [t.label for t in labels if t.role == role]


def conversation_counts(conv: LabelledConversation, role: Role) -> np.ndarray:
    """The transition counts of one conversation and role (:func:`transition_counts`)."""
    return transition_counts(role_labels(conv.labels, role), states_of(role))


def sparse(counts: np.ndarray, states: Sequence[str]) -> tuple[tuple[str, str, int], ...]:
    """The non-zero cells of a count matrix as ``(from, to, count)``, row-major."""
    rows, cols = np.nonzero(counts)
    return tuple((states[int(r)], states[int(c)], int(counts[r, c])) for r, c in zip(rows, cols, strict=True))


def interplay_counts(labels: Sequence[TurnLabel]) -> np.ndarray:
    """``U x B x U`` counts of (user label, next bot label, next user label) triples of one
    conversation: for each bot message that has a user message before and after it, the last
    user message before it and the first user message after it."""
    u_index = {s: i for i, s in enumerate(USER_LABELS)}
    b_index = {s: i for i, s in enumerate(BOT_LABELS)}
    counts = np.zeros((len(USER_LABELS), len(BOT_LABELS), len(USER_LABELS)), dtype=np.int64)
    last_user: str | None = None
    pending: list[str] = []  # bot labels since the last user message
    for t in labels:
        if t.role == "assistant":
            if last_user is not None:
                pending.append(t.label)
            continue
        for b in pending:
            assert last_user is not None
            counts[u_index[last_user], b_index[b], u_index[t.label]] += 1
        pending = []
        last_user = t.label
    return counts


class TransitionMatrix(AnalysisModel):
    """A pooled (or one conversation's) transition matrix of one role.

    ``group``: the grouping key values (``{}``: everything). ``states``: the role's labels,
    row and column order. ``counts[i][j]``: transitions from ``states[i]`` to ``states[j]``;
    ``row_totals[i]`` their row sums; ``probabilities[i][j]``: add-``alpha`` smoothed
    P(next = j | current = i), each row sums to 1. ``conversations``: how many conversations
    contributed at least one transition; ``transitions``: the total count."""

    group: dict[str, str]
    role: Role
    states: tuple[str, ...]
    alpha: float
    conversations: int
    transitions: int
    counts: tuple[tuple[int, ...], ...]
    row_totals: tuple[int, ...]
    probabilities: tuple[tuple[float, ...], ...]


def matrix_of(
    counts: np.ndarray, *, group: dict[str, str], role: Role, alpha: float, conversations: int
) -> TransitionMatrix:
    """A :class:`TransitionMatrix` from a count array (probabilities rounded to 6 decimals)."""
    probs = smoothed(counts, alpha)
    return TransitionMatrix(
        group=group,
        role=role,
        states=states_of(role),
        alpha=alpha,
        conversations=conversations,
        transitions=int(counts.sum()),
        counts=tuple(tuple(int(x) for x in row) for row in counts),
        row_totals=tuple(int(x) for x in counts.sum(axis=1)),
        probabilities=tuple(tuple(round(float(x), 6) for x in row) for row in probs),
    )


def conversation_matrix(
    conv: LabelledConversation, role: Role, alpha: float = DEFAULT_ALPHA
) -> TransitionMatrix:
    """One conversation's own transition matrix of ``role`` (``group`` = its ``keys``,
    ``conversations`` 1, or 0 when it has no transition of that role)."""
    counts = conversation_counts(conv, role)
    return matrix_of(counts, group=dict(conv.keys), role=role, alpha=alpha, conversations=int(counts.any()))


def group_of(conv: LabelledConversation, keys: Sequence[str]) -> tuple[str, ...]:
    """The values of ``keys`` in a conversation's ``keys`` (``""`` for a missing one)."""
    return tuple(conv.keys.get(k, "") for k in keys)


def pooled_transitions(
    convs: Iterable[LabelledConversation], keys: Sequence[str] = (), alpha: float = DEFAULT_ALPHA
) -> tuple[TransitionMatrix, ...]:
    """One matrix per group of ``keys`` values and role (user first), groups in sorted order;
    ``keys=()`` pools everything. Groups where a role has no transition are left out."""
    totals: dict[tuple[tuple[str, ...], Role], np.ndarray] = {}
    contributing: dict[tuple[tuple[str, ...], Role], int] = defaultdict(int)
    for conv in convs:
        g = group_of(conv, keys)
        roles: tuple[Role, Role] = ("user", "assistant")
        for role in roles:
            c = conversation_counts(conv, role)
            if not c.any():
                continue
            key: tuple[tuple[str, ...], Role] = (g, role)
            totals[key] = totals[key] + c if key in totals else c
            contributing[key] += 1
    order = sorted(totals, key=lambda gk: (gk[0], gk[1] != "user"))
    return tuple(
        matrix_of(
            totals[gk],
            group=dict(zip(keys, gk[0], strict=True)),
            role=gk[1],
            alpha=alpha,
            conversations=contributing[gk],
        )
        for gk in order
    )


class Interplay(AnalysisModel):
    """The role interplay of a group: user label -> next bot label -> next user label.

    ``triples``: the non-zero counts as ``(user, bot, next_user, count)``.
    ``bot_given_user[u][b]``: smoothed P(bot label b | user label u) over the triples (rows
    over :data:`USER_LABELS`, columns over :data:`BOT_LABELS`); ``user_totals[u]`` the
    triples starting at u. ``next_given_user_bot``: ``(user, bot, next_user, p)`` smoothed
    P(next user label | user label, bot label) for every observed (user, bot) pair and every
    next user label seen after that pair; ``pair_totals`` the counts of each observed
    (user, bot) pair as ``(user, bot, n)``."""

    group: dict[str, str]
    alpha: float
    conversations: int
    total: int
    triples: tuple[tuple[str, str, str, int], ...]
    user_totals: tuple[int, ...]
    bot_given_user: tuple[tuple[float, ...], ...]
    pair_totals: tuple[tuple[str, str, int], ...]
    next_given_user_bot: tuple[tuple[str, str, str, float], ...]


def interplay_of(counts: np.ndarray, *, group: dict[str, str], alpha: float, conversations: int) -> Interplay:
    """An :class:`Interplay` from a ``U x B x U`` count array."""
    ub = counts.sum(axis=2)
    p_bot = smoothed(ub, alpha)
    p_next = smoothed(counts, alpha)
    triples, nexts, pairs = [], [], []
    for u, b in zip(*np.nonzero(ub), strict=True):
        pairs.append((USER_LABELS[u], BOT_LABELS[b], int(ub[u, b])))
        for n in np.nonzero(counts[u, b])[0]:
            triples.append((USER_LABELS[u], BOT_LABELS[b], USER_LABELS[n], int(counts[u, b, n])))
            nexts.append((USER_LABELS[u], BOT_LABELS[b], USER_LABELS[n], round(float(p_next[u, b, n]), 6)))
    return Interplay(
        group=group,
        alpha=alpha,
        conversations=conversations,
        total=int(counts.sum()),
        triples=tuple(triples),
        user_totals=tuple(int(x) for x in ub.sum(axis=1)),
        bot_given_user=tuple(tuple(round(float(x), 6) for x in row) for row in p_bot),
        pair_totals=tuple(pairs),
        next_given_user_bot=tuple(nexts),
    )


def pooled_interplay(
    convs: Iterable[LabelledConversation], keys: Sequence[str] = (), alpha: float = DEFAULT_ALPHA
) -> tuple[Interplay, ...]:
    """One :class:`Interplay` per group of ``keys`` values (sorted); groups without a triple
    are left out."""
    totals: dict[tuple[str, ...], np.ndarray] = {}
    contributing: dict[tuple[str, ...], int] = defaultdict(int)
    for conv in convs:
        c = interplay_counts(conv.labels)
        if not c.any():
            continue
        g = group_of(conv, keys)
        totals[g] = totals[g] + c if g in totals else c
        contributing[g] += 1
    return tuple(
        interplay_of(
            totals[g], group=dict(zip(keys, g, strict=True)), alpha=alpha, conversations=contributing[g]
        )
        for g in sorted(totals)
    )
