"""report.html in a real browser: it renders, and hostile log text stays text.

Needs Debian's chromium (`.ci/run` installs it); skips where it is missing,
and `.ci/run` fails when these tests skipped.
"""

from __future__ import annotations

import importlib.util

import pytest

from dshreplay.testing.samples import LogBuilder

from conftest import ROOT

spec = importlib.util.spec_from_file_location("screenshot_report", ROOT / "scripts" / "screenshot_report.py")
browser = importlib.util.module_from_spec(spec)
spec.loader.exec_module(browser)

pytestmark = pytest.mark.skipif(browser.find_chromium() is None, reason="chromium is not installed")

HOSTILE = [
    "<script>document.title='PWNED'</script>",
    '"onload="document.title=\'PWNED\'',
    "<img src=x onerror=\"document.title='PWNED'\">",
    "<svg onload=\"document.title='PWNED'\"></svg>",
]


@pytest.fixture(scope="module")
def hostile_report(tmp_path_factory):
    b = LogBuilder("<script>alert('id')</script>", cwd='/tmp/"onload="x')
    b.start_turn()
    b.request_header()
    b.start_step()
    for text in HOSTILE:
        b.user(text)
    b.tool_round("bash", '{"command": "<script>x</script>"}', HOSTILE[2])
    b.add("custom/<b>type</b>", {"x": HOSTILE[0]})  # an unknown type: shows in findings
    b.end_turn()
    log = tmp_path_factory.mktemp("log") / "hostile.jsonl"
    b.write(log)
    return browser.export_sample(tmp_path_factory.mktemp("bundle") / "out", log)


def test_hostile_strings_render_as_text_and_no_script_runs(hostile_report):
    dom = browser.dump_dom(hostile_report)
    assert "<title>dshreplay report" in dom and "PWNED" not in dom.split("</title>")[0]
    assert "<script" not in dom.lower()
    for text in ("&lt;script&gt;document.title='PWNED'&lt;/script&gt;", "&lt;img src=x onerror="):
        assert text in dom
    assert "<img" not in dom and "<svg onload" not in dom


def test_report_has_waterfall_findings_and_transcript(hostile_report):
    dom = browser.dump_dom(hostile_report)
    assert 'id="waterfall"' in dom and '<a class="bar ok" href="#call-1"' in dom
    assert 'id="findings"' in dom and "DSH-E006" in dom
    assert 'id="transcript"' in dom


def test_screenshot_of_the_sample_report(tmp_path):
    report = browser.export_sample(tmp_path / "bundle")
    png = browser.screenshot(report, tmp_path / "report.png", height=900)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 20_000  # a rendered page, not a blank canvas


@pytest.fixture(scope="module")
def incident_report(tmp_path_factory):
    """The report of `samples.incident()`: a failed model call and tool call, a cancelled call,
    an aborted turn and an interrupted one (the page docs/report-*.png show)."""
    return browser.export_incident(tmp_path_factory.mktemp("incident"))


RED = "rgb(217, 45, 32)"


@pytest.mark.parametrize("width", [1280, 390])
def test_the_report_fits_the_screen_and_its_failed_bars_are_red(incident_report, width):
    measured = browser.layout(incident_report, width)
    assert measured["scrollWidth"] <= measured["clientWidth"] <= width  # (no sideways scrolling)
    fits = {box["section"]: box["fits"] for box in measured["boxes"]}
    assert fits["failures"] and fits["facts"]  # (the first screen never scrolls sideways, even inside a box)
    if width == 1280:
        assert all(fits.values()), fits
    bars = measured["bars"]
    assert [(b["status"], b["href"]) for b in bars] == [
        ("ok", None), ("failed", "#call-1"), ("ok", "#call-2"), ("failed", "#tool-1"), ("ok", "#call-3"),
        ("ok", "#tool-2"), ("ok", "#call-4"), ("aborted", None), ("cancelled", "#call-5"), ("interrupted", None),
        ("ok", "#call-6"), ("open", "#tool-3")]
    assert [b["colour"] for b in bars if b["status"] == "failed"] == [RED, RED]
    assert RED not in {b["colour"] for b in bars if b["status"] != "failed"}
    assert "seqs 4-4" in bars[1]["title"] and bars[1]["title"].endswith("; error CONTEXT_WINDOW_EXCEEDED")
    assert "repeating-linear-gradient" in bars[9]["image"]  # (interrupted: striped to the end of the log)
    assert all(b["inside"] and b["width"] >= 3 for b in bars)  # (an instant call is still a visible bar)


@pytest.mark.parametrize("width", [1280, 390])
def test_a_screenshot_of_the_incident_report_at_each_width(incident_report, tmp_path, width):
    png = browser.screenshot(incident_report, tmp_path / "report.png", width=width, height=900)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and int.from_bytes(data[16:20], "big") == width
