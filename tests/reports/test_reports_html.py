"""The HTML report: self-contained, escaped, and it really renders (headless Chromium)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest
from testkit.sample_runs import large_run_data, sample_run_data

from mutagent.reports.html_report import to_html
from mutagent.reports.writer import write_reports

BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")


def browser() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    pytest.skip("headless Chromium is not installed (apt-get install -y chromium)")


def run_browser(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Chromium with no network at all: any external resource would fail and log a console error."""
    command = [
        browser(),
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--host-resolver-rules=MAP * ~NOTFOUND",
        f"--user-data-dir={tmp_path / 'profile'}",
        "--enable-logging=stderr",
        "--v=0",
        *args,
    ]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def console_messages(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if ":CONSOLE" in line]


def test_everything_from_the_run_is_escaped():
    html = to_html(sample_run_data())
    assert "the &lt;kind&gt; of code mutagent targets &amp; reports on" in html
    assert "<kind>" not in html
    assert "test_backoff_grows[3]" in html


def test_nothing_is_fetched_from_anywhere():
    html = to_html(large_run_data())
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:|//)""", html, re.I)
    assert "<link" not in html and "@import" not in html and "url(" not in html
    assert "<script src" not in html


def test_sections_are_all_there():
    data = sample_run_data()
    html = to_html(data)
    for anchor in ("summary", "survivors", "files", "matrix", "guards"):
        assert f'id="{anchor}"' in html
    assert "70.0%" in html
    assert "guards nothing" in html
    # every mutant has a detail article the source badges and guard map link to
    for mutant in data.mutants:
        assert f'id="m-{mutant.id}"' in html
    # the survivors section has exactly the three undetected mutants
    survivors = re.findall(r'id="s-([0-9a-f]+)"', html)
    assert len(survivors) == 3


# Appended to a copy of the report: hover one matrix cell the way a user would and expose its tooltip.
PROBE = """<script>
var table = document.querySelector('.mx table');
var row = Array.prototype.find.call(table.tBodies[0].rows, function (r) {
  return r.cells[0].title.indexOf('test_missing_message_stop_is_retried') >= 0; });
var column = Array.prototype.findIndex.call(table.tHead.rows[1].cells, function (c) {
  var a = c.querySelector('a'); return a && a.title.indexOf('drop-stop-check') === 0; });
var cell = row.cells[column];
cell.dispatchEvent(new MouseEvent('mouseover', {bubbles: true}));
document.body.setAttribute('data-probe', cell.title);
</script>"""


def test_renders_in_headless_chromium_without_console_errors(tmp_path):
    data = sample_run_data()
    page = tmp_path / "report.html"
    write_reports(data, html=page)
    probed = tmp_path / "probed.html"
    probed.write_text(
        page.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8"
    )
    nested = data.mutants[0].id  # a collapsed <details> in the mutant list; the inline JS opens it
    done = run_browser(tmp_path, "--dump-dom", probed.as_uri() + f"#m-{nested}")
    assert done.returncode == 0, done.stderr[-2000:]
    assert console_messages(done.stderr) == []
    dom = done.stdout
    assert "mutation score" in dom and "Kill matrix" in dom and "Tests" in dom
    assert "&lt;kind&gt;" in dom
    opened = re.search(rf'<details([^>]*id="m-{nested}"[^>]*)>', dom)
    assert opened and "open" in opened.group(1), (
        "the fragment's <details> was not opened by the inline script"
    )
    # test_missing_message_stop_is_retried x the drop-stop-check mutant only it kills
    probe = re.search(r'data-probe="([^"]*)"', dom).group(1)
    assert probe.startswith("tests/test_loop.py::test_missing_message_stop_is_retried × drop-stop-check at ")
    assert probe.endswith("killed by this test only")


def test_console_error_detection_works(tmp_path):
    # guards the test above: a page with a script error must be caught
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><p>x</p><script>notDefined();</script>", encoding="utf-8")
    done = run_browser(tmp_path, "--dump-dom", page.as_uri())
    assert any("notDefined" in line for line in console_messages(done.stderr))


def png_pixels(data: bytes) -> tuple[int, int, bytes]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    chunks, offset = [], 8
    while offset < len(data):
        (length,) = struct.unpack(">I", data[offset : offset + 4])
        kind = data[offset + 4 : offset + 8]
        if kind == b"IDAT":
            chunks.append(data[offset + 8 : offset + 8 + length])
        offset += 12 + length
    return width, height, zlib.decompress(b"".join(chunks))


def test_screenshot_is_not_blank(tmp_path):
    page = tmp_path / "report.html"
    write_reports(large_run_data(), html=page)
    shot = tmp_path / "shot.png"
    done = run_browser(tmp_path, "--window-size=1280,1600", f"--screenshot={shot}", page.as_uri())
    assert shot.is_file(), done.stderr[-2000:]
    assert console_messages(done.stderr) == []
    width, height, pixels = png_pixels(shot.read_bytes())
    assert (width, height) == (1280, 1600)
    assert shot.stat().st_size > 20_000
    assert len(set(pixels)) > 50  # text, badges and colours, not a blank page
