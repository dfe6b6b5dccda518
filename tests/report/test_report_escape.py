"""Escaping of hostile transcript text for markdown and HTML."""

from __future__ import annotations

import re

import pytest

from empath_gate.report.escape import (
    ZWSP,
    html_comment_safe,
    html_text,
    md_code,
    md_link,
    md_text,
    one_line,
    strip_controls,
    truncate,
)

HOSTILE = [
    "![tracker](https://evil.example/pixel.png)",
    "[click me](https://evil.example/phish)",
    "<img src=x onerror=alert(1)>",
    "<details open><summary>hi</summary>x</details>",
    "<script>alert(1)</script>",
    "@octocat please look @org/team",
    "see #12 and acme/repo#34",
    "visit www.evil.example or http://evil.example/x",
    "# Heading\n- list\n1. item\n> quote\n---",
    "| a | b |\n|---|---|",
    "**bold** _it_ ~~strike~~ `code` $x^2$",
    "<!-- empath-gate:suite=crisis -->",
    "mail me: victim@example.com",
    "\u202eevil\u202c text with bidi",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_md_text_is_inert(text: str) -> None:
    out = md_text(text)
    assert "\n" not in out
    assert "<" not in out and ">" not in out, "no raw tag can survive"
    assert "](" not in out.replace("\\]", ""), "no link or image can open"
    assert not re.search(r"(?<!\\)[\[\]`*_~|$]", out), f"unescaped markdown punctuation in {out!r}"
    assert not re.search(r"@[A-Za-z0-9]", out), "mentions are broken by a zero-width space"
    assert not re.search(r"(?<!&)#\d", out), (
        "issue references are broken (only the &#8203; entity has #digit)"
    )
    assert "://" not in out and "www." not in out.lower(), "autolinks are broken"
    assert "\u202e" not in out


def test_md_text_keeps_the_words_readable() -> None:
    out = md_text("@maria dijo: ¿cómo estás? 😔 #3")
    assert out == f"@{ZWSP}maria dijo: ¿cómo estás? 😔 \\#{ZWSP}3"
    assert md_text("a.b-c (x)!") == "a.b-c (x)!"


def test_md_text_escapes_block_syntax_at_the_start() -> None:
    assert md_text("- item") == "\\- item"
    assert md_text("12. item") == "12\\. item"
    assert md_text("+ x").startswith("\\+")


def test_md_text_truncates_source_text() -> None:
    assert md_text("abcdefghij", max_chars=5) == "abcd…"
    assert truncate("short", 10) == "short"
    with pytest.raises(ValueError):
        truncate("x", 0)


def test_md_code_survives_backticks_and_pipes() -> None:
    assert md_code("crisis_detection") == "`crisis_detection`"
    assert md_code("a`b") == "``a`b``"
    assert md_code("`x`") == "`` `x` ``"
    assert md_code("a|b") == "`a\\|b`"
    assert md_code("") == ""
    assert "\n" not in md_code("a\nb")


def test_md_link_only_for_http_urls() -> None:
    assert (
        md_link("run", "https://github.com/o/r/actions/runs/1")
        == "[run](https://github.com/o/r/actions/runs/1)"
    )
    assert md_link("x", "javascript:alert(1)") == "x"
    assert md_link("x", "https://e.example/a)b(c") == "[x](https://e.example/a%29b%28c)"
    assert md_link("[evil](x)", "https://ok.example") == "[\\[evil\\](x)](https://ok.example)"


def test_html_text_escapes_everything() -> None:
    assert (
        html_text("<b onclick=\"x\">'&'</b>") == "&lt;b onclick=&quot;x&quot;&gt;&#x27;&amp;&#x27;&lt;/b&gt;"
    )
    assert html_text("a\u202eb\u2066c") == "abc"


def test_controls_and_whitespace() -> None:
    assert strip_controls("a\x00b\x1bc\x7fd") == "abcd"
    assert strip_controls("tab\tnew\nline") == "tab\tnew\nline"
    assert one_line("a \n\t b\r\n") == "a b"


def test_html_comment_safe_cannot_close_the_comment() -> None:
    s = html_comment_safe("x --> <script>")
    assert "-->" not in s and "<" not in s and ">" not in s
    assert html_comment_safe("crisis+smoke") == "crisis+smoke"
