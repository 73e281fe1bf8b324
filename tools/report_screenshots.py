"""Screenshots of a rendered report for docs/report/: every page at a 1,366 px wide window.

Usage (from the repository root, in the project's venv, with Chromium installed)::

    .venv/bin/python tools/report_screenshots.py reports docs/report

For the index and each page it writes ``<page>.png``: the top 1,600 px (title, provenance line,
findings, contents). For each page named in :data:`SECTIONS` it also writes
``<page>_section.png``: 1,600 px from just above that element (a figure or table of the page),
so the figures and wide tables show at the size a reader sees them (an element near the end of
its page: the last 1,600 px of the page). Section positions are read
from the page laid out at the same width (headless Chromium ``--dump-dom`` of a copy of the page
with a script that records the element's offset), then cut from a full-height screenshot.
Chromium's own ``#fragment`` scrolling is not used: headless screenshots do not honour it.
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from PIL import Image, ImageChops

WIDTH, HEIGHT = 1366, 1600
#: Page -> the id of the element its section screenshot starts at.
SECTIONS = {
    "01_primary_scores": "table-table2_primary_scores",
    "02_calibration_and_practices": "figure-decision_curves",
    "03_evaluation_objectives": "figure-fig4_objectives",
    "04_population_shift": "table-table5_external",
    "05_subgroups": "figure-subgroup_gaps",
    "06_llm_comparison": "table-table7_llm",
    "07_methods_and_development": "table-table17_censoring_summary",
}
_PROBE = (
    "<script>window.addEventListener('load', () => {{ const e = document.getElementById('{id}');"
    " document.body.setAttribute('data-offset', e ? Math.round(e.getBoundingClientRect().top"
    " + window.scrollY) : -1); }});</script>"
)


def _chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return name
    sys.exit("Chromium is not installed (apt-get install chromium)")


def _run(browser: str, url: str, *args: str, height: int = HEIGHT) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
             "--hide-scrollbars", f"--window-size={WIDTH},{height}", *args, url],
            capture_output=True, text=True, check=True,
        )  # fmt: skip


def _offset(browser: str, page: Path, element: str) -> int:
    """The element's distance (CSS px) from the top of the page laid out ``WIDTH`` wide."""
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / page.name  # same folder depth is not needed: images are embedded
        probe.write_text(
            page.read_text(encoding="utf-8").replace(
                "</body>", _PROBE.format(id=element) + "</body>"
            ),
            encoding="utf-8",
        )
        dom = _run(browser, probe.as_uri(), "--dump-dom", "--virtual-time-budget=5000").stdout
    found = re.search(r'data-offset="(-?\d+)"', dom)
    if not found or int(found.group(1)) < 0:
        sys.exit(f"{page.name}: no element with id {element!r}")
    return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report folder (holds index.html and html/)")
    parser.add_argument("out", type=Path, help="folder for the PNGs (e.g. docs/report)")
    args = parser.parse_args(argv)
    browser = _chromium()
    args.out.mkdir(parents=True, exist_ok=True)
    pages = {"index": args.report / "index.html"}
    pages |= {p.stem: p for p in sorted((args.report / "html").glob("[0-9]*.html"))}
    for name, page in pages.items():
        top = args.out / f"{name}.png"
        _run(browser, page.resolve().as_uri(), f"--screenshot={top.resolve()}")
        print(f"wrote {top}")
        if name not in SECTIONS:
            continue
        start = max(0, _offset(browser, page, SECTIONS[name]) - 40)
        with tempfile.TemporaryDirectory() as tmp:
            full = Path(tmp) / "full.png"
            height = start + 2 * HEIGHT
            _run(browser, page.resolve().as_uri(), f"--screenshot={full}", height=height)
            with Image.open(full) as image:
                image = image.convert("RGB")
                blank = Image.new("RGB", image.size, (255, 255, 255))
                box = ImageChops.difference(image, blank).getbbox()
                end = min(height, box[3] + 40) if box else height
                start = max(0, min(start, end - HEIGHT))  # near the end: show what is above
                section = image.crop((0, start, WIDTH, start + HEIGHT))
                target = args.out / f"{name}_section.png"
                section.save(target, optimize=True)
        print(f"wrote {target} (from y = {start} px)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
