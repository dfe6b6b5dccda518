"""Content hashes of the team layers an instrument is loaded with (suites directories, a
thresholds file, a waivers file), recorded in the results so a later reader can tell whether
it decides with the same files."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from empath_gate.results.model import LayerInfo

_YAML = (".yaml", ".yml")


def content_hash(path: Path) -> str:
    """sha256 of a file's bytes, or of a folder's YAML files (relative POSIX path, NUL, bytes,
    in sorted order). A missing path hashes ``missing:<path>``."""
    h = hashlib.sha256()
    if path.is_file():
        h.update(path.read_bytes())
    elif path.is_dir():
        for f in sorted(p for p in path.rglob("*") if p.is_file() and p.suffix in _YAML):
            h.update(f.relative_to(path).as_posix().encode("utf-8") + b"\0")
            h.update(f.read_bytes() + b"\0")
    else:
        h.update(f"missing:{path}".encode())
    return h.hexdigest()


def team_layers(
    suites_dirs: Sequence[Path], thresholds: Path | None, waivers: Path | None
) -> tuple[LayerInfo, ...]:
    """The layers a run loads on top of the shipped instrument, in loading order."""
    out = [
        LayerInfo(kind="suites_dir", path=Path(d).as_posix(), sha256=content_hash(Path(d)))
        for d in suites_dirs
    ]
    if thresholds is not None:
        out.append(
            LayerInfo(kind="thresholds", path=Path(thresholds).as_posix(), sha256=content_hash(thresholds))
        )
    if waivers is not None:
        out.append(LayerInfo(kind="waivers", path=Path(waivers).as_posix(), sha256=content_hash(waivers)))
    return tuple(out)


def layer_differences(recorded: Sequence[LayerInfo], current: Sequence[LayerInfo]) -> list[str]:
    """Human lines naming each layer whose content differs between the recorded and the current
    set (added, removed, or changed), empty when they are the same."""

    def key(layer: LayerInfo) -> tuple[str, str]:
        return layer.kind, layer.sha256

    if [key(x) for x in recorded] == [key(x) for x in current]:
        return []
    rec = {x.kind: x for x in recorded}
    cur = {x.kind: x for x in current}
    lines: list[str] = []
    for kind in dict.fromkeys([*rec, *cur]):
        a, b = rec.get(kind), cur.get(kind)
        if a is None and b is not None:
            lines.append(f"{kind} {b.path} is used now but was not in the run")
        elif b is None and a is not None:
            lines.append(f"{kind} {a.path} was used by the run but is not given now")
        elif a is not None and b is not None and a.sha256 != b.sha256:
            lines.append(f"{kind} {b.path} differs from the one the run used ({a.path})")
    return lines or ["the suites directories differ from the ones the run used"]
