"""Text for people: one-line previews, tables."""

from __future__ import annotations

import pytest

from dshreplay.analyses.render import _ANSI, _CONTROL, _SPACE, clean, one_line

# -- tables ---------------------------------------------------------------------------

def test_a_table_with_room_pads_headers_as_tabulate_does():
    from dshreplay.output.reporters import render_table
    assert render_table([("a", "bb"), ("ccc", "d")], ["x", "y"], 80) == "x    y\n---  ---\na    bb\nccc  d"


def test_a_narrow_table_breaks_long_headers_before_cutting_cells():
    from dshreplay.output.reporters import render_table
    rows = [("compaction-0011", "65", "67")]
    assert render_table(rows, ["compactionId", "start", "replacement"], 36).splitlines() == [
        "compactionId     start  replacement", "---------------  -----  -----------", "compaction-0011  65     67"]
    assert render_table(rows, ["compactionId", "start", "replacement"], 30).splitlines() == [
        "                        repla-", "compactionId     start  cement",
        "---------------  -----  ------", "compaction-0011  65     67"]
    assert render_table(rows, ["compactionId", "start", "replacement"], 26).splitlines() == [
        "                     repla-", "compactionId  start  cement",
        "------------  -----  ------", "com…ion-0011  65     67"]


def test_cut_cells_keep_what_tells_them_apart():
    from dshreplay.output.reporters import _cut_column
    paths = ["../shared/corpus/upstream/headless-agent__compaction-recovery__session.jsonl",
             "../shared/corpus/upstream/acp-agent__error-finish__session.jsonl", "(total)"]
    assert _cut_column(paths, 16) == ["…head…-recovery…", "…acp-…or-finish…", "(total)"]
    assert _cut_column(["338e88fa-e78b-4d49-bd38-8f919e85f5e1"], 14) == ["338e…19e85f5e1"]


def test_a_wrapped_text_column_takes_what_the_others_leave():
    from dshreplay.output.reporters import render_table
    text = render_table([("E", "one two three four five six seven")], ["code", "message"], 30, text_col=1,
                        wrap=True)
    assert text.splitlines() == ["code  message", "----  ------------------------", "E     one two three four five",
                                 "      six seven"]


# -- one-line previews -----------------------------------------------------------------

def _whole_text_preview(text: str, width: int) -> str:
    """The preview as worked out before: the whole text cleaned and folded, then cut."""
    flat = _SPACE.sub(" ", text if text.isprintable() else _CONTROL.sub("", _ANSI.sub("", text))).strip()
    return flat if len(flat) <= width else flat[:width - 1] + "…"


@pytest.mark.parametrize("text", [
    "plain words " * 40,
    "\n\n" + "   \t" * 300 + "after the blank start",  # whitespace that folds away
    "abc\x1b[31mred\x1b[0m " * 50,  # SGR sequences all along, some cut by the prefix
    "x" * 95 + "\x1b[" + "1;" * 200 + "m tail",  # one CSI sequence across the first cut
    "x" * 95 + "\x1b]0;" + "t" * 500 + "\x07 after the title",  # an OSC title across the cut
    "x" * 97 + "\x1b]0;title\x1b\\ end",  # an OSC ended by ESC backslash at the cut
    "é\u200b" * 400 + "\x00\x07\x9b",  # zero-width and C0/C1 controls
    "x" * 95 + "\x1b",  # an ESC at the very end
    "\x1b[" + "1;" * 200 + "m the text after a long CSI",  # a prefix that holds only part of a sequence
    "\x1b]0;" + "t" * 500 + "\x07the text after a long title",
    "\x1b]0;" + "t" * 65 + "\x1b\\the text after a title ended by ESC backslash",
    "lines\n\tand tabs\r\n\x0b\x0c\x1c\x85\u00a0\u2028 folded " * 30,  # every kind of whitespace
])
@pytest.mark.parametrize("width", [1, 8, 20, 67])
def test_a_preview_cut_before_it_is_cleaned_is_the_one_the_whole_text_gives(text, width):
    assert one_line(text, width) == _whole_text_preview(text, width)


@pytest.mark.parametrize("text, cleaned", [
    ("two\n\tlines", "two\n\tlines"),  # (newlines and tabs stay: the text itself is returned)
    ("two\nlines\x1b[31m red", "two\nlines red"), ("a\nb\x07\x85\u200bc", "a\nbc"), ("a\r\nb", "a\nb"),
])
def test_clean_keeps_newlines_and_tabs_and_strips_escapes_and_controls(text, cleaned):
    assert clean(text) == cleaned
    assert clean(text) == _CONTROL.sub("", _ANSI.sub("", text))
