"""report.html: one self-contained page per session for a person to read.

No script, no network: inline CSS and SVG only, and a Content-Security-Policy
that forbids scripts even if something slipped through. Every string that
comes from a log goes through `esc` (HTML-escaped, control characters
removed).
"""

from __future__ import annotations

import html

from dshreplay.analyses.calls import outcome_text
from dshreplay.analyses.render import clean, one_line
from dshreplay.errors import answered_for
from dshreplay.jsvalues import as_text

CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:0;color:#1d232a;background:#f6f7f9}
header{background:#17324d;color:#fff;padding:18px 28px}header h1{margin:0;font-size:20px}
main{padding:8px 28px 40px;max-width:1180px}section{background:#fff;border:1px solid #dde2e8;
border-radius:6px;margin:18px 0;padding:12px 18px}h2{font-size:16px;margin:4px 0 10px}
table{border-collapse:collapse;width:100%;font-size:13px}th,td{border-bottom:1px solid #e6e9ee;
padding:4px 6px;text-align:left;vertical-align:top}th{background:#f0f3f6}
.ok{color:#17803d;font-weight:600}.bad{color:#b42318;font-weight:600}.warn{color:#a15c07}
.msg{border-left:3px solid #c6d2de;margin:8px 0;padding:4px 10px;white-space:pre-wrap;word-break:break-word}
.msg.shadowed{border-left-color:#d08700;background:#fff8eb}.marker{color:#8a5300;font-style:italic;margin:8px 0}
.role{font-weight:600;color:#34506b}.meta{color:#6b7785;font-size:12px}details{margin:6px 0}
svg text{font:11px system-ui,sans-serif;fill:#34506b}code{font-size:12px}
"""
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"
MAX_TRANSCRIPT = 500  # transcript entries drawn in the report (transcript.md has them all)
MAX_ENTRY_TEXT = 2000  # characters of one entry's text drawn in the report
MAX_SPANS = 2000  # marks of each lane of the timeline drawn in the report
MAX_CALL_ROWS = 2000  # calls listed in the report's table (calls.jsonl has them all)


def esc(value) -> str:
    """Log text made safe for HTML: escaped, control characters removed."""
    text = "" if value is None else as_text(value)
    return html.escape(clean(text), quote=True)


def _page(title: str, body: str) -> str:
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            f"<title>{esc(title)}</title><style>{CSS}</style></head><body>{body}</body></html>\n")


def _table(headers: list[str], rows: list[list], row_id: str | None = None) -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in row) + "</tr>" for row in rows)
    ident = f' id="{row_id}"' if row_id else ""
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _facts(entry: dict, index, session: dict, input_hash: str = "sha256") -> str:
    """The session card: the manifest entry's facts and the session summary's (session.json);
    `input_hash` names the hash of the input's bytes ("hmac-sha256": keyed with the evidence key)."""
    header = entry.get("header", {})
    counts = entry.get("findings", {})
    verdict = entry.get("verdict")
    css = "ok" if verdict == "ok" else "bad"
    rows = [["input", f"<code>{esc(entry.get('input'))}</code>"],
            ["HMAC-SHA256 (evidence key)" if input_hash == "hmac-sha256" else "SHA-256",
             f"<code>{esc(entry.get('sha256'))}</code>"],
            ["size / encoding", f"{esc(entry.get('size'))} bytes / {esc(entry.get('encoding'))}"],
            ["session id", esc(header.get("id"))], ["cwd", esc(header.get("cwd"))],
            ["parent / seedLength", f"{esc(header.get('parentSession') or '-')} / "
                                    f"{esc(header.get('seedLength', '-'))}"],
            ["start / end / duration", f"{esc(session.get('start') or '-')} / {esc(session.get('end') or '-')} / "
                                       f"{esc(session.get('durationMs'))} ms"],
            ["models", esc(", ".join(f"{m['provider']}/{m['model']}" for m in session.get("models", [])) or "-")],
            ["failed calls", esc(", ".join(f"{code}: {n}" for code, n in session.get("failedCalls", {}).items())
                                 or "none")],
            ["retries", esc(session.get("retries"))],
            ["tokens", esc(", ".join(f"{k} {v}" for k, v in session.get("tokens", {}).items()) or "-")],
            ["turn endings", esc(", ".join(f"{as_text(t['turn'])}: {t['ending']}" for t in session.get("turnSpans", []))
                                 or "-")],
            ["events", esc(entry.get("events"))],
            ["turns / steps / model calls", f"{esc(session.get('turns'))} / {esc(session.get('steps'))} / "
                                            f"{esc(session.get('calls'))}"],
            ["verdict", f'<span class="{css}">{esc(verdict)}</span>: {esc(counts.get("error", 0))} errors, '
                        f'{esc(counts.get("warning", 0))} warnings, {esc(counts.get("notice", 0))} notices'],
            ["spilled tool results", esc(_spills(session.get("spills")))],
            ["torn tail", "none" if index.torn_tail is None else esc(index.torn_tail.describe())]]
    return "<section id=\"facts\"><h2>Session</h2>" + _table(["fact", "value"], rows) + "</section>"


def _spills(spills) -> str:
    if not spills or not spills.get("results"):
        return "none"
    inherited = f", {spills['inherited']} inherited from the parent" if spills.get("inherited") else ""
    return (f"{spills['results']} ({spills['omittedBytes']:,} bytes kept out of the model's view{inherited}; "
            "see spills.json)")


def _timeline(index, spans: dict) -> str:
    """Turns, steps, calls, compaction brackets and shadowed ranges over the seq axis."""
    total = max(index.event_count, 1)
    width, left, lane = 1100, 110, 22

    def x(seq) -> float:
        return left + (width - left - 10) * (seq / total)

    lanes = ["turns", "steps", "model calls", "compactions", "shadowed"]
    parts = [f'<svg id="timeline" xmlns="http://www.w3.org/2000/svg" width="{width}" '
             f'height="{lane * len(lanes) + 30}" role="img" aria-label="timeline">']
    for i, name in enumerate(lanes):
        parts.append(f'<text x="4" y="{i * lane + 15}">{name}</text>')
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{i * lane + 11}" y2="{i * lane + 11}" '
                     'stroke="#e6e9ee"/>')

    def rect(i: int, start, end, colour: str, title: str) -> str:
        x0, x1 = x(start), x(end + 1)
        return (f'<rect x="{x0:.1f}" y="{i * lane + 3}" width="{max(x1 - x0, 1.5):.1f}" height="16" '
                f'fill="{colour}" rx="2"><title>{esc(title)}</title></rect>')

    for start, end, label in spans["turns"][:MAX_SPANS]:
        parts.append(rect(0, start, end, "#7aa7d6", f"{label}: seqs {start}-{end}"))
    for start, end, label in spans["steps"][:MAX_SPANS]:
        parts.append(rect(1, start, end, "#a9c7e8", f"{label}: seqs {start}-{end}"))
    for call in index.calls[:MAX_SPANS]:
        last = call.last_chunk_seq if call.last_chunk_seq is not None else call.first_chunk_seq
        parts.append(rect(2, call.first_chunk_seq, last, "#5b8c5a", f"call {call.call}: chunks "
                                                                     f"{call.first_chunk_seq}-{last}"))
    colours = {"closed": "#8e6bbf", "failed": "#b42318", "open": "#d08700", "abandoned": "#9aa4ae"}
    for b in index.brackets[:MAX_SPANS]:
        if b.start is None:
            continue
        end = b.end if b.end is not None else index.event_count - 1
        parts.append(rect(3, b.start, end, colours.get(b.status, "#8e6bbf"),
                          f"compaction {as_text(b.compaction_id)} ({b.status}): seqs {b.start}-{end}"))
    for r in index.shadows[:MAX_SPANS]:
        if r.shadowed_seqs:  # (one mark for the messages a replacement shadows: a summary takes hundreds)
            first, last, count = min(r.shadowed_seqs), max(r.shadowed_seqs), len(r.shadowed_seqs)
            seqs = f"seq {first}" if count == 1 else f"{count} messages of seqs {first}-{last}"
            parts.append(rect(4, first, last, "#d08700", f"{seqs} shadowed by {r.kind} at seq {r.seq}"))
        parts.append(rect(4, r.seq, r.seq, "#17324d", f"{r.kind} at seq {r.seq} replaces {r.start}-{r.end}"))
    parts.append(f'<text x="{left}" y="{lane * len(lanes) + 22}">seq 0</text>')
    parts.append(f'<text x="{width - 90}" y="{lane * len(lanes) + 22}">seq {total - 1}</text>')
    parts.append("</svg>")
    return ("<section><h2>Timeline</h2><p class=\"meta\">Turns, steps and model calls over the event "
            "seqs; compaction brackets; orange marks are messages shadowed for the model, dark marks "
            "the replacements.</p>" + "".join(parts) + "</section>")


def _calls(view: dict, index) -> str:
    rows = []
    failure = view.get("failure")
    for call in index.calls[:MAX_CALL_ROWS]:
        usage = call.usage if type(call.usage) is dict else {}
        reason = outcome_text(call.outcome, call.error_code)  # the kind and the error code of a failed call; cancelled
        rows.append([esc(call.call), esc(call.turn), esc(call.step),
                     f"{esc(call.first_chunk_seq)}–{esc(call.last_chunk_seq)}",
                     esc(f"{as_text(call.provider)}/{as_text(call.model)}"), esc(reason), esc(usage.get("inputTokens")),
                     esc(usage.get("outputTokens")),
                     "-" if failure is not None and call.first_chunk_seq > failure["seq"] else esc(call.message_count)])
    parts = ["<section id=\"calls\"><h2>Model calls</h2>",
             _table(["call", "turn", "step", "chunks", "model", "outcome", "in", "out", "messages"], rows)]
    if len(index.calls) > MAX_CALL_ROWS:
        parts.append(f"<p class=\"meta\">The first {MAX_CALL_ROWS:,} of {len(index.calls):,} calls are listed; "
                     "calls.jsonl has every one.</p>")
    for v in view["calls"]:
        if v["messages"] is None:
            parts.append(f"<details><summary>Call {esc(v['call'])} (turn {esc(v['turn'])}, step {esc(v['step'])}"
                         f"): no model view</summary><p class=\"meta\">{esc(v['reason'])}</p></details>")
            continue
        header = v["header"] if type(v["header"]) is dict else {}
        config = header.get("config") if type(header.get("config")) is dict else {}
        system = header.get("system")
        items = "".join(f'<div class="msg"><span class="role">{esc(role)}</span> {esc(text)}</div>'
                        for role, text in v["messages"])
        if v["kept"]:
            items = (f'<p class="meta">messages 1–{v["kept"]} as in call {esc(v["call"] - 1)}, then:</p>'
                     + items)
        parts.append(f"<details><summary>Call {esc(v['call'])} (turn {esc(v['turn'])}, step {esc(v['step'])}"
                     f"): {v['count']} messages, header from seq {esc(v['headerSeq'])}, "
                     f"{esc(config.get('provider'))}/{esc(config.get('model'))}</summary>"
                     f"<p class=\"meta\">system: {esc(one_line(system, 300)) if type(system) is str else '-'}"
                     f"</p>{items}</details>")
    if len(index.calls) > len(view["calls"]):
        parts.append(f"<p class=\"meta\">Model views of the first {len(view['calls'])} calls are shown; "
                     "every call's full request is in calls.jsonl.</p>")
    parts.append("</section>")
    return "".join(parts)


def _cut(text: str) -> str:
    """A transcript entry's text for the report: its first MAX_ENTRY_TEXT characters (transcript.md has it all)."""
    if len(text) <= MAX_ENTRY_TEXT:
        return text
    return text[:MAX_ENTRY_TEXT] + f"\n… {len(text) - MAX_ENTRY_TEXT:,} more characters in transcript.md"


def _transcript(entries, final_nodes: set) -> str:
    parts = ["<section id=\"transcript\"><h2>Transcript</h2><p class=\"meta\">The conversation as it "
             "happened; highlighted messages are no longer what the model sees.</p>"]
    for e in entries:
        if e.entry != "message":
            text = "" if e.message is None else _cut(e.text())
            parts.append(f'<div class="marker">{esc(e.marker_text())}{esc(chr(10) + text) if text else ""}</div>')
            continue
        shadowed = e.seq not in final_nodes
        css = "msg shadowed" if shadowed else "msg"
        note = " · shadowed for the model" if shadowed else ""
        parts.append(f'<div class="{css}"><span class="role">{esc(e.role)}</span> '
                     f'<span class="meta">seq {e.seq}{esc(" · " + e.time) if e.time else ""}{note}</span>\n'
                     f"{esc(_cut(e.text()))}</div>")
    if len(entries) >= MAX_TRANSCRIPT:
        parts.append(f"<p class=\"meta\">The first {MAX_TRANSCRIPT} entries are shown; transcript.md has "
                     "them all.</p>")
    parts.append("</section>")
    return "".join(parts)


def render_report(*, entry: dict, index, findings: list[dict], view: dict, transcript,
                  input_hash: str = "sha256") -> str:
    header = entry.get("header", {})
    body = [f"<header><h1>dshreplay audit report: {esc(header.get('id'))}</h1></header><main>",
            _facts(entry, index, view.get("session") or {}, input_hash), _timeline(index, view["spans"])]
    rows = [[esc(f["severity"]), f"<code>{esc(f['code'])}</code>", esc(f["seq"]), esc(f["line"]),
             esc(f["pointer"]), esc(f["message"])] for f in findings]
    body.append("<section><h2>Findings</h2>" + (
        _table(["severity", "code", "seq", "line", "pointer", "message"], rows, "findings")
        if rows else '<p id="findings" class="ok">No findings.</p>') + "</section>")
    failure = view.get("failure")
    if failure is not None:
        body.append(f'<p class="meta" id="answered">{esc(answered_for(failure))}: the model\'s view past it is '
                    "unknown (dsh refuses the log).</p>")
    shadow_rows = [[esc(r.seq), esc(r.kind), f"{esc(r.start)}–{esc(r.end)}",
                    esc(", ".join(map(str, r.shadowed_seqs))), esc(r.meter_seq), esc(r.tokens),
                    esc(r.compaction_id)] for r in view.get("shadows", index.shadows)]
    body.append("<section id=\"shadows\"><h2>Replacements</h2>" + _table(
        ["seq", "kind", "range", "shadowed", "meter", "tokens", "compaction"], shadow_rows) + "</section>")
    bracket_rows = [[esc(b.compaction_id), esc(b.start), esc(b.end), esc(b.status), esc(b.turn),
                     esc(b.summary_seq), esc(b.replacement_seq), esc("; ".join(b.anomalies))]
                    for b in index.brackets]
    body.append("<section id=\"brackets\"><h2>Compactions</h2>" + _table(
        ["compaction", "start", "end", "status", "turn", "summary", "replacement", "anomalies"],
        bracket_rows) + "</section>")
    body.append(_calls(view, index))
    approval_rows = [[esc(v) for v in row] for row in view["approvals"]]
    body.append("<section id=\"approvals\"><h2>Approvals</h2>" + _table(
        ["asked", "decided", "id", "tool", "callId", "outcome", "reason", "flag"], approval_rows) + "</section>")
    if index.closers and failure is None:  # (dsh refuses a log whose fold fails: it closes nothing)
        items = "".join(f"<li>{esc(c.describe())}</li>" for c in index.closers)
        body.append(f"<section id=\"closers\"><h2>Interrupted turn</h2><p>dsh would append on load:</p>"
                    f"<ul>{items}</ul></section>")
    body.append(_transcript(transcript, view["finalNodes"]))
    body.append("</main>")
    return _page(f"dshreplay report {as_text(header.get('id'))}", "".join(body))


def render_index(entries: list[dict], stamp: str) -> str:
    rows = []
    for e in entries:
        folder = e.get("folder")
        link = f'<a href="{html.escape(folder, quote=True)}/report.html">report</a>' if folder else "-"
        verdict = e.get("verdict")
        css = "ok" if verdict == "ok" else "bad"
        rows.append([f"<code>{esc(e.get('input'))}</code>", esc((e.get("header") or {}).get("id")),
                     f'<span class="{css}">{esc(verdict)}</span>', esc(e.get("events")), link])
    body = (f"<header><h1>dshreplay audit bundle</h1></header><main><section><p class=\"meta\">"
            f"Generated {esc(stamp)}. manifest.json lists the SHA-256 of every input and file; "
            "check it with <code>dshreplay verify-export</code>.</p>"
            + _table(["input", "session", "verdict", "events", "report"], rows) + "</section></main>")
    return _page("dshreplay audit bundle", body)
