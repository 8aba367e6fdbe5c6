"""Markdown for transcripts and bundles: log values as inert labels and code spans, log text
indented or fenced, and the unified diff of two rendered model views."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from dshreplay.analyses._render import clean, message_text, one_line, role_of
from dshreplay.console._table import whole

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    pass


NodeMessages = Sequence[tuple[int, Any]]  # (seq, derived message or None) per surface node


def _indented(text: str) -> str:
    """Log text in a transcript: each line (cleaned) after two spaces, an empty one left empty."""
    return "\n".join("  " + line if line else line for line in text.split("\n"))


def _fenced(text: str) -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}text\n{text}\n{fence}"


def markdown_label(text: str) -> str:
    """A short log value (a role, a session id) for a Markdown heading: as is
    when it is a plain word, else as a code span, so it is shown and inert."""
    text = one_line(text, 200)
    return text if re.fullmatch(_PLAIN_LABEL, text) else _code_span(text)


def markdown_marker(marker: str) -> str:
    """A transcript marker (`[turn 1 ended: error AUTH at seq 11]`) for Markdown: as is when it
    holds nothing Markdown acts on, else as a code span (a log value in it could make a link)."""
    return marker if re.fullmatch(_PLAIN_MARKER, marker) else _code_span(marker)


def _code_span(text: str) -> str:
    """Text as an inert Markdown code span, its backticks outnumbered."""
    tick = "`"
    while tick in text:
        tick += "`"
    return f"{tick} {text} {tick}"


_PLAIN_LABEL = r"[A-Za-z0-9][A-Za-z0-9 ./:@-]*"


_PLAIN_MARKER = r"\[[A-Za-z0-9 .,:_/-]*\]"


def unified_text_diff(before: NodeMessages, after: NodeMessages, a: int, b: int) -> str:
    """A unified diff of two rendered model views ([(seq, message)] each)."""
    import difflib
    def render(node_messages: NodeMessages) -> list[str]:
        lines = []
        for seq, message in node_messages:
            if message is None:
                continue
            lines.append(f"== seq {seq} · {whole(role_of(None, message))} ==")
            lines.extend(_indented(clean(message_text(message))).split("\n"))  # (no log line passes for a head)
        return [line + "\n" for line in lines]
    return "".join(difflib.unified_diff(render(before), render(after), f"model view at seq {a}",
                                        f"model view at seq {b}"))
