"""Fit the offline annotator's user-turn word valences on the project's gold (rules ``offline-7``).

Reads the seen gold sets (``tune``, ``held-out``, ``heldout2`` and every written held-out set of
``empath_gate.turns.gold.WRITTEN_SETS`` but the newest; never the newest, ``heldout5`` when
``offline-7`` was fitted), labels their scripts once with the offline rules alone
(:func:`empath_gate.turns.user_fitted.rules_only`), and fits, per locale, a ridge regression of
the gold valence on the turn's features (:func:`empath_gate.turns.user_fitted.features`), either
blended with the rule valence at a fixed share ``alpha`` or with the rule valence as one more
feature (``stack``). Model selection is cross-validated: leave one set out (fit on the other
seen sets, Spearman on the one left out) and a grouped 5-fold by script; a script's turns are
never split. Prints every configuration's per-fold Spearman, then (with ``--write``) fits the
chosen configuration on all seen sets and writes ``empath_gate/turns/data/user-valence-<locale>.json``.

    python bench/fit_user_valence.py [--write] [--config FEATS:MIN_SCRIPTS:LAMBDA:MODE]

The ridge is closed form (numpy): the dual solution ``alpha = (K + lambda I)^-1 y`` on centred
data with ``K = X X^T``, ``w = X^T alpha``, the intercept unpenalised.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import json
import re
import sys
import tempfile
import unicodedata
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import numpy as np
from scipy import sparse
from scipy.stats import spearmanr

from empath_gate.turns.gold import BOT_FILE, FRESH_SPLIT, FRESH_USER_FILE, SPLITS, USER_FILE, WRITTEN_SETS

ROOT = Path(__file__).resolve().parent.parent
GOLD = ROOT / "bench" / "data" / "annotator-gold"
CLEAN = WRITTEN_SETS[-1]
"""The newest written held-out set: the clean measurement of the fitted table (its files are
never opened here)."""
SEEN_WRITTEN = WRITTEN_SETS[:-1]
"""The written held-out sets fitted on, by writers other than the earlier sets' (their mean is
the honest internal estimate)."""
OTHER_WRITERS: tuple[str, ...] = tuple(w.split for w in SEEN_WRITTEN)
SEEN: tuple[str, ...] = (*SPLITS, FRESH_SPLIT, *OTHER_WRITERS)
SEEN_FILES = (USER_FILE, BOT_FILE, FRESH_USER_FILE)
"""The gold files of the seen sets but the written ones (theirs match the sets' globs)."""
LOCALES = ("es-MX", "en-US")
LAMBDAS = (0.3, 1.0, 3.0, 10.0)
ALPHAS = (0.25, 0.5, 0.75, 1.0)
MIN_SCRIPTS = (2, 3)
FEATURE_SETS = ("uni", "uni+bi")
CAP = 0.5
"""Largest |weight| written (and used in cross-validation): no single word decides a turn."""
TOP = 3000
"""Features kept per locale (largest |weight| first)."""
RULE_SCALE = 3.0
"""The rule valence column's scale in ``stack`` mode (a larger scale penalises its weight less)."""
KFOLDS = 5
SIGN_GUARD = False
"""Cross-validate with a sign guard (a turn the rules labelled keeps the rules' sign): tried,
ranked worse, not in the annotator (``--sign-guard``)."""
TABLE_VERSION = "1.1.0"


@dataclass(frozen=True)
class Turn:
    """One gold user turn: its set, locale, script (seed), text, gold and rule valence."""

    set: str
    locale: str
    seed: str
    text: str
    gold: float
    rule: float
    labelled: bool = False
    """The rules gave the turn a label other than ``neutral``."""


# ----------------------------------------------------------------------------- pure functions


def name_words(texts: Sequence[str]) -> set[str]:
    """Folded words written capitalised in at least half of their occurrences not at a sentence's
    start (names of people and places), except the English ``I`` forms."""
    caps: Counter[str] = Counter()
    seen: Counter[str] = Counter()
    for text in texts:
        raw = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
        start = True
        for tok in re.findall(r"[A-Za-z]+(?:'[A-Za-z]+)*|[.!?]", raw):
            if tok in ".!?":
                start = True
                continue
            if not start:
                low = tok.lower()
                seen[low] += 1
                caps[low] += tok[0].isupper()
            start = False
    return {w for w, n in seen.items() if caps[w] * 2 >= n and w != "i" and not w.startswith("i'")}


def turn_features(text: str, feats: str, names: set[str]) -> set[str]:
    """:func:`features` of ``text``, without bigrams when ``feats`` is ``uni``, without any
    feature holding a word of ``names``."""
    from empath_gate.turns.user_fitted import features

    out = set()
    for f in features(text):
        if feats == "uni" and f.startswith("b:"):
            continue
        if any(w in names for w in f[2:].split("_")):
            continue
        out.add(f)
    return out


def vocabulary(rows: Sequence[set[str]], groups: Sequence[str], min_scripts: int) -> list[str]:
    """The features found in at least ``min_scripts`` distinct groups (scripts), sorted."""
    where: dict[str, set[str]] = defaultdict(set)
    for feats, g in zip(rows, groups, strict=True):
        for f in feats:
            where[f].add(g)
    return sorted(f for f, gs in where.items() if len(gs) >= min_scripts)


def design(rows: Sequence[set[str]], sizes: Sequence[int], vocab: Sequence[str]) -> sparse.csr_matrix:
    """The n x p matrix: 1 / sqrt(size) where the turn has the feature (``size``: the turn's
    number of features before any was dropped, as the annotator divides)."""
    index = {f: j for j, f in enumerate(vocab)}
    data, ri, ci = [], [], []
    for i, (feats, size) in enumerate(zip(rows, sizes, strict=True)):
        for f in feats:
            j = index.get(f)
            if j is not None:
                ri.append(i)
                ci.append(j)
                data.append(1.0 / np.sqrt(max(size, 1)))
    return sparse.csr_matrix((data, (ri, ci)), shape=(len(rows), len(vocab)))


def ridge(x: sparse.csr_matrix, y: np.ndarray, lambdas: Sequence[float],
          extra: np.ndarray | None = None) -> list[tuple[np.ndarray, float, float]]:
    """Closed-form ridge of ``y`` on ``x`` (plus the optional dense column ``extra``), intercept
    unpenalised, for each lambda: ``(w, extra_weight, intercept)``."""
    n = x.shape[0]
    k = (x @ x.T).toarray()
    if extra is not None:
        k = k + np.outer(extra, extra)
    h = np.eye(n) - 1.0 / n
    kc = h @ k @ h
    evals, evecs = np.linalg.eigh(kc)
    yc = y - y.mean()
    qy = evecs.T @ yc
    out = []
    xmean = np.asarray(x.mean(axis=0)).ravel()
    for lam in lambdas:
        alpha = evecs @ (qy / (evals + lam))
        alpha -= alpha.mean()
        w = np.asarray(x.T @ alpha).ravel()
        e = float(extra @ alpha) if extra is not None else 0.0
        b = float(y.mean() - xmean @ w - (extra.mean() * e if extra is not None else 0.0))
        out.append((w, e, b))
    return out


def trim(w: np.ndarray, cap: float = CAP, top: int = TOP) -> np.ndarray:
    """``w`` clipped to +-cap with all but its ``top`` largest |weights| set to 0."""
    w = np.clip(w, -cap, cap)
    if len(w) > top:
        w = w.copy()
        w[np.argsort(-np.abs(w))[top:]] = 0.0
    return w


def predict(x: sparse.csr_matrix, w: np.ndarray, b: float, rule: np.ndarray, rule_weight: float,
            labelled: np.ndarray | None = None) -> np.ndarray:
    """The annotator's valence: ``rule_weight x rule + b + x w``, never above a rule at or below
    the risk cap, clamped to -1..1 (as :func:`~empath_gate.turns.user_fitted.fitted_valence`;
    with :data:`SIGN_GUARD`, a labelled turn keeps the rule's sign)."""
    from empath_gate.turns.user_fitted import KEEP_BELOW

    v = rule_weight * rule + b + x @ w
    v = np.where(rule <= KEEP_BELOW, np.minimum(v, rule), v)
    if labelled is not None and SIGN_GUARD:
        v = np.where(labelled & (v * rule < 0), rule, v)
    return np.asarray(np.round(np.clip(v, -1.0, 1.0), 3))


def kfold_by_script(groups: Sequence[str], k: int = KFOLDS) -> list[int]:
    """Fold (0..k-1) of each item: scripts ordered by a hash of their id, dealt in turn, so a
    script's items share one fold."""
    order = sorted(set(groups), key=lambda g: hashlib.sha1(g.encode()).hexdigest())
    fold = {g: i % k for i, g in enumerate(order)}
    return [fold[g] for g in groups]


def leave_one_set_out(sets: Sequence[str], groups: Sequence[str]) -> list[str]:
    """Fold of each item: its set. ValueError when a script is in two sets."""
    owner: dict[str, str] = {}
    for s, g in zip(sets, groups, strict=True):
        if owner.setdefault(g, s) != s:
            raise ValueError(f"script {g!r} is in {owner[g]!r} and {s!r}")
    return list(sets)


def rho(a: np.ndarray, b: np.ndarray) -> float:
    """Spearman's rho of ``a`` and ``b``."""
    return float(spearmanr(a, b).statistic)


# ----------------------------------------------------------------------------- configurations


@dataclass(frozen=True)
class Config:
    """One configuration: features (``uni`` / ``uni+bi``), minimum scripts, lambda, mode
    (``stack`` or ``blend-<alpha>``)."""

    feats: str
    min_scripts: int
    lam: float
    mode: str

    def __str__(self) -> str:
        return f"{self.feats}:{self.min_scripts}:{self.lam:g}:{self.mode}"


def modes() -> list[str]:
    return [f"blend-{a:g}" for a in ALPHAS] + ["stack"]


def fit_locale(turns: Sequence[Turn], rows: Sequence[set[str]], sizes: Sequence[int], feats_min: tuple[int],
               lambdas: Sequence[float], mode: str
               ) -> dict[float, tuple[list[str], np.ndarray, float, float]]:
    """Fit one locale's table for each lambda: ``(vocab, weights, rule_weight, intercept)``."""
    (min_scripts,) = feats_min
    vocab = vocabulary(rows, [t.seed for t in turns], min_scripts)
    x = design(rows, sizes, vocab)
    y = np.array([t.gold for t in turns])
    rule = np.array([t.rule for t in turns])
    out = {}
    if mode == "stack":
        for lam, (w, e, b) in zip(lambdas, ridge(x, y, lambdas, extra=rule * RULE_SCALE), strict=True):
            out[lam] = (vocab, trim(w), e * RULE_SCALE, b)
    else:
        a = float(mode.split("-")[1])
        for lam, (w, _, b) in zip(lambdas, ridge(x, y, lambdas), strict=True):
            out[lam] = (vocab, trim(a * w), 1.0 - a, a * b)
    return out


def cross_validate(turns: Sequence[Turn], folds: Sequence[Any], feats: str, min_scripts: int,
                   names: set[str], mode: str, lambdas: Sequence[float] = LAMBDAS
                   ) -> dict[float, dict[Any, np.ndarray]]:
    """Predictions of every item from a fit on the other folds, per lambda: lambda -> fold ->
    predictions (in the order of the fold's items), per locale fitted apart."""
    rows = [turn_features(t.text, feats, names) for t in turns]
    from empath_gate.turns.user_fitted import features

    sizes = [len(features(t.text)) for t in turns]
    preds: dict[float, dict[Any, np.ndarray]] = {lam: {} for lam in lambdas}
    for fold in sorted(set(folds), key=str):
        test_idx = [i for i, f in enumerate(folds) if f == fold]
        out = {lam: np.zeros(len(test_idx)) for lam in lambdas}
        for loc in LOCALES:
            tr = [i for i, f in enumerate(folds) if f != fold and turns[i].locale == loc]
            te = [j for j, i in enumerate(test_idx) if turns[i].locale == loc]
            if not te:
                continue
            fits = fit_locale([turns[i] for i in tr], [rows[i] for i in tr], [sizes[i] for i in tr],
                              (min_scripts,), lambdas, mode)
            ti = [test_idx[j] for j in te]
            for lam, (vocab, w, rw, b) in fits.items():
                x = design([rows[i] for i in ti], [sizes[i] for i in ti], vocab)
                out[lam][te] = predict(x, w, b, np.array([turns[i].rule for i in ti]), rw,
                                       np.array([turns[i].labelled for i in ti]))
        for lam in lambdas:
            preds[lam][fold] = out[lam]
    return preds


# ----------------------------------------------------------------------------- I/O


def load_turns() -> list[Turn]:
    """The seen sets' user turns with the rules' valence (never :data:`CLEAN`'s)."""
    from empath_gate.turns.gold import Split, load_gold
    from empath_gate.turns.gold_eval import annotate_gold
    from empath_gate.turns.offline import annotate
    from empath_gate.turns.user_fitted import rules_only

    with tempfile.TemporaryDirectory() as tmp:  # the seen sets' files only: CLEAN's are never opened
        for path in GOLD.iterdir():
            if path.name in SEEN_FILES or any(path.match(w.files) for w in SEEN_WRITTEN):
                (Path(tmp) / path.name).symlink_to(path)
        gold = load_gold(Path(tmp))
    assert not gold.user_in(CLEAN.split)
    items = list(gold.all_user_turns())
    assert all(t.split in SEEN for t in items)
    with rules_only():
        preds = annotate_gold(gold, annotate, cast("set[Split]", set(SEEN)))
    out = []
    for t in items:
        got = preds.labels.get(t.id)
        if got is None:
            raise SystemExit(f"the rules gave no label to {t.id}")
        out.append(Turn(t.split, t.locale, t.seed, t.text, t.valence, got.valence, got.label != "neutral"))
    return out


def report(turns: Sequence[Turn], configs: Sequence[tuple[str, int, str]], names: set[str]
           ) -> list[tuple[float, str]]:
    """Print each configuration's per-fold Spearman (leave one set out, then 5-fold by script);
    return (mean over the left-out sets, configuration) pairs."""
    sets = leave_one_set_out([t.set for t in turns], [t.seed for t in turns])
    kf = kfold_by_script([t.seed for t in turns])
    gold = np.array([t.gold for t in turns])
    head = "  ".join(f"{s:>8}" for s in SEEN)
    others = "+".join(w.prefix.rstrip("-") for w in SEEN_WRITTEN)
    print(f"{'configuration':<28}{head}  {'mean':>6}  {others:>6}  | k-fold by script (5)  mean")
    base = [rho(np.array([t.rule for t in turns if t.set == s]), gold[[t.set == s for t in turns]])
            for s in SEEN]
    kbase = [rho(np.array([t.rule for t, f in zip(turns, kf, strict=True) if f == k]),
                 gold[[f == k for f in kf]]) for k in range(KFOLDS)]
    _row("rules alone (offline-6)", base, kbase)
    scored: list[tuple[float, str]] = []
    for feats, min_scripts, mode in configs:
        loso = cross_validate(turns, sets, feats, min_scripts, names, mode)
        kcv = cross_validate(turns, kf, feats, min_scripts, names, mode)
        for lam in LAMBDAS:
            per = [rho(loso[lam][s], gold[[t.set == s for t in turns]]) for s in SEEN]
            kper = [rho(kcv[lam][k], gold[[f == k for f in kf]]) for k in range(KFOLDS)]
            name = str(Config(feats, min_scripts, lam, mode))
            _row(name, per, kper)
            scored.append((float(np.mean(per)), name))
    return scored


def _row(name: str, per: Sequence[float], kper: Sequence[float]) -> None:
    h34 = np.mean([per[SEEN.index(s)] for s in OTHER_WRITERS])
    cells = "  ".join(f"{v:8.3f}" for v in per)
    print(f"{name:<28}{cells}  {np.mean(per):6.3f}  {h34:6.3f}  | "
          + " ".join(f"{v:.3f}" for v in kper) + f"  {np.mean(kper):.3f}", flush=True)


def write_tables(turns: Sequence[Turn], config: Config, names: set[str]) -> None:
    """Fit ``config`` on all seen sets, per locale, and write the tables."""
    from empath_gate.turns.user_fitted import DATA, features

    DATA.mkdir(parents=True, exist_ok=True)
    for loc in LOCALES:
        mine = [t for t in turns if t.locale == loc]
        rows = [turn_features(t.text, config.feats, names) for t in mine]
        sizes = [len(features(t.text)) for t in mine]
        vocab, w, rw, b = fit_locale(mine, rows, sizes, (config.min_scripts,), [config.lam],
                                     config.mode)[config.lam]
        scale, shift = spread(mine, config, names)
        w, rw, b = w * scale, rw * scale, b * scale + shift
        weights = {f: round(float(v), 4) for f, v in sorted(zip(vocab, w, strict=True),
                                                             key=lambda p: (-abs(p[1]), p[0])) if round(v, 4)}
        table = {
            "version": TABLE_VERSION, "locale": loc,
            "provenance": {
                "fitted_on": [f"{s} ({sum(t.set == s for t in mine)} {loc} user turns)" for s in SEEN],
                "source": ("bench/data/annotator-gold, the project's own hand-labelled gold; "
                           "no third-party data"),
                "caveat": "fitted on gold written and labelled by the project's writers: it may carry their "
                          "style and topics",
                "model": f"ridge, lambda {config.lam:g}, mode {config.mode}, rule valence scale "
                         f"{RULE_SCALE:g} in stack mode; weights capped at +-{CAP:g}, top {TOP} kept",
                "features": f"{config.feats}: folded words and in-clause word pairs in >= "
                            f"{config.min_scripts} scripts; no digits, placeholders or names "
                            f"({len(names)} capitalised words dropped)",
                "selected_by": "leave-one-set-out and 5-fold-by-script cross-validation "
                               "(bench/fit_user_valence.py)",
                "spread": f"x {scale:.3f} then {shift:+.3f}: the mean and SD of the left-out-set "
                          "predictions matched to the gold's (ranks unchanged)",
                "date": dt.date.today().isoformat(),
            },
            "rule_weight": round(rw, 4), "intercept": round(b, 4), "weights": weights,
        }
        path = DATA / f"user-valence-{loc}.json"
        path.write_text(json.dumps(table, ensure_ascii=False, indent=0) + "\n", encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}: {len(weights)} features, rule weight {rw:.3f}, "
              f"intercept {b:.3f}")


