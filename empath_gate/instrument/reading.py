"""Reading instrument files: which files a suites directory holds, and each file through its
YAML syntax, its JSON Schema and its pydantic model, collecting every problem.

Checks 1-3 of :mod:`empath_gate.instrument.loader`: each file is readable YAML without duplicate
keys; it matches its schema (``schemas/<kind>.schema.json``: unknown keys, types, required
keys, ranges, slug ids); its entries build the models (rules such as bands covering 1-10). List
files are validated entry by entry, so one bad seed does not hide the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic import ValidationError as ModelError

from empath_gate.bounded import InputLimitError
from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.crisis_levels import CrisisLevels
from empath_gate.instrument.diagnostics import did_you_mean, model_diagnostics, schema_diagnostics
from empath_gate.instrument.emotion_models import EmotionSet, Lexicon
from empath_gate.instrument.files import ITEM_MODELS, LIST_KEYS, InstrumentFile
from empath_gate.instrument.models import Thresholds, Waiver
from empath_gate.instrument.problems import Origin, Problems
from empath_gate.instrument.schema_fast import surely_valid
from empath_gate.instrument.schema_gen import load_schema
from empath_gate.instrument.yaml_io import YamlDocument, YamlSyntaxError, pointer, read_yaml

BASE_FILES: dict[str, str] = {
    "cues.yaml": "cues",
    "instrument.yaml": "instrument",
    "patterns.yaml": "patterns",
    "resources.yaml": "resources",
    "suites.yaml": "suites",
    "emotions.yaml": "emotions",
    "crisis_levels.yaml": "crisis_levels",
    "behaviours.yaml": "behaviours",
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

BASE_DIRS: dict[str, str] = {"metrics": "metrics", "personas": "personas", "seeds": "seeds",
                             "lexicons": "lexicons"}
LAYER_DIRS: dict[str, str] = {"personas": "personas", "seeds": "seeds"}
REQUIRED_BASE_KINDS: tuple[str, ...] = ("instrument", "metrics", "patterns", "resources", "personas",
                                        "seeds", "suites")
OPTIONAL_BASE_KINDS: tuple[str, ...] = ("emotions", "lexicons", "crisis_levels", "behaviours")
"""The turn layer's files, the crisis levels and the behaviour controls: read when the shipped
directory has them, never from a team layer."""
_YAML_SUFFIXES = (".yaml", ".yml")


@dataclass
class Entry:
    """One built list entry (a metric, seed, persona...) and where it was read."""

    model: BaseModel
    origin: Origin


@dataclass
class ReadState:
    """Everything read from every layer, before cross-checks. ``raw_ids`` holds every entry's
    id even when the entry did not build (so references to it are not reported twice);
    ``invalid_kinds`` the kinds with at least one unusable entry or file."""

    entries: dict[str, list[Entry]] = field(default_factory=dict)
    raw_ids: dict[str, list[tuple[str, Origin]]] = field(default_factory=dict)
    invalid_kinds: set[str] = field(default_factory=set)
    instrument: tuple[InstrumentFile, YamlDocument] | None = None
    thresholds: tuple[Thresholds, YamlDocument] | None = None
    waivers: list[Entry] = field(default_factory=list)
    waivers_doc: YamlDocument | None = None
    emotions: EmotionSet | None = None
    crisis_levels: CrisisLevels | None = None
    behaviours: BehaviourSet | None = None
    lexicons: list[tuple[Lexicon, YamlDocument]] = field(default_factory=list)

    def models(self, kind: str) -> list[Any]:
        """The built models of ``kind``, in load order."""
        return [e.model for e in self.entries.get(kind, [])]

    def ids(self, kind: str) -> list[str]:
        """Every id written for ``kind`` (built or not), in load order."""
        return [i for i, _ in self.raw_ids.get(kind, [])]


def _scan_subdir(path: Path, role: str, base: bool, dirs: dict[str, str], problems: Problems
                 ) -> list[tuple[str, Path]]:
    has_yaml = any(p.suffix in _YAML_SUFFIXES for p in path.iterdir() if p.is_file())
    if path.name in dirs:
        return [(dirs[path.name], p) for p in sorted(path.iterdir())
                if p.is_file() and p.suffix in _YAML_SUFFIXES and not p.name.startswith(".")]
    if not base and path.name == "metrics":
        problems.file(path, "a --suites layer cannot define metrics (metric ids and rubrics are the "
                      "shipped instrument's)", "remove this directory; tune gates in thresholds.yaml")
    elif has_yaml:
        guess = did_you_mean(path.name, dirs)
        problems.file(path, f"unrecognised directory in {role}",
                      f"did you mean '{guess}/'?" if guess else f"use one of: {', '.join(dirs)}")
    return []


def scan_dir(folder: Path, *, base: bool, problems: Problems) -> list[tuple[str, Path]]:
    """The instrument files of ``folder`` as ``(kind, path)``, in load order (sorted names).
    ``base``: the shipped suites directory (metrics and instrument.yaml allowed) or a layer."""
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
            found += _scan_subdir(path, role, base, dirs, problems)
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
    except InputLimitError as exc:
        problems.file(path, exc.what, exc.fix, line=exc.line)
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
    schema = load_schema(kind)
    if surely_valid(doc.data, schema):
        return set()  # the fast walk is sure: jsonschema would find nothing
    import jsonschema  # only now: a valid instrument never needs it

    validator = jsonschema.Draft202012Validator(schema)
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
        parts: list[str | int] = [int(p) if p.isdigit() else p for p in origin.ptr.split("/")[1:]]
        problems.diagnostics(origin.doc, model_diagnostics(exc, parts, data))
        return None


def read_list_file(path: Path, kind: str, read: ReadState, problems: Problems) -> None:
    """Read a list-shaped file (metrics, seeds, personas, waivers...) into ``read``."""
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
        target = read.waivers if kind == "waivers" else read.entries.setdefault(kind, [])
        target.append(Entry(model, origin))
    if kind == "waivers":
        read.waivers_doc = doc


def read_whole_file(path: Path, kind: str, model: type[BaseModel], problems: Problems
                    ) -> tuple[BaseModel, YamlDocument] | None:
    """Read a file that is one model (instrument.yaml, thresholds.yaml); None when unusable."""
    doc = _read(path, problems)
    if doc is None:
        return None
    bad = _schema_errors(doc, kind, problems)
    if bad is None:
        return None
    built = _build(model, doc.data, Origin(doc, ""), problems)
    return (built, doc) if built is not None else None
