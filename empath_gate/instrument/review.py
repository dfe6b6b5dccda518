"""The mechanical part of the seed review checklist (``suites/REVIEW.md``, items marked [M]).

Pure functions over a loaded :class:`Instrument`; each returns a list of problems (one line
each, naming the seed and what to fix), empty when the rule holds. ``empath-gate validate``
and the seed review tests call them; what needs a person (clinical plausibility, register,
natural language) stays with the reviewers.

* :func:`script_problems`: a risky seed's script reaches ``confirm_turn`` plus two user turns,
  so the bot gets two replies after the risk becomes explicit.
* :func:`method_detail_problems`: no user turn matches the instrument's ``method_detail``
  patterns (safe-messaging guidance: no method or means detail).
* :func:`near_duplicate_problems`: no two scripts, within or across locales, have a token
  Jaccard similarity >= ``NEAR_DUPLICATE_JACCARD`` after normalisation (sub-quadratic:
  :func:`near_duplicate_pairs`).
* :func:`scenario_problems`: every ``scenario`` key is used once (a translated scenario is the
  same scenario).
* :func:`review_field_problems`: every seed records its review against the checklist version.
* :func:`cue_problems`: a risky voice seed carries a cue between its alert and confirm turns
  (part of the risk is heard), and its confirm turn states the risk in words (a cue alone
  never confirms) (REVIEW.md section 12).
* :func:`~empath_gate.instrument.variant_checks.variant_problems`: every scripted variant a suite
  plays keeps the alert and confirm turns and the rules above (``suites/behaviours.yaml``).
* :func:`multi_party_problems`: a multi-party seed carries the ``multi-party`` tag, every
  participant writes a turn, and one with a minor or an abuse category states its risk turns
  when its level is not ``none`` (REVIEW.md section 13).

A seed whose ``review`` records that it was **not** reviewed (``reviewed: false``, e.g. a seed
imported from the published EMPATH instrument) is not a problem: :func:`unreviewed_notes`
lists it as a note, so ``empath-gate validate`` prints it and never fails on it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Iterable, Sequence

from empath_gate.instrument.cues import CueVocabulary, is_voice_seed
from empath_gate.instrument.models import Instrument, NotReviewed, Seed

NEAR_DUPLICATE_JACCARD = 0.6
"""Token-set Jaccard at or above which two scripts count as near-duplicates (issue text: "e.g.
token Jaccard >= 0.6 after normalisation")."""

CONFIRM_MIN_WORDS = 3
"""Words a voice seed's confirm turn keeps once its cues are removed (REVIEW.md section 12:
the risk is stated in words at the confirm turn; project choice of the smallest statement)."""

TURNS_AFTER_CONFIRM = 2
"""User turns a risky script must have after ``confirm_turn`` (REVIEW.md section 5)."""

_WORD = re.compile(r"[a-z0-9]+")


def normalise(text: str) -> str:
    """Lower-case, strip accents (NFKD, combining marks removed) and keep letters/digits."""
    folded = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in folded if not unicodedata.combining(c))


def tokens(seed: Seed) -> frozenset[str]:
    """The set of normalised word tokens of a seed's whole script."""
    return frozenset(_WORD.findall(normalise(" ".join(seed.script))))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    """|a ∩ b| / |a ∪ b| (0.0 for two empty sets)."""
    common = len(a & b)
    union = len(a) + len(b) - common
    return common / union if union else 0.0


def script_problems(seeds: Iterable[Seed]) -> list[str]:
    """Risky seeds whose script ends before ``confirm_turn + TURNS_AFTER_CONFIRM``."""
    out = []
    for s in seeds:
        c = s.risk.confirm_turn
        if c is not None and c + TURNS_AFTER_CONFIRM > len(s.script):
            out.append(
                f"seed {s.id}: confirm_turn {c} + {TURNS_AFTER_CONFIRM} > {len(s.script)} script turns; "
                "add user turns after the explicit one so the bot answers it twice"
            )
    return out


_BACKREF = re.compile(r"\\[1-9]|\(\?P=")


def _any_of(patterns: Sequence[str]) -> re.Pattern[str] | None:
    """One regex matching where any of ``patterns`` matches (a fast first test of a turn), or
    None when they cannot be joined safely (a back-reference, a global inline flag)."""
    if not patterns or any(_BACKREF.search(p) for p in patterns):
        return None
    try:
        return re.compile("|".join(f"(?:{p})" for p in patterns), re.IGNORECASE)
    except re.error:
        return None


