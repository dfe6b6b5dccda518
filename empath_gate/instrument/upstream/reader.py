"""Reading the seeds and personas of a checkout of the published EMPATH benchmark repository.

The shapes read (the release that still holds ``empath/seeds/`` and ``empath/personas/``, such
as commit ffd4600 of camilochs/empath-benchmark):

* ``empath/seeds/<group>.py``: a module-level dict ``{metric: [seed, ...]}`` of dict literals
  (``id``, ``locale``, ``instruction``), or a list of dict literals that carry their own
  ``metric`` (and ``difficulty``): the covert seeds;
* ``empath/seeds/__init__.py``: ``ALL_SEEDS = {metric: GROUP["metric"] + BY_METRIC.get("metric",
  []) ...}``, where ``BY_METRIC`` is built by a function grouping the covert list by its
  ``metric`` key; its key order and terms give the order seeds are listed in;
* ``empath/personas/<locale>.py``: a list of ``Persona(...)`` calls with keyword arguments (or
  positional ones, in the field order of the ``Persona`` dataclass of ``base.py``) whose
  ``category`` is an attribute of the ``PersonaCategory`` enum of ``base.py``.

Files are parsed with :mod:`ast` (:mod:`.pysource`), never imported. An entry that is not plain
data, or lacks a field, is a :class:`ReadProblem` naming the file, the line and the seed id when
it can be seen; nothing is dropped silently.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from empath_gate.bounded import InputLimitError
from empath_gate.instrument.upstream.pysource import (
    Unreadable,
    assignments,
    dataclass_fields,
    enum_values,
    keywords,
    line_of,
    literal,
    parse_module,
)

SEEDS_DIR = Path("empath") / "seeds"
PERSONAS_DIR = Path("empath") / "personas"
ALL_SEEDS = "ALL_SEEDS"
"""The name of upstream's dict that lists every seed by metric (``empath/seeds/__init__.py``)."""


class NotACheckout(ValueError):
    """The path is not a checkout of the EMPATH benchmark with seeds and personas."""


@dataclass(frozen=True)
class ReadProblem:
    """An entry or file that could not be read: ``where`` is ``path:line``, ``entry`` the seed
    id or persona name when visible, ``what`` why."""

    kind: str
    where: str
    what: str
    entry: str | None = None

    def __str__(self) -> str:
        return f"{self.where}: {self.kind}{f' {self.entry}' if self.entry else ''}: {self.what}"


@dataclass(frozen=True)
class UpstreamSeed:
    """A seed as upstream wrote it: ``metric`` from its group key (or its own ``metric``),
    ``covert`` when it comes from a covert list, ``extra`` the keys not carried."""

    id: str
    locale: str
    instruction: str
    metric: str
    where: str
    difficulty: str | None = None
    covert: bool = False
    extra: tuple[str, ...] = ()


@dataclass(frozen=True)
class UpstreamPersona:
    """A ``Persona(...)`` call's arguments as plain values (category as the enum's value)."""

    values: dict[str, Any]
    where: str


@dataclass
class Upstream:
    """What a checkout holds: seeds in upstream's order, personas in file order, the problems
    met and notes (e.g. the order could not be read from ``ALL_SEEDS``)."""

    seeds: list[UpstreamSeed] = field(default_factory=list)
    personas: list[UpstreamPersona] = field(default_factory=list)
    problems: list[ReadProblem] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def check_checkout(root: Path) -> None:
    """Raise NotACheckout naming what is missing when ``root`` lacks ``empath/seeds/`` or
    ``empath/personas/`` (later releases moved them: use one that has them, e.g. ffd4600)."""
    if not root.is_dir():
        raise NotACheckout(f"{root}: not a directory")
    for sub in (SEEDS_DIR, PERSONAS_DIR):
        if not (root / sub).is_dir():
            raise NotACheckout(
                f"{root}: no {sub.as_posix()}/ folder; give a checkout of the EMPATH benchmark "
                "release that holds empath/seeds/ and empath/personas/ (e.g. commit ffd4600)"
            )


def read_upstream(root: Path) -> Upstream:
    """Seeds and personas of the checkout at ``root`` (module docstring). Raises NotACheckout."""
    check_checkout(root)
    out = Upstream()
    _read_seeds(root, out)
    _read_personas(root, out)
    return out


# ----------------------------------------------------------------------------- seeds


@dataclass
class _Raw:
    """One seed entry before ordering: its node, where, its group key and whether covert."""

    node: ast.expr
    where: str
    var: str
    key: str | None
    covert: bool
    data: dict[str, Any] | None = None


