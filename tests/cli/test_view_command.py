"""`dshreplay view`: the page it writes, what it says, its exit codes, redaction, hostile text and size.

The page's view at every seq is tested against the fold in test_view_model.py and, in a browser,
against dsh's own in tests/browser/test_view_in_chromium.py."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from dshreplay.testing import shapes
from dshreplay.testing.samples import LogBuilder
from dshreplay.viewer._model import view_at

from conftest import SAMPLES

POLICY = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; base-uri 'none'; "
          "form-action 'none'")
SECRET = "AKIAIOSFODNN7EXAMPLE"  # (an AWS access key id: a default rule masks it)


def data_of(page: str) -> dict:
    [text] = re.findall(r'<script id="data" type="application/json">(.*?)</script>', page, re.S)
    assert "<" not in text and ">" not in text and "&" not in text  # (no log text can close the element)
    return json.loads(text)


class Tags(HTMLParser):
    """Every tag and attribute of a page, and its comments and declarations."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attributes: set[str] = set()
        self.raw: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes.update(name for name, _ in attrs)

    def handle_comment(self, data):
        self.raw.append(data)

    def unknown_decl(self, data):
        self.raw.append(data)


def test_it_writes_the_page_and_says_its_size(cli, tmp_path):
    out = tmp_path / "c.html"
    result = cli("view", SAMPLES / "compaction.jsonl", "--out", out)
    page = out.read_text(encoding="utf-8")
    size = len(page.encode())
    assert result.stdout == (f"wrote {out}: {size:,} bytes ({size / 648:.2f}x the 648 bytes of message text); "
                             "the view at seqs 0..94\n")
    data = data_of(page)
    assert data["last"] == 94 and data["failure"] is None and data["title"] == "dshreplay view sample-compaction"
    assert view_at(data["ops"], 94) == [67, 47, 49, 60, 69, 79, 81, 92]
    assert "<title>dshreplay view sample-compaction</title>" in page


def test_the_default_name_is_the_logs_in_the_current_folder(cli, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli("view", SAMPLES / "multi-turn.runtime.jsonl.zstd")
    assert result.stdout.startswith("wrote multi-turn.runtime.view.html: ")
    assert (tmp_path / "multi-turn.runtime.view.html").is_file()


def test_out_dash_writes_the_page_to_standard_output(cli):
    result = cli("view", SAMPLES / "compaction.jsonl", "--out", "-")
    assert result.stdout.startswith("<!DOCTYPE html>") and result.stdout.endswith("</html>")
    assert re.fullmatch(r"wrote -: [\d,]+ bytes \(.*\); the view at seqs 0\.\.94\n", result.stderr)


def test_it_never_writes_to_the_log_it_reads(cli, tmp_path):
    log = tmp_path / "c.jsonl"
    log.write_bytes((SAMPLES / "compaction.jsonl").read_bytes())
    before = log.read_bytes()
    result = cli("view", log, "--out", log, expect=2)
    assert result.stderr == f"dshreplay: usage error: --out {log} is the log itself: give another file\n"
    assert log.read_bytes() == before


def test_where_the_fold_fails_the_page_stops_with_the_reason_and_exit_1(cli, tmp_path):
    out = tmp_path / "b.html"
    result = cli("view", SAMPLES / "broken-replace-start-not-found.jsonl", "--out", out, expect=1)
    reason = ("answered for seqs 0..66 only: the fold fails at seq 67 (DSH-E107, line 69, /surfaceOp/start: "
              "replace start seq 1 is not in the surface)")
    assert result.stdout.endswith("; the view at seqs 0..66 (the fold fails at seq 67)\n")
    assert result.stderr == f"dshreplay: {SAMPLES / 'broken-replace-start-not-found.jsonl'}: {reason}\n"
    data = data_of(out.read_text(encoding="utf-8"))
    assert data["last"] == 67 and data["failure"] == {"seq": 67, "text": reason}
    assert max(op[0] for op in data["ops"]) < 67 and data["failures"][-1] == [67, reason]


def test_a_log_it_cannot_read_writes_no_page_and_exits_2(cli, tmp_path):
    out = tmp_path / "v.html"
    result = cli("view", SAMPLES / "broken-version-1.jsonl", "--out", out, expect=2)
    assert result.stderr == (f"dshreplay: version error: {SAMPLES / 'broken-version-1.jsonl'}: line 1: format "
                             "version 1 not supported: dshreplay reads format version 0\n")
    assert not out.exists()


def _secret_log(tmp_path):
    b = LogBuilder("secrets")
    b.start_turn()
    b.request_header()
    b.start_step()
    b.user(f"my key is {SECRET} and my codename is BLUEBIRD")
    b.tool_round("bash", json.dumps({"command": f"aws configure set key {SECRET}"}), f"stored {SECRET}")
    b.end_turn()
    return b.write(tmp_path / "s.jsonl")


def test_redacted_masks_what_export_masks(cli, tmp_path):
    log = _secret_log(tmp_path)
    cli("view", log, "--out", tmp_path / "plain.html")
    assert (tmp_path / "plain.html").read_text().count(SECRET) == 4  # (the message, the call's arguments, the result)
    cli("view", log, "--out", tmp_path / "red.html", "--redacted")
    page = (tmp_path / "red.html").read_text()
    assert SECRET not in page and page.count("[REDACTED]") == 4 and "BLUEBIRD" in page
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps({"text": ["BLUEBIRD"]}))
    cli("view", log, "--out", tmp_path / "rules.html", "--redact", rules)  # (its rules and the default ones)
    page = (tmp_path / "rules.html").read_text()
    assert SECRET not in page and "BLUEBIRD" not in page and page.count("[REDACTED]") == 5


