"""The one-pass event reader gives what the node way gives: the same data (types and key
order), the same lines, the same errors, on edge cases and on every shipped file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from empath_gate.bounded import InputLimitError, InputLimits
from empath_gate.instrument.yaml_events import build_from_events
from empath_gate.instrument.yaml_io import FastStrictLoader, YamlSyntaxError, parse_yaml
from empath_gate.resources import shipped_suites_dir, shipped_thresholds
from empath_gate.testing.hostile_inputs import minimal_seed_lines, realistic_seeds, seeds_yaml

CASES = {
    "scalars": "a: [0x1F, 0o17, 017, 1_000, '1', 1:30, -2, +3, 1.5, 1e3, 1.0e+3, .inf, -.Inf, .NaN, ~, null,"
               " Null, '', true, False, yes, no, on, 2026-01-01, 12:30:00, <x, =y]\nb:\nc: \"q\\tq\"\n",
    "keys": "\"a/b\": 1\n'c~d': 2\n\"\": 3\nyes: 4\ne f: {g: [h, {i: j}]}\n",
    "block": "a: |\n  one\n  two\nb: >-\n  folded\n  text\nc: |+\n  kept\n\n",
    "flow": "- {id: s000,locale: en-US,script: [a,b]}\n- [1, [2, [3, {}]], []]\n",
    "scalar root": "just text\n",
    "number root": "42\n",
    "explicit empty document": "---\n",
    "empty": "",
    "comment only": "# nothing\n",
    "explicit start and end": "---\na: 1\n...\n",
    "explicit tags": "a: !!str 1\nb: !!int '3'\nc: !!set {x, y}\n",
    "non-specific tag": "a: ! 12\n",
    "merge key": "a: {x: 1}\nb: {<<: {y: 2}, z: 3}\n",
    "value key": "a: =\n",
    "duplicate key": "top:\n  a: 1\n  b: 2\n  a: 3\n",
    "duplicate key then syntax error": "a: 1\na: 2\nb: [1, 2\n",
    "int key": "1: a\n'1': b\n",
    "bool key": "true: a\n",
    "null key": "~: a\n",
    "complex key": "? [a, b]\n: c\n",
    "mapping key": "? {a: 1}\n: c\n",
    "two documents": "a: 1\n---\nb: 2\n",
    "directive": "%YAML 1.1\n---\na: 1\n",
    "syntax error": "a: 1\nb: [1, 2\nc: 3\n",
    "bad indentation": "a:\n  b: 1\n c: 2\n",
    "anchor": "a: &x 1\nb: 2\n",
    "alias": "a: [*ghost]\n",
    "anchor after syntax error": "a: [1\nb: &x 2\n",
    "tab": "a:\n\tb: 1\n",
}


def _outcome(text: str, *, fast: bool, events: bool, limits: InputLimits | None = None) -> tuple[str, ...]:
    try:
        doc = parse_yaml(text, Path("f.yaml"), fast=fast, events=events, limits=limits)
    except (YamlSyntaxError, InputLimitError) as exc:
        return (type(exc).__name__, str(exc))
    # json.dumps keeps key order and tells 1, 1.0 and true apart (a !!set becomes a sorted list)
    return ("ok", json.dumps(doc.data, default=sorted), json.dumps(sorted(doc.lines.items())),
            str(doc.line_of("/x/y")))


@pytest.mark.parametrize("fast", [True, False])
@pytest.mark.parametrize("name", list(CASES))
def test_edge_cases_read_the_same_both_ways(name: str, fast: bool) -> None:
    events = _outcome(CASES[name], fast=fast, events=True)
    assert events == _outcome(CASES[name], fast=fast, events=False)


@pytest.mark.parametrize("fast", [True, False])
def test_limits_break_the_same_way(fast: bool) -> None:
    tight = InputLimits(max_field_chars=5, max_input_depth=3, max_input_rows=4)
    for text in ("a: 123456\n", "a: {b: {c: {d: 1}}}\n", "a: [1, 2, 3, 4, 5]\n",
                 "{a: 1, b: 2, c: 3, d: 4, e: 5}\n", "a: [1, 2]\nb: &x 1\n", "a: [1, 2\nb: 123456789\n"):
        both = {_outcome(text, fast=fast, events=e, limits=tight) for e in (True, False)}
        assert len(both) == 1, text
        assert next(iter(both))[0] != "ok", text


def test_unusual_texts_are_left_to_the_node_way() -> None:
    for name in ("explicit tags", "merge key", "duplicate key", "int key", "two documents", "directive",
                 "syntax error", "non-specific tag", "complex key"):
        loader = FastStrictLoader(CASES[name])
        try:
            assert build_from_events(loader, "f.yaml", InputLimits()) is None, name
        finally:
            loader.dispose()
    loader = FastStrictLoader(CASES["keys"])
    try:
        assert build_from_events(loader, "f.yaml", InputLimits()) is not None
    finally:
        loader.dispose()


def test_shipped_files_and_generated_layers_read_the_same_both_ways() -> None:
    paths = [*sorted(shipped_suites_dir().rglob("*.yaml")), shipped_thresholds()]
    texts = [p.read_text(encoding="utf-8") for p in paths]
    texts += [seeds_yaml(realistic_seeds(200)), "".join(minimal_seed_lines(500))]
    for text in texts:
        for fast in (True, False):
            assert _outcome(text, fast=fast, events=True) == _outcome(text, fast=fast, events=False)
