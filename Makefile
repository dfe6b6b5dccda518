# Two commands from a fresh clone (each sets up .venv first, reusing it when present):
#   make demo   the main job: the offline crisis suite on the embedded bot, then where the report is
#   make test   empath-gate's own test suite
# Where make is missing, run scripts/demo and scripts/test.
.PHONY: demo test setup
demo:
	sh scripts/demo
test:
	sh scripts/test
setup:
	sh scripts/setup
