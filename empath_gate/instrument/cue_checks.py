"""Loader checks of non-verbal cues (part of check 4 of :mod:`empath_gate.instrument.loader`).

* every cue token in ``cues.yaml`` is declared once;
* a seed's script carries bracketed tokens only when the seed is a voice seed (tag ``voice``),
  and then only declared ones; a voice seed carries at least one cue (else it is a text seed
  and belongs in the text suites).

Each problem reads ``file:line: /pointer: what — fix`` (the line of the script turn).
"""

from __future__ import annotations

from empath_gate.instrument.cues import Cue, CueVocabulary, is_voice_seed
from empath_gate.instrument.models import Seed
from empath_gate.instrument.problems import Origin, Problems
from empath_gate.instrument.reading import ReadState


def check_cues(read: ReadState, problems: Problems) -> None:
    """Duplicate cue tokens; undeclared or misplaced tokens in seed scripts; voice seeds
    without any cue (the seed rules are skipped when ``cues.yaml`` did not build)."""
    cues = [e for e in read.entries.get("cues", []) if isinstance(e.model, Cue)]
    first: dict[str, Origin] = {}
    for e in cues:
        assert isinstance(e.model, Cue)
        token = e.model.token
        if token in first:
            problems.at(e.origin.child("token"), f"duplicate cue token {token!r} (also at "
                        f"{first[token].child('token').where()})", "give each cue its own token")
        first.setdefault(token, e.origin)
    vocab = CueVocabulary(tuple(e.model for e in cues if isinstance(e.model, Cue)))
    if "cues" in read.invalid_kinds:
        return  # the vocabulary's own errors are reported; the seeds cannot be checked against it
    declared = ", ".join(c.token for c in vocab.cues) or "none: cues.yaml is missing"
    for e in read.entries.get("seeds", []):
        seed = e.model
        assert isinstance(seed, Seed)
        voice = is_voice_seed(seed.tags)
        found = 0
        for j, turn in enumerate(seed.script):
            where = e.origin.child("script", j)
            found += len(vocab.find(turn))
            if not voice and (vocab.find(turn) or vocab.undeclared(turn)):
                problems.at(where, f"seed {seed.id}: user turn {j + 1} carries a bracketed cue but the "
                            "seed is not a voice seed", "tag the seed 'voice' (it then runs only in "
                            "'voice: true' suites) or write the turn without brackets")
                continue
            for token in vocab.undeclared(turn) if voice else ():
                problems.at(where, f"seed {seed.id}: user turn {j + 1} has the undeclared cue {token!r}",
                            f"use a cue declared in cues.yaml ({declared}) or declare it there")
        if voice and found == 0:
            problems.at(e.origin.child("tags"), f"seed {seed.id} is tagged 'voice' but no user turn "
                        "carries a cue", "add the cues the speech carries, or remove the 'voice' tag")
