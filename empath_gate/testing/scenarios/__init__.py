"""Reusable reply programs for :class:`~empath_gate.testing.FakeOpenAIServer`: a target bot, an
auditor and a judge whose behaviour a test chooses, so a whole gate run (plugin or CLI) can be
driven end to end over real HTTP without any hosted model.

* :class:`TargetBot` plays the chatbot under test. ``behaviour="safe"`` answers in the user's
  language, gives the crisis line of the user's country in every reply (worded differently
  each turn, so it is never a pasted block), says it is an AI and points to people who can
  help; ``"unsafe"`` never gives a crisis line; ``"wrong_country"`` gives the other country's
  line (988 to a Mexican user, Línea de la Vida to a US user).
* :class:`ScriptAuditor` plays the help-seeker by replaying the seed's script lines, which the
  auditor prompt lists, one per turn, and ends the conversation (the auditor's end token) when
  the script is exhausted.
* :class:`ScoringJudge` answers the judge's request with valid strict JSON for exactly the
  metrics and criteria it was asked about (read from the ``response_format`` JSON schema when
  the request carries one, else from the answer skeleton at the end of the prompt), with the
  scores a test chooses per metric and per run (the run is recovered from the request's
  ``seed``, see :func:`seed_table`), and optionally a broken reply for chosen calls.

:func:`install` registers the three on a server under :data:`TARGET_MODEL` /
:data:`HTTP_TARGET_MODEL`, :data:`AUDITOR_MODEL` and :data:`JUDGE_MODEL`; :func:`role_env`
returns the ``EMPATH_*`` environment that points a run at them. Example::

    from empath_gate.testing import FakeOpenAIServer
    from empath_gate.testing.scenarios import ScoringJudge, TargetBot, ScriptAuditor, install, role_env

    with FakeOpenAIServer() as server:
        judge = ScoringJudge({"crisis_detection": [2, 10, 9]}, default=9)
        install(server, target=TargetBot("safe"), auditor=ScriptAuditor(), judge=judge)
        env = {**os.environ, **role_env(server)}
        subprocess.run(["pytest", "--empath-suite", "smoke", "--empath-runs", "3"], env=env)

Importing this module is cheap (no litellm, no instrument loading).
"""

from __future__ import annotations

from empath_gate.testing.scenarios.auditor import END_TOKEN, ScriptAuditor, auditor_script
from empath_gate.testing.scenarios.judge import (
    JudgeCall,
    ScoreSpec,
    ScoreValue,
    ScoringJudge,
    requested_metrics,
)
from empath_gate.testing.scenarios.target import TargetBot, guess_locale
from empath_gate.testing.scenarios.target_replies import Behaviour, Locale, compose_reply
from empath_gate.testing.scenarios.wiring import (
    AUDITOR_MODEL,
    HTTP_TARGET_MODEL,
    JUDGE_MODEL,
    JUDGE_REASKS,
    TARGET_MODEL,
    derive_seed,
    install,
    reask_seed,
    role_env,
    seed_table,
)

__all__ = [
    "AUDITOR_MODEL",
    "END_TOKEN",
    "HTTP_TARGET_MODEL",
    "JUDGE_MODEL",
    "JUDGE_REASKS",
    "TARGET_MODEL",
    "Behaviour",
    "JudgeCall",
    "Locale",
    "ScoreSpec",
    "ScoreValue",
    "ScoringJudge",
    "ScriptAuditor",
    "TargetBot",
    "auditor_script",
    "compose_reply",
    "derive_seed",
    "guess_locale",
    "install",
    "reask_seed",
    "requested_metrics",
    "role_env",
    "seed_table",
]
