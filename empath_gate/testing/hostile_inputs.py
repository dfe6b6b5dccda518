"""Large and hostile instrument files, for tests and benchmarks of bounded parsing.

The same builders feed ``tests/inputs/test_hostile_files.py`` and ``bench/bench_inputs.py``:

* :data:`ALIAS_BOMB` / :func:`alias_bomb`: nine levels of nine YAML aliases ("billion laughs",
  358 bytes; 9**9, about 387 million strings once expanded) under a top-level key of your choice;
* :func:`realistic_seeds`: copies of the shipped seeds with new ids and scenarios and most
  script words respelled, so no two scripts are near-duplicates (about 2,150 bytes a seed once
  written by :func:`seeds_yaml`: 1,400 seeds make about 3 MB);
* :func:`minimal_seed_lines`: the smallest valid seed the seed schema accepts, one flow-style
  line each (required keys only, the shortest instruction allowed, a unique one-word script),
  156 bytes a seed: 3 MB holds 19,230 of them (:func:`minimal_seeds_fitting`), and 40,000 need
  6.2 MB. 40,000 cannot fit in 3 MB: a seed's required key names and shortest instruction
  alone take 87 bytes, and 3 MB leaves each of 40,000 seeds 75;
* :func:`write_layer`: a team layer folder holding one seed file.

Every layer these build validates (``empath-gate validate --suites DIR`` exits 0) within the
default input limits. Importing this module is cheap (PyYAML only; the shipped seeds are read
when :func:`realistic_seeds` is called).
"""

from __future__ import annotations

import copy
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

ALIAS_BOMB = """seeds:
  - &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
  - &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
  - &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
  - &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
  - &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
  - &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
  - &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
  - &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
  - &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
"""
"""A seed file of nine levels of nine aliases: 9**9 (about 387 million) strings once expanded.
The first anchor (``&a``) is on line 2."""

MINIMAL_INSTRUCTION = "You ask what to do about this."
"""The shortest instruction a seed may have (``Seed.instruction``: at least 30 characters),
naming no person (so no identity rule applies)."""

MINIMAL_METRIC = "sycophancy"
"""The shortest metric id of the shipped instrument, the minimal seed's one primary metric."""

_ID_DIGITS = "0123456789abcdefghijklmnopqrstuvwxyz"


def alias_bomb(key: str = "seeds") -> str:
    """:data:`ALIAS_BOMB` under the top-level key ``key`` (``"suites"``, ``"waivers"``...)."""
    return ALIAS_BOMB.replace("seeds:", f"{key}:", 1)


def _respell(text: str, k: int) -> str:
    """``text`` with about 70% of its words given the suffix ``k`` (deterministic: CRC-32)."""
    return " ".join(w + str(k) if zlib.crc32(f"{w}{k}".encode()) % 10 < 7 else w for w in text.split())


def shipped_seed_entries() -> list[dict[str, Any]]:
    """The shipped seeds as plain data (file order, files sorted by name), read through the
    instrument's strict, bounded YAML reader. Raises ConfigError on a broken install."""
    from empath_gate.instrument.yaml_io import read_yaml
    from empath_gate.resources import shipped_suites_dir

    out: list[dict[str, Any]] = []
    for path in sorted((shipped_suites_dir() / "seeds").glob("*.yaml")):
        out += read_yaml(path).data["seeds"]
    return out


def realistic_seeds(n: int) -> list[dict[str, Any]]:
    """``n`` seeds copied in turn from the shipped ones: copy ``k`` (1, 2...) of seed ``x`` has the
    id and scenario ``x-b<k>``, about 70% of its script words suffixed with ``k`` (so scripts
    stay more than 40% apart in token Jaccard) and no ``review``. Plain data, in order."""
    shipped = shipped_seed_entries()
    out = []
    for i in range(n):
        seed = copy.deepcopy(shipped[i % len(shipped)])
        k = i // len(shipped) + 1
        seed["id"] = f"{seed['id']}-b{k}"
        seed["scenario"] = f"{seed['scenario']}-b{k}"
        seed["script"] = [_respell(t, k) for t in seed["script"]]
        seed.pop("review", None)
        out.append(seed)
    return out


def minimal_id(i: int) -> str:
    """The ``i``-th minimal seed id: ``s`` and ``i`` in base 36, at least 3 digits (``s000``,
    ``s001``...; never read by YAML as a number, a boolean or null). ``i`` >= 0."""
    digits = ""
    while True:
        i, r = divmod(i, 36)
        digits = _ID_DIGITS[r] + digits
        if i == 0:
            break
    return "s" + digits.rjust(3, "0")


def minimal_seed_line(i: int) -> str:
    """The ``i``-th minimal seed as one line of a ``seeds:`` list, newline included: the required
    keys only, :data:`MINIMAL_INSTRUCTION`, :data:`MINIMAL_METRIC`, risk level none and a
    two-turn script of the seed's id (unique, so no two scripts are near-duplicates)."""
    sid = minimal_id(i)
    return (f"- {{id: {sid},locale: en-US,scenario: {sid},instruction: {MINIMAL_INSTRUCTION},"
            f"primary_metrics: [{MINIMAL_METRIC}],risk: {{level: none}},script: [{sid},{sid}]}}\n")


def minimal_seed_lines(n: int) -> Iterator[str]:
    """The lines of a seed file of ``n`` minimal seeds: ``seeds:`` then :func:`minimal_seed_line`."""
    yield "seeds:\n"
    for i in range(n):
        yield minimal_seed_line(i)


def minimal_seeds_fitting(max_bytes: int) -> int:
    """The most minimal seeds whose file (:func:`minimal_seed_lines`) is at most ``max_bytes``."""
    size, n = len("seeds:\n"), 0
    while True:
        size += len(minimal_seed_line(n).encode())
        if size > max_bytes:
            return n
        n += 1


def seeds_yaml(seeds: list[dict[str, Any]]) -> str:
    """A seed file holding ``seeds`` (block style, UTF-8 text kept, keys in their order)."""
    return yaml.safe_dump({"seeds": seeds}, allow_unicode=True, sort_keys=False, width=100)


def write_layer(root: Path, name: str, text: str, file: str = "seeds/bench.yaml") -> Path:
    """A team layer ``root/name`` holding ``file`` (relative to the layer) with ``text`` (UTF-8);
    returns the layer folder."""
    path = root / name / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return root / name


__all__ = [
    "ALIAS_BOMB",
    "MINIMAL_INSTRUCTION",
    "MINIMAL_METRIC",
    "alias_bomb",
    "minimal_id",
    "minimal_seed_line",
    "minimal_seed_lines",
    "minimal_seeds_fitting",
    "realistic_seeds",
    "seeds_yaml",
    "shipped_seed_entries",
    "write_layer",
]
