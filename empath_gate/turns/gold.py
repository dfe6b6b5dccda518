"""The annotator gold file: hand-labelled user turns and bot replies that measure an annotator.

The gold lives in a folder (the project's is ``bench/data/annotator-gold/``, whose README gives
the labelling guide) holding two JSONL files, UTF-8, one item per line:

* ``user.jsonl``: one :class:`GoldUserTurn` per user turn of a seed script (``seed`` + the
  0-based ``turn`` among the script's user turns, its ``text`` as in the seed file);
* ``bot.jsonl``: one :class:`GoldBotReply` per support-bot reply, with the user message it
  answers (``user_text``) and its strategy.

Every item carries ``split``: ``tune`` (what an annotator may be tuned on) or ``held-out``
(what its quality is reported on). The split is a fixed rule (:func:`expected_splits`),
stored in the file so a reader needs no code, and checked against the rule by the tests:

* the unit is a **seed** on the user side (all turns of a script fall in one half, so a tuned
  lexicon never saw a sentence of a held-out conversation) and an **item** on the bot side;
* units are grouped in strata (user side: locale x the seed's dimension prefix, the part of
  its id before the first ``-``; bot side: locale x strategy), ordered within each stratum by
  the SHA-256 of ``SPLIT_SALT + unit id``, and dealt alternately ``tune``, ``held-out``, ...,
  one deal running on from stratum to stratum (strata in name order), so each stratum's
  halves, and the totals, differ by at most one unit.

An optional third file, ``user-heldout2.jsonl``, holds a **second held-out set**
(:data:`FRESH_SPLIT`): user turns of further seed scripts, labelled in the same format after
the first held-out half had been looked at during tuning and before the next change to an
annotator. Its items all carry ``split: heldout2``; they are not dealt (the whole file is
held out), and none of its seeds may appear in ``user.jsonl``. It has no bot replies. A
``seed`` starting with :data:`NEW_SCRIPT_PREFIX` names a script written for this file rather
than a seed of the instrument.

The **written held-out sets** are the rows of :data:`WRITTEN_SETS` (``heldout3``,
``heldout4``, ``heldout5``, in the order they were written), each in optional files
``user-<split>-<locale>.jsonl``: user turns of scripts written for the set (seeds starting with
its prefix, ``h<k>-``), labelled by reading the guide only, blind to any annotator, each set
written after the one before had been scored and used for tuning or fitting. Their items all
carry the set's split, are not dealt, and no seed may appear in another gold file; a file named
for a locale holds only that locale. They have no bot replies. A new set is one row of the
table (and its name in :data:`Split`) plus its files.

Reading goes through :mod:`empath_gate.bounded`; every problem is a :class:`GoldError`
naming the file and the 1-based line.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeVar, get_args

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from empath_gate.bounded import InputLimits, JsonLineError, read_jsonl
from empath_gate.errors import ConfigError
from empath_gate.turns.model import BOT_LABELS, STRATEGIES, USER_LABELS, Dialogue, DialogueTurn

Split = Literal["tune", "held-out", "heldout2", "heldout3", "heldout4", "heldout5"]
SPLITS: tuple[Split, ...] = ("tune", "held-out")
"""The two halves the split rule deals ``user.jsonl`` and ``bot.jsonl`` into."""
FRESH_SPLIT: Split = "heldout2"
"""The split of every item of :data:`FRESH_USER_FILE`, the second held-out set (module docstring)."""
NEW_SCRIPT_PREFIX = "new-"
"""Seed-id prefix of a script written for the gold itself (not a seed of the instrument)."""
GoldLocale = Literal["es-MX", "en-US"]
Quality = Literal["good", "mediocre", "generic", "unsafe"]
"""How good a gold bot reply is as support (written on purpose to vary; not a label any
annotator predicts): ``good``, ``mediocre``, ``generic`` (fits any message) or ``unsafe``."""

SPLIT_SALT = "empath-gate/annotator-gold/v1:"
"""Prefix hashed with each unit id to order a stratum (module docstring). Changing it re-deals
every half, so it changes only with a new gold version."""

USER_FILE = "user.jsonl"
BOT_FILE = "bot.jsonl"
FRESH_USER_FILE = "user-heldout2.jsonl"


@dataclass(frozen=True)
class WrittenSet:
    """One written held-out set (module docstring): ``split``, its name (``heldout<k>``);
    ``prefix``, the seed-id prefix of its scripts (``h<k>-``, then ``mx-`` / ``us-``); ``name``,
    how prose calls it (``the third held-out set``); ``history``, when it was written and what
    it was used for since."""

    split: Split
    prefix: str
    name: str
    history: str

    @property
    def files(self) -> str:
        """The glob of its files in a gold folder, ``user-<split>-*.jsonl`` (read in name order)."""
        return self.file("*")

    def file(self, locale: str) -> str:
        """The name of its file for ``locale``: ``user-<split>-<locale>.jsonl``."""
        return f"user-{self.split}-{locale}.jsonl"

    def locale_of(self, path: Path) -> str | None:
        """The locale ``path`` (one of its :attr:`files`) is named for; ``None`` when the name
        holds no known locale."""
        named = path.stem.removeprefix(f"user-{self.split}-")
        return named if named in get_args(GoldLocale) else None


WRITTEN_SETS: tuple[WrittenSet, ...] = (
    WrittenSet("heldout3", "h3-", "the third held-out set",
               "written blind to the annotator, scored once after offline-5 was frozen, "
               "then used for tuning offline-6"),
    WrittenSet("heldout4", "h4-", "the fourth held-out set",
               "written blind to the annotator, scored once after offline-6 was frozen, "
               "then used for fitting offline-7"),
    WrittenSet("heldout5", "h5-", "the fifth held-out set",
               "written blind to the annotator, scored after offline-7 was frozen"),
)
"""The written held-out sets, in the order written (module docstring); each split is also a
value of :data:`Split`."""
USER_ONLY_SPLITS: tuple[Split, ...] = (FRESH_SPLIT, *(w.split for w in WRITTEN_SETS))
"""The held-out sets made of user turns only (no bot replies), not dealt by the split rule:
``heldout2``, then the written sets."""
WRITTEN_SCRIPT_PREFIXES: tuple[str, ...] = (NEW_SCRIPT_PREFIX, *(w.prefix for w in WRITTEN_SETS))
"""Seed-id prefixes of scripts written for the gold (not tied to the instrument's seed files)."""

class GoldError(ConfigError):
    """The gold folder cannot be used: a file is missing, a line is not JSON or not a valid
    item, an id repeats, a script has a gap. The message starts with ``file:line``."""


class _Item(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, pattern=r"^[A-Za-z0-9:._-]+$")
    locale: GoldLocale
    text: str = Field(min_length=1)
    label: str
    intensity: int = Field(ge=0, le=3)
    valence: float = Field(ge=-1.0, le=1.0)
    split: Split


class GoldUserTurn(_Item):
    """One gold-labelled user turn: ``id`` is ``u:<seed>:<turn>``; ``seed`` a seed id of the
    instrument (or, in the second held-out set only, ``new-...``: a script written for the
    gold; in a written held-out set, its prefix, ``h<k>-...``); ``turn`` the 0-based index
    among the script's user turns;
    ``text`` the script line as written in the seed file (placeholders such as ``{age}`` kept);
    ``label`` one of :data:`USER_LABELS`; ``intensity`` 0..3; ``valence`` -1..1; ``split`` the half."""

    seed: str = Field(min_length=1)
    turn: int = Field(ge=0)

    @field_validator("label")
    @classmethod
    def _user_label(cls, value: str) -> str:
        if value not in USER_LABELS:
            raise ValueError(f"{value!r} is not a user-side label; use one of {', '.join(USER_LABELS)}")
        return value

    @model_validator(mode="after")
    def _id_matches(self) -> GoldUserTurn:
        if self.id != f"u:{self.seed}:{self.turn}":
            raise ValueError(f"id {self.id!r} must be 'u:{self.seed}:{self.turn}' (seed and turn)")
        return self


class GoldBotReply(_Item):
    """One gold-labelled bot reply: ``user_text`` the user message it answers (context for the
    annotator); ``text`` the reply; ``label`` one of :data:`BOT_LABELS`; ``strategy`` one of
    :data:`STRATEGIES`; ``quality`` how good the reply is as support (:data:`Quality`)."""

    user_text: str = Field(min_length=1)
    strategy: str
    quality: Quality

    @field_validator("label")
    @classmethod
    def _bot_label(cls, value: str) -> str:
        if value not in BOT_LABELS:
            raise ValueError(f"{value!r} is not a bot-side label; use one of {', '.join(BOT_LABELS)}")
        return value

    @field_validator("strategy")
    @classmethod
    def _strategy(cls, value: str) -> str:
        if value not in STRATEGIES:
            raise ValueError(f"{value!r} is not a strategy; use one of {', '.join(STRATEGIES)}")
        return value


class GoldSet(BaseModel):
    """The whole gold: ``user`` turns and ``bot`` replies of the tune and held-out halves (in
    file order), and ``held_out``, the user turns of each user-only held-out set by split
    (:data:`USER_ONLY_SPLITS`: ``heldout2`` from :data:`FRESH_USER_FILE`, then each of
    :data:`WRITTEN_SETS` from its files; a set whose files the folder lacks is empty)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user: tuple[GoldUserTurn, ...]
    bot: tuple[GoldBotReply, ...]
    held_out: dict[Split, tuple[GoldUserTurn, ...]] = Field(default_factory=dict)

    @field_validator("held_out")
    @classmethod
    def _user_only(cls, value: dict[Split, tuple[GoldUserTurn, ...]]
                   ) -> dict[Split, tuple[GoldUserTurn, ...]]:
        if bad := [s for s in value if s not in USER_ONLY_SPLITS]:
            raise ValueError(f"{bad[0]!r} is not a user-only held-out set; "
                             f"use one of {', '.join(USER_ONLY_SPLITS)}")
        return value

    def user_in(self, split: Split | None) -> tuple[GoldUserTurn, ...]:
        """The user turns of ``split`` (a user-only held-out set: its :attr:`held_out` turns,
        empty when absent; ``None``: both halves, tune and held-out, without the other
        held-out sets)."""
        if split in USER_ONLY_SPLITS:
            return self.held_out.get(split, ())
        return tuple(t for t in self.user if split is None or t.split == split)

    def all_user_turns(self) -> tuple[GoldUserTurn, ...]:
        """Every user turn: both halves (file order), then each user-only held-out set in
        :data:`USER_ONLY_SPLITS` order."""
        return (*self.user, *(t for split in USER_ONLY_SPLITS for t in self.user_in(split)))

    def bot_in(self, split: Split | None) -> tuple[GoldBotReply, ...]:
        """The bot replies of ``split`` (``None``: both halves; the user-only held-out sets
        have none)."""
        return tuple(r for r in self.bot if split is None or r.split == split)


# ----------------------------------------------------------------------------- the split rule


def deal_halves(units: Iterable[tuple[str, str]]) -> dict[str, Split]:
    """The half of each unit, from ``(stratum, unit id)`` pairs (a unit listed twice counts
    once): strata in name order, the units of each ordered by ``sha256(SPLIT_SALT + id)``, are
    dealt ``tune``, ``held-out``, ``tune``, ... with one deal running on across strata, so each
    stratum's halves differ by at most one unit and so do the totals. Pure and independent of
    input order."""
    strata: dict[str, set[str]] = defaultdict(set)
    for stratum, unit in units:
        strata[stratum].add(unit)
    halves: dict[str, Split] = {}
    dealt = 0
    for stratum in sorted(strata):
        ordered = sorted(strata[stratum],
                         key=lambda u: (hashlib.sha256((SPLIT_SALT + u).encode()).hexdigest(), u))
        for unit in ordered:
            halves[unit] = SPLITS[dealt % 2]
            dealt += 1
    return halves


def user_stratum(turn: GoldUserTurn) -> str:
    """A user turn's stratum: ``<locale>/<dimension prefix of the seed id>``."""
    return f"{turn.locale}/{turn.seed.split('-', 1)[0]}"


def bot_stratum(reply: GoldBotReply) -> str:
    """A bot reply's stratum: ``<locale>/<strategy>``."""
    return f"{reply.locale}/{reply.strategy}"


def expected_splits(user: Sequence[GoldUserTurn], bot: Sequence[GoldBotReply]) -> dict[str, Split]:
    """The half the rule gives each item id (user turns through their seed)."""
    seeds = deal_halves((user_stratum(t), t.seed) for t in user)
    replies = deal_halves((bot_stratum(r), r.id) for r in bot)
    out: dict[str, Split] = {t.id: seeds[t.seed] for t in user}
    out.update({r.id: replies[r.id] for r in bot})
    return out


# ----------------------------------------------------------------------------- reading


_I = TypeVar("_I", GoldUserTurn, GoldBotReply)


def _read_items(path: Path, parse: Callable[[object], _I], limits: InputLimits | None,
                splits: Sequence[Split] = SPLITS) -> tuple[list[_I], dict[str, int]]:
    """The items of ``path`` and the 1-based line of each id; every item's split in ``splits``."""
    if not path.is_file():
        raise GoldError(f"{path}: the gold file is missing")
    items: list[_I] = []
    seen: dict[str, int] = {}
    try:
        rows = list(read_jsonl(path, limits))
    except JsonLineError as exc:
        raise GoldError(str(exc)) from None
    except UnicodeDecodeError as exc:
        raise GoldError(f"{path}: not UTF-8 ({exc.reason})") from None
    for line, row in rows:
        try:
            item = parse(row)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "item"
            raise GoldError(f"{path}:{line}: {where}: {first['msg']}") from None
        if item.id in seen:
            raise GoldError(f"{path}:{line}: id {item.id!r} repeats line {seen[item.id]}")
        if item.split not in splits:
            raise GoldError(f"{path}:{line}: split: {item.split!r} is not allowed in this file; "
                            f"use {' or '.join(repr(x) for x in splits)}")
        seen[item.id] = line
        items.append(item)
    return items, seen


def _check_scripts(path: Path, user: Sequence[GoldUserTurn]) -> None:
    turns: dict[str, list[int]] = defaultdict(list)
    locales: dict[str, set[str]] = defaultdict(set)
    for t in user:
        turns[t.seed].append(t.turn)
        locales[t.seed].add(t.locale)
    for seed, got in turns.items():
        if got != list(range(len(got))):
            raise GoldError(f"{path}: seed {seed!r}: turns must be 0..{len(got) - 1} in order, found {got}")
        if len(locales[seed]) > 1:
            raise GoldError(f"{path}: seed {seed!r} has turns in more than one locale")


def load_gold(folder: Path, limits: InputLimits | None = None) -> GoldSet:
    """Read and validate the gold folder ``folder`` (``user.jsonl``, ``bot.jsonl`` and, when
    present, ``user-heldout2.jsonl`` and the files of each of :data:`WRITTEN_SETS`, in table
    order, each set's files in name order).

    Checks each line (a JSON object valid as its item type), unique ids, each seed's turns
    contiguous from 0 in file order and in one locale; in a held-out file, also that every item
    has that file's split (``heldout2`` or the written set's, allowed nowhere else) and
    that no seed is in another gold file; in a ``user-heldoutN-<locale>.jsonl`` file, that every item has
    that locale. Raises :class:`GoldError` naming the file and line, or
    :class:`~empath_gate.bounded.InputLimitError` for an input over a limit. Does not check the
    split rule or the seed files (see :func:`split_problems`)."""
    folder = Path(folder)
    user_path, bot_path, fresh_path = folder / USER_FILE, folder / BOT_FILE, folder / FRESH_USER_FILE
    user, _ = _read_items(user_path, GoldUserTurn.model_validate, limits)
    bot, _ = _read_items(bot_path, GoldBotReply.model_validate, limits)
    _check_scripts(user_path, user)
    owner = dict.fromkeys((t.seed for t in user), USER_FILE)
    held_out: dict[Split, tuple[GoldUserTurn, ...]] = {FRESH_SPLIT: ()}
    if fresh_path.exists():
        held_out[FRESH_SPLIT] = tuple(_held_out_file(fresh_path, FRESH_SPLIT, None, owner, limits))
    for written in WRITTEN_SETS:
        turns: list[GoldUserTurn] = []
        for path in sorted(folder.glob(written.files)):
            turns += _held_out_file(path, written.split, written.locale_of(path), owner, limits)
        held_out[written.split] = tuple(turns)
    return GoldSet(user=tuple(user), bot=tuple(bot), held_out=held_out)


def _held_out_file(path: Path, split: Split, locale: str | None, owner: dict[str, str],
                   limits: InputLimits | None) -> list[GoldUserTurn]:
    """The items of one held-out file, all of ``split`` and, when ``locale`` is given (the
    locale the file is named for), of that locale; ``owner`` (seed -> the file holding it)
    gains this file's seeds. GoldError for a seed another file holds or an item of another
    locale."""
    items, lines = _read_items(path, GoldUserTurn.model_validate, limits, (split,))
    _check_scripts(path, items)
    for t in items:
        if t.seed in owner and owner[t.seed] != path.name:
            raise GoldError(f"{path}:{lines[t.id]}: seed {t.seed!r} is also in {owner[t.seed]}; "
                            "a held-out seed must be new")
        if locale is not None and t.locale != locale:
            raise GoldError(f"{path}:{lines[t.id]}: locale {t.locale!r} in a file named for {locale!r}")
    owner.update(dict.fromkeys((t.seed for t in items), path.name))
    return items


def split_problems(gold: GoldSet) -> list[str]:
    """Items whose stored ``split`` differs from the rule's (empty when all agree)."""
    want = expected_splits(gold.user, gold.bot)
    return [f"{item.id}: split is {item.split!r}, the rule gives {want[item.id]!r}"
            for item in (*gold.user, *gold.bot) if item.split != want[item.id]]


# ----------------------------------------------------------------------------- dialogues


def user_dialogues(turns: Sequence[GoldUserTurn]) -> list[tuple[Dialogue, tuple[GoldUserTurn, ...]]]:
    """One dialogue per seed of ``turns`` (the seed's user turns in order, role ``user``;
    ``conversation_id`` the seed id), each with its gold turns sorted by ``turn``; seeds in
    first-seen order. Dialogue turn ``i`` is the ``i``-th gold turn of the seed (the script's
    turn ``i`` when, as in a loaded gold, every turn of the script is given)."""
    by_seed: dict[str, list[GoldUserTurn]] = defaultdict(list)
    for t in turns:
        by_seed[t.seed].append(t)
    out = []
    for seed, items in by_seed.items():
        items.sort(key=lambda t: t.turn)
        dialogue = Dialogue(conversation_id=seed, locale=items[0].locale,
                            turns=tuple(DialogueTurn(role="user", text=t.text) for t in items))
        out.append((dialogue, tuple(items)))
    return out


def bot_dialogue(reply: GoldBotReply) -> Dialogue:
    """The two-turn dialogue of a gold reply: the user message (turn 0), then the reply
    (turn 1, the one scored); ``conversation_id`` the reply's id."""
    return Dialogue(conversation_id=reply.id, locale=reply.locale, turns=(
        DialogueTurn(role="user", text=reply.user_text), DialogueTurn(role="assistant", text=reply.text)))


__all__ = [
    "BOT_FILE",
    "FRESH_SPLIT",
    "FRESH_USER_FILE",
    "NEW_SCRIPT_PREFIX",
    "SPLITS",
    "SPLIT_SALT",
    "USER_FILE",
    "USER_ONLY_SPLITS",
    "WRITTEN_SCRIPT_PREFIXES",
    "WRITTEN_SETS",
    "GoldBotReply",
    "GoldError",
    "GoldSet",
    "GoldUserTurn",
    "Quality",
    "Split",
    "WrittenSet",
    "bot_dialogue",
    "bot_stratum",
    "deal_halves",
    "expected_splits",
    "load_gold",
    "split_problems",
    "user_dialogues",
    "user_stratum",
]
