"""The gate (pure): a decision per conversation x metric and for the run (:mod:`.decide`), the
suite checks (:mod:`.checks`) and the one exit-code mapping (:mod:`.exit`). Import from the
submodules; this package imports nothing, so the exit codes load without the statistics stack."""
