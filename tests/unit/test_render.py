"""Text for people: one-line previews, tables."""

from __future__ import annotations

import re

import pytest

from dshreplay.analyses._render import clean, one_line

_SPACE = r"\s+"  # the reference: previews fold whitespace as this pattern would

# -- tables ---------------------------------------------------------------------------

def test_a_table_with_room_pads_headers_as_tabulate_does():
    from dshreplay.console._table import render_table
    assert render_table([("a", "bb"), ("ccc", "d")], ["x", "y"], 80) == "x    y\n---  ---\na    bb\nccc  d"


def test_a_narrow_table_breaks_long_headers_before_cutting_cells():
    from dshreplay.console._table import render_table
    rows = [("compaction-0011", "65", "67")]
    assert render_table(rows, ["compactionId", "start", "replacement"], 36).splitlines() == [
        "compactionId     start  replacement", "---------------  -----  -----------", "compaction-0011  65     67"]
    assert render_table(rows, ["compactionId", "start", "replacement"], 30).splitlines() == [
        "                        repla-", "compactionId     start  cement",
        "---------------  -----  ------", "compaction-0011  65     67"]
    # (cut to its header, 12, a column still leaves the table 27 wide: the header breaks too, and the table fits)
    assert render_table(rows, ["compactionId", "start", "replacement"], 26).splitlines() == [
        "compaction          repla-", "Id           start  cement",
        "-----------  -----  ------", "com…on-0011  65     67"]



# Display widths, checked by hand: a CJK character and an emoji take two columns, a combining mark none.
CJK_ROWS = [("1", "user", "请帮我把这个函数改成异步的，并且加上错误处理和重试逻辑"),
            ("2", "assistant", "了解しました。関数を非同期に書き換えます 🚀🚀 e\u0301te\u0301"),
            ("12356", "tool", "混合 mixed 文本 text ✅ done")]


def _columns_of(line: str) -> int:
    import unicodedata
    return sum(0 if unicodedata.combining(c) else 2 if unicodedata.east_asian_width(c) in "WF" else 1
               for c in line)


def test_display_width_counts_wide_characters_twice_and_combining_marks_not_at_all():
    from dshreplay.console._table import display_width
    assert display_width("中文") == 4
    assert display_width("🚀") == 2
    assert display_width("e\u0301") == 1
    assert display_width("abc") == 3


@pytest.mark.parametrize("text", ["abc…", "… 12 · seq 4 ──", "└─ [3] a…b", "…", "·─└…", "a\u00b7b"])
def test_text_of_ascii_and_our_marks_is_measured_and_cut_as_wcwidth_measures_and_cuts_it(text):
    import wcwidth

    from dshreplay.console._table import _columns, display_width
    assert display_width(text) == wcwidth.width(text) == len(text)
    assert [_columns(text, a, b) for a in range(3) for b in range(a, len(text) + 2)] == \
        [wcwidth.clip(text, a, b) for a in range(3) for b in range(a, len(text) + 2)]


@pytest.mark.parametrize("text", ["1 files: 1 ok, 0 with errors", "a  b\n\n c", "x" * 30, "ab…cd · e", "", " ",
                                  "tab\there", "wide 中文 text", "two words",
                                  # long words: the first piece fills what the line has left
                                  "see /home/dev/project/src/" + "deep/" * 12 + "file.py now",
                                  "数据库连接超时" * 9, "ok 数据库连接超时" * 5, "a\t" + "x" * 40,
                                  "a " + "x" * 40 + " b",
                                  "e\u0301" * 25 + " 👍" * 3 + "👨\u200d👩\u200d👧" * 9, "a" + " " * 40 + "b",
                                  "a\u2060\u2060数数数数数数数" + "b" * 13])
