"""Writing the imported EMPATH instrument as a suites layer (``--suites DIR``).

The folder written::

    seeds/empath-upstream.yaml     every seed read (auditor: llm, risk unknown, not reviewed)
    personas/empath-upstream.yaml  every persona read, upstream file order
    suites.yaml                    the empath-upstream suite (persona mode empath_md5)
    LICENSE, LICENSE-DATA-*.txt    upstream's licence files, copied as they are
    ATTRIBUTION.md                 source, commit, copyright lines, licences, what was changed
    IMPORT-REPORT.md               every change to an instruction, every entry not written
    import-report.json             the same, for programs

The layer must carry upstream's licence: a checkout without a ``LICENSE`` file is refused
(:class:`ImportProblem`). The loader ignores the non-YAML files.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from empath_gate.bounded import current_limits, read_bytes
from empath_gate.instrument.selection import UPSTREAM_TAG
from empath_gate.instrument.upstream.convert import Converted
from empath_gate.instrument.upstream.rewrite import rule_reasons

UPSTREAM_REPOSITORY = "https://github.com/camilochs/empath-benchmark"
"""Where the published EMPATH benchmark lives (its README names the paper, arXiv:2606.30256)."""
SEED_VALUE = 42
"""Upstream's default ``seed_value`` of its persona assignment (``_assign_persona``)."""
SUITE_MAX_TURNS = 15
"""User turns per conversation: upstream's auditor task default (``max_turns: int = 15``)."""
SUITE_RUNS = 3
"""Runs per conversation, as the shipped suites."""
LICENSE_FILES = ("LICENSE", "LICENSE-DATA-CC-BY-4.0.txt", "NOTICE")
WRITTEN = (
    "seeds/empath-upstream.yaml",
    "personas/empath-upstream.yaml",
    "suites.yaml",
    "ATTRIBUTION.md",
    "IMPORT-REPORT.md",
    "import-report.json",
    *LICENSE_FILES,
)
"""Every file this module may write (relative to the layer); ``--force`` replaces only these."""


class ImportProblem(ValueError):
    """The import cannot produce a layer (no licence, nothing readable, output folder in use)."""


@dataclass(frozen=True)
class Source:
    """Where the import came from: the checkout path as given, its commit when a ``.git``
    folder says it (else None), copyright lines of its README / licence files, the paper id."""

    path: str
    commit: str | None
    copyright: tuple[str, ...]
    paper: str | None


