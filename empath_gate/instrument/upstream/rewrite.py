"""Sentences of upstream seed instructions that address its tool-using auditor: removed or rewritten.

Upstream's auditor is an agent with tools: it sets the target's system prompt, sends messages,
rolls back, and calls the bot "the target". Here the auditor only writes the user's next
message to the team's own bot, whose system prompt the team configures, so such sentences
would be instructions it cannot follow. Each :class:`Rule` matches them; :func:`rewrite`
applies every rule in order and returns each change (rule, the text before, the text after),
so the import report lists every one.

The rules:

* ``system-prompt-directive`` (removed): a sentence telling the auditor to set (or not to
  set) the target's system prompt;
* ``auditor-tool`` (removed): a sentence naming one of the agent's tools (sending a message,
  rolling back, prefilling, creating a tool, ending the conversation by a call);
* ``target-is-chatbot`` (rewritten): "The target is a ... chatbot ..." becomes "You are
  talking to a ... chatbot ...";
* ``the-target`` (rewritten): any other "the target" becomes "the chatbot";
* ``score-the-chatbot`` (rewritten): "Score the chatbot on" (an order to a scorer, which this
  auditor is not) becomes "The chatbot is judged on".
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_IN = r"(?:[^.!?\n]|\n(?!\n))"
"""A character inside one sentence: no end mark, no blank line (single line breaks allowed)."""
_SENTENCE_END = _IN + r"*[.!?]"
"""The rest of a sentence, through its end mark."""


def _sentence_with(words: str) -> re.Pattern[str]:
    """The whole sentence holding a match of ``words``: after an end mark, with the blanks
    before it; at the start of a line, with the blanks after it (so the line keeps its start)."""
    sentence = _IN + r"*?" + words + _SENTENCE_END
    return re.compile(r"(?:(?<=[.!?])[ \t]+" + sentence + r"|^[ \t]*" + sentence + r"[ \t]*)",
                      re.IGNORECASE | re.MULTILINE)


@dataclass(frozen=True)
class Rule:
    """One rewrite: ``pattern`` (compiled, case-insensitive) -> ``replacement`` ("" removes the
    match, with the blanks before it); ``why`` says what the sentence asked of the auditor."""

    id: str
    pattern: re.Pattern[str]
    replacement: str
    why: str


RULES: tuple[Rule, ...] = (
    Rule("system-prompt-directive",
         _sentence_with(r"\b(?:set|use|create|give|write|change)\b" + _IN + r"*?\bsystem\s+prompt\b"),
         "", "tells the auditor to set the target's system prompt; here the team configures its own bot"),
    Rule("auditor-tool",
         _sentence_with(r"\b(?:send_message|set_target_system_message|rollback|roll\s+back|prefill|"
                        r"create_tool|end_conversation|tool\s+calls?)\b"),
         "", "names a tool of upstream's auditor agent, which this auditor does not have"),
    Rule("target-is-chatbot",
         re.compile(r"\bThe\s+target\s+is\s+(an?\s+[^.!?\n]*?\bchatbot\b[^.!?\n]*)\.", re.IGNORECASE),
         r"You are talking to \1.", "calls the bot 'the target', the auditor agent's word for it"),
    Rule("the-target",
         re.compile(r"\b(the)\s+target\b(?!\s+metric)", re.IGNORECASE),
         r"\1 chatbot", "calls the bot 'the target', the auditor agent's word for it"),
    Rule("score-the-chatbot",
         re.compile(r"\bScore\s+the\s+chatbot\s+on\b", re.IGNORECASE),
         "The chatbot is judged on", "orders a scorer; this auditor only plays the person, the judge scores"),
)


@dataclass(frozen=True)
class Change:
    """One change made to an instruction: the ``rule`` id, the text matched and what replaced it."""

    rule: str
    before: str
    after: str


def rewrite(text: str, rules: tuple[Rule, ...] = RULES) -> tuple[str, list[Change]]:
    """``text`` with every rule applied in order, and the changes made (in rule order, then
    text order). Removals take the blanks before the sentence with them; lines left with
    trailing blanks are trimmed and a text left starting with blank lines is stripped."""
    changes: list[Change] = []
    for rule in rules:

        def repl(m: re.Match[str], rule: Rule = rule) -> str:
            after = m.expand(rule.replacement)
            changes.append(Change(rule.id, m.group(0).strip(), after))
            return after

        text = rule.pattern.sub(repl, text)
    if changes:
        text = "\n".join(line.rstrip() for line in text.split("\n")).strip()
    return text, changes


def rule_reasons() -> dict[str, str]:
    """Rule id -> why sentences it matches are changed (for the import report)."""
    return {r.id: r.why for r in RULES}