@pytest.mark.parametrize("width", [1, 2, 5, 12, 30])
def test_wrapping_gives_what_wcwidth_wraps_whether_or_not_it_is_imported(text, width):
    import wcwidth

    from dshreplay.console._table import _wrap
    assert _wrap(text, width) == [line for para in text.split("\n")
                                  for line in wcwidth.wrap(para, width, break_long_words=True,
                                                           break_on_hyphens=False) or [""]]


def test_wrapping_gives_what_wcwidth_wraps_on_random_words_of_every_width():
    import random

    import wcwidth

    from dshreplay.console._table import _wrap
    pick = random.Random(31)
    alphabet = list("abcdef/-.") + list("数据库连接") + ["e\u0301", "👍", "👨\u200d👩\u200d👧", "\u2060"]
    for _ in range(3000):
        words = ["".join(pick.choice(alphabet) for _ in range(pick.choice([1, 3, 9, 30, 90])))
                 for _ in range(pick.randint(1, 8))]
        text = "".join(word + pick.choice([" ", "  ", "\t"]) for word in words)
        width = pick.choice([1, 2, 3, 4, 7, 20, 33])
        assert _wrap(text, width) == (wcwidth.wrap(text, width, break_long_words=True, break_on_hyphens=False)
                                      or [""]), (text, width)


def test_a_word_of_200_000_wide_characters_is_wrapped_in_one_pass():
    # before: each line measured the rest of the word again (wcwidth, as the stdlib): 20,000 wide
    # characters took 18 s; the lines are counted here, the time is the hardening tests'
    from dshreplay.console._table import _wrap
    lines = _wrap("数" * 200_000, 30)
    assert lines == ["数" * 15] * (200_000 // 15) + ["数" * (200_000 % 15)]


@pytest.mark.parametrize("width", [60, 80, 200])
def test_a_table_of_cjk_text_fits_its_width_in_display_columns(width):
    from dshreplay.console._table import render_table
    table = render_table(CJK_ROWS, ["#", "role", "text"], width, text_col=2)
    lines = table.splitlines()
    assert all(_columns_of(line) <= width for line in lines), [(_columns_of(x), x) for x in lines]
    assert lines[4].startswith("12356  tool ")  # the number whole
    if width >= 80:  # room for every text whole (the longest takes 56 columns, the others 19)
        assert lines[2].endswith(CJK_ROWS[0][2]) and lines[4].endswith(CJK_ROWS[2][2])
    else:  # cut at its end with "…", filling the column up to one column
        assert lines[2].endswith("…") and _columns_of(lines[2]) >= width - 1


@pytest.mark.parametrize("width", [60, 80])
def test_a_wrapped_cjk_column_wraps_by_display_width(width):
    from dshreplay.console._table import render_table
    table = render_table(CJK_ROWS, ["#", "role", "text"], width, text_col=2, wrap=True)
    assert all(_columns_of(line) <= width for line in table.splitlines())
    assert "".join(line[18:].strip() for line in table.splitlines()[2:]).replace(" ", "").startswith(
        "请帮我把这个函数改成异步的")


def test_numbers_and_counts_are_never_cut_another_column_gives_way():
    from dshreplay.console._table import render_table
    rows = [("/very/long/path/to/some/session/folder/session.jsonl", "277/12356", "147159/116", "4..18")]
    table = render_table(rows, ["session", "call/fail", "tok in/out", "chunks"], 40)
    line = table.splitlines()[-1]
    assert line.split()[1:] == ["277/12356", "147159/116", "4..18"]
    assert _columns_of(line) <= 40 and "…" in line.split()[0]


def test_a_cjk_id_is_cut_in_the_middle_by_display_width():
    from dshreplay.console._table import _middle
    cut = _middle("会话-一二三四五六七八九十-结束", 11)
    assert _columns_of(cut) == 11 and cut.startswith("会") and cut.endswith("结束") and "…" in cut


def test_cut_cells_keep_what_tells_them_apart():
    from dshreplay.console._table import _cut_column
    paths = ["../shared/corpus/upstream/headless-agent__compaction-recovery__session.jsonl",
             "../shared/corpus/upstream/acp-agent__error-finish__session.jsonl", "(total)"]
    assert _cut_column(paths, 16) == ["…head…-recovery…", "…acp-…or-finish…", "(total)"]
    assert _cut_column(["338e88fa-e78b-4d49-bd38-8f919e85f5e1"], 14) == ["338e…19e85f5e1"]


def test_a_wrapped_text_column_takes_what_the_others_leave():
    from dshreplay.console._table import render_table
    text = render_table([("E", "one two three four five six seven")], ["code", "message"], 30, text_col=1,
                        wrap=True)
    assert text.splitlines() == ["code  message", "----  ------------------------", "E     one two three four five",
                                 "      six seven"]


# -- one-line previews -----------------------------------------------------------------

def _whole_text_preview(text: str, width: int) -> str:
    """The reference: the whole text folded, every character that is not printable escaped, then cut."""
    flat = "".join(c if c.isprintable() else _escaped(c) for c in re.sub(_SPACE, " ", text).strip())
    return flat if len(flat) <= width else flat[:width - 1] + "…"


def _escaped(c: str) -> str:
    return f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}" if ord(c) < 0x10000 else f"\\U{ord(c):08x}"


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
    ("two\nlines\x1b[31m red", "two\nlines\\x1b[31m red"), ("a\nb\x07\x85\u200bc", "a\nb\\x07\\x85\\u200bc"),
    ("a\r\nb\rc", "a\nb\\x0dc"), ("nb\u00a0sp\u3000", "nb\u00a0sp\u3000"), ("\x9b2J\x7f", "\\x9b2J\\x7f"),
    ("bash\u2060 bash\ufeff bash\U000e0062", "bash\\u2060 bash\\ufeff bash\\U000e0062"),
    ("\u202eabc\u2066\u2028", "\\u202eabc\\u2066\\u2028"), ("a\udcffb", "a\\xffb"), ("é中文", "é中文"),
])
def test_clean_keeps_newlines_tabs_and_spaces_and_shows_every_other_unprintable_character_escaped(text, cleaned):
    """(A path's byte that is not UTF-8, decoded with surrogateescape, shows as \\xNN, as shown_path writes it.)"""
    assert clean(text) == cleaned


