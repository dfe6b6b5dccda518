"""Word valences fitted on the project's own gold: the offline annotator's user-turn word table
(rules ``offline-7``).

A linear bag-of-words model is a weighted lexicon. ``bench/fit_user_valence.py`` fits one per
locale with ridge regression on the hand-labelled user turns of the project's gold
(``bench/data/annotator-gold/``, the sets named in the table's header) and writes it to
``data/user-valence-<locale>.json`` next to this module; the annotator only reads it. The data
and the weights are the project's own (no third-party data). The table is fitted on gold that
the project's own writers wrote and labelled, so it may carry their style and topics.

**Features** (:func:`features`): the turn's tokens after :func:`~empath_gate.turns.lexmatch.tokens`
(lower case, accents folded), placeholders such as ``{age}`` removed, tokens with a digit
dropped; each word (``w:<word>``), each pair of adjacent words in one clause (``b:<w1>_<w2>``;
clause punctuation breaks a pair), and the marks ``?`` and ``!`` (``w:?``, ``w:!``); each counted
once. The fitting script keeps only features seen in enough scripts and drops those naming people
or places (see the table's header).

**Valence** (:func:`fitted_valence`): ``rule_weight x rule + intercept + sum(weights of the
turn's features) / sqrt(number of the turn's features)``, where ``rule`` is the valence the rules
gave the turn (context included), clamped to -1..1. A turn the rules read at or below
:data:`KEEP_BELOW` (a risk statement's cap) is never raised: the table only adds nuance where
the rules did not already find risk. The table has no negation, so it can move a negated
feeling ("I'm not hopeless", labelled ``relief_calm`` by the rules) below 0; keeping the rules'
sign on labelled turns ranked worse in cross-validation (README, "What changed in offline-7").

Reading goes through :mod:`empath_gate.bounded`; a malformed table is a
:class:`~empath_gate.errors.SuiteError` (fail closed: no silent fallback to the rules alone).
"""

from __future__ import annotations

import contextlib
import math
import re
from collections.abc import Iterator
from contextvars import ContextVar
from functools import cache
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from empath_gate.bounded import read_json
from empath_gate.errors import SuiteError
from empath_gate.turns.lexmatch import PUNCTUATION, tokens
from empath_gate.turns.model import TurnLabel

DATA = Path(__file__).resolve().parent / "data"
"""Folder of the fitted tables (``user-valence-<locale>.json``)."""
KEEP_BELOW = -0.85
"""A rule valence at or below this is kept as the ceiling (the offline rules' risk cap,
``offline.RISK_VALENCE``)."""
MAX_FEATURES = 20_000
"""Most features a table may hold (a bound on the input, far above the fitted tables' size)."""
MAX_WEIGHT = 1.0
"""Largest |weight| a table may hold (the fitting script caps lower; see the table header)."""
_PLACEHOLDER = re.compile(r"\{[^{}]*\}")
_MARKS = frozenset("?!")

_rules_only: ContextVar[bool] = ContextVar("empath_gate_user_fitted_rules_only", default=False)


class ValenceTable(BaseModel):
    """One locale's fitted table: ``version`` (semver), ``locale``, ``provenance`` (free text:
    gold sets, lambda, feature rule, date), ``rule_weight`` and ``intercept`` (-2..2),
    ``weights`` feature -> weight (|w| <= :data:`MAX_WEIGHT`, at most :data:`MAX_FEATURES`)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = Field(pattern=r"^\d+\.\d+\.\d+$")
    locale: str
    provenance: dict[str, str | int | float | list[str]]
    rule_weight: float = Field(ge=-2.0, le=2.0)
    intercept: float = Field(ge=-2.0, le=2.0)
    weights: dict[str, float] = Field(max_length=MAX_FEATURES)

    def model_post_init(self, _context: object) -> None:
        bad = [k for k, w in self.weights.items() if not abs(w) <= MAX_WEIGHT or k[:2] not in ("w:", "b:")]
        if bad:
            raise ValueError(f"feature {bad[0]!r}: weight over {MAX_WEIGHT} or not a w:/b: feature")


def features(text: str) -> set[str]:
    """The features of a user turn's ``text`` (module docstring): ``w:<word>``, ``b:<w1>_<w2>``,
    ``w:?`` / ``w:!``. Pure."""
    out: set[str] = set()
    prev: str | None = None
    for tok in tokens(_PLACEHOLDER.sub(" ", text)):
        if tok in PUNCTUATION:
            if tok in _MARKS:
                out.add(f"w:{tok}")
            prev = None
            continue
        if any(c.isdigit() for c in tok):
            prev = None
            continue
        out.add(f"w:{tok}")
        if prev is not None:
            out.add(f"b:{prev}_{tok}")
        prev = tok
    return out


def score(text: str, table: ValenceTable) -> float:
    """The bag-of-words part of :func:`fitted_valence`: the sum of the weights of ``text``'s
    features divided by the square root of its number of features (0 for none). Pure."""
    feats = features(text)
    if not feats:
        return 0.0
    return sum(table.weights.get(f, 0.0) for f in feats) / math.sqrt(len(feats))


def fitted_valence(rule: float, text: str, table: ValenceTable) -> float:
    """A user turn's valence (-1..1, rounded to 3 places) from the rules' valence ``rule``
    (-1..1) and the turn's ``text`` (module docstring). Pure."""
    v = table.rule_weight * rule + table.intercept + score(text, table)
    if rule <= KEEP_BELOW:
        v = min(v, rule)
    return round(max(-1.0, min(1.0, v)), 3)


@cache
def table_for(locale: str) -> ValenceTable | None:
    """The shipped table of ``locale`` (read once), ``None`` when the package has none for it.
    Raises :class:`SuiteError` for a table that is not valid, or for one of another locale."""
    path = DATA / f"user-valence-{locale}.json"
    if not path.exists():
        return None
    try:
        table = ValenceTable.model_validate(read_json(path))
    except (ValueError, ValidationError) as exc:
        raise SuiteError(f"{path}: not a valid user valence table ({exc})") from exc
    if table.locale != locale:
        raise SuiteError(f"{path}: table of locale {table.locale!r}, not {locale!r}")
    return table


def table_version(locale: str) -> str | None:
    """``uv-<locale>-<version>`` of the shipped table of ``locale``, ``None`` without one."""
    table = table_for(locale)
    return None if table is None else f"uv-{locale}-{table.version}"


@contextlib.contextmanager
def rules_only() -> Iterator[None]:
    """Within this block the annotator gives the rules' valence, without the table (what the
    fitting script fits on)."""
    token = _rules_only.set(True)
    try:
        yield
    finally:
        _rules_only.reset(token)


def apply_table(got: TurnLabel, text: str, locale: str) -> TurnLabel:
    """The rules' user-turn label ``got`` with the valence of :func:`fitted_valence` (the shipped
    table of ``locale``, ``text`` the turn's); ``got`` unchanged when the package has no table
    for the locale or inside :func:`rules_only`."""
    table = None if _rules_only.get() else table_for(locale)
    if table is None:
        return got
    return got.model_copy(update={"valence": fitted_valence(got.valence, text, table)})


__all__ = ["DATA", "KEEP_BELOW", "MAX_FEATURES", "MAX_WEIGHT", "ValenceTable", "apply_table", "features",
           "fitted_valence", "rules_only", "score", "table_for", "table_version"]
