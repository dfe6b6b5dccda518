"""The strict YAML reader: duplicate keys, YAML 1.2 booleans, dates as text, pointer lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from empath_gate.instrument.yaml_io import YamlSyntaxError, parse_yaml, pointer

TEXT = """\
# comment
a: no
b: 2026-01-01
c:
  - x: 1
    y: [On, true, FALSE]
  - "z/w~": off
d: >-
  folded
  text
"""


@pytest.mark.parametrize("fast", [True, False])
def test_values_and_lines(fast: bool) -> None:
    doc = parse_yaml(TEXT, Path("f.yaml"), fast=fast)
    assert doc.data == {"a": "no", "b": "2026-01-01",
                        "c": [{"x": 1, "y": ["On", True, False]}, {"z/w~": "off"}], "d": "folded text"}
    assert doc.lines["/a"] == 2 and doc.lines["/c"] == 4 and doc.lines["/c/0"] == 5
    assert doc.lines["/c/0/y/2"] == 6 and doc.lines["/d"] == 8
    assert doc.lines[pointer(["c", 1, "z/w~"])] == 7 and pointer(["c", 1, "z/w~"]) == "/c/1/z~1w~0"
    assert doc.line_of("/c/0/y/9/deeper") == 6
    assert doc.line_of("/nope") == 2  # the root mapping starts on line 2


@pytest.mark.parametrize("fast", [True, False])
def test_duplicate_key_names_both_lines(fast: bool) -> None:
    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml("top:\n  a: 1\n  b: 2\n  a: 3\n", Path("f.yaml"), fast=fast)
    assert info.value.line == 4
    assert str(info.value) == "f.yaml:4: duplicate key 'a' (first at line 2) — keep one of them"


@pytest.mark.parametrize("fast", [True, False])
def test_syntax_error_line(fast: bool) -> None:
    with pytest.raises(YamlSyntaxError) as info:
        parse_yaml("a: 1\nb: [1, 2\nc: 3\n", Path("f.yaml"), fast=fast)
    assert info.value.line in (3, 4)
    assert "YAML syntax error" in info.value.message


@pytest.mark.parametrize("fast", [True, False])
def test_empty_and_multi_document(fast: bool) -> None:
    assert parse_yaml("# only a comment\n", Path("f.yaml"), fast=fast).data is None
    with pytest.raises(YamlSyntaxError):
        parse_yaml("a: 1\n---\nb: 2\n", Path("f.yaml"), fast=fast)
