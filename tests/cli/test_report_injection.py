"""report.html and index.html of a log whose every text field is hostile: log text stays text.

Each field that reaches a page (session id, cwd, title, provider and model, system prompt,
messages, reasoning, tool names, call ids, arguments and results, error codes and messages,
approval and hook fields, a compaction summary, the turn ending, an unknown event type, a
finding's message and the input's file and folder names) holds script, attribute, URL, CSS,
Jinja, comment and CDATA payloads, bidi and line-separator characters and a long unbroken
run. The pages are parsed: no tag, attribute, comment, script or link comes from the log."""

from __future__ import annotations

import json
import re
from html.parser import HTMLParser

from markupsafe import escape

from dshreplay.testing.samples import LogBuilder

STAMP = "2026-01-01T00:00:00Z"
PAYLOAD = ('<script>alert(1)</script>"><img src=x onerror=alert(1)></textarea></style></script>\''
           "javascript:alert(1) data:text/html,<b>x</b> url(javascript:alert(1)) expression(alert(1)) "
           "{{ 7*7 }}{% raw %}{{x}}{% endraw %}<!-- <![CDATA[x]]> \u2028\u2029\x00\u202eRTL " + "W" * 3000)
SHORT = '<script>alert(1)</script>"><img src=x onerror=alert(1)>{{7*7}}\u202e'


def hostile(tmp_path, session_id: str = "sid" + PAYLOAD):
    b = LogBuilder(session_id, cwd=PAYLOAD, provider="prov" + SHORT, model="mod" + PAYLOAD, title=PAYLOAD)
    b.add("session/title", {"title": PAYLOAD})
    b.start_turn()
    b.request_header(system=PAYLOAD)
    b.start_step()
    b.user(PAYLOAD)
    b.add("assistant/chunk", {"turn": b.turn, "step": b.step, "chunk": {"type": "finish", "reason": {
        "kind": "error", "failure": {"message": PAYLOAD, "code": "C" + PAYLOAD}}}}, dt=1200)
    arguments = json.dumps({"command": PAYLOAD})
    b.assistant(PAYLOAD, reasoning=PAYLOAD, calls=[("cid" + PAYLOAD, "tool" + PAYLOAD, arguments)])
    seq = b.tool_call("cid" + PAYLOAD, "tool" + PAYLOAD, arguments)
    b.approval("cid" + PAYLOAD, "tool" + PAYLOAD, outcome="allowed-once" + SHORT, reason=PAYLOAD)
    b.hook_invoked("PreToolUse" + SHORT, "h" + PAYLOAD, matcher=PAYLOAD)
    b.hook_result("PreToolUse" + SHORT, "h" + PAYLOAD, decision="deny" + PAYLOAD)
    b.tool_result("cid" + PAYLOAD, PAYLOAD, cites=seq, is_error=True)
    b.end_step()
    b.start_step()
    first = b.user("second " + PAYLOAD)
    last = b.assistant("more " + PAYLOAD)
    b.compaction(first, last, PAYLOAD)
    b.add("bogus/" + SHORT, {"x": PAYLOAD})
    b.end_turn("aborted" + SHORT, by=PAYLOAD)
    b.start_turn()
    b.start_step()
    b.assistant("", calls=[("c2" + SHORT, "t" + SHORT, PAYLOAD)])
    b.add("user/message", {"content": PAYLOAD, "role": PAYLOAD})  # (refused: findings quote it)
    folder = tmp_path / 'dir<script>"\u202e'
    folder.mkdir()
    return b.write(folder / '<img src=x onerror=alert(1)>"javascript:alert(1)\u202e{{7*7}}.jsonl')


def small(tmp_path, name: str, session_id: str):
    b = LogBuilder(session_id)
    b.start_turn()
    b.start_step()
    b.user("hi")
    b.assistant("hello")
    b.end_turn()
    return b.write(tmp_path / name)


class Page(HTMLParser):
    """Every tag, attribute, comment, declaration and the text of every script and style of a page."""

    def __init__(self, text: str) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: set[str] = set()
        self.attributes: set[tuple[str, str]] = set()
        self.links: list[str] = []
        self.styles: list[str] = []
        self.raw: list[str] = []  # comments, CDATA, processing instructions, declarations
        self.scripts: list[str] = []
        self._in: str | None = None
        self.feed(text)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attributes.update((tag, name) for name, _ in attrs)
        self.links += [value for name, value in attrs if name in ("href", "src", "action", "xlink:href")]
        self.styles += [value for name, value in attrs if name == "style"]
        self._in = tag if tag in ("script", "style") else None

    def handle_endtag(self, tag):
        self._in = None

    def handle_data(self, data):
        if self._in == "script":
            self.scripts.append(data)

    def handle_comment(self, data):
        self.raw.append("comment " + data)

    def unknown_decl(self, data):
        self.raw.append("decl " + data)

    def handle_pi(self, data):
        self.raw.append("pi " + data)


