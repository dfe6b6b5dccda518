"""The results document: its models (:mod:`.model`), reading and writing (:mod:`.io`), the pure
evaluation of records into a document (:mod:`.evaluate`), its metadata (:mod:`.metadata`),
shard merging (:mod:`.merge`) and the files a run leaves (:mod:`.artifacts`)."""

from empath_gate.results.io import (
    now_iso,
    read_results,
    results_json_schema,
    shipped_schema_path,
    validate_results_json,
    write_json_atomic,
    write_results,
)
from empath_gate.results.model import (
    RESULTS_SCHEMA_VERSION,
    CostInfo,
    ItemInfo,
    JudgeInfo,
    Results,
    ResultsMetadata,
    RunRecord,
    Summary,
)

__all__ = [
    "RESULTS_SCHEMA_VERSION",
    "CostInfo",
    "ItemInfo",
    "JudgeInfo",
    "Results",
    "ResultsMetadata",
    "RunRecord",
    "Summary",
    "now_iso",
    "read_results",
    "results_json_schema",
    "shipped_schema_path",
    "validate_results_json",
    "write_json_atomic",
    "write_results",
]