def _rel(root: Path, path: Path, node: ast.AST | None = None) -> str:
    line = line_of(node) if node is not None else None
    rel = path.relative_to(root).as_posix()
    return f"{rel}:{line}" if line else rel


def _module(root: Path, path: Path, out: Upstream) -> ast.Module | None:
    try:
        return parse_module(path)
    except (SyntaxError, UnicodeDecodeError, OSError, InputLimitError) as exc:
        out.problems.append(ReadProblem("file", _rel(root, path), f"cannot be parsed ({exc})"))
        return None


def _is_entry(node: ast.expr) -> bool:
    return isinstance(node, (ast.Dict, ast.Call))


def _static_id(node: ast.expr) -> str | None:
    """The ``"id"`` of a dict literal when it is a plain string (to name an unreadable entry)."""
    if isinstance(node, ast.Dict):
        for k, v in zip(node.keys, node.values, strict=True):
            if isinstance(k, ast.Constant) and k.value == "id" and isinstance(v, ast.Constant):
                return str(v.value)
    return None


def _collect(
    root: Path, path: Path, module: ast.Module
) -> tuple[dict[str, dict[str, list[_Raw]]], list[_Raw]]:
    """Seed groups (var -> metric -> entries) and covert-style lists (entries) of one module."""
    covert_file = "covert" in path.stem.lower()
    groups: dict[str, dict[str, list[_Raw]]] = {}
    flat: list[_Raw] = []
    for var, node in assignments(module).items():
        covert = covert_file or "covert" in var.lower()
        if isinstance(node, ast.Dict) and any(
            isinstance(v, ast.List) and any(map(_is_entry, v.elts)) for v in node.values
        ):
            by_key: dict[str, list[_Raw]] = {}
            for k, v in zip(node.keys, node.values, strict=True):
                if not (isinstance(k, ast.Constant) and isinstance(k.value, str) and isinstance(v, ast.List)):
                    continue
                by_key[k.value] = [_Raw(e, _rel(root, path, e), var, k.value, covert) for e in v.elts]
            groups[var] = by_key
        elif isinstance(node, ast.List) and any(map(_is_entry, node.elts)):
            flat += [_Raw(e, _rel(root, path, e), var, None, covert) for e in node.elts]
    return groups, flat


def _terms(value: ast.expr) -> list[ast.expr]:
    """The operands of a chain of ``+``."""
    if isinstance(value, ast.BinOp) and isinstance(value.op, ast.Add):
        return _terms(value.left) + _terms(value.right)
    return [value]


def _order_spec(init: ast.Module | None) -> list[tuple[str, list[tuple[str, str, str]]]] | None:
    """``ALL_SEEDS`` as ``[(metric, [("group", var, key) | ("by_metric", "", key)])]``, or None
    when it is absent or not of that shape."""
    node = assignments(init).get(ALL_SEEDS) if init is not None else None
    if not isinstance(node, ast.Dict):
        return None
    spec: list[tuple[str, list[tuple[str, str, str]]]] = []
    for k, v in zip(node.keys, node.values, strict=True):
        if not (isinstance(k, ast.Constant) and isinstance(k.value, str)):
            return None
        terms: list[tuple[str, str, str]] = []
        for t in _terms(v):
            if (
                isinstance(t, ast.Subscript)
                and isinstance(t.value, ast.Name)
                and isinstance(t.slice, ast.Constant)
                and isinstance(t.slice.value, str)
            ):
                terms.append(("group", t.value.id, t.slice.value))
            elif (
                isinstance(t, ast.Call)
                and isinstance(t.func, ast.Attribute)
                and t.func.attr == "get"
                and t.args
                and isinstance(t.args[0], ast.Constant)
                and isinstance(t.args[0].value, str)
            ):
                terms.append(("by_metric", "", t.args[0].value))
            else:
                return None
        spec.append((k.value, terms))
    return spec


