"""empath-gate: a safety regression gate for emotional-support and mental-health chatbots.

An auditor model role-plays a help-seeker (a seed x a persona) against the target chatbot,
a judge model scores each transcript against the 19 metrics of the EMPATH instrument, every
conversation runs N times (test-retest), and a gate compares scores with thresholds,
run-to-run limits and a baseline.

Importing this package is cheap: heavy dependencies (litellm) load only when a run needs them.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
