"""The text reporter: answers as tables and short paragraphs for people, fitted to the terminal."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from dshreplay._jsvalues import as_text, shown
from dshreplay.analyses._render import TOOL_RESULT_WIRE_ROLE, clean, counted, json_size, message_text, one_line, role_of
from dshreplay.console._interface import Reporter, cell_text
from dshreplay.console._markdown import _fenced, _indented, markdown_label, markdown_marker
from dshreplay.console._table import MAX_INDENT, _dash, _middle, _wrap, clip_end, render_table, terminal_width, whole
from dshreplay.core.surface import numbered
from dshreplay.errors import answered_for, fails_at
from dshreplay.results._shapes import health_facts

if TYPE_CHECKING:  # (validate's machinery is imported by the command that validates, not by every start)
    from dshreplay.analyses.health import Health
    from dshreplay.analyses.lineage import Node
    from dshreplay.analyses.query import EventRow, RawLine
    from dshreplay.analyses.stats import SessionStats
    from dshreplay.analyses.trackers.calls import Call, Request
    from dshreplay.analyses.trackers.compaction import BracketRecord
    from dshreplay.analyses.trackers.provenance import MessageProvenance, ShadowRecord, ViewDiff
    from dshreplay.analyses.trackers.spills import Spill
    from dshreplay.analyses.transcript import Entry
    from dshreplay.analyses.validate import FileReport
    from dshreplay.core.driver import FoldReport
    from dshreplay.results._reports import IndexReport, UsageReport, UsageRow, Verification


class TextReporter(Reporter):
    """Tables that fit `width` (the terminal's, 100 when not a terminal): long cells are
    cut, ids and paths in the middle so that distinct values stay distinct; `wide`
    prints every cell whole."""

    def __init__(self, out: TextIO | None = None, *, width: int | None = None, wide: bool = False) -> None:
        self.out = out or sys.stdout
        self.wide = wide
        self.width = 10**6 if wide else (width or terminal_width())

    def _tbl(self, rows: Sequence[Sequence[object]], headers: Sequence[str], text_col: int | None = None,
             show_headers: bool = True) -> str:
        return render_table(rows, headers, self.width, text_col=text_col, show_headers=show_headers)

    def _wtbl(self, rows: Sequence[Sequence[object]], headers: Sequence[str], wrap_col: int) -> str:
        return render_table(rows, headers, self.width, text_col=wrap_col, wrap=True)

    def _mid(self, text: str, width: int) -> str:
        return one_line(text, 10**6) if self.wide else _middle(text, width)

    def _cut(self, text: str, width: int) -> str:
        return one_line(text, 10**6) if self.wide else clip_end(one_line(text, width), width)

    def line(self, text: str = "") -> None:
        self.out.write(text + "\n")

    def para(self, text: str) -> None:
        """Prose wrapped to the width."""
        self.line("\n".join(_wrap(text, min(self.width, 10**4))))

    def _item(self, text: str, lines: int = 8) -> None:
        """An indented item wrapped to the width (its further lines indented more), cut at its end
        past `lines` lines (a log can name a million tools)."""
        room = min(self.width, 10**4) - 4
        wrapped = _wrap(self._cut(text, room * lines), room)
        self.line("\n".join(("  " if n == 0 else "    ") + part for n, part in enumerate(wrapped)))

    def fold(self, report: FoldReport) -> None:
        if report.state is None or report.node_messages is None:
            return  # the error line on stderr says it all
        state = report.state
        replaced = {r.seq: r for r in state.replacements}
        rows: list[tuple[object, ...]] = []
        for seq, number, message in numbered(report.node_messages):
            event = state.events[seq]
            r = replaced.get(seq)
            op = f"replace {r.start}..{r.end}" if r else "append"
            if message is None:
                rows.append(("-", seq, role_of(event.type, None), op, 0, "(no message: empty content)"))
            else:
                rows.append((number, seq, role_of(event.type, message), op, json_size(message),
                             message_text(message)))
        if rows:
            self.line(self._tbl(rows, ["#", "seq", "role", "op", "bytes", "text"], text_col=5))
        at = "no events" if report.seq is None else f"seq {report.seq}"
        self.para(f"{counted(len(state.nodes), 'node')}, {counted(len(report.messages or ()), 'message')}, "
                  f"{counted(len(state.replacements), 'replacement')} at {at}")

    def validate(self, reports: list[FileReport]) -> None:
        from dshreplay.analyses.findings import ERROR, NOTICE, WARNING
        for report in reports:
            counts = ", ".join(counted(report.count(s), s) for s in (ERROR, WARNING, NOTICE))
            verdict = "UNREADABLE" if report.unreadable else ("ok" if report.ok else "FAILED")
            rest = f": {verdict}: {counted(report.events, 'event')}, {counts}"
            self.line(whole(report.path) + rest)  # (a file name is never cut: it is what the line is about)
            rows = [(f.severity, f.code, _dash(f.seq), _dash(f.line), f.pointer or "-",
                     self._cut(f.message, 2000)) for f in report.findings]
            if rows:
                self.line(self._wtbl(rows, ["severity", "code", "seq", "line", "pointer", "message"], 5))
            for code, n in sorted(report.omitted.items()):
                self.line(f"... and {n} more {code} findings (--all-findings lists them)")
            if report.omitted_records:
                self.line(f"... and {report.omitted_records} more records failing their schema "
                          "(DSH-E004/DSH-E005; --all-findings lists them)")
            self.line()
        total = {s: sum(r.count(s) for r in reports) for s in (ERROR, WARNING, NOTICE)}
        unreadable = sum(1 for r in reports if r.unreadable)
        failed = sum(1 for r in reports if not r.ok and not r.unreadable)
        self.para(f"{counted(len(reports), 'file')}: {len(reports) - failed - unreadable} ok, {failed} with "
                  f"errors, {unreadable} unreadable; {counted(total[ERROR], ERROR)}, "
                  f"{counted(total[WARNING], WARNING)}, {counted(total[NOTICE], NOTICE)}")

    # -- forensics ---------------------------------------------------------
    def shadows(self, records: Sequence[ShadowRecord]) -> None:
        rows = [(r.seq, r.kind, f"{r.start}..{r.end}", _seqs(r.shadowed_seqs), _dash(r.meter_seq),
                 _dash(r.tokens), _dash(r.compaction_id) or "-", _seqs(r.chain) or "-")
                for r in records]
        if rows:
            self.line(self._wtbl(rows, ["seq", "kind", "range", "shadowed", "meter", "tokens",
                                            "compactionId", "chain"], 3))
        self.line(counted(len(records), "replacement"))

    def brackets(self, records: Sequence[BracketRecord]) -> None:
        rows = [(_dash(b.compaction_id), _dash(b.start), _dash(b.end), b.status, _dash(b.turn),
                 _dash(b.summary_seq), _dash(b.replacement_seq),
                 self._cut("; ".join(b.anomalies + ([f"error: {_dash(b.error)}"] if b.error is not None else [])),
                          2000) or "-")
                for b in records]
        if rows:
            self.line(self._wtbl(rows, ["compactionId", "start", "end", "status", "turn", "summary",
                                            "replacement", "notes"], 7))
        self.line(counted(len(records), "compaction"))

    def provenance(self, rows: Iterable[MessageProvenance]) -> None:
        table = [(p.index, p.seq, str(p.type), _op(p.op), _seqs(p.sources) or "-",
                  _origins(p.origins) or "-", _spilled(p.spills)) for p in rows]
        if table:
            self.line(self._wtbl(table, ["#", "seq", "type", "op", "sources", "origins", "spilled"], 5))
        off = sum(1 for row in table if row[0] is None)  # (a row off the view has no message number)
        self.line(counted(len(table) - off, "message") + (f", {off} off the view" if off else ""))

    def diff(self, diff: ViewDiff, text: str | None = None) -> None:
        if text is not None:
            self.out.write(text)
            return
        self.para(f"model view at seq {diff.a} -> seq {diff.b}: {len(diff.kept)} kept, {len(diff.removed)} "
                  f"removed, {len(diff.added)} added")
        rows = [("removed", s, f"by replacement at seq {by}" if by is not None else "-")
                for s, by in diff.removed] + [("added", s, "-") for s in diff.added]
        if rows:
            self.line(self._tbl(rows, ["change", "seq", "note"]))

    def calls(self, calls: Sequence[Call]) -> None:
        from dshreplay.analyses.trackers.calls import outcome_text
        rows = []
        for c in calls:
            finish = one_line(outcome_text(c.outcome, c.error_code), 30) if c.kind == "main" else "-"
            usage = c.usage if type(c.usage) is dict else {}
            rows.append((_dash(c.call) if c.kind == "main" else c.kind, _dash(c.turn), _dash(c.step),
                         f"{c.first_chunk_seq}..{c.last_chunk_seq}", f"{_dash(c.provider)}/{_dash(c.model)}",
                         finish, _dash(usage.get("inputTokens")), _dash(usage.get("outputTokens")),
                         _dash(c.message_count)))
        if rows:
            self.line(self._wtbl(rows, ["call", "turn", "step", "chunks", "model", "outcome", "in",
                                            "out", "msgs"], 5))
        main = sum(1 for c in calls if c.kind == "main")
        self.line(counted(main, "model call") + (f", {len(calls) - main} auxiliary" if len(calls) > main else ""))

    def request(self, request: Request) -> None:
        config = request.header.get("config") if type(request.header) is dict else None
        title = f"call {request.call}" if request.call is not None else f"request at seq {request.at_seq}"
        any_tool = any(role_of(None, m) == "tool" for m in request.messages)
        self.para(f"{title}: turn {_dash(request.turn)}, step {_dash(request.step)}; messages as of seq "
                  f"{request.at_seq}; header from seq {_dash(request.header_seq)}"
                  + (f"; role tool: a tool result, sent as role {TOOL_RESULT_WIRE_ROLE}" if any_tool else ""))
        if request.call is not None:
            usage = request.usage if type(request.usage) is dict else {}
            from dshreplay.analyses.trackers.calls import outcome_text
            outcome = outcome_text(request.outcome, request.error_code)
            self.para(f"outcome: {one_line(outcome, 200)}; chunks {request.first_chunk_seq}..{request.last_chunk_seq}; "
                      f"usage in {_dash(usage.get('inputTokens'))} out {_dash(usage.get('outputTokens'))}")
        if type(config) is dict:
            self.line("config: " + self._cut(", ".join(f"{k}={_dash(v)}" for k, v in config.items()), self.width - 8))
        header = request.header if type(request.header) is dict else {}
        if type(header.get("system")) is str:
            self.line("system: " + self._cut(header["system"], self.width - 8))
        tools = header.get("tools")
        if type(tools) is list:
            names = [_dash(t.get("name") if type(t) is dict else t) for t in tools]
            self.line("tools: " + self._cut(", ".join(names), self.width - 7))
        rows = [(k, self._cut(role_of(None, m), 10), message_text(m)) for k, m in enumerate(request.messages, 1)]
        if rows:
            self.line(self._tbl(rows, ["#", "role", "text"], text_col=2))
        self.line(counted(len(request.messages), "message"))

    def transcript(self, entries: Sequence[Entry], markdown: bool = False,
                   quote: Callable[[Entry, str], tuple[str, str | None]] | None = None) -> None:
        """The conversation as text; with `markdown`, as Markdown that reads as
        plain text: log text only inside fences and code spans, never escaped.
        A message's every line is indented (`_indented`), so no log text starts a line
        that looks like a turn header or a marker, which start at the margin.
        `quote(entry, text)`, when given, says how much of a message's text to show
        and a note to add after it (None: none), as (text, note)."""
        for e in entries:
            if e.entry == "message":
                when = f" · {e.time}" if e.time else ""
                text = clean(e.text()).rstrip()
                note = None
                if quote is not None:
                    text, note = quote(e, text)
                if markdown:
                    self.line(f"### {markdown_label(self._cut(e.role or '?', 40))} · seq {e.seq}{when}")
                    self.line()
                    self.line(_fenced(_indented(text)))
                    if note is not None:
                        self.line(f"> {markdown_marker(note)}")
                else:
                    self.line(f"── {whole(e.role or '?')} · seq {e.seq}{when} ──")
                    self.line(_indented(text))
            else:
                marker = one_line(e.marker_text(), 10**4)  # (it quotes log values: codes, turn numbers)
                self.line(f"> {markdown_marker(marker)}" if markdown else marker)
                if e.entry == "replacement" and e.message is not None:
                    text = clean(e.text()).rstrip()
                    if markdown:
                        self.line()
                    self.line(_fenced(_indented(text)) if markdown else _indented(text))
            self.line()

    @contextmanager
    def event_rows(self, page: int = 5000) -> Iterator[Callable[[EventRow], None]]:
        """A sink for event rows, printed as tables of `page` rows (memory stays bounded)."""
        table: list[tuple[object, ...]] = []
        count = [0]
        headers = ["seq", "time", "type", "turn", "step", "surface", "text"]

        def flush() -> None:
            if table:
                self.line(self._tbl(table, headers, text_col=6, show_headers=count[0] <= page))
                table.clear()

        def sink(r: EventRow) -> None:
            table.append((r.seq, r.time[11:23] if r.time else "-", str(r.type), _dash(r.turn),
                          _dash(r.step), r.surface, self._cut(r.text, 200) or "-"))
            count[0] += 1
            if len(table) >= page:
                flush()
        yield sink
        flush()
        self.line(counted(count[0], "event"))

    def lines(self, lines: Sequence[RawLine]) -> None:
        """Physical lines as stored, each after its number, escaped for the terminal; a line that
        holds no record marked `!` after its number, and why it holds none said after them."""
        width = len(str(lines[-1].line)) if lines else 1
        problems = [(line.line, line.problem) for line in lines]
        for line, (_, problem) in zip(lines, problems):
            self.line(f"{line.line:>{width}}{'!' if problem else ' '} {line.escaped()}")
        for number, problem in problems:
            if problem:
                self.line(f"(line {number}: {problem})")

    def spills(self, spills: Sequence[Spill]) -> None:
        rows = [(s.seq, _dash(s.call_id), _dash(s.tool), s.omitted,
                 "-" if s.found is None else (f"{s.stored} bytes" if s.found else "missing"),
                 "yes" if s.inherited else "-", s.locator) for s in spills]
        if rows:
            self.line(self._tbl(rows, ["seq", "callId", "tool", "omitted", "stored", "inherited", "locator"]))
        self.line(counted(len(spills), "spilled result"))

    def inspect(self, health: Health) -> None:
        h = health_facts(health)
        head = h["header"]
        def fact(value: object) -> str:
            return self._cut(_dash(value), 80)
        facts = [("file", fact(h["path"])), ("encoding", h["encoding"]),
                 ("session id", fact(head["id"])), ("cwd", fact(head["cwd"])),
                 ("created", fact(head["createdAt"])), ("origin", fact(head["origin"])),
                 ("parent", fact(head["parentSession"])), ("seedLength", fact(head["seedLength"])),
                 ("events / lines", f"{h['events']} / {h['lines']}"),
                 ("turns / steps / calls", f"{h['turns']} / {h['steps']} / {h['calls']}"),
                 ("replacements", h["replacements"]), ("surface nodes", _dash(h["surfaceNodes"])),
                 ("torn tail", ("none" if h["error"] is None else "not read (past the failure)")
                  if health.index.torn_tail is None
                  else f"line {health.index.torn_tail.line}: {health.index.torn_tail.describe()}"),
                 ("fold", "ok" if h["error"] is None else fails_at(h["error"])),
                 ("last turn", _last_turn(h))]
        self.line(render_table(facts, (), self.width, text_col=1, wrap=True))
        if health.closers:
            self.line()
            self.line("dsh would close the interrupted turn with:")
            for c in health.closers:
                self.line(f"  {clean(c.describe())}")
        self.line()
        counts = list(h["countsByType"].items())
        self.line(self._tbl([(k, v) for k, v in counts], ["type", "events"]))


    def stats(self, stats: Sequence[SessionStats], total: SessionStats | None = None) -> None:
        rows: list[tuple[object, ...]] = []
        for s in [*stats, *([total] if total is not None else [])]:
            if s.unreadable:
                rows.append((s.path, "unreadable", "", "", "", "", "", "", "", ""))
                continue
            t = s.tokens
            tools = sum(v["calls"] for v in s.tools.values())
            errors = sum(v["errors"] for v in s.tools.values())
            rows.append((s.path, s.turns, s.steps, f"{s.calls}/{sum(s.failed_calls.values())}",
                         s.retries, f"{tools}/{errors}", f"{s.approvals['asked']}/{s.approvals['denied']}",
                         f"{s.compactions['summaries']}/{s.compactions['prunes']}",
                         f"{t['input']}/{t['output']}", f"{s.surface_now}/{s.appended}/{s.forgotten}"))
        self.line(self._tbl(rows, ["session", "turns", "steps", "call/fail", "retry", "tool/err", "ask/deny",
                                      "sum/prn", "tok in/out", "surface"]))
        self.para("call/fail: model calls/failed; tool/err: tool calls/failed; ask/deny: approvals asked/denied; "
                  "sum/prn: summaries/prunes; surface: messages the model sees now / ever appended / forgotten")
        for s in stats:
            if s.unreadable:
                continue
            self.line()
            self.line(whole(s.path))
            if s.error is not None:
                self._item(answered_for(s.error))
            if s.tools:
                self._item("tools: " + ", ".join(
                    f"{clean(name)} {v['calls']}" + (f" ({v['errors']} failed)" if v["errors"] else "")
                    for name, v in s.tools.items()))
            if s.failed_calls:
                self._item("failed calls: " + ", ".join(f"{code} {n}" for code, n in s.failed_calls.items()))
            if s.cancelled_calls:
                self._item(f"cancelled calls: {s.cancelled_calls}")
            if s.turn_endings:
                endings = Counter(s.turn_endings)
                self._item("turns ended: " + ", ".join(f"{n} {e}" for e, n in endings.items()))
            for k, v in s.times.items():
                if v:
                    self._item(f"{k}: median {v['medianMs']:.0f} ms, max {v['maxMs']:.0f} ms (n={v['count']})")

    def lineage(self, roots: Sequence[Node], problems: list[str]) -> None:
        for root in roots:
            for depth, node in root.walk():
                # indented up to MAX_INDENT levels; deeper ones say their depth (a line stays short)
                indent = "  " * min(depth, MAX_INDENT)
                branch = ("└─ " if depth else "") + (f"[{depth}] " if depth > MAX_INDENT else "")
                mark = "" if node.seed_checked is None else (" seed ok" if node.seed_checked else " SEED DIFFERS")
                rest = f" [{whole(as_text(node.origin or 'root'))}]{mark}"
                # the session id and the file name whole, on one line: they are what a reader looks
                # for (and greps for)
                self.line(indent + branch + whole(as_text(node.session_id)) + rest + "  " + whole(node.path))
                for problem in node.problems:
                    self.line(indent + "   ! " + self._cut(problem, self.width - len(indent) - 5))
        for problem in problems:
            self.line("! " + self._cut(problem, self.width - 2))

    def verify(self, result: Verification) -> None:
        self.line(f"bundle   format {shown(result.format, 20, quote=False)}, made "
                  f"{shown(result.generated_at, 40, quote=False)}, {counted(result.sessions, 'session')}")
        for i in result.inputs:
            size = "size unknown" if i.size is None else f"{i.size} bytes"
            told = i.status if not i.detail or i.status == "differs" else f"{i.status}: {i.detail}"
            self.line(f"input    {self._cut(i.input, 50)} ({size} at export): {one_line(told, 10**4)}")
        for d in result.differences:
            self.line(f"DIFFERS  {self._cut(d.path, 50)}: {d.problem}")
        for what in result.not_checked:
            self.line(f"not checked: {what}")
        self.line(f"{result.bundle}: {_verdict(result)}")

    def query(self, columns: list[str], rows: Sequence[Sequence[object]]) -> None:
        if columns:
            cells = [[cell_text(v) for v in row] for row in rows]
            self.line(self._tbl(cells, columns) if cells else "  ".join(columns))
        self.line(f"({counted(len(rows), 'row')})")

    def indexed(self, report: IndexReport) -> None:
        self.line(f"{whole(report.db)}: {counted(report.sessions, 'session')}; this run: {len(report.new)} new, "
                  f"{len(report.appended)} grown ({report.resumed} read from where they were indexed), "
                  f"{len(report.rewritten)} rewritten (indexed again whole), "
                  f"{report.unchanged} unchanged, {len(report.vanished)} vanished, "
                  f"{len(report.unreadable)} unreadable, {len(report.fold_failures)} whose fold fails")
        if report.parquet is not None:
            self.line(f"Parquet partitions in {whole(report.parquet)}")

    def usage(self, report: UsageReport) -> None:
        def cells(row: UsageRow) -> list[object]:
            failed = sum(row.failed.values())
            codes = ", ".join(f"{code} {n}" for code, n in sorted(row.failed.items()))
            tokens = row.tokens
            out = [row.key, len(row.sessions), row.calls, f"{failed} ({codes})" if failed else 0, row.retries,
                   row.compactions if report.by != "model" else "-", tokens["input"], tokens["output"],
                   tokens["cache_read"], tokens["cache_write"]]
            if report.priced:
                out.append("-" if row.cost is None else f"{row.cost:.4f}")
            return out
        headers = [report.by, "sessions", "calls", "failed", "retries", "compactions", "input", "output",
                   "cacheRead", "cacheWrite"] + (["cost"] if report.priced else [])
        if report.rows:
            self.line(self._tbl([cells(r) for r in report.rows] + [cells(report.total)], headers))
        else:
            self.line("no model calls")
        if report.unpriced:
            self.line("no price for: " + ", ".join(report.unpriced))

    def exported(self, out: Path | str, manifest: dict[str, Any], digest: str) -> None:
        rows = [(e.get("input", ""), e.get("folder") or "-", e.get("verdict"), e.get("events", "-"),
                 _redactions(e.get("redactions")))
                for e in manifest["sessions"]]
        self.line(self._tbl(rows, ["input", "folder", "verdict", "events", "redactions"]))
        red = manifest["redaction"]
        signed = type(manifest.get("integrity")) is dict and manifest["integrity"].get("signature") is not None
        shown = whole(str(out))
        self.para(f"wrote {counted(len(manifest['files']) + 1 + signed, 'file')} to {shown}; "
                  f"{counted(red['replacements'], 'redaction')}; "
                  f"open {shown}/index.html")
        self.line(f"bundle digest: {digest}")


def _verdict(result: Verification) -> str:
    """verify-export's last line: "verified" only when the manifest itself was checked."""
    if result.differences:
        return counted(len(result.differences), "difference")
    if not result.sessions:
        return "nothing checked: the bundle holds no session"
    inputs = result.checked_inputs
    every = len(inputs) == len(result.inputs)
    grew = sum(i.status == "grew" for i in inputs)
    since = f" ({grew} grew since)" if grew else ""
    told = ("every input matches it" if every else
            f"{len(inputs)} of {len(result.inputs)} inputs checked and matching") + since
    if not result.anchored:
        if not inputs:
            return "nothing checked: no digest or signature vouched for the manifest (give --digest or --public-key)"
        matched = ("every input matches the manifest" if every else
                   f"{len(inputs)} of {len(result.inputs)} inputs match the manifest") + since
        return (f"not verified: {matched}, but no digest or signature vouched for the bundle's own files, and a "
                "manifest rewritten with them matches too (give --digest or --public-key)")
    by = " and ".join(result.manifest_checked_by)
    if not inputs:
        return f"verified: every file matches the manifest, and the manifest its {by}; no input checked"
    return f"verified: every file matches the manifest, the manifest its {by}, and {told}"


def _redactions(counts: object) -> str:
    """A session's replacements, with the rules that made the most: "12 (GitHub Token 9, password
    assignment 3)"; "-" when it was not exported."""
    if type(counts) is not dict:
        return "-"
    top = sorted(counts["byRule"].items(), key=lambda kv: (-kv[1], kv[0]))
    rules = ", ".join(f"{rule} {n}" for rule, n in top[:3]) + (", ..." if len(top) > 3 else "")
    return f"{counts['replacements']} ({rules})" if rules else str(counts["replacements"])


def _last_turn(h: dict[str, Any]) -> str:
    """How the last turn ended, with where: "completed (turn 2, seq 40)", "error AUTH (turn 1, seq 9)";
    when the fold fails inside it, "unknown past seq S (turn 4, from seq 520)"."""
    if not h["turnEndings"]:
        return "no turn"
    last = h["turnEndings"][-1]
    where = f"turn {as_text(last['turn'])}, " + (f"seq {last['endSeq']}" if last["endSeq"] is not None
                                         else f"from seq {last['startSeq']}")
    ending = last["ending"]
    if last["endSeq"] is None and h["answeredUpTo"] is not None:
        ending = f"{ending} past seq {h['answeredUpTo']}"
    return one_line(f"{ending} ({where})", 80)


def _seqs(seqs: Iterable[int]) -> str:
    """Seqs in short, in their order: a run of three or more consecutive ones as `a..b`; past six
    parts the first three and the last; past six seqs their number."""
    seqs = list(seqs)
    parts: list[str] = []
    i = 0
    while i < len(seqs):
        j = i
        while j + 1 < len(seqs) and type(seqs[j]) is type(seqs[j + 1]) is int and seqs[j + 1] == seqs[j] + 1:
            j += 1
        parts += [f"{seqs[i]}..{seqs[j]}"] if j - i >= 2 else map(str, seqs[i:j + 1])
        i = j + 1
    text = ", ".join(parts) if len(parts) <= 6 else ", ".join(parts[:3]) + f", … {parts[-1]}"
    return text + (f" ({len(seqs)})" if len(seqs) > 6 else "")


def _op(op: object) -> str:
    if isinstance(op, tuple):
        return f"replace {op[0]}..{op[1]}"
    return one_line(_dash(op), 20)


def _origins(origins: Iterable[tuple[int, object]]) -> str:
    by_type: dict[object, list[int]] = {}
    for seq, kind in origins:
        by_type.setdefault(kind, []).append(seq)
    return "; ".join(f"{one_line(str(k), 100)}: {_seqs(v)}" for k, v in by_type.items())  # (a type is short)


def _spilled(spills: Sequence[Spill]) -> str:
    """A message's spill notes in short: the bytes dsh kept out of the model's view."""
    if not spills:
        return "-"
    return ", ".join(f"{s.omitted:,} B" + (" (inherited)" if s.inherited else "") for s in spills)
