"""The bounded reader: each limit refused with the file and the limit named; every parser uses it."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from empath_gate import bounded
from empath_gate.bounded import InputLimitError, InputLimits
from empath_gate.calibration.readers import read_gold
from empath_gate.conversation.transcript_io import read_transcript
from empath_gate.errors import ConfigError
from empath_gate.results.io import read_results

PACKAGE = Path(bounded.__file__).parent

SMALL = InputLimits(max_yaml_bytes=200, max_json_bytes=200, max_field_chars=10, max_input_depth=3,
                    max_input_rows=4)


def test_oversize_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "big.json"
    path.write_text(json.dumps(["x" * 5] * 60), encoding="utf-8")
    with pytest.raises(InputLimitError, match=r"big\.json: the file is 540 bytes, which is over the limit "
                                              r"max_json_bytes = 200") as exc:
        bounded.read_json(path, SMALL)
    assert isinstance(exc.value, ConfigError)
    assert "EMPATH_MAX_JSON_BYTES" in str(exc.value)


def test_overlong_field_names_its_pointer(tmp_path: Path) -> None:
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"rows": [{"text": "x" * 11}]}), encoding="utf-8")
    with pytest.raises(InputLimitError, match=r"long\.json: the text at /rows/0/text \(11 characters\) is "
                                              r"over the limit max_field_chars = 10"):
        bounded.read_json(path, SMALL)
    path.write_text(json.dumps({"k" * 11: 1}), encoding="utf-8")
    with pytest.raises(InputLimitError, match="a key at / is over the limit max_field_chars"):
        bounded.read_json(path, SMALL)


def test_too_deep_json_is_refused_even_past_the_recursion_limit(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[[[[1]]]]", encoding="utf-8")
    with pytest.raises(InputLimitError, match=r"deep\.json: the nesting at /0/0/0 is over the limit "
                                              r"max_input_depth = 3"):
        bounded.read_json(path, SMALL)
    assert bounded.read_json(path, SMALL.model_copy(update={"max_input_depth": 4})) == [[[[1]]]]
    text = "[" * 100_000 + "]" * 100_000
    with pytest.raises(InputLimitError, match="max_input_depth"):
        bounded.loads_json(text, "deep text")


def test_too_many_rows_in_json_jsonl_csv_and_yaml(tmp_path: Path) -> None:
    with pytest.raises(InputLimitError, match=r"rows\.json: the 5 entries at / .*max_input_rows = 4"):
        bounded.loads_json("[1,2,3,4,5]", "rows.json", SMALL)
    jsonl = "\n".join("{}" for _ in range(5))
    with pytest.raises(InputLimitError, match=r"rows\.jsonl:5: the number of lines .*max_input_rows = 4"):
        list(bounded.iter_jsonl(jsonl, "rows.jsonl", SMALL))
    csv_text = "a,b\n" + "".join(f"{i},{i}\n" for i in range(5))
    with pytest.raises(InputLimitError, match=r"rows\.csv:6: the number of rows .*max_input_rows = 4"):
        list(bounded.iter_csv(csv_text, "rows.csv", SMALL))
    assert [n for n, _ in bounded.iter_csv("a,b\n1,2\n3,4\n", "ok.csv", SMALL)] == [2, 3]
    with pytest.raises(InputLimitError, match=r"rows\.yaml:1: a list or mapping .*max_input_rows = 4"):
        bounded.scan_yaml("[1, 2, 3, 4, 5]", "rows.yaml", SMALL)
    bounded.scan_yaml("{a: 1, b: 2, c: 3, d: 4}", "ok.yaml", SMALL)  # four mapping entries fit


def test_csv_cell_and_yaml_scalar_over_the_field_limit() -> None:
    with pytest.raises(InputLimitError, match=r"cells\.csv:3: a cell .*max_field_chars = 10"):
        list(bounded.iter_csv("a\nshort\n" + "y" * 11 + "\n", "cells.csv", SMALL))
    with pytest.raises(InputLimitError, match=r"long\.yaml:2: a value of 11 characters"):
        bounded.scan_yaml("a: 1\nb: " + "z" * 11 + "\n", "long.yaml", SMALL)
    with pytest.raises(InputLimitError, match=r"deep\.yaml:1: the nesting .*max_input_depth = 3"):
        bounded.scan_yaml("[[[[1]]]]", "deep.yaml", SMALL)


@pytest.mark.parametrize("fast", [True, False], ids=["libyaml", "python"])
def test_yaml_anchors_and_aliases_are_refused_before_composing(fast: bool) -> None:
    with pytest.raises(InputLimitError, match=r"x\.yaml:2: YAML anchor &base is not allowed"):
        bounded.scan_yaml("a: 1\nb: &base {c: 1}\nd: *base\n", "x.yaml", fast=fast)
    with pytest.raises(InputLimitError, match=r"x\.yaml:1: YAML alias \*ghost is not allowed"):
        bounded.scan_yaml("[*ghost]", "x.yaml", fast=fast)


def test_generic_yaml_reader(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("a: [1, 2]\n", encoding="utf-8")
    assert bounded.read_yaml(path) == {"a": [1, 2]}
    path.write_text("a: &x 1\nb: *x\n", encoding="utf-8")
    with pytest.raises(InputLimitError, match="anchor"):
        bounded.read_yaml(path)


def test_response_body_over_the_field_limit() -> None:
    assert bounded.check_body("short", "target reply", SMALL) == "short"
    with pytest.raises(InputLimitError, match=r"target reply: the response body \(11 characters\) is over "
                                              r"the limit max_field_chars = 10"):
        bounded.check_body("x" * 11, "target reply", SMALL)


def test_limits_from_the_environment_and_from_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from empath_gate.settings import load_settings

    assert InputLimits.from_env({"EMPATH_MAX_INPUT_ROWS": "7"}).max_input_rows == 7
    with pytest.raises(ConfigError, match="EMPATH_MAX_FIELD_CHARS: 'lots' is not an integer"):
        InputLimits.from_env({"EMPATH_MAX_FIELD_CHARS": "lots"})
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "12")
    assert bounded.current_limits().max_field_chars == 12
    try:
        load_settings(pyproject=None, env={"EMPATH_MAX_INPUT_DEPTH": "9"})
        assert bounded.current_limits().max_input_depth == 9
        assert bounded.current_limits().max_field_chars == InputLimits().max_field_chars  # settings win
    finally:
        bounded.configure_limits(None)
    assert bounded.current_limits().max_field_chars == 12


def test_limits_follow_every_change_of_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The limits built from the environment are reused only while no variable changed."""
    for name in bounded._LIMIT_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    default = bounded.current_limits()
    assert bounded.current_limits() is default and default == InputLimits()
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "12")
    assert bounded.current_limits().max_field_chars == 12
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "13")
    assert bounded.current_limits().max_field_chars == 13
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "lots")
    for _ in range(2):  # a bad value is refused every time, never remembered as the last good one
        with pytest.raises(ConfigError, match="EMPATH_MAX_FIELD_CHARS: 'lots' is not an integer"):
            bounded.current_limits()
    monkeypatch.delenv("EMPATH_MAX_FIELD_CHARS")
    assert bounded.current_limits() == default


