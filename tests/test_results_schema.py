"""The shipped results schema is the one the models generate."""

from __future__ import annotations

import json

from empath_gate.results import results_json_schema, shipped_schema_path


def test_shipped_results_schema_is_generated_from_the_models() -> None:
    shipped = json.loads(shipped_schema_path().read_text(encoding="utf-8"))
    assert shipped == results_json_schema(), (
        "empath_gate/schemas/results.schema.json is out of date: regenerate it with "
        "python -c 'import json; from empath_gate.results import results_json_schema as s; "
        "print(json.dumps(s(), indent=2))' > empath_gate/schemas/results.schema.json"
    )
