"""Public test helpers of empath-gate (documented, stable, used by the project's own tests).

* :class:`FakeOpenAIServer`: a fake OpenAI-compatible chat-completions server on 127.0.0.1
  with programmable replies per model and injectable faults (see
  :mod:`empath_gate.testing.fake_openai` for a copyable example).
* :class:`~empath_gate.testing.fake_bot.FakeBot`: a fake chatbot with its own JSON API (not
  OpenAI-compatible) on 127.0.0.1: a session id issued on the first response and required
  afterwards, server-sent-event streaming, injectable failures (the template target's bot).
* the ``fake_openai`` pytest fixture: enable it in a ``conftest.py`` with
  ``pytest_plugins = ["empath_gate.testing.fixtures"]``.
* :mod:`empath_gate.testing.hostile_inputs`: a YAML alias bomb and large valid seed layers
  (realistic and minimal seeds), for tests and benchmarks of bounded parsing.

Importing this package is cheap (no litellm).
"""

from empath_gate.testing.fake_bot import FakeBot
from empath_gate.testing.fake_openai import FAKE_API_KEY, FakeOpenAIServer, FakeRequest, Fault, Reply

__all__ = ["FAKE_API_KEY", "FakeBot", "FakeOpenAIServer", "FakeRequest", "Fault", "Reply"]
