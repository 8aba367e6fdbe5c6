"""view.html of a long session: its size, the time `dshreplay view` takes, and in headless Chromium
the time the page is ready and a step or a page jump takes.

Generates a session of N turns (a user question, a tool call with 30 lines of output, an answer:
32 events and 4 nodes a turn, chunks packed), writes its page, and opens it at its last seq in
a wrapper page that presses keys and times them (real time: run it on a quiet machine).

    python bench/view.py [--turns 3200]   (3,200 turns: 102,401 events, a 23 MB log)
"""

from __future__ import annotations

import argparse
import html
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "scripts"))

from screenshot_report import _run  # noqa: E402

from dshreplay.testing.shapes import long_session  # noqa: E402

WRAPPER = """<!DOCTYPE html><html><body><iframe id="f" src="%(src)s" style="width:1280px;height:900px"></iframe>
<script>
document.getElementById("f").addEventListener("load", function () {
  var d = this.contentDocument, out = {ready: Number(d.body.getAttribute("data-ready-ms"))};
  function press(key, n) {
    var t = performance.now();
    for (var i = 0; i < n; i++) d.dispatchEvent(new KeyboardEvent("keydown", {key: key, bubbles: true}));
    return (performance.now() - t) / n;
  }
  press("ArrowLeft", 1);
  out.step = press("ArrowLeft", 200); out.page = press("PageUp", 20);
  out.nodes = d.querySelectorAll('#nodes > [data-view="in"]').length;
  var p = document.createElement("pre");
  p.id = "probe"; p.textContent = JSON.stringify(out); document.body.appendChild(p);
});
</script></body></html>"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=3200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="dshreplay-bench-view-") as tmp:
        log = long_session(args.turns, "bench-view").write(Path(tmp) / "long.jsonl", pack=True)
        size = log.stat().st_size
        page = Path(tmp) / "long.html"
        started = time.perf_counter()
        said = subprocess.run([sys.executable, "-m", "dshreplay", "view", str(log), "--out", str(page)],
                              capture_output=True, text=True, check=True).stdout.strip()
        took = time.perf_counter() - started
        last = int(re.search(r"seqs 0\.\.(\d+)", said).group(1))
        wrapper = Path(tmp) / "bench.html"
        wrapper.write_text(WRAPPER % {"src": f"{page.as_uri()}#seq={last}"}, encoding="utf-8")
        result = _run(["--allow-file-access-from-files", "--dump-dom", wrapper.as_uri()], timeout=300)
        found = re.search(r'<pre id="probe">(.*?)</pre>', result.stdout, re.S)
        if found is None:
            sys.exit(f"chromium measured nothing: {result.stderr[-400:]}")
        figures = json.loads(html.unescape(found.group(1)))
    print(f"log: {size:,} bytes; {said}")
    print(f"dshreplay view: {took:.1f} s; page ready in {figures['ready']} ms; a step {figures['step']:.1f} ms, "
          f"a page jump {figures['page']:.1f} ms; {figures['nodes']} nodes in the view at seq {last}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
