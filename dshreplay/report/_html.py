"""report.html and index.html: self-contained pages for a person to read.

No script, no network: inline CSS only (the waterfall is CSS, the seq
timeline inline SVG), and a Content-Security-Policy that forbids scripts even
if something slipped through. The pages are Jinja2 templates
(`report/templates/`) rendered with autoescape on, and every value a
template prints passes `_shown` first (a log value as text, control
characters and ANSI escapes removed): no string from a log reaches the page
unescaped, whichever template prints it. What the pages show is built in
`report.view`; Jinja2 is imported only when a page is written (`fold`
never pays for it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from dshreplay._jsvalues import as_text
from dshreplay.analyses._render import clean, one_line
from dshreplay.analyses.trackers.logindex import LogIndex
from dshreplay.analyses.transcript import Entry
from dshreplay.errors import answered_for
from dshreplay.report import _view as rv
from dshreplay.report._waterfall import waterfall

if TYPE_CHECKING:
    import jinja2

# (default-src covers neither a <base> nor a form's target: they are forbidden apart)
CSP = "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'"
MAX_TRANSCRIPT = 500  # transcript entries drawn in the report (transcript.md has them all)
MAX_ENTRY_TEXT = 2000  # characters of one entry's text drawn in the report


def _shown(value: object) -> object:
    """What a template prints of a value: markup the templates made stays; None is
    nothing; an Undefined is left to Jinja (an `if` without `else` prints nothing, a
    name no page is given raises); anything else is its text (a log value as compact
    JSON, never a repr) with its control characters shown as escapes (`render.clean`), then escaped by
    the environment.
    (Called for every value a page prints: a plain string is the first question.)"""
    if type(value) is str:
        return clean(value)
    if value is None:
        return ""
    if hasattr(value, "__html__"):  # (markupsafe.Markup: the templates' own markup)
        return value
    import jinja2
    if isinstance(value, jinja2.Undefined):  # (`'x' if c` without else: nothing; a misspelt name: it raises)
        return value
    return clean(as_text(value))


@cache
def _environment() -> jinja2.Environment:
    """The one template environment of the process (built on first use: compiling the
    templates once serves every session of an export)."""
    import jinja2
    return jinja2.Environment(loader=jinja2.PackageLoader("dshreplay.report", "templates"),
                              autoescape=True, finalize=_shown, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)


def _render(template: str, **context: object) -> str:
    from markupsafe import Markup
    return _environment().get_template(template).render(csp=Markup(CSP), **context)  # (ours: its quotes stay)


def _cut(text: str) -> str:
    """A transcript entry's text for the report: its first MAX_ENTRY_TEXT characters (transcript.md has it all)."""
    if len(text) <= MAX_ENTRY_TEXT:
        return text
    return text[:MAX_ENTRY_TEXT] + f"\n… {len(text) - MAX_ENTRY_TEXT:,} more characters in transcript.md"


def transcript_items(entries: Sequence[Entry], final_nodes: Sequence[int] | set[int] | frozenset[int]
                     ) -> list[dict[str, object]]:
    """The transcript's entries as the template draws them: a message (shadowed or not), or a marker."""
    items: list[dict[str, object]] = []
    for e in entries:
        if e.entry != "message":
            items.append({"message": False, "marker": e.marker_text(),
                          "text": "" if e.message is None else _cut(e.text())})
            continue
        items.append({"message": True, "role": e.role, "seq": e.seq, "time": e.time,
                      "shadowed": e.seq not in final_nodes, "text": _cut(e.text())})
    return items


def call_views(views: Sequence[Mapping[str, Any]]) -> list[dict[str, object]]:
    """The model view of each call the bundle draws (its first MAX_CALL_VIEWS calls)."""
    out: list[dict[str, object]] = []
    for v in views:
        header: dict[str, Any] = v["header"] if type(v["header"]) is dict else {}
        config: dict[str, Any] = header["config"] if type(header.get("config")) is dict else {}
        system = header.get("system")
        out.append({**v, "provider": config.get("provider"), "model": config.get("model"),
                    "system": one_line(system, 300) if type(system) is str else "-"})
    return out


def render_report(*, entry: Mapping[str, Any], index: LogIndex, findings: Sequence[Mapping[str, Any]],
                  view: Mapping[str, Any], transcript: Sequence[Entry], input_hash: str = "sha256") -> str:
    """One session's report.html (`view`: what the export's pass gathered for it)."""
    header = entry.get("header", {})
    session_id = header.get("id")
    shown_id = rv.ident(session_id)  # (cut: a long id would push the verdict off the screen; the card has it whole)
    failure = view.get("failure")
    wf = waterfall(index, view["calls"], failure)
    shadows = view.get("shadows", index.shadows)
    lanes = rv.surface_lanes(index, shadows)
    return _render(
        "report.html.j2", title=f"dshreplay report {shown_id}", session_id=None if session_id is None else shown_id,
        verdict=entry.get("verdict"), summary=wf.summary, wf=wf,
        facts=rv.facts(entry, index, view.get("session") or {}, input_hash),
        findings=rv.finding_rows(findings), answered=None if failure is None else answered_for(failure),
        tools=rv.tool_rows(index.tool_calls), calls=rv.call_rows(index.calls, failure),
        views=call_views(view["calls"]), more_calls=len(index.calls) > len(view["calls"]),
        shadows=rv.shadow_rows(shadows), brackets=rv.bracket_rows(index.brackets),
        approvals=rv.approval_rows(view["approvals"]), approval_reason=rv.APPROVAL_REASON,
        closers=[c.describe() for c in index.closers] if failure is None else [],  # (a log dsh refuses closes nothing)
        lanes=lanes if any(lane.marks for lane in lanes[1:]) else [],  # (turns alone: the waterfall has them)
        svg={"width": rv.TIMELINE_WIDTH, "left": rv.TIMELINE_LEFT, "height": rv.LANE * len(lanes) + 30,
             "last": max(index.event_count - 1, 0)},
        transcript=transcript_items(transcript, view["finalNodes"]),
        transcript_cut=len(transcript) >= MAX_TRANSCRIPT)


def render_index(entries: Sequence[Mapping[str, Any]], stamp: str,
                 notes: Sequence[rv.Notes] | None = None) -> str:
    """The bundle's index.html: each session's verdict, with its reason and warnings (`notes`, in entry order)."""
    return _render("index.html.j2", title="dshreplay audit bundle", stamp=stamp, rows=rv.index_rows(entries, notes))
