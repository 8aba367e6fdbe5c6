"""Drive view.html in headless Chromium: read the view it shows at many seqs, press keys, screenshot.

`python scripts/screenshot_view.py` writes view.html of sample_logs/compaction.jsonl and
screenshots it at seq 70 (after the compaction: the summary that replaced five nodes, and
the nodes new since the previous model call) as docs/view-wide.png (1280 px) and
docs/view-narrow.png (390 px). The browser test (tests/browser/test_view_in_chromium.py)
uses the same functions: one Chromium run opens a wrapper page that frames each view.html
in turn, moves it seq by seq through its fragment, and writes what it read into the page,
which Chromium prints (--dump-dom).
"""

from __future__ import annotations

import html
import json
import re
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from screenshot_report import _run, dump_dom, find_chromium  # noqa: E402

__all__ = ["dump_dom", "find_chromium", "probe", "screenshot", "write_view"]

PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="page" style="width:%(width)dpx;height:900px;border:0"></iframe>
<script>
var jobs = %(jobs)s, out = {}, j = 0, k = 0, frame = document.getElementById("page");
function seen() {
  var doc = frame.contentDocument;
  return {at: Number(doc.body.getAttribute("data-at")), hash: frame.contentWindow.location.hash,
          nodes: Array.prototype.map.call(doc.querySelectorAll('#nodes > [data-view="in"]'),
                                          function (e) { return Number(e.getAttribute("data-seq")); }),
          hidden: doc.querySelectorAll('[data-view="hidden"]').length,
          fresh: Array.prototype.map.call(doc.querySelectorAll('#nodes > .node.new'),
                                          function (e) { return Number(e.getAttribute("data-seq")); }),
          banner: doc.getElementById("banner").textContent, title: doc.title};
}
function wait(seq, then, tries) {
  var doc = frame.contentDocument;
  if (doc && doc.body && doc.body.getAttribute("data-at") === String(seq)) then();
  else if ((tries || 0) > 2000) { out.stuck = {job: j, seq: seq}; finish(); }
  else setTimeout(function () { wait(seq, then, (tries || 0) + 1); }, 2);
}
function press(key) {
  frame.contentDocument.dispatchEvent(new KeyboardEvent("keydown", {key: key, bubbles: true}));
  return seen();
}
function click(fraction) {
  var canvas = frame.contentDocument.getElementById("timeline"), box = canvas.getBoundingClientRect();
  canvas.dispatchEvent(new MouseEvent("click", {clientX: box.left + fraction * box.width, clientY: box.top + 5,
                                                bubbles: true}));
  return seen();
}
function next() {
  if (j >= jobs.length) { finish(); return; }
  var job = jobs[j], seq = job.seqs[k];
  if (k === 0) {
    frame.onload = function () { wait(seq, read); };
    frame.src = job.src + "#seq=" + seq;
  } else {
    frame.contentWindow.location.hash = "seq=" + seq;
    wait(seq, read);
  }
}
function read() {
  var job = jobs[j], seq = job.seqs[k];
  (out[job.key] = out[job.key] || {})[seq] = seen();
  if (job.keys && k === job.seqs.length - 1) {
    out[job.key].keys = job.keys.map(function (key) { return [key, press(key)]; });
  }
  if (job.clicks && k === job.seqs.length - 1) {
    out[job.key].clicks = job.clicks.map(function (f) { return [f, click(f)]; });
  }
  if (job.prov && k === job.seqs.length - 1) {
    out[job.key].prov = job.prov.map(function (s) {
      var doc = frame.contentDocument, node = doc.querySelector('#nodes > [data-seq="' + s + '"]');
      if (node) node.querySelector("button").click();
      return [s, doc.getElementById("prov").textContent];
    });
  }
  k++;
  if (k >= job.seqs.length) { j++; k = 0; }
  setTimeout(next, 0);
}
function finish() {
  var probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify(out);
  document.body.appendChild(probe);
}
next();
</script></body></html>
"""


def probe(jobs: list[dict], width: int = 1280, budget_ms: int = 600_000) -> dict:
    """What each page shows at each of its seqs: `jobs` are {"key", "page" (a view.html path),
    "seqs", and optionally "keys" (keys pressed after the last seq, in turn), "clicks"
    (fractions of the timeline's width clicked) and "prov" (seqs of nodes in the view whose
    provenance button is clicked)}.
    Returns {key: {seq: seen, "keys": [[key, seen]], "clicks": [[fraction, seen]], "prov": [[seq,
    the provenance box's text]]}}, each `seen` being {"at", "hash", "nodes" (the data-seq of
    the nodes in the view), "hidden", "fresh", "banner", "title"}."""
    rows = [{"key": job["key"], "src": Path(job["page"]).resolve().as_uri(), "seqs": job["seqs"],
             "keys": job.get("keys"), "clicks": job.get("clicks"), "prov": job.get("prov")} for job in jobs]
    with tempfile.TemporaryDirectory(prefix="dshreplay-view-probe-") as folder:
        wrapper = Path(folder) / "probe.html"
        wrapper.write_text(PROBE % {"jobs": json.dumps(rows).replace("<", "\\u003c"), "width": width},
                           encoding="utf-8")
        result = _run(["--allow-file-access-from-files", f"--virtual-time-budget={budget_ms}", "--dump-dom",
                       wrapper.as_uri()], timeout=300)
    found = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
    if found is None:
        raise RuntimeError(f"chromium read nothing ({result.returncode}): {result.stderr[-400:]}")
    return json.loads(html.unescape(found.group(1)))


def screenshot(page: Path, seq: int, png: Path, width: int = 1280, height: int = 900) -> Path:
    """A screenshot of `page` opened at #seq=`seq`."""
    png.parent.mkdir(parents=True, exist_ok=True)
    result = _run([f"--window-size={width},{height}", f"--screenshot={png.resolve()}", "--hide-scrollbars",
                   "--virtual-time-budget=3000", f"{page.resolve().as_uri()}#seq={seq}"])
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(f"chromium --screenshot failed ({result.returncode}): {result.stderr[-400:]}")
    return png


def write_view(log: Path, page: Path) -> Path:
    """view.html of `log`, as `dshreplay view` writes it."""
    from dshreplay.session import Session
    from dshreplay.viewer._html import page_title, render_view
    from dshreplay.viewer._model import build_view
    view = build_view(Session(log).source, "")
    view.title = page_title(view.index.header.get("id"))
    page.write_text(render_view(view), encoding="utf-8")
    return page


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        page = write_view(ROOT / "sample_logs" / "compaction.jsonl", Path(tmp) / "view.html")
        print(screenshot(page, 70, ROOT / "docs" / "view-wide.png", width=1280, height=900))
        print(screenshot(page, 70, ROOT / "docs" / "view-narrow.png", width=390, height=1400))
    return 0


if __name__ == "__main__":
    sys.exit(main())
