"""Fixtures of the conversation-engine tests: the public ``fake_openai`` fixture."""

from empath_gate.testing.fixtures import fake_openai

__all__ = ["fake_openai"]