REPORT_TAGS = {"html", "head", "meta", "title", "style", "body", "header", "h1", "h2", "p", "span", "main",
               "section", "div", "a", "table", "thead", "tbody", "tr", "th", "td", "code", "details", "summary",
               "ul", "li", "svg", "text", "line", "rect"}
ATTRIBUTES = {"lang", "charset", "http-equiv", "content", "name", "class", "id", "href", "title", "style",
              "data-axis", "xmlns", "viewbox", "width", "height", "role", "aria-label", "x", "y", "x1", "x2",
              "y1", "y2", "stroke", "fill", "rx"}
STYLE = re.compile(r"(left|right|width):(min\([\d.]+%,calc\(100% - 3px\)\)|[\d.]+%|0)"
                   r"(;(left|width):(min\([\d.]+%,calc\(100% - 3px\)\)|[\d.]+%))*")


def test_no_log_text_makes_a_tag_an_attribute_a_link_or_a_script(cli, tmp_path):
    out = tmp_path / "bundle"
    cli("export", hostile(tmp_path), small(tmp_path, "up.jsonl", "../../etc/passwd"),
        small(tmp_path, "js.jsonl", "javascript:alert(1)"), small(tmp_path, "abs.jsonl", "/abs/path"),
        "--out", out, "--timestamp", STAMP, expect=1)
    index = (out / "index.html").read_text(encoding="utf-8")
    [report_path] = [p for p in out.glob("sid*/report.html")]
    report = report_path.read_text(encoding="utf-8")
    for text in (index, report):
        page = Page(text)
        assert page.tags <= REPORT_TAGS, page.tags - REPORT_TAGS
        assert {name for _, name in page.attributes} <= ATTRIBUTES
        assert not any(name.startswith("on") for _, name in page.attributes)
        assert page.raw == [] and page.scripts == [] and "script" not in page.tags
        assert all(STYLE.fullmatch(style) for style in page.styles), page.styles
        assert text.count("<style>") == 1 and text.count("</style>") == 1
        for bad in ("\x00", "\u202e", "<!--", "<![CDATA", "<img", "<script", "</textarea"):
            assert bad not in text, bad
    report_page = Page(report)
    assert report_page.links and all(re.fullmatch(r"#(call|tool)-\d+|view\.html(#seq=\d+)?", link)
                                     for link in report_page.links)
    # the log's text is on the page as text: whole where a cell holds it, unevaluated
    assert str(escape(PAYLOAD[:200].replace("\x00", "").replace("\u202e", ""))) in report
    assert "{{ 7*7 }}{% raw %}{{x}}{% endraw %}" in report
    # index.html links each report by a relative path inside the bundle
    links = Page(index).links
    assert len(links) == 4
    for link in links:
        assert not link.startswith(("/", "\\")) and ":" not in link and link.endswith("/report.html")
        assert ".." not in link.split("/") and (out / link).resolve().is_relative_to(out.resolve())
        assert (out / link).is_file()
    assert sorted(links) == ["..~002F..~002Fetc~002Fpasswd/report.html", "javascript~003Aalert~00281~0029/report.html",
                             report_path.parent.name + "/report.html", "~002Fabs~002Fpath/report.html"]


def test_the_pages_policy_allows_inline_style_and_nothing_else(cli, tmp_path):
    # The policy allowed data: images (the pages have none) and left <base> and form targets
    # open (default-src does not cover them): markup that slipped through could retarget the
    # index's relative report links or post a form off the machine.
    out = tmp_path / "bundle"
    cli("export", small(tmp_path, "s.jsonl", "policy"), "--out", out, "--timestamp", STAMP)
    for page in (out / "index.html", out / "policy" / "report.html"):
        [policy] = re.findall(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">',
                              page.read_text(encoding="utf-8"))
        assert policy == "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"


