"""The diff's dynamics lines (pure): one line per suite of a run with emotion dynamics.

A line gives the annotator, whether the user side is the script's (``script (fixed)``: shown
for orientation, never compared) or per run, the shape counts, the worsened and recovering
shares (LLM-auditor runs), the bot's strategies, the risky interventions, the units followed by
a failed critical criterion, the shapes of the seeker's own feeling (when recorded) and the
annotator failures. The diff drops these lines first when the comment nears its size limit.
"""

from __future__ import annotations

from empath_gate.report.escape import md_code, md_text
from empath_gate.results import Results
from empath_gate.results.dynamics import SCRIPT_FIXED


def dynamics_lines(results: Results) -> list[str]:
    """One markdown line per suite in ``results.dynamics`` (empty when there is none)."""
    out = []
    for d in results.dynamics:
        kinds = sorted({a.split(" ", 1)[0] for a in d.annotators}) or ["none"]
        fixed = d.user_side == SCRIPT_FIXED
        side = "user side script (fixed), for orientation" if fixed else "user side per run"
        shapes = ", ".join(f"{s} {n}" for s, n in d.shapes.items() if n) or "none"
        parts = [f"shapes {shapes}"]
        if d.worsened_share is not None:
            parts.append(f"worsened {d.worsened_share:.0%} · recovering {d.recovering_share or 0:.0%}")
        strategies = ", ".join(f"{s.strategy} {s.units}" for s in d.strategies if s.units)
        if strategies:
            parts.append(f"bot strategies {strategies}")
        crit = sum(r.kind == "failed_critical_criterion" for r in d.risky)
        parts.append(f"{len(d.risky) - crit} risky interventions")
        if crit:
            parts.append(f"{crit} units followed by a failed critical criterion")
        if d.feeling_shapes:
            feel = ", ".join(f"{s} {n}" for s, n in d.feeling_shapes.items() if n)
            parts.append(f"own feeling shapes {feel}")
        if d.failures:
            parts.append(f"⚠️ {len(d.failures)} annotator failures")
        out.append(
            f"Dynamics {md_code(d.suite)} ({md_text(', '.join(kinds))} annotator; {side}): "
            + md_text("; ".join(parts))
        )
    return out
