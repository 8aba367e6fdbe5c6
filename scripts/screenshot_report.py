"""Render a bundle's report.html in headless Chromium: screenshot and DOM.

`python scripts/screenshot_report.py` exports sample_logs/audit-demo.jsonl
and writes docs/report.png (the screenshot shown in the README). The browser
test uses the same functions.
"""

from __future__ import annotations

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


def export_sample(out: Path, log: Path = ROOT / "sample_logs" / "audit-demo.jsonl") -> Path:
    """Export one log into `out` with a fixed timestamp (its evidence key beside it); return its report.html."""
    from dshreplay.output.bundle import export_bundle
    manifest = export_bundle([str(log)], out, timestamp="2026-11-29T00:00:00Z",
                             evidence_key=out.parent / "evidence.key")
    return out / manifest["sessions"][0]["folder"] / "report.html"


def main() -> int:
    import os
    os.chdir(ROOT)  # so the report names the input as a user would type it
    with tempfile.TemporaryDirectory() as tmp:
        report = export_sample(Path(tmp) / "bundle", Path("sample_logs/audit-demo.jsonl"))
        print(screenshot(report, ROOT / "docs" / "report.png"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