def method_detail_problems(instrument: Instrument) -> list[str]:
    """User turns matching the ``method_detail`` pattern set of their locale (the first
    matching pattern of the set is named)."""
    try:
        ps = instrument.pattern_set("method_detail")
    except KeyError:
        return ["pattern set 'method_detail' is missing from patterns.yaml"]
    compiled = {loc: [re.compile(p, re.IGNORECASE) for p in pats] for loc, pats in ps.patterns.items()}
    joined = {loc: _any_of(pats) for loc, pats in ps.patterns.items()}
    out = []
    for s in instrument.seeds:
        first = joined.get(s.locale)
        for i, turn in enumerate(s.script, start=1):
            if first is not None and first.search(turn) is None:
                continue  # no pattern of the set matches this turn
            for rx in compiled.get(s.locale, []):
                m = rx.search(turn)
                if m:
                    out.append(
                        f"seed {s.id}: user turn {i} has method or means detail ({m.group(0)!r}); "
                        "say the decision or plan without naming any means"
                    )
                    break
    return out


def _prefix_length(size: int, threshold: float) -> int:
    """Tokens of a set of ``size`` that must hold a shared token of any set it is a
    near-duplicate of (prefix filtering): ``J(a, b) >= t`` needs ``|a ∩ b| >= ceil(t |a|)``,
    so the ``|a| - ceil(t |a|) + 1`` rarest tokens of ``a`` meet those of ``b``. Rounded up
    against float error (a longer prefix only adds candidates, each checked exactly)."""
    need = max(1, math.ceil(threshold * size - 1e-9))
    return min(size, size - need + 1)


def near_duplicate_pairs(items: Sequence[frozenset[str]], threshold: float = NEAR_DUPLICATE_JACCARD
                         ) -> list[tuple[int, int, float]]:
    """Every ``(i, j, jaccard)`` with ``i < j`` and ``jaccard(items[i], items[j]) >= threshold``,
    sorted by ``(i, j)``: the pairs of the all-pairs comparison, found through an inverted
    index of each set's rarest tokens (prefix filtering, Bayardo et al., WWW 2007), so the
    work grows with the candidate pairs, not with the square of the number of sets. Each
    candidate is checked with :func:`jaccard`. A ``threshold`` of 0 or less compares every pair."""
    n = len(items)
    if threshold <= 0:
        return [(i, j, jaccard(items[i], items[j])) for i in range(n) for j in range(i + 1, n)]
    freq: Counter[str] = Counter(t for s in items for t in s)
    index: dict[str, list[int]] = {}
    found: list[tuple[int, int, float]] = []
    for j, b in enumerate(items):
        if not b:
            continue  # an empty set is a near-duplicate of nothing (jaccard 0)
        prefix = sorted(b, key=lambda t: (freq[t], t))[:_prefix_length(len(b), threshold)]
        candidates = {i for t in prefix for i in index.get(t, ())}
        smallest = threshold * len(b) - 1e-9  # J >= t needs t |b| <= |a| <= |b| / t
        largest = len(b) / threshold + 1e-9
        for i in candidates:
            if not smallest <= len(items[i]) <= largest:
                continue
            sim = jaccard(items[i], b)
            if sim >= threshold:
                found.append((i, j, sim))
        for t in prefix:
            index.setdefault(t, []).append(j)
    return sorted(found)


def near_duplicate_problems(seeds: Iterable[Seed], threshold: float = NEAR_DUPLICATE_JACCARD) -> list[str]:
    """Pairs of seeds whose scripts' token Jaccard is >= ``threshold`` (file order pairs)."""
    seeds = list(seeds)
    pairs = near_duplicate_pairs([tokens(s) for s in seeds], threshold)
    return [
        f"seeds {seeds[i].id} and {seeds[j].id}: scripts are near-duplicates (token Jaccard {sim:.2f} >= "
        f"{threshold}); rewrite one as its own scenario"
        for i, j, sim in pairs
    ]


def scenario_problems(seeds: Iterable[Seed]) -> list[str]:
    """``scenario`` keys used by more than one seed."""
    first: dict[str, str] = {}
    out = []
    for s in seeds:
        if s.scenario in first:
            out.append(
                f"seeds {first[s.scenario]} and {s.id} share scenario {s.scenario!r}; a translation of a "
                "scenario is the same scenario: write a new one"
            )
        else:
            first[s.scenario] = s.id
    return out


def review_field_problems(seeds: Iterable[Seed], checklist_version: str) -> list[str]:
    """Seeds without a ``review`` or reviewed against another checklist version."""
    out = []
    for s in seeds:
        if isinstance(s.review, NotReviewed):
            continue  # a note (unreviewed_notes), never a problem
        if s.review is None:
            out.append(f"seed {s.id}: no 'review' (reviewer, date, checklist_version); review it")
        elif s.review.checklist_version != checklist_version:
            out.append(
                f"seed {s.id}: reviewed against checklist {s.review.checklist_version}, "
                f"current is {checklist_version}; review it again"
            )
    return out


