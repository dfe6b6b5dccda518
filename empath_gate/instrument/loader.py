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
   seeds' primary metrics, seeds' cue tokens (declared in cues.yaml, only in voice seeds),
   suites' seeds/tags/metrics/dimensions/personas (each selecting at least one conversation),
   thresholds and waivers naming real metrics/suites/seeds/personas,
   every threshold field resolvable, no expired waiver; seed identity (no instruction or script
   naming a person of its own, a fitting persona for every seed, fixed characters that exist).

The checks live in :mod:`~empath_gate.instrument.reading` (1-3) and
:mod:`~empath_gate.instrument.crosscheck` (4); this module finds the files and assembles the
:class:`~empath_gate.instrument.models.Instrument`.

Every problem reads ``path/to/file.yaml:LINE: /json/pointer: what is wrong — what to fix``.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path

from empath_gate.errors import ConfigError
from empath_gate.instrument import crosscheck
from empath_gate.instrument.behaviour_models import BehaviourSet
from empath_gate.instrument.crisis_levels import CrisisLevels
from empath_gate.instrument.cue_checks import check_cues
from empath_gate.instrument.emotion_models import EmotionSet, Lexicon
from empath_gate.instrument.files import InstrumentFile
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
from empath_gate.instrument.problems import Origin, Problems, display_path
from empath_gate.instrument.reading import (
    BASE_DIRS,
    OPTIONAL_BASE_KINDS,
    REQUIRED_BASE_KINDS,
    ReadState,
    read_list_file,
    read_whole_file,
    scan_dir,
)

# --------------------------------------------------------------------------- shipped paths


def shipped_paths() -> tuple[Path, Path]:
    """``(suites_dir, thresholds_file)`` of the shipped instrument (:mod:`empath_gate.resources`
    finds them in a wheel and in a checkout). Raises ConfigError on a broken install."""
    from empath_gate.resources import shipped_suites_dir, shipped_thresholds

    return shipped_suites_dir(), shipped_thresholds()


# --------------------------------------------------------------------------- entry point


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause Python's cycle collector inside the block (restored after it, also when nested).
    Loading and checking a large layer makes hundreds of thousands of objects that form no
    reference cycles, and the collector's passes over them cost about a fifth of the time of
    validating a 3 MB layer while freeing nothing; reference counting still frees everything."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


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

    Order: metrics by dimension order of ``instrument.yaml``, then the family metrics by family
    order, then file order; everything else
    in layer order, files sorted by name, entries in file order.

    Raises SuiteError with one line per problem (``file:line: /pointer: what — fix``), or
    ConfigError when the shipped instrument cannot be found.
    """
    with gc_paused():
        return _load(extra_dirs, thresholds_path, waivers_path, base_dir, today)


def _load(extra_dirs: Sequence[Path], thresholds_path: Path | None, waivers_path: Path | None,
          base_dir: Path | None, today: dt.date | None) -> Instrument:
    """:func:`load_instrument`'s work."""
    problems = Problems()
    if base_dir is None:
        base_dir, default_thresholds = shipped_paths()
    else:
        default_thresholds = base_dir.parent / "thresholds.yaml"
    read = ReadState()
    layers: list[tuple[Path, bool]] = [(base_dir, True), *((Path(d), False) for d in extra_dirs)]
    layer_thresholds, layer_waivers = _read_layers(layers, read, problems)
    th_path = thresholds_path or layer_thresholds or default_thresholds
    if not th_path.is_file():
        problems.file(th_path, "thresholds file not found", "give an existing thresholds.yaml")
    else:
        got = read_whole_file(th_path, "thresholds", Thresholds, problems)
        if got is not None:
            assert isinstance(got[0], Thresholds)
            read.thresholds = (got[0], got[1])
    waivers = waivers_path or layer_waivers
    if waivers is not None:
        if not Path(waivers).is_file():
            problems.file(Path(waivers), "waivers file not found", "give an existing waivers.yaml")
        else:
            read_list_file(Path(waivers), "waivers", read, problems)
    return _assemble(read, problems, [f for f, _ in layers], today or dt.date.today())


