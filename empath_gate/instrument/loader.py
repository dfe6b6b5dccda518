"""Load, validate and cross-check the instrument: shipped files plus a team's layers.

Where the shipped instrument lives:

* wheel install: ``empath_gate/_data/suites`` and ``empath_gate/_data/thresholds.yaml``
  (force-included by ``pyproject.toml``);
* source checkout / editable install: the repository's ``suites/`` and ``thresholds.yaml``
  next to the package.

A team's ``--suites DIR`` (repeatable, applied in order) layers more seeds, personas, suites,
resources and pattern sets on top; metrics and ``instrument.yaml`` stay the shipped ones. A
team ``thresholds.yaml`` (``thresholds_path``, else the last layer that has one) **replaces**
the shipped thresholds file as a whole; ``waivers.yaml`` is optional.

Checks, in order, all problems collected before raising one :class:`SuiteError`:

1. each file is readable YAML without duplicate keys;
2. it matches its JSON Schema (``schemas/<kind>.schema.json``): unknown keys, types, required
   keys, ranges, slug ids;
3. its entries build the pydantic models (model rules such as bands covering 1-10);
4. cross-references: unique ids across files, metrics' dimensions, checks' pattern sets,
   seeds' primary metrics, suites' seeds/tags/metrics/dimensions/personas (each selecting at
   least one conversation), thresholds and waivers naming real metrics/suites/seeds/personas,
   every threshold field resolvable, no expired waiver.

Every problem reads ``path/to/file.yaml:LINE: /json/pointer: what is wrong — what to fix``.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from empath_gate.errors import ConfigError, SuiteError
from empath_gate.instrument.diagnostics import (
    Diagnostic,
    did_you_mean,
    model_diagnostics,
    schema_diagnostics,
)
from empath_gate.instrument.files import ITEM_MODELS, LIST_KEYS, InstrumentFile
from empath_gate.instrument.models import (
    CrisisResource,
    Dimension,
    Instrument,
    Metric,
    PatternSet,
    Persona,
    Seed,
    Suite,
    Thresholds,
    Waiver,
)
from empath_gate.instrument.schema_gen import load_schema
from empath_gate.instrument.selection import (
    assign_personas,
    personas_by_locale,
    select_seeds,
    suite_seeds,
)
from empath_gate.instrument.yaml_io import YamlDocument, YamlSyntaxError, pointer, read_yaml

BASE_FILES: dict[str, str] = {
    "instrument.yaml": "instrument",
    "patterns.yaml": "patterns",
    "resources.yaml": "resources",
    "suites.yaml": "suites",
}
"""Single files of the shipped suites directory -> file kind."""

LAYER_FILES: dict[str, str] = {
    "patterns.yaml": "patterns",
    "resources.yaml": "resources",
    "suites.yaml": "suites",
    "thresholds.yaml": "thresholds",
    "waivers.yaml": "waivers",
}
"""Single files a team layer may hold -> file kind."""

BASE_DIRS: dict[str, str] = {"metrics": "metrics", "personas": "personas", "seeds": "seeds"}
LAYER_DIRS: dict[str, str] = {"personas": "personas", "seeds": "seeds"}
REQUIRED_BASE_KINDS: tuple[str, ...] = ("instrument", "metrics", "patterns", "resources", "personas",
                                        "seeds", "suites")
_YAML_SUFFIXES = (".yaml", ".yml")


# --------------------------------------------------------------------------- locations


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is inside it, else absolute."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


@dataclass(frozen=True)
class Origin:
    """Where an entry was read: its document and JSON pointer."""

    doc: YamlDocument
    ptr: str

    @property
    def line(self) -> int:
        return self.doc.line_of(self.ptr)

    def where(self) -> str:
        """``file:line``, for naming the other side of a duplicate."""
        return f"{display_path(self.doc.path)}:{self.line}"

    def child(self, *parts: str | int) -> Origin:
        return Origin(self.doc, self.ptr + pointer(list(parts)))


@dataclass
class Problems:
    """Collects problem lines; :meth:`raise_if_any` raises one SuiteError with all of them."""

    lines: list[str] = field(default_factory=list)

    def at(self, origin: Origin, what: str, fix: str | None = None) -> None:
        ptr = origin.ptr or "/"
        text = f"{origin.where()}: {ptr}: {what}"
        self.lines.append(f"{text} — {fix}" if fix else text)

    def file(self, path: Path, what: str, fix: str | None = None, line: int | None = None) -> None:
        loc = display_path(path) + (f":{line}" if line is not None else "")
        self.lines.append(f"{loc}: {what}" + (f" — {fix}" if fix else ""))

    def diagnostics(self, doc: YamlDocument, diags: Iterable[Diagnostic]) -> None:
        for ptr, what, fix in diags:
            self.at(Origin(doc, ptr), what, fix)

    def raise_if_any(self) -> None:
        if self.lines:
            raise SuiteError(self.lines)


# --------------------------------------------------------------------------- shipped paths


def shipped_paths() -> tuple[Path, Path]:
    """``(suites_dir, thresholds_file)`` of the shipped instrument.

    Prefers the wheel's ``empath_gate/_data``; falls back to the repository layout. Raises
    ConfigError when neither exists (a broken install).
    """
    package = Path(str(resources.files("empath_gate")))
    data = package / "_data"
    if (data / "suites").is_dir():
        return data / "suites", data / "thresholds.yaml"
    repo = package.parent
    if (repo / "suites").is_dir():
        return repo / "suites", repo / "thresholds.yaml"
    raise ConfigError(
        f"the shipped instrument was not found (looked for {data / 'suites'} and {repo / 'suites'}); "
        "reinstall empath-gate"
    )


# --------------------------------------------------------------------------- reading files


@dataclass
class _Entry:
    model: BaseModel
    origin: Origin


@dataclass
class _Read:
    """Everything read from every layer, before cross-checks."""

    entries: dict[str, list[_Entry]] = field(default_factory=dict)
    raw_ids: dict[str, list[tuple[str, Origin]]] = field(default_factory=dict)
    invalid_kinds: set[str] = field(default_factory=set)
    instrument: tuple[InstrumentFile, YamlDocument] | None = None
    thresholds: tuple[Thresholds, YamlDocument] | None = None
    waivers: list[_Entry] = field(default_factory=list)
    waivers_doc: YamlDocument | None = None


def _scan_dir(folder: Path, *, base: bool, problems: Problems) -> list[tuple[str, Path]]:
    """The instrument files of ``folder`` as ``(kind, path)``, in load order (sorted names)."""
    files = BASE_FILES if base else LAYER_FILES
    dirs = BASE_DIRS if base else LAYER_DIRS
    role = "the shipped suites directory" if base else "a --suites layer"
    if not folder.is_dir():
        problems.file(folder, "suites directory not found", "give an existing directory")
        return []
    found: list[tuple[str, Path]] = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith("."):
            continue
        if path.is_dir():
            has_yaml = any(p.suffix in _YAML_SUFFIXES for p in path.iterdir() if p.is_file())
            if path.name in dirs:
                kind = dirs[path.name]
                found += [(kind, p) for p in sorted(path.iterdir())
                          if p.is_file() and p.suffix in _YAML_SUFFIXES and not p.name.startswith(".")]
            elif not base and path.name == "metrics":
                problems.file(path, "a --suites layer cannot define metrics (metric ids and rubrics are the "
                              "shipped instrument's)", "remove this directory; tune gates in thresholds.yaml")
            elif has_yaml:
                guess = did_you_mean(path.name, dirs)
                problems.file(path, f"unrecognised directory in {role}",
                              f"did you mean '{guess}/'?" if guess else f"use one of: {', '.join(dirs)}")
            continue
        if path.suffix not in _YAML_SUFFIXES:
            continue
        if path.name in files:
            found.append((files[path.name], path))
        elif not base and path.name == "instrument.yaml":
            problems.file(path, "a --suites layer cannot replace instrument.yaml",
                          "remove it; the shipped instrument version and dimensions apply")
        else:
            guess = did_you_mean(path.name, files)
            problems.file(path, f"unrecognised file in {role}",
                          f"did you mean '{guess}'?" if guess else f"expected one of: {', '.join(files)}")
    return found


def _read(path: Path, problems: Problems) -> YamlDocument | None:
    try:
        return read_yaml(path)
    except YamlSyntaxError as exc:
        problems.file(path, exc.message, line=exc.line)
    except OSError as exc:
        problems.file(path, f"cannot be read ({exc.strerror or exc})", "check the path and permissions")
    return None


def _schema_errors(doc: YamlDocument, kind: str, problems: Problems) -> set[int] | None:
    """Validate ``doc`` against its schema; returns indices of list entries with errors, or
    None when the file is unusable as a whole (empty, not a mapping, top-level errors)."""
    key = LIST_KEYS.get(kind)
    if doc.data is None:
        shape = f"'{key}:' followed by a list" if key else "the keys of its schema"
        problems.at(Origin(doc, ""), "the file is empty", f"write a mapping with {shape}")
        return None
    if not isinstance(doc.data, dict):
        problems.at(Origin(doc, ""), f"expected a mapping at the top, got {type(doc.data).__name__}",
                    f"start the file with '{key}:'" if key else "write key: value lines")
        return None
    validator = jsonschema.Draft202012Validator(load_schema(kind))
    bad: set[int] = set()
    whole_file_bad = False
    errors = sorted(validator.iter_errors(doc.data), key=lambda e: [str(p) for p in e.absolute_path])
    for err in errors:
        path = list(err.absolute_path)
        if key is not None and len(path) >= 2 and path[0] == key and isinstance(path[1], int):
            bad.add(path[1])
        else:
            whole_file_bad = True
        problems.diagnostics(doc, schema_diagnostics(err))
    return None if whole_file_bad else bad


def _build(model: type[BaseModel], data: Any, origin: Origin, problems: Problems) -> BaseModel | None:
    try:
        return model.model_validate(data)
    except ModelError as exc:
        base = [p for p in origin.ptr.split("/")[1:]]
        parts: list[str | int] = [int(p) if p.isdigit() else p for p in base]
        problems.diagnostics(origin.doc, model_diagnostics(exc, parts, data))
        return None


def _read_list_file(path: Path, kind: str, read: _Read, problems: Problems) -> None:
    doc = _read(path, problems)
    if doc is None:
        read.invalid_kinds.add(kind)
        return
    bad = _schema_errors(doc, kind, problems)
    key = LIST_KEYS[kind]
    items = doc.data.get(key) if isinstance(doc.data, dict) else None
    if not isinstance(items, list):
        read.invalid_kinds.add(kind)
        return
    if bad is None or bad:
        read.invalid_kinds.add(kind)
    item_model: type[BaseModel] = Waiver if kind == "waivers" else ITEM_MODELS[kind]
    for i, item in enumerate(items):
        origin = Origin(doc, pointer([key, i]))
        if isinstance(item, dict) and isinstance(item.get("id"), str):
            read.raw_ids.setdefault(kind, []).append((item["id"], origin))
        if bad is None or i in bad:
            continue
        model = _build(item_model, item, origin, problems)
        if model is None:
            read.invalid_kinds.add(kind)
            continue
        if kind == "waivers":
            read.waivers.append(_Entry(model, origin))
        else:
            read.entries.setdefault(kind, []).append(_Entry(model, origin))
    if kind == "waivers":
        read.waivers_doc = doc


def _read_whole_file(path: Path, kind: str, model: type[BaseModel], problems: Problems
                     ) -> tuple[BaseModel, YamlDocument] | None:
    doc = _read(path, problems)
    if doc is None:
        return None
    bad = _schema_errors(doc, kind, problems)
    if bad is None:
        return None
    built = _build(model, doc.data, Origin(doc, ""), problems)
    return (built, doc) if built is not None else None


# --------------------------------------------------------------------------- cross-checks


def _duplicates(read: _Read, problems: Problems) -> None:
    names = {"metrics": "metric", "patterns": "pattern set", "resources": "resource",
             "personas": "persona", "seeds": "seed", "suites": "suite"}
    for kind, noun in names.items():
        first: dict[str, Origin] = {}
        for ident, origin in read.raw_ids.get(kind, []):
            if ident in first:
                problems.at(origin.child("id"), f"duplicate {noun} id {ident!r} (also defined at "
                            f"{first[ident].child('id').where()})", "rename one of them or remove the copy")
            else:
                first[ident] = origin


def _ids(read: _Read, kind: str) -> list[str]:
    return [i for i, _ in read.raw_ids.get(kind, [])]


def _unknown(problems: Problems, origin: Origin, noun: str, value: str, known: Sequence[str],
             fix_more: str = "") -> None:
    if not known:  # the file defining these ids is missing or unreadable: already reported
        return
    guess = did_you_mean(value, known)
    if guess:
        fix = f"did you mean {guess!r}?"
    elif len(known) <= 12:
        fix = f"use one of: {', '.join(known)}"
    else:
        fix = f"use an existing {noun} id{fix_more}"
    problems.at(origin, f"unknown {noun} {value!r}", fix)


def _check_metrics(read: _Read, dims: Sequence[Dimension], problems: Problems) -> None:
    dim_ids = [d.id for d in dims]
    patterns = _ids(read, "patterns")
    for e in read.entries.get("metrics", []):
        m = e.model
        assert isinstance(m, Metric)
        if m.dimension not in dim_ids:
            _unknown(problems, e.origin.child("dimension"), "dimension", m.dimension, dim_ids)
        for ci, crit in enumerate(m.criteria):
            if crit.check is not None and crit.check.pattern_set is not None \
                    and crit.check.pattern_set not in patterns:
                _unknown(problems, e.origin.child("criteria", ci, "check", "pattern_set"), "pattern set",
                         crit.check.pattern_set, patterns, " from patterns.yaml")


def _check_seeds(read: _Read, problems: Problems) -> None:
    metrics = _ids(read, "metrics")
    for e in read.entries.get("seeds", []):
        s = e.model
        assert isinstance(s, Seed)
        for mi, mid in enumerate(s.primary_metrics):
            if mid not in metrics:
                _unknown(problems, e.origin.child("primary_metrics", mi), "metric", mid, metrics)


def _check_suites(read: _Read, problems: Problems, selection_ok: bool) -> None:
    metric_ids = _ids(read, "metrics")
    seed_ids = _ids(read, "seeds")
    persona_ids = _ids(read, "personas")
    dim_ids = [d.id for d in read.instrument[0].dimensions] if read.instrument else []
    seeds = [e.model for e in read.entries.get("seeds", []) if isinstance(e.model, Seed)]
    personas = [e.model for e in read.entries.get("personas", []) if isinstance(e.model, Persona)]
    tags = sorted({t for s in seeds for t in s.tags})
    dimension_of = {e.model.id: e.model.dimension for e in read.entries.get("metrics", [])
                    if isinstance(e.model, Metric)}
    by_locale = personas_by_locale(personas)
    for e in read.entries.get("suites", []):
        suite = e.model
        assert isinstance(suite, Suite)
        selectors = [("seeds",), *(("also_seeds", i) for i in range(len(suite.also_seeds)))]
        sel_models = [suite.seeds, *suite.also_seeds]
        for parts, sel in zip(selectors, sel_models, strict=True):
            where = e.origin.child(*parts)
            for i, sid in enumerate(sel.ids):
                if sid not in seed_ids:
                    _unknown(problems, where.child("ids", i), "seed", sid, seed_ids)
            for i, tag in enumerate(sel.tags):
                if tag not in tags and "seeds" not in read.invalid_kinds:
                    guess = did_you_mean(tag, tags)
                    problems.at(where.child("tags", i), f"no seed carries the tag {tag!r}",
                                f"did you mean {guess!r}?" if guess else "tag seeds with it or remove it")
            for i, mid in enumerate(sel.metrics):
                if mid not in metric_ids:
                    _unknown(problems, where.child("metrics", i), "metric", mid, metric_ids)
            for i, did in enumerate(sel.dimensions):
                if did not in dim_ids:
                    _unknown(problems, where.child("dimensions", i), "dimension", did, dim_ids)
            if selection_ok and not select_seeds(sel, seeds, dimension_of):
                problems.at(where, f"suite {suite.id!r}: this selection picks no seed",
                            "widen it (ids, tags, metrics, dimensions, all) or relax locales/covert/min_risk")
        ps = suite.personas
        for i, pid in enumerate(ps.ids):
            if pid not in persona_ids:
                _unknown(problems, e.origin.child("personas", "ids", i), "persona", pid, persona_ids)
        if ps.mode == "list" and not ps.ids:
            problems.at(e.origin.child("personas"), "mode 'list' needs persona ids", "add 'ids: [...]'")
        if ps.mode != "list" and ps.ids:
            problems.at(e.origin.child("personas", "ids"), f"ids apply only to mode 'list' (mode is "
                        f"{ps.mode!r})", "set 'mode: list' or remove the ids")
        if selection_ok:
            chosen = suite_seeds(suite, seeds, dimension_of)
            if chosen and not any(assign_personas(ps, s, by_locale) for s in chosen):
                problems.at(e.origin.child("personas"),
                            f"suite {suite.id!r} gets no persona for any of its {len(chosen)} seeds",
                            "check worst_case_only, the persona ids and their locales")


def _check_thresholds(read: _Read, metrics: Sequence[Metric], suites: Sequence[Suite],
                      problems: Problems) -> None:
    if read.thresholds is None:
        return
    th, doc = read.thresholds
    metric_ids = _ids(read, "metrics")
    suite_ids = _ids(read, "suites")
    for mid in th.metrics:
        if mid not in metric_ids:
            _unknown(problems, Origin(doc, pointer(["metrics", mid])), "metric", mid, metric_ids)
    for sid, st in th.suites.items():
        if sid not in suite_ids:
            _unknown(problems, Origin(doc, pointer(["suites", sid])), "suite", sid, suite_ids)
        for mid in st.metrics:
            if mid not in metric_ids:
                _unknown(problems, Origin(doc, pointer(["suites", sid, "metrics", mid])), "metric", mid,
                         metric_ids)
    unset: dict[str, list[str]] = {}
    for m in metrics:
        for s in (None, *(x.id for x in suites)):
            try:
                th.resolve(m.id, s)
            except ModelError as exc:
                for err in exc.errors(include_url=False):
                    if err["type"] == "missing":
                        unset.setdefault(str(err["loc"][0]), []).append(m.id)
    for name, mids in unset.items():
        first = sorted(set(mids), key=mids.index)
        problems.at(Origin(doc, "/defaults"), f"{name!r} is left unset for metric(s) {', '.join(first[:3])}"
                    + (" ..." if len(first) > 3 else ""), f"set '{name}' under defaults")


def _check_waivers(read: _Read, problems: Problems, today: dt.date) -> None:
    metrics, seeds, personas = _ids(read, "metrics"), _ids(read, "seeds"), _ids(read, "personas")
    for e in read.waivers:
        w = e.model
        assert isinstance(w, Waiver)
        if w.metric not in metrics:
            _unknown(problems, e.origin.child("metric"), "metric", w.metric, metrics)
        if w.seed is not None and w.seed not in seeds:
            _unknown(problems, e.origin.child("seed"), "seed", w.seed, seeds)
        if w.persona is not None and w.persona not in personas:
            _unknown(problems, e.origin.child("persona"), "persona", w.persona, personas)
        if w.expires < today:
            problems.at(e.origin.child("expires"), f"waiver for {w.metric!r} (owner {w.owner}) expired on "
                        f"{w.expires.isoformat()} (today is {today.isoformat()})",
                        "fix the failure and remove the waiver, or renew it with a later date and a "
                        "current reason")


# --------------------------------------------------------------------------- entry point


def load_instrument(
    extra_dirs: Sequence[Path] = (),
    thresholds_path: Path | None = None,
    waivers_path: Path | None = None,
    *,
    base_dir: Path | None = None,
    today: dt.date | None = None,
) -> Instrument:
    """Read, validate and cross-check the instrument; returns it frozen.

    * ``extra_dirs``: team layers (``--suites DIR``), applied in order after the shipped files.
    * ``thresholds_path``: a thresholds file replacing the shipped one (default: the last layer's
      ``thresholds.yaml``, else the shipped ``thresholds.yaml``).
    * ``waivers_path``: a ``waivers.yaml`` (default: the last layer's, else none). An expired
      waiver (``expires`` before ``today``) is an error.
    * ``base_dir``: the suites directory to start from instead of the shipped one (tests, forks);
      its thresholds default to ``base_dir.parent / "thresholds.yaml"``.
    * ``today``: the date waivers are checked against (default: the local date).

    Order: metrics by dimension order of ``instrument.yaml`` then file order; everything else
    in layer order, files sorted by name, entries in file order.

    Raises SuiteError with one line per problem (``file:line: /pointer: what — fix``), or
    ConfigError when the shipped instrument cannot be found.
    """
    problems = Problems()
    if base_dir is None:
        base_dir, default_thresholds = shipped_paths()
    else:
        default_thresholds = base_dir.parent / "thresholds.yaml"
    read = _Read()
    layers: list[tuple[Path, bool]] = [(base_dir, True), *((Path(d), False) for d in extra_dirs)]
    for folder, is_base in layers:
        found = _scan_dir(folder, base=is_base, problems=problems)
        kinds = {k for k, _ in found}
        if is_base:
            for kind in REQUIRED_BASE_KINDS:
                if kind not in kinds and folder.is_dir():
                    where = f"{kind}/*.yaml" if kind in BASE_DIRS else f"{kind}.yaml"
                    problems.file(folder, f"missing {where}", "restore the shipped instrument files")
        elif folder.is_dir() and not found:
            problems.file(folder, "no instrument files in this --suites directory",
                          "add seeds/*.yaml, personas/*.yaml or suites.yaml")
        for kind, path in found:
            if kind == "instrument":
                got = _read_whole_file(path, kind, InstrumentFile, problems)
                if got is not None:
                    assert isinstance(got[0], InstrumentFile)
                    read.instrument = (got[0], got[1])
            elif kind == "thresholds":
                if thresholds_path is None:
                    default_thresholds = path
            elif kind == "waivers":
                if waivers_path is None:
                    waivers_path = path
            else:
                _read_list_file(path, kind, read, problems)

    th_path = thresholds_path if thresholds_path is not None else default_thresholds
    if not th_path.is_file():
        problems.file(th_path, "thresholds file not found", "give an existing thresholds.yaml")
    else:
        got = _read_whole_file(th_path, "thresholds", Thresholds, problems)
        if got is not None:
            assert isinstance(got[0], Thresholds)
            read.thresholds = (got[0], got[1])
    if waivers_path is not None:
        if not Path(waivers_path).is_file():
            problems.file(Path(waivers_path), "waivers file not found", "give an existing waivers.yaml")
        else:
            _read_list_file(Path(waivers_path), "waivers", read, problems)

    return _assemble(read, problems, [f for f, _ in layers], today or dt.date.today())


def _models(read: _Read, kind: str) -> list[Any]:
    return [e.model for e in read.entries.get(kind, [])]


def _assemble(read: _Read, problems: Problems, folders: Sequence[Path], today: dt.date) -> Instrument:
    dims: tuple[Dimension, ...] = read.instrument[0].dimensions if read.instrument else ()
    if read.instrument is not None:
        seen: dict[str, int] = {}
        for i, d in enumerate(dims):
            if d.id in seen:
                problems.at(Origin(read.instrument[1], pointer(["dimensions", i, "id"])),
                            f"duplicate dimension id {d.id!r} (also entry {seen[d.id]})", "remove the copy")
            seen.setdefault(d.id, i)
    _duplicates(read, problems)
    _check_metrics(read, dims, problems)
    _check_seeds(read, problems)
    selection_ok = not (read.invalid_kinds & {"seeds", "personas", "metrics", "suites"})
    _check_suites(read, problems, selection_ok)
    dim_order = {d.id: i for i, d in enumerate(dims)}
    metrics: list[Metric] = sorted(_models(read, "metrics"),
                                   key=lambda m: dim_order.get(m.dimension, len(dims)))
    suites: list[Suite] = _models(read, "suites")
    if "metrics" not in read.invalid_kinds and "suites" not in read.invalid_kinds:
        _check_thresholds(read, metrics, suites, problems)
    _check_waivers(read, problems, today)
    problems.raise_if_any()
    assert read.instrument is not None and read.thresholds is not None
    inst = read.instrument[0]
    pattern_sets: list[PatternSet] = _models(read, "patterns")
    resources_: list[CrisisResource] = _models(read, "resources")
    seeds: list[Seed] = _models(read, "seeds")
    personas: list[Persona] = _models(read, "personas")
    waivers = [e.model for e in read.waivers if isinstance(e.model, Waiver)]
    return Instrument(
        version=inst.instrument_version,
        scale_min=inst.scale.min,
        scale_max=inst.scale.max,
        cap_rule=inst.cap_rule,
        dimensions=dims,
        metrics=tuple(metrics),
        pattern_sets=tuple(pattern_sets),
        resources=tuple(resources_),
        seeds=tuple(seeds),
        personas=tuple(personas),
        suites=tuple(suites),
        thresholds=read.thresholds[0],
        waivers=tuple(waivers),
        sources=tuple(str(f) for f in folders),
    )


# --------------------------------------------------------------------------- configuration


def pyproject_suites_dirs(pyproject: Path) -> tuple[Path, ...]:
    """``[tool.empath-gate] suites_dirs`` of ``pyproject``, resolved against its folder.

    Returns ``()`` when the file or key is absent, or on Python 3.10 without ``tomli``.
    Raises ConfigError when the file is not valid TOML or the key is not a list of strings.
    """
    if not pyproject.is_file():
        return ()
    if sys.version_info >= (3, 11):
        import tomllib as toml
    else:  # pragma: no cover - exercised on 3.10 only
        try:
            import tomli as toml  # type: ignore[import-not-found, no-redef, unused-ignore]
        except ImportError:
            return ()
    try:
        data = toml.loads(pyproject.read_text(encoding="utf-8"))
    except toml.TOMLDecodeError as exc:
        raise ConfigError(f"{display_path(pyproject)}: not valid TOML ({exc})") from exc
    section = data.get("tool", {}).get("empath-gate", {})
    dirs = section.get("suites_dirs") if isinstance(section, dict) else None
    if dirs is None:
        return ()
    if not isinstance(dirs, list) or not all(isinstance(d, str) for d in dirs):
        raise ConfigError(f"{display_path(pyproject)}: [tool.empath-gate] suites_dirs must be a list of "
                          "directory paths, e.g. suites_dirs = [\"safety/suites\"]")
    return tuple(pyproject.parent / d for d in dirs)


__all__ = ["Origin", "Problems", "display_path", "load_instrument", "pyproject_suites_dirs", "shipped_paths"]