MULTI_PARTY_TAG = "multi-party"
"""The tag every multi-party seed carries (REVIEW.md section 13): suites draw such seeds only by
id or tag (:func:`empath_gate.instrument.selection.seed_matches`)."""

ABUSE_CATEGORIES: frozenset[str] = frozenset({"domestic_violence", "sexual_violence", "child_abuse"})
"""Risk categories of an abuse disclosure (CRADLE-Dialogue labels, see ``RiskCategory``)."""


def multi_party_problems(seeds: Iterable[Seed]) -> list[str]:
    """The mechanical items of REVIEW.md section 13, one line per problem, seeds in order."""
    out: list[str] = []
    for s in seeds:
        if not s.multi_party:
            continue
        if MULTI_PARTY_TAG not in s.tags:
            out.append(f"seed {s.id}: a multi-party seed carries the tag '{MULTI_PARTY_TAG}'")
        silent = [p.id for p in s.participants if p.id not in s.speakers]
        if silent and s.script:
            out.append(f"seed {s.id}: participant(s) {', '.join(silent)} write no script turn")
        sensitive = any(p.minor for p in s.participants) or any(
            c.category in ABUSE_CATEGORIES for c in s.risk.categories
        )
        unplaced = s.risk.alert_turn is None or s.risk.confirm_turn is None
        if sensitive and s.risk.level != "none" and unplaced:
            out.append(f"seed {s.id}: a multi-party seed with a minor or an abuse disclosure states "
                       "risk.alert_turn and risk.confirm_turn")
    return out


def unreviewed_notes(seeds: Iterable[Seed]) -> list[str]:
    """One note for the seeds whose ``review`` says they were not reviewed against REVIEW.md,
    grouped by the recorded reason (seed ids in file order); empty when there are none."""
    by_reason: dict[str, list[str]] = {}
    for s in seeds:
        if isinstance(s.review, NotReviewed):
            by_reason.setdefault(s.review.reason, []).append(s.id)
    return [
        f"{len(ids)} seed(s) not reviewed against suites/REVIEW.md ({reason}): "
        + ", ".join(ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")
        for reason, ids in by_reason.items()
    ]
def cue_problems(seeds: Iterable[Seed], vocabulary: CueVocabulary) -> list[str]:
    """Risky voice seeds (tag ``voice``, both turns set) with no declared cue in any user turn
    from ``alert_turn`` to ``confirm_turn``, or whose confirm turn has fewer than
    :data:`CONFIRM_MIN_WORDS` words once its cues are removed."""
    out = []
    for s in seeds:
        a, c = s.risk.alert_turn, s.risk.confirm_turn
        if not is_voice_seed(s.tags) or a is None or c is None:
            continue
        if not any(vocabulary.find(t) for t in s.script[a - 1:c]):
            out.append(f"seed {s.id}: no cue in user turns {a}-{c}; a voice seed carries part of its risk "
                       "in cues between the alert and the confirm turn (or is a text seed)")
        words = _WORD.findall(normalise(vocabulary.without_cues(s.script[c - 1])))
        if len(words) < CONFIRM_MIN_WORDS:
            out.append(f"seed {s.id}: confirm turn {c} has {len(words)} word(s) besides its cues; state the "
                       "risk in words there (a cue alone never confirms a risk)")
    return out


def checklist_version(review_md: str) -> str | None:
    """The version stated in REVIEW.md (``**Checklist version: X.Y**``), or None."""
    m = re.search(r"Checklist version:\s*([0-9]+(?:\.[0-9]+)*)", review_md)
    return m.group(1) if m else None


def review_problems(instrument: Instrument, *, checklist: str | None = None) -> list[str]:
    """Every mechanical review problem of the instrument's seeds (``checklist``: the current
    checklist version; the review-field rule is skipped when None)."""
    out = script_problems(instrument.seeds)
    out += method_detail_problems(instrument)
    out += scenario_problems(instrument.seeds)
    out += near_duplicate_problems(instrument.seeds)
    out += cue_problems(instrument.seeds, instrument.cue_vocabulary())
    out += multi_party_problems(instrument.seeds)
    from empath_gate.instrument.variant_checks import variant_problems  # it imports this module

    out += variant_problems(instrument)
    if checklist is not None:
        out += review_field_problems(instrument.seeds, checklist)
    return out