def _read_layers(layers: Sequence[tuple[Path, bool]], read: ReadState, problems: Problems
                 ) -> tuple[Path | None, Path | None]:
    """Read every list file and instrument.yaml of ``layers`` (``(folder, is_base)``) into
    ``read``; returns the last layer's thresholds.yaml and waivers.yaml (None when absent)."""
    thresholds: Path | None = None
    waivers: Path | None = None
    for folder, is_base in layers:
        found = scan_dir(folder, base=is_base, problems=problems)
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
                got = read_whole_file(path, kind, InstrumentFile, problems)
                if got is not None:
                    assert isinstance(got[0], InstrumentFile)
                    read.instrument = (got[0], got[1])
            elif kind in OPTIONAL_BASE_KINDS:
                _read_turn_layer_file(path, kind, read, problems)
            elif kind == "thresholds":
                thresholds = path
            elif kind == "waivers":
                waivers = path
            else:
                read_list_file(path, kind, read, problems)
    return thresholds, waivers


def _read_turn_layer_file(path: Path, kind: str, read: ReadState, problems: Problems) -> None:
    """Read ``emotions.yaml``, ``crisis_levels.yaml``, ``behaviours.yaml`` or one
    ``lexicons/<locale>.yaml`` into ``read`` (a second lexicon of the same locale is a problem)."""
    models: dict[str, type[EmotionSet] | type[Lexicon] | type[CrisisLevels] | type[BehaviourSet]] = {
        "emotions": EmotionSet, "crisis_levels": CrisisLevels, "behaviours": BehaviourSet,
    }
    got = read_whole_file(path, kind, models.get(kind, Lexicon), problems)
    if got is None:
        return
    if isinstance(got[0], CrisisLevels):
        read.crisis_levels = got[0]
    elif isinstance(got[0], BehaviourSet):
        read.behaviours = got[0]
    elif isinstance(got[0], EmotionSet):
        read.emotions = got[0]
    elif isinstance(got[0], Lexicon):
        lex = got[0]
        if any(other.locale == lex.locale for other, _ in read.lexicons):
            problems.at(Origin(got[1], "/locale"), f"a second lexicon for {lex.locale}",
                        "keep one lexicon file per locale")
        else:
            read.lexicons.append((lex, got[1]))


def _assemble(read: ReadState, problems: Problems, folders: Sequence[Path], today: dt.date) -> Instrument:
    """Run the cross-checks, raise on any problem, else build the Instrument."""
    dims: tuple[Dimension, ...] = read.instrument[0].dimensions if read.instrument else ()
    families = read.instrument[0].families if read.instrument else ()
    crosscheck.check_duplicates(read, dims, problems)
    crosscheck.check_metrics(read, dims, problems, families)
    crosscheck.check_seeds(read, problems)
    check_cues(read, problems)
    crosscheck.check_identity(read, problems)
    selection_ok = not (read.invalid_kinds & {"seeds", "personas", "metrics", "suites"})
    crosscheck.check_suites(read, problems, selection_ok)
    group_order = {g.id: i for i, g in enumerate((*dims, *families))}
    metrics: list[Metric] = sorted(read.models("metrics"),
                                   key=lambda m: group_order.get(m.group, len(group_order)))
    suites: list[Suite] = read.models("suites")
    if "metrics" not in read.invalid_kinds and "suites" not in read.invalid_kinds:
        crosscheck.check_thresholds(read, metrics, suites, problems)
    crosscheck.check_waivers(read, problems, today)
    problems.raise_if_any()
    assert read.instrument is not None and read.thresholds is not None
    inst = read.instrument[0]
    pattern_sets: list[PatternSet] = read.models("patterns")
    resources_: list[CrisisResource] = read.models("resources")
    seeds: list[Seed] = read.models("seeds")
    personas: list[Persona] = read.models("personas")
    waivers = [e.model for e in read.waivers if isinstance(e.model, Waiver)]
    return Instrument(
        version=inst.instrument_version,
        scale_min=inst.scale.min,
        scale_max=inst.scale.max,
        cap_rule=inst.cap_rule,
        dimensions=dims,
        metrics=tuple(metrics),
        families=inst.families,
        pattern_sets=tuple(pattern_sets),
        resources=tuple(resources_),
        seeds=tuple(seeds),
        personas=tuple(personas),
        suites=tuple(suites),
        thresholds=read.thresholds[0],
        waivers=tuple(waivers),
        cues=tuple(read.models("cues")),
        emotions=read.emotions,
        crisis_levels=read.crisis_levels,
        behaviours=read.behaviours,
        lexicons=tuple(lex for lex, _ in read.lexicons),
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


__all__ = ["Origin", "Problems", "display_path", "gc_paused", "load_instrument", "pyproject_suites_dirs",
           "shipped_paths"]