def test_command_readers_go_through_the_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("EMPATH_MAX_FIELD_CHARS", "20")
    results = tmp_path / "results.json"
    results.write_text(json.dumps({"schema_version": "x" * 30}), encoding="utf-8")
    with pytest.raises(InputLimitError, match=r"results\.json: the text at /schema_version"):
        read_results(results)
    gold = tmp_path / "gold.jsonl"
    gold.write_text(json.dumps({"conversation_id": "c" * 30, "run": 0, "metric": "m", "score": 5}) + "\n",
                    encoding="utf-8")
    with pytest.raises(InputLimitError, match=r"gold\.jsonl:1: the text at /conversation_id"):
        read_gold(gold)
    transcript = tmp_path / "t.jsonl"
    transcript.write_text(json.dumps({"type": "header", "seed_id": "s" * 30}) + "\n", encoding="utf-8")
    with pytest.raises(InputLimitError, match=r"t\.jsonl:1: the text at /seed_id"):
        read_transcript(transcript)


_RAW_PARSE = re.compile(r"\b(json\.loads?|yaml\.(safe_)?load|yaml\.compose|csv\.(Dict)?[Rr]eader)\(")
ALLOWED = {
    "bounded.py": "the bounded reader itself",
    "settings/load.py": "EMPATH_* variable values (one environment value, not a file)",
    "conversation/target_headers.py": "EMPATH_TARGET_HEADERS (one environment value, not a file)",
    "secrets.py": "EMPATH_TARGET_HEADERS again, for its secret values (one environment value)",
    "pytest_plugin/channel.py": "messages between the plugin's own processes",
    "instrument/schema_gen.py": "the package's own committed schemas",
    "results/io.py": "the package's own committed results schema",
}
"""Package files that may parse without the bounded reader, and why."""


def test_every_parser_of_the_package_uses_the_bounded_reader() -> None:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        if rel.startswith("testing/"):
            continue  # the fake servers tests start
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if _RAW_PARSE.search(line) and rel not in ALLOWED:
                offenders.append(f"{rel}:{n}: {line.strip()}")
    assert offenders == [], "parse through empath_gate.bounded:\n" + "\n".join(offenders)
