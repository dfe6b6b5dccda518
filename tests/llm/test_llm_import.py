"""Importing litellm through the client: what the import leaves alive is frozen out of the cycle
collector, so a long run's full collections do not walk it again (``client.FREEZE_AFTER_IMPORT``)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = """
import gc, json, sys
sys.path.insert(0, {root!r})
from empath_gate.llm import client
client.FREEZE_AFTER_IMPORT = {freeze}
before = gc.get_freeze_count()
lib = client._lib()
again = client._lib()
print(json.dumps({{"before": before, "after": gc.get_freeze_count(), "same": lib is again,
                   "module": lib.__name__}}))
"""


def _probe(freeze: bool) -> dict[str, object]:
    """Import litellm through ``client._lib`` in a fresh interpreter; the freeze counts seen."""
    code = PROBE.format(root=str(ROOT), freeze=freeze)
    env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True", "PATH": "", "HOME": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    result: dict[str, object] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


def test_import_freezes_what_it_leaves_alive_once() -> None:
    frozen = _probe(freeze=True)
    assert frozen["module"] == "litellm" and frozen["same"] is True
    assert frozen["before"] == 0
    # litellm's modules and cost map: hundreds of thousands of objects (about 370,000 with 1.110)
    assert isinstance(frozen["after"], int) and frozen["after"] > 50_000


def test_freeze_can_be_turned_off() -> None:
    plain = _probe(freeze=False)
    assert plain["module"] == "litellm"
    assert plain["before"] == 0 and plain["after"] == 0
