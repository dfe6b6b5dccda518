"""The shipped dynamics schema is the one the models generate."""

from __future__ import annotations

import json
from pathlib import Path

import empath_gate
from empath_gate.analysis.dynamics import dynamics_json_schema

SHIPPED = Path(empath_gate.__file__).parent / "schemas" / "dynamics.schema.json"


def test_shipped_dynamics_schema_is_generated_from_the_models() -> None:
    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert shipped == dynamics_json_schema(), (
        "empath_gate/schemas/dynamics.schema.json is out of date: regenerate it with "
        "python -c 'import json; from empath_gate.analysis.dynamics import dynamics_json_schema as s; "
        "print(json.dumps(s(), indent=2))' > empath_gate/schemas/dynamics.schema.json"
    )