PAYLOAD = ('<script>alert(1)</script>"><img src=x onerror=alert(1)></textarea></style></script>'
           "<!-- <![CDATA[x]]> {{ 7*7 }}{% raw %}\u2028\u2029\x00\u202e\x1b[31m" + "W" * 300)
PAGE_TAGS = ["html", "head", "meta", "meta", "meta", "title", "style", "body", "header", "h1", "div", "button", "input",
             "button", "label", "input", "span", "main", "section", "h2", "span", "div", "div", "div", "section",
             "h2", "canvas", "div", "section", "h2", "div", "div", "div", "section", "h2", "div", "script", "script"]


def test_no_log_text_makes_a_tag_an_attribute_or_a_script(cli, tmp_path):
    b = LogBuilder("sid" + PAYLOAD, cwd=PAYLOAD, model="m" + PAYLOAD)
    b.start_turn()
    b.request_header(system=PAYLOAD)
    b.start_step()
    b.user(PAYLOAD)
    b.assistant(PAYLOAD, reasoning=PAYLOAD, calls=[("cid" + PAYLOAD, "tool" + PAYLOAD, json.dumps({"c": PAYLOAD}))])
    seq = b.tool_call("cid" + PAYLOAD, "tool" + PAYLOAD, json.dumps({"c": PAYLOAD}))
    b.tool_result("cid" + PAYLOAD, PAYLOAD, cites=seq, is_error=True)
    b.end_step()
    b.start_step()
    first, last = b.user("again " + PAYLOAD), b.assistant("more " + PAYLOAD)
    b.compaction(first, last, PAYLOAD)
    b.add("bogus/" + PAYLOAD, {"x": PAYLOAD}, ignorable=True)  # (unknown, skipped: the view goes on past it)
    b.end_turn("aborted" + PAYLOAD, by=PAYLOAD)
    out = tmp_path / "h.html"
    cli("view", b.write(tmp_path / "h.jsonl"), "--out", out)
    page = out.read_text(encoding="utf-8")
    parsed = Tags(page)
    assert parsed.tags == PAGE_TAGS and parsed.raw == []  # (the page's own markup, nothing else)
    assert parsed.attributes == {"lang", "charset", "http-equiv", "content", "name", "id", "title", "type", "min",
                                 "max", "value", "aria-label"}
    [policy] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', page)
    assert policy == POLICY
    for bad in ("\x00", "\u202e", "\x1b", "<img", "</textarea", "<!-- <!"):
        assert bad not in page, repr(bad)
    assert page.count("</script>") == 2 and page.count("<script") == 2
    data = data_of(page)  # (the log's text is in the data whole, its controls shown as escapes)
    user = next(n for n in data["nodes"] if n[2] == "user")
    assert user[3][0][2].startswith('<script>alert(1)</script>"><img src=x onerror=alert(1)>') \
        and "\\u202e" in user[3][0][2] and "\\x1b[31m" in user[3][0][2] and "\u202e" not in user[3][0][2]
    assert data["title"].startswith("dshreplay view sid<script>")
    assert "<title>dshreplay view sid&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_a_long_sessions_page_stays_within_one_and_a_half_times_its_message_text(cli, tmp_path):
    b = shapes.long_session(400)
    out = tmp_path / "long.html"
    result = cli("view", b.write(tmp_path / "long.jsonl", pack=True), "--out", out)
    size, text = out.stat().st_size, data_of(out.read_text(encoding="utf-8"))
    assert len(text["ops"]) == 1600 and text["last"] == 12800  # (4 nodes and 32 events a turn, and the header)
    found = re.search(r": ([\d,]+) bytes \(([\d.]+)x the ([\d,]+) bytes of message text\)", result.stdout)
    assert found is not None and int(found.group(1).replace(",", "")) == size
    assert float(found.group(2)) <= 1.5 and size <= 1.5 * int(found.group(3).replace(",", ""))


def test_a_huge_message_is_cut_on_the_page_and_says_by_how_much(cli, tmp_path):
    b = LogBuilder("huge")
    b.start_turn()
    b.start_step()
    b.user("x" * 50_000)
    b.end_turn()
    out = tmp_path / "huge.html"
    cli("view", b.write(tmp_path / "huge.jsonl"), "--out", out)
    [node] = data_of(out.read_text(encoding="utf-8"))["nodes"]
    assert node[3] == [["text", None, "x" * 20_000 + "\n… 30,000 more characters (messages.jsonl has them all)"]]


def test_a_torn_tail_is_left_out_and_warned_of(cli, tmp_path):
    result = cli("view", SAMPLES / "torn-tail.jsonl", "--out", tmp_path / "t.html")
    assert result.stdout.endswith("; the view at seqs 0..62\n")
    assert result.stderr == (f"dshreplay: warning: {SAMPLES / 'torn-tail.jsonl'}: line 65: torn tail: last line has "
                             "no newline and does not parse; 42 bytes lost at byte offset 11341\n")