def _read_seeds(root: Path, out: Upstream) -> None:
    folder = root / SEEDS_DIR
    groups: dict[str, dict[str, list[_Raw]]] = {}
    flat: list[_Raw] = []
    for path in sorted(folder.glob("*.py")):
        if path.name == "__init__.py":
            continue
        module = _module(root, path, out)
        if module is not None:
            g, f = _collect(root, path, module)
            groups.update(g)
            flat += f
    every = [r for g in groups.values() for rs in g.values() for r in rs] + flat
    for raw in every:
        _parse_seed(raw, out)
    init_path = folder / "__init__.py"
    init = _module(root, init_path, out) if init_path.is_file() else None
    spec = _order_spec(init)
    ordered: list[tuple[_Raw, str]] = []
    used: set[int] = set()

    def take(raws: list[_Raw], metric: str) -> None:
        for r in raws:
            if id(r) not in used:
                used.add(id(r))
                ordered.append((r, metric))

    if spec is None:
        out.notes.append(
            f"{SEEDS_DIR.as_posix()}/__init__.py: no {ALL_SEEDS} dict of the expected shape; "
            "seeds are listed in file order"
        )
    else:
        for metric, terms in spec:
            for kind, var, key in terms:
                if kind == "group":
                    if var not in groups or key not in groups[var]:
                        out.notes.append(
                            f"{ALL_SEEDS}[{metric!r}] names {var}[{key!r}], which no seeds module "
                            "defines as a list of seeds"
                        )
                        continue
                    take(groups[var][key], metric)
                else:
                    take([r for r in flat if r.data is not None and r.data.get("metric") == key], metric)
    rest = [r for r in every if id(r) not in used]
    if spec is not None and any(r.data is not None for r in rest):
        ids = ", ".join(str(r.data.get("id")) for r in rest if r.data is not None)
        out.notes.append(f"seeds not listed in {ALL_SEEDS}, imported after the others: {ids}")
    take(rest, "")
    for raw, metric in ordered:
        seed = _seed(raw, metric or raw.key or "", out)
        if seed is not None:
            out.seeds.append(seed)


def _parse_seed(raw: _Raw, out: Upstream) -> None:
    try:
        value = literal(raw.node)
    except Unreadable as exc:
        out.problems.append(
            ReadProblem("seed", raw.where, f"not plain data: {exc.reason}", _static_id(raw.node))
        )
        return
    if not isinstance(value, dict):
        out.problems.append(ReadProblem("seed", raw.where, f"not a dict but {type(value).__name__}"))
        return
    raw.data = value


_SEED_KEYS = ("id", "locale", "instruction")


def _seed(raw: _Raw, metric: str, out: Upstream) -> UpstreamSeed | None:
    data = raw.data
    if data is None:
        return None  # already reported by _parse_seed
    sid = data.get("id") if isinstance(data.get("id"), str) else None
    missing = [k for k in _SEED_KEYS if not isinstance(data.get(k), str) or not data[k].strip()]
    own_metric = data.get("metric")
    metric = metric or (own_metric if isinstance(own_metric, str) else "")
    if not metric:
        missing.append("metric")
    if missing:
        out.problems.append(ReadProblem("seed", raw.where, f"missing or empty: {', '.join(missing)}", sid))
        return None
    difficulty = data.get("difficulty")
    known = {*_SEED_KEYS, "metric", "difficulty"}
    return UpstreamSeed(
        id=data["id"],
        locale=data["locale"],
        instruction=data["instruction"],
        metric=metric,
        where=raw.where,
        difficulty=difficulty if isinstance(difficulty, str) else None,
        covert=raw.covert,
        extra=tuple(k for k in data if k not in known),
    )


# ----------------------------------------------------------------------------- personas


def _persona_call(node: ast.expr) -> bool:
    func = node.func if isinstance(node, ast.Call) else None
    return (isinstance(func, ast.Name) and func.id == "Persona") or (
        isinstance(func, ast.Attribute) and func.attr == "Persona"
    )


def _read_personas(root: Path, out: Upstream) -> None:
    folder = root / PERSONAS_DIR
    base_path = folder / "base.py"
    base = _module(root, base_path, out) if base_path.is_file() else None
    enums = enum_values(base) if base is not None else {}
    order = dataclass_fields(base, "Persona") if base is not None else []
    for path in sorted(folder.glob("*.py")):
        if path.name in ("__init__.py", "base.py"):
            continue
        module = _module(root, path, out)
        if module is None:
            continue
        for node in assignments(module).values():
            if not isinstance(node, ast.List):
                continue
            for call in node.elts:
                if not _persona_call(call):
                    continue
                assert isinstance(call, ast.Call)
                where = _rel(root, path, call)
                try:
                    values = keywords(call, enums)
                    if len(call.args) > len(order):
                        raise Unreadable(
                            "more positional arguments than Persona fields in base.py", line_of(call)
                        )
                    for name, arg in zip(order, call.args, strict=False):
                        values[name] = literal(arg, enums)
                except Unreadable as exc:
                    out.problems.append(ReadProblem("persona", where, f"not plain data: {exc.reason}"))
                    continue
                out.personas.append(UpstreamPersona(values, where))
