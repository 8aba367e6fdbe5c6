"""Render a bundle's report.html in headless Chromium: screenshot, DOM and layout.

`python scripts/screenshot_report.py` exports sample_logs/audit-demo.jsonl
and writes docs/report.png (the screenshot shown in the README), then the
incident sample (`samples.incident()`: failed calls, an aborted and an
interrupted turn) as docs/report-wide.png (1280 px) and
docs/report-narrow.png (390 px). The browser test uses the same functions.
"""

from __future__ import annotations

import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--disable-default-apps", "--mute-audio"]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run(args: list[str], timeout: int = 90) -> subprocess.CompletedProcess:
    chromium = find_chromium()
    if chromium is None:
        raise RuntimeError("no chromium on PATH")
    with tempfile.TemporaryDirectory(prefix="dshreplay-chromium-") as profile:
        return subprocess.run([chromium, *FLAGS, f"--user-data-dir={profile}", *args],
                              capture_output=True, text=True, timeout=timeout, check=False)


def dump_dom(page: Path) -> str:
    """The DOM after the page loaded (and after any script would have run)."""
    result = _run(["--virtual-time-budget=2000", "--dump-dom", page.resolve().as_uri()])
    if result.returncode != 0 or "<html" not in result.stdout:
        raise RuntimeError(f"chromium --dump-dom failed ({result.returncode}): {result.stderr[-400:]}")
    return result.stdout


def screenshot(page: Path, png: Path, width: int = 1280, height: int = 1500) -> Path:
    png.parent.mkdir(parents=True, exist_ok=True)
    result = _run([f"--window-size={width},{height}", f"--screenshot={png.resolve()}",
                   "--hide-scrollbars", page.resolve().as_uri()])
    if not png.is_file() or png.stat().st_size == 0:
        raise RuntimeError(f"chromium --screenshot failed ({result.returncode}): {result.stderr[-400:]}")
    return png


PROBE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"></head><body style="margin:0">
<iframe id="page" src="%(src)s" style="width:%(width)dpx;height:900px;border:0"></iframe>
<script>
document.getElementById("page").addEventListener("load", function () {
  var doc = this.contentDocument, out = {};
  out.scrollWidth = doc.documentElement.scrollWidth;
  out.clientWidth = doc.documentElement.clientWidth;
  out.boxes = Array.prototype.map.call(doc.querySelectorAll("section[id] > .scroll"), function (box) {
    return {section: box.parentNode.id, fits: box.scrollWidth <= box.clientWidth};
  });
  out.bars = Array.prototype.map.call(doc.querySelectorAll("#waterfall a.bar"), function (bar) {
    var box = bar.getBoundingClientRect(), track = bar.parentNode.getBoundingClientRect();
    return {status: bar.className.replace("bar ", ""), href: bar.getAttribute("href"),
            title: bar.getAttribute("title"), colour: getComputedStyle(bar).backgroundColor,
            image: getComputedStyle(bar).backgroundImage, width: box.width,
            inside: box.left >= track.left - 0.5 && box.right <= track.right + 0.5};
  });
  var probe = document.createElement("pre");
  probe.id = "probe";
  probe.textContent = JSON.stringify(out);
  document.body.appendChild(probe);
});
</script></body></html>
"""


def layout(page: Path, width: int) -> dict:
    """How the page lays out in a viewport `width` px wide: its scroll and client widths, whether
    each section's table fits its box (or scrolls inside it), and each waterfall bar's status,
    link, hover text, computed colour, width and whether it lies inside its track. Measured by
    a script in a wrapper page that frames the report (the report itself runs none: its CSP
    forbids it)."""
    with tempfile.TemporaryDirectory(prefix="dshreplay-probe-") as folder:
        wrapper = Path(folder) / "probe.html"
        wrapper.write_text(PROBE % {"src": page.resolve().as_uri(), "width": width}, encoding="utf-8")
        result = _run(["--allow-file-access-from-files", "--virtual-time-budget=5000", "--dump-dom",
                       wrapper.as_uri()])
    found = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
    if found is None:
        raise RuntimeError(f"chromium measured nothing ({result.returncode}): {result.stderr[-400:]}")
    return json.loads(html.unescape(found.group(1)))


def export_sample(out: Path, log: Path = ROOT / "sample_logs" / "audit-demo.jsonl") -> Path:
    """Export one log into `out` with a fixed timestamp (its evidence key beside it); return its report.html."""
    from dshreplay.bundle.export import export_bundle
    manifest = export_bundle([str(log)], out, timestamp="2026-11-29T00:00:00Z",
                             evidence_key=out.parent / "evidence.key")
    return out / manifest["sessions"][0]["folder"] / "report.html"


def export_incident(folder: Path) -> Path:
    """The incident sample written to `folder` as incident.jsonl and exported to folder/bundle
    (the input named as `folder` names it); return its report.html."""
    from dshreplay.testing.samples import incident
    folder.mkdir(parents=True, exist_ok=True)
    return export_sample(folder / "bundle", incident().write(folder / "incident.jsonl"))


def main() -> int:
    import os
    os.chdir(ROOT)  # so the report names the input as a user would type it
    with tempfile.TemporaryDirectory() as tmp:
        report = export_sample(Path(tmp) / "bundle", Path("sample_logs/audit-demo.jsonl"))
        print(screenshot(report, ROOT / "docs" / "report.png"))
        os.chdir(tmp)
        report = export_incident(Path("incident"))
        print(screenshot(report, ROOT / "docs" / "report-wide.png", width=1280, height=1100))
        print(screenshot(report, ROOT / "docs" / "report-narrow.png", width=390, height=1600))
        os.chdir(ROOT)
    return 0


if __name__ == "__main__":
    sys.exit(main())
