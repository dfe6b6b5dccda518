"""The target's crisis level per suite from a results document (:mod:`empath_gate.analysis.triage`)."""

from __future__ import annotations

from empath_gate.results.model import Results, SuiteTriage


def triage_figures(results: Results) -> tuple[SuiteTriage, ...]:
    """The triage figures per suite, for the suites where the target reported at least one
    ``triage`` event, over their complete transcripts that are evidence (the rules of
    :func:`empath_gate.gate.unknown.unusable_transcripts`). Records without a triage pair
    (files before schema 4, an instrument without crisis levels) give nothing."""
    from empath_gate.analysis.triage import triage_scores
    from empath_gate.gate.unknown import unusable_transcripts

    unusable = unusable_transcripts(results.records, results.metadata.max_auditor_fallback_share)
    out: list[SuiteTriage] = []
    for suite in results.metadata.suites:
        pairs = [r.triage for r in results.records if r.suite == suite and r.status == "complete"
                 and r.transcript_id not in unusable and r.triage is not None]
        if not any(p.reports or p.source == "judge" for p in pairs):
            continue
        out.append(SuiteTriage(suite=suite, scores=triage_scores(pairs)))
    return tuple(out)


def judge_level_figures(results: Results) -> tuple[SuiteTriage, ...]:
    """The judge's own estimate of the user's crisis level (suites with ``judge_triage``) against
    the seeds' levels, per suite with at least one estimate, with the same figures as the target's
    (a judge-validity figure for ``empath-gate calibrate --triage``; it never gates the bot).
    Transcripts the judge gave no estimate count as without a level."""
    from empath_gate.analysis.triage import TriagePair, triage_scores

    out: list[SuiteTriage] = []
    for suite in results.metadata.suites:
        pairs = [TriagePair(transcript_id=r.transcript_id, truth=r.triage.truth,
                            level=r.triage.judge_user_level)
                 for r in results.records if r.suite == suite and r.triage is not None]
        if any(p.level is not None for p in pairs):
            out.append(SuiteTriage(suite=suite, scores=triage_scores(pairs)))
    return tuple(out)