def test_a_long_session_id_is_cut_where_it_would_push_the_verdict_away(cli, tmp_path):
    # A 3,000-character id stood whole in index.html's session cell (an unbroken run widened
    # the table, the verdict and report link scrolled off to the right) and in the report's
    # <title> and heading (60 lines above the verdict). They show its first 77 characters and
    # "...", as every other id on the pages; the session card keeps it whole, and a long
    # input path wraps in its cell.
    session_id = "s" * 3000
    log = small(tmp_path, "long.jsonl", session_id)
    out = tmp_path / "bundle"
    cli("export", log, "--out", out, "--timestamp", STAMP)
    cut = "s" * 77 + "..."
    index = (out / "index.html").read_text(encoding="utf-8")
    row = f'<tr class="st-ok"><td class="text"><code>{escape(str(log))}</code></td><td>{cut}</td>' \
          '<td><span class="ok">ok</span></td>'
    assert row in index and session_id not in index
    [report_path] = out.glob("s*/report.html")
    report = report_path.read_text(encoding="utf-8")
    assert f"<title>dshreplay report {cut}</title>" in report
    assert f"<h1>dshreplay audit report: {cut}</h1>" in report
    assert report.count(session_id) == 1 and f"<td>session id</td><td>{session_id}</td>" in report


def test_a_message_the_model_still_sees_keeps_its_style(cli, tmp_path):
    # `class="msg{{ ' shadowed' if e.shadowed }}"`: the page's value filter turned the implicit
    # else (an Undefined) into the text "<Undefined>", so every message not shadowed was
    # <div class="msg&lt;Undefined&gt;">, without the message style: its newlines collapsed
    # and a long unbroken line widened the whole page (24,000 px for a 3,000-character one).
    b = LogBuilder("styled")
    b.start_turn()
    b.start_step()
    b.user("line one\nline two " + "x" * 3000)
    b.assistant("answer")
    b.end_turn()
    out = tmp_path / "bundle"
    cli("export", b.write(tmp_path / "styled.jsonl"), "--out", out, "--timestamp", STAMP)
    report = (out / "styled" / "report.html").read_text(encoding="utf-8")
    transcript = report[report.index('<section id="transcript">'):]
    assert re.findall(r'<div class="([^"]*)"><span class="role">(\w+)</span>', transcript) == [
        ("msg", "user"), ("msg", "assistant")]
    assert "Undefined" not in report


def test_long_ids_in_the_model_call_and_approval_tables_are_cut(cli, tmp_path):
    # A 3,000-character error code stood whole in the model-call table (39,000 px wide) and
    # an approval's id, tool, callId and reason whole in the approvals table (116,000 px): the
    # columns past them were a long scroll away. Ids show 77 characters and "...", as in the
    # tool-call table; the reason one line of 300 characters that wraps (approvals.csv and
    # calls.jsonl have them whole).
    b = LogBuilder("long-ids")
    b.start_turn()
    b.start_step()
    b.user("go")
    b.add("assistant/chunk", {"turn": 1, "step": 1, "chunk": {"type": "finish", "reason": {
        "kind": "error", "failure": {"message": "m", "code": "E" * 3000}}}})  # (seq 3; no request header)
    b.assistant("", calls=[("c" * 3000, "t" * 3000, "{}")])
    b.add("approval/asked", {"id": "i" * 3000, "toolName": "t" * 3000, "callId": "c" * 3000, "reason": "r" * 3000})
    b.add("approval/decided", {"id": "i" * 3000, "outcome": "allowed-once"})  # (seqs 12, 13)
    b.end_turn()
    out = tmp_path / "bundle"
    cli("export", b.write(tmp_path / "long.jsonl"), "--out", out, "--timestamp", STAMP, expect=None)
    report = (out / "long-ids" / "report.html").read_text(encoding="utf-8")
    calls = report[report.index('<section id="calls">'):report.index('<section id="approvals">')]
    assert '<tr id="call-row-1" class="st-failed"><td>1</td><td>1</td><td>1</td><td>3–3</td>' \
           f'<td>null/null</td><td>error {"E" * 77}...</td>' in calls
    approvals = report[report.index('<section id="approvals">'):]
    approvals = approvals[:approvals.index("</section>")]
    [row] = re.findall(r"<tr><td>\d.*?</tr>", approvals)
    assert row == (f'<tr><td>12</td><td>13</td><td>{"i" * 77}...</td><td>{"t" * 77}...</td><td>{"c" * 77}...</td>'
                   f'<td>allowed-once</td><td class="text">{"r" * 299}…</td><td></td></tr>')
    assert "E" * 78 not in calls and "r" * 300 not in approvals and "c" * 78 not in approvals