def test_a_table_whose_numbers_alone_do_not_fit_is_printed_as_records():
    # turns, calls and tokens take 5 + 5 + 6 columns and two gaps each: more than 20 with any session
    # column, so each row becomes a record of `header  value` lines, the header column 7 wide
    # ("session"), the values 20 - 7 - 2 = 11; a path too long for them is cut in the middle
    from dshreplay.console._table import render_table
    rows = [("a.jsonl", "12", "345", "67890"), ("/a/very/long/path/session.jsonl", "1", "2", "3")]
    lines = render_table(rows, ["session", "turns", "calls", "tokens"], 20).splitlines()
    assert lines[:9] == ["session  a.jsonl", "turns    12", "calls    345", "tokens   67890", "",
                         lines[5], "turns    1", "calls    2", "tokens   3"]
    path = lines[5][len("session  "):]
    assert (_columns_of(path), path[:3], path[-4:], "…" in path) == (11, "/a/", "sonl", True)
    assert render_table(rows, ["session", "turns", "calls", "tokens"], 40).splitlines()[0].split() == [
        "session", "turns", "calls", "tokens"]  # (with room for its numbers: a table)


def test_the_blocks_the_cleaning_passes_over_hold_only_printable_characters():
    from dshreplay._jsvalues import PRINTABLE_BLOCKS
    ranges = re.findall(r"(.)-(.)", PRINTABLE_BLOCKS)
    assert len(ranges) == 9
    assert all(chr(c).isprintable() for a, b in ranges for c in range(ord(a), ord(b) + 1))
