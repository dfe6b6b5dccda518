"""``empath-gate comment``: post or update the sticky pull-request comment (and, in a workflow,
the job summary, outputs and annotations).

Usage::

    empath-gate comment RESULTS [--baseline B] [--repo owner/name] [--pr N] [--job-summary]
                                [--no-post] [--transcripts-url URL] [--excerpts]

``--repo`` defaults to ``GITHUB_REPOSITORY``, ``--pr`` to the pull request of the event at
``GITHUB_EVENT_PATH``; the API base is ``GITHUB_API_URL`` and the token ``GITHUB_TOKEN``
(or ``GH_TOKEN``). One comment per suite, found by its hidden marker and the bot's login and
updated in place (see :mod:`empath_gate.github.comment`). A fork pull request, a 403, a
missing token, a run outside a pull request or GitHub 5xx answers on all three attempts skip
the comment with a warning.

Exit status follows the gate recorded in RESULTS, never the comment: 0 passed or not
evaluated, 1 failed, 2 configuration error, 3 infrastructure error. An unexpected API error
is printed as a warning and does not change it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from empath_gate.commands.diff import decided, metric_labels
from empath_gate.gate.exit import summary_exit_code
from empath_gate.report.markdown import COMMENT_MAX_CHARS
from empath_gate.results.io import read_results


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``empath-gate comment``."""
    from empath_gate.commands.options import add_setting_arguments

    parser.add_argument("results", type=Path, metavar="RESULTS", help="results.json")
    add_setting_arguments(parser, "comment")
    parser.add_argument("--repo", default=None, metavar="OWNER/NAME", help="default: GITHUB_REPOSITORY")
    parser.add_argument("--pr", type=int, default=None, metavar="N", help="default: the event's pull request")
    parser.add_argument(
        "--job-summary",
        action="store_true",
        help="also write the job summary, the outputs and one annotation per failing metric",
    )
    parser.add_argument("--no-post", action="store_true", help="do not post the comment")
    parser.add_argument(
        "--transcripts-url",
        default=None,
        metavar="URL",
        help="link to the transcripts artifact (default: this workflow run)",
    )
    parser.add_argument(
        "--excerpts",
        action="store_true",
        help="quote the judge's citations (content note, method/means detail redacted)",
    )


def run(args: argparse.Namespace) -> int:
    """Summary/outputs/annotations (``--job-summary``) and the comment; returns the gate's code."""
    from empath_gate.commands.options import given
    from empath_gate.github.comment import GitHubClient, GitHubError, post_sticky_comment
    from empath_gate.github.context import load_context
    from empath_gate.github.workflow import publish, warning
    from empath_gate.report.markdown import render_markdown
    from empath_gate.report.view import suite_key

    baseline_path = given(args, "baseline")
    baseline = read_results(baseline_path) if baseline_path is not None else None
    results = decided(args, "comment", read_results(args.results), baseline, str(args.results))
    ctx = load_context()
    url = args.transcripts_url or ctx.run_url
    labels = metric_labels()
    if args.job_summary:
        publish(results, args.results, baseline=baseline, transcripts_url=url, metric_labels=labels)
    code = summary_exit_code(results.summary)
    if args.no_post:
        return code
    repo = args.repo or ctx.repository
    pr = args.pr if args.pr is not None else ctx.pr_number
    if not repo:
        warning("empath-gate: PR comment skipped: no repository (set --repo or GITHUB_REPOSITORY)")
        return code
    if not ctx.token and not ctx.fork:
        warning("empath-gate: PR comment skipped: no GITHUB_TOKEN in the environment")
        return code
    body = render_markdown(
        results,
        baseline=baseline,
        max_chars=COMMENT_MAX_CHARS,
        excerpts=args.excerpts,
        transcripts_url=url,
        metric_labels=labels,
    )
    try:
        outcome = post_sticky_comment(
            body,
            client=GitHubClient(ctx.api_url, ctx.token),
            repo=repo,
            pr=pr,
            suite=suite_key(results),
            fork=ctx.fork,
            warn=warning,
        )
    except (GitHubError, ValueError) as exc:
        warning(f"empath-gate: PR comment failed: {exc}")
        return code
    if outcome.action != "skipped":
        print(f"empath-gate comment: {outcome.action} comment {outcome.id} on {repo}#{pr}", file=sys.stderr)
    return code