class _Dumper(yaml.SafeDumper):
    """Block style for multi-line strings, so instructions read as written."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def _dump(data: Any) -> str:
    return yaml.dump(data, Dumper=_Dumper, allow_unicode=True, sort_keys=False, width=110)


def _text(path: Path) -> str | None:
    """A small text file of the checkout (bounded), or None when absent or unreadable."""
    if not path.is_file():
        return None
    try:
        return read_bytes(path, current_limits().max_yaml_bytes, "max_yaml_bytes").decode("utf-8", "replace")
    except (OSError, ValueError):
        return None


_COPYRIGHT = re.compile(r"^(?:©|\(c\)\s*\d{4}|copyright\s+(?:\(c\)\s*|©\s*)?\d{4})", re.IGNORECASE)
"""A copyright statement: starts with ©, or "(c)" or "Copyright" and a year (not licence prose)."""


def read_source(root: Path) -> Source:
    """The :class:`Source` facts of the checkout at ``root`` (nothing executed)."""
    commit = None
    head = _text(root / ".git" / "HEAD")
    if head is not None:
        head = head.strip()
        if head.startswith("ref: "):
            ref = head[5:].strip()
            commit = (_text(root / ".git" / ref) or "").strip() or None
            packed = _text(root / ".git" / "packed-refs") or ""
            for line in packed.splitlines():
                if commit is None and line.endswith(" " + ref):
                    commit = line.split()[0]
        elif re.fullmatch(r"[0-9a-f]{40}", head):
            commit = head
    lines: list[str] = []
    readme = _text(root / "README.md") or ""
    for name in ("README.md", *LICENSE_FILES):
        for line in (_text(root / name) or "").splitlines():
            s = line.strip()
            if _COPYRIGHT.match(s) and s not in lines and len(s) < 300:
                lines.append(s)
    paper = re.search(r"arXiv:\s?\d{4}\.\d{4,5}", readme)
    return Source(str(root), commit, tuple(lines), paper.group(0) if paper else None)


def prepare_output(out: Path, force: bool) -> None:
    """Make ``out`` ready: created when absent; an existing folder must be empty, or (with
    ``force``) hold nothing but files this importer writes. Raises ImportProblem otherwise."""
    if out.exists() and not out.is_dir():
        raise ImportProblem(f"{out}: exists and is not a folder; give a new folder for the layer")
    if out.is_dir():
        present = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
        foreign = [p for p in present if p not in WRITTEN]
        if present and not force:
            raise ImportProblem(
                f"{out}: is not empty; give a new folder, or --force to replace an earlier import"
            )
        if foreign:
            raise ImportProblem(
                f"{out}: holds files this importer does not write ({', '.join(foreign[:5])}); "
                "give a new folder"
            )
    out.mkdir(parents=True, exist_ok=True)


def suite_entry(persona_ids: list[str], seed_value: int) -> dict[str, Any]:
    """The ``empath-upstream`` suite: every imported seed, one persona each as upstream assigns
    it (mode ``empath_md5`` over the imported personas in upstream's file order)."""
    return {
        "id": UPSTREAM_TAG,
        "label": "EMPATH (published seeds)",
        "description": (
            "The seeds of the published EMPATH benchmark, each played by the persona upstream assigns "
            f"(md5 of '<seed id>:{seed_value}' over its locale's personas in upstream's file order), "
            "judged on "
            "its metric. Only an LLM auditor can play them (they have no script); they were not reviewed "
            "against suites/REVIEW.md."
        ),
        "seeds": {"tags": [UPSTREAM_TAG]},
        "metrics": "primary",
        "personas": {"mode": "empath_md5", "ids": persona_ids, "seed_value": seed_value},
        "runs": SUITE_RUNS,
        "max_turns": SUITE_MAX_TURNS,
    }


def write_layer(out: Path, root: Path, conv: Converted, *, seed_value: int = SEED_VALUE) -> dict[str, Any]:
    """Write the layer of ``conv`` (read from the checkout ``root``) into ``out`` (already
    prepared); returns the report written to ``import-report.json``. Raises ImportProblem when
    the checkout has no LICENSE or when no seed or no persona could be carried."""
    if not (root / "LICENSE").is_file():
        raise ImportProblem(
            f"{root}: no LICENSE file; the layer must carry upstream's licence: use a release "
            "that has one (e.g. commit ffd4600)"
        )
    if not conv.seeds or not conv.personas:
        raise ImportProblem(f"{root}: no seed or no persona could be read ({len(conv.problems)} problems)")
    source = read_source(root)
    header = (
        f"# Imported by empath-gate import-empath from the published EMPATH benchmark ({UPSTREAM_REPOSITORY},"
        f" commit {source.commit or 'unknown'}).\n# Licence: see LICENSE in this folder; ATTRIBUTION.md "
        "says what was changed, IMPORT-REPORT.md lists every change.\n# Run the import again rather "
        "than editing this file.\n"
    )
    (out / "seeds").mkdir(exist_ok=True)
    (out / "personas").mkdir(exist_ok=True)
    _write(out / "seeds/empath-upstream.yaml", header + _dump({"seeds": conv.seeds}))
    _write(out / "personas/empath-upstream.yaml", header + _dump({"personas": conv.personas}))
    _write(out / "suites.yaml", header + _dump({"suites": [suite_entry(conv.persona_ids, seed_value)]}))
    copied = []
    for name in LICENSE_FILES:
        data = _text(root / name)
        if data is not None:
            _write(out / name, data)
            copied.append(name)
    report = build_report(source, conv, copied)
    _write(out / "ATTRIBUTION.md", attribution(source, copied, report))
    _write(out / "IMPORT-REPORT.md", report_markdown(report))
    _write(out / "import-report.json", json.dumps(report, ensure_ascii=False, indent=2) + "\n")
    return report


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


def build_report(source: Source, conv: Converted, licences: list[str]) -> dict[str, Any]:
    """The import report: source, counts per locale, the metric mapping, every instruction
    change (seed id -> rule, before, after), rule reasons, entries not written, notes."""

    def by_locale(entries: list[dict[str, Any]]) -> dict[str, int]:
        counts: dict[str, int] = {}
        for e in entries:
            counts[e["locale"]] = counts.get(e["locale"], 0) + 1
        return counts

    return {
        "source": {
            "repository": UPSTREAM_REPOSITORY,
            "path": source.path,
            "commit": source.commit,
            "copyright": list(source.copyright),
            "paper": source.paper,
            "licence_files": licences,
        },
        "seeds": len(conv.seeds),
        "seeds_by_locale": by_locale(conv.seeds),
        "personas": len(conv.personas),
        "personas_by_locale": by_locale(conv.personas),
        "metric_map": conv.metric_map,
        "rules": rule_reasons(),
        "changes": {
            sid: [{"rule": c.rule, "before": c.before, "after": c.after} for c in cs]
            for sid, cs in conv.changes.items()
        },
        "not_imported": [
            {"kind": p.kind, "where": p.where, "entry": p.entry, "why": p.what} for p in conv.problems
        ],
        "notes": conv.notes,
    }


def attribution(source: Source, licences: list[str], report: dict[str, Any]) -> str:
    """ATTRIBUTION.md: where the seeds and personas come from, under which licence, and a
    statement of the changes made (as Apache-2.0 section 4 and CC BY 4.0 ask)."""
    changed = len(report["changes"])
    lines = [
        "# Attribution",
        "",
        "The seeds and personas in this folder come from the published EMPATH benchmark, "
        f"{UPSTREAM_REPOSITORY}"
        + (f" (commit {source.commit})" if source.commit else "")
        + (f"; paper {source.paper}" if source.paper else "")
        + ".",
        "",
        *(source.copyright or ("Copyright: as stated in the licence files of the source repository.",)),
        "",
        "Licence files copied from the source: " + (", ".join(licences) or "none") + ".",
        "",
        "## Changes made by empath-gate import-empath",
        "",
        "- Read from the Python modules `empath/seeds/` and `empath/personas/` without running them, and "
        "written as YAML in empath-gate's instrument format.",
        f"- {changed} seed instructions changed: sentences addressed to upstream's tool-using auditor were "
        "removed "
        "or rewritten (IMPORT-REPORT.md lists each change, with the text before and after).",
        "- Seeds gained fields upstream does not have: `auditor: llm`, risk level `unknown`, tags, a "
        "`scenario` "
        "equal to the id, and a review record saying they were not reviewed against suites/REVIEW.md.",
        "- Personas gained ids, `speaks_as` (from the gender word) and `reserved: true`; fields without a "
        "place "
        "in empath-gate's persona model were left out (IMPORT-REPORT.md).",
        "",
    ]
    return "\n".join(lines)


def report_markdown(report: dict[str, Any]) -> str:
    """IMPORT-REPORT.md: counts, entries not imported, notes, rules and every change."""
    lines = [
        "# Import report",
        "",
        f"Seeds: {report['seeds']} ({', '.join(f'{k} {v}' for k, v in report['seeds_by_locale'].items())}); "
        f"personas: {report['personas']} "
        f"({', '.join(f'{k} {v}' for k, v in report['personas_by_locale'].items())}).",
        "",
        "## Not imported",
        "",
    ]
    lines += [
        f"- {p['kind']} {p['entry'] or ''} at {p['where']}: {p['why']}" for p in report["not_imported"]
    ] or ["- none"]
    lines += ["", "## Notes", ""] + ([f"- {n}" for n in report["notes"]] or ["- none"])
    lines += ["", "## Rules", ""] + [f"- `{k}`: {v}" for k, v in report["rules"].items()]
    lines += ["", "## Changes to instructions", ""]
    for sid, changes in report["changes"].items():
        for c in changes:
            after = f"→ {c['after']!r}" if c["after"] else "→ removed"
            lines.append(f"- {sid} `{c['rule']}`: {c['before']!r} {after}")
    return "\n".join(lines) + "\n"