def spread(turns: Sequence[Turn], config: Config, names: set[str]) -> tuple[float, float]:
    """``(scale, shift)`` that give ``config``'s left-out-set predictions of ``turns`` (one
    locale) the gold's mean and SD (variance matching). A ridge fit shrinks its predictions
    toward the mean, and more so on text it was not fitted on; the dynamics read valence
    *changes* against fixed thresholds (trajectory shapes, escalation), so the table's output
    must keep the gold's spread. A positive affine map leaves every rank, hence every
    Spearman figure, unchanged (up to the risk ceiling and the -1..1 clamp)."""
    sets = leave_one_set_out([t.set for t in turns], [t.seed for t in turns])
    preds = cross_validate(turns, sets, config.feats, config.min_scripts, names, config.mode,
                           (config.lam,))[config.lam]
    pred = np.concatenate([preds[s] for s in SEEN if s in preds])
    gold = np.concatenate([np.array([t.gold for t in turns if t.set == s]) for s in SEEN if s in preds])
    scale = float(np.std(gold) / np.std(pred))
    return scale, float(np.mean(gold) - scale * np.mean(pred))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--write", metavar="CONFIG", help="fit CONFIG (FEATS:MIN:LAMBDA:MODE) on all seen "
                                                          "sets and write the tables")
    parser.add_argument("--quick", action="store_true", help="fewer configurations")
    parser.add_argument("--only", metavar="FEATS:MIN:MODE", action="append", help="these configurations only")
    parser.add_argument("--sign-guard", action="store_true",
                        help="cross-validate with a labelled turn keeping the rules' sign (tried, not used)")
    args = parser.parse_args(argv)
    global SIGN_GUARD
    SIGN_GUARD = args.sign_guard
    turns = load_turns()
    names = name_words([t.text for t in turns])
    print(f"{len(turns)} user turns of {len({t.seed for t in turns})} scripts; "
          f"{len(names)} capitalised words dropped as names")
    if args.write:
        config = Config(*_parse(args.write))
        by_locale(turns, config, names)
        write_tables(turns, config, names)
        return 0
    configs = [(f, m, mode) for f in FEATURE_SETS for m in MIN_SCRIPTS for mode in modes()]
    if args.quick:
        configs = [("uni+bi", 2, mode) for mode in modes()]
    if args.only:
        configs = [(f, int(m), mode) for f, m, mode in (o.split(":") for o in args.only)]
    scored = report(turns, configs, names)
    best = max(scored)
    print(f"\nbest by the mean over the {len(SEEN)} left-out sets: {best[1]} ({best[0]:.3f})")
    by_locale(turns, Config(*_parse(best[1])), names)
    return 0


def _parse(spec: str) -> tuple[str, int, float, str]:
    f, m, lam, mode = spec.split(":")
    return f, int(m), float(lam), mode


def by_locale(turns: Sequence[Turn], config: Config, names: set[str]) -> None:
    """Print, per left-out set and locale, the rules' Spearman and ``config``'s cross-validated one."""
    sets = leave_one_set_out([t.set for t in turns], [t.seed for t in turns])
    preds = cross_validate(turns, sets, config.feats, config.min_scripts, names, config.mode,
                           (config.lam,))[config.lam]
    print(f"per locale, {config} left out by set (rules alone -> cross-validated):")
    for s in SEEN:
        idx = [i for i, t in enumerate(turns) if t.set == s]
        cells = []
        for loc in LOCALES:
            mine = [j for j, i in enumerate(idx) if turns[i].locale == loc]
            gold = np.array([turns[idx[j]].gold for j in mine])
            rules = np.array([turns[idx[j]].rule for j in mine])
            cells.append(f"{loc} {rho(rules, gold):.3f} -> {rho(preds[s][mine], gold):.3f} (n {len(mine)})")
        print(f"  {s:<9} " + "; ".join(cells))


if __name__ == "__main__":
    sys.exit(main())
