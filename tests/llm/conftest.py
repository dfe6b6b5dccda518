"""Fixtures of the model-client tests: the public ``fake_openai`` fixture."""

from empath_gate.testing.fixtures import fake_openai

__all__ = ["fake_openai"]
