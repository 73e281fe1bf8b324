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

With ``--page PAGE=NAME`` (repeatable) only those pages are taken, each ``--height`` px at a
``--width`` px wide window, as ``NAME.png``: the top of the page, or with ``PAGE=NAME#ID`` from just
above element ``ID`` (``--colours N``: a palette PNG of ``N`` colours, a third of the size); e.g.
a run page and its figure and version table::

    .venv/bin/python tools/report_screenshots.py reports docs/report --width 1200 --height 1400 \
        --colours 128 \
        --page runs/main/aide/demo_flchain/rep1.html=run_page_demo \
        --page runs/main/aide/demo_flchain/rep1.html=run_page_demo_section#development

(The copy of a page whose element offset is read gets a ``<base>`` pointing at the page's folder,
so its stylesheet and images load as they do for the page itself.)
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


def _run(
    browser: str, url: str, *args: str, height: int = HEIGHT, width: int = WIDTH
) -> subprocess.CompletedProcess:
    with tempfile.TemporaryDirectory() as profile:
        return subprocess.run(
            [browser, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}",
             "--hide-scrollbars", f"--window-size={width},{height}", *args, url],
            capture_output=True, text=True, check=True,
        )  # fmt: skip


def _offset(browser: str, page: Path, element: str, width: int = WIDTH) -> int:
    """The element's distance (CSS px) from the top of the page laid out ``width`` wide."""
    base = f'<head><base href="{page.resolve().parent.as_uri()}/">'  # its CSS and images
    with tempfile.TemporaryDirectory() as tmp:
        probe = Path(tmp) / page.name
        probe.write_text(
            page.read_text(encoding="utf-8")
            .replace("<head>", base, 1)
            .replace("</body>", _PROBE.format(id=element) + "</body>"),
            encoding="utf-8",
        )
        dom = _run(
            browser, probe.as_uri(), "--dump-dom", "--virtual-time-budget=5000", width=width
        ).stdout
    found = re.search(r'data-offset="(-?\d+)"', dom)
    if not found or int(found.group(1)) < 0:
        sys.exit(f"{page.name}: no element with id {element!r}")
    return int(found.group(1))


def _section(
    browser: str, page: Path, element: str, target: Path, width: int = WIDTH,
    height: int = HEIGHT,
) -> int:  # fmt: skip
    """Write ``height`` px of ``page`` from just above ``element`` to ``target``; return the
    first row (px)."""
    start = max(0, _offset(browser, page, element, width) - 40)
    with tempfile.TemporaryDirectory() as tmp:
        full = Path(tmp) / "full.png"
        tall = start + 2 * height
        _run(browser, page.resolve().as_uri(), f"--screenshot={full}", height=tall, width=width)
        with Image.open(full) as image:
            image = image.convert("RGB")
            blank = Image.new("RGB", image.size, (255, 255, 255))
            box = ImageChops.difference(image, blank).getbbox()
            end = min(tall, box[3] + 40) if box else tall
            start = max(0, min(start, end - height))  # near the end: show what is above
            image.crop((0, start, width, start + height)).save(target, optimize=True)
    return start


def _chosen_pages(browser: str, args: argparse.Namespace) -> int:
    """Each ``--page PAGE=NAME[#ID]`` as ``NAME.png``: its top, or from just above element
    ``ID``."""
    for spec in args.page:
        rel, sep, name = spec.rpartition("=")
        name, _, element = name.partition("#")
        page = args.report / rel
        if not sep or not name or not page.is_file():
            sys.exit(f"--page {spec!r}: expected PAGE=NAME[#ID] with PAGE a file of {args.report}")
        target = args.out / f"{name}.png"
        where = ""
        if element:
            start = _section(browser, page, element, target, args.width, args.height)
            where = f" (from y = {start} px)"
        else:
            _run(browser, page.resolve().as_uri(), f"--screenshot={target.resolve()}",
                 height=args.height, width=args.width)  # fmt: skip
        with Image.open(target) as image:
            image = image.convert("RGB")
        if args.colours:
            image = image.quantize(colors=args.colours)
        image.save(target, optimize=True)
        print(f"wrote {target}{where}")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("report", type=Path, help="report folder (holds index.html and html/)")
    parser.add_argument("out", type=Path, help="folder for the PNGs (e.g. docs/report)")
    parser.add_argument("--page", action="append", default=[], metavar="PAGE=NAME[#ID]",
                        help="only this report-relative page, as NAME.png: its top, or from "
                        "element ID on")  # fmt: skip
    parser.add_argument("--width", type=int, default=WIDTH, help="with --page")
    parser.add_argument("--height", type=int, default=HEIGHT, help="with --page")
    parser.add_argument("--colours", type=int, default=0,
                        help="with --page: a palette PNG of this many colours (smaller)")  # fmt: skip
    args = parser.parse_args(argv)
    browser = _chromium()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.page:
        return _chosen_pages(browser, args)
    pages = {"index": args.report / "index.html"}
    pages |= {p.stem: p for p in sorted((args.report / "html").glob("[0-9]*.html"))}
    for name, page in pages.items():
        top = args.out / f"{name}.png"
        _run(browser, page.resolve().as_uri(), f"--screenshot={top.resolve()}")
        print(f"wrote {top}")
        if name in SECTIONS:
            target = args.out / f"{name}_section.png"
            start = _section(browser, page, SECTIONS[name], target)
            print(f"wrote {target} (from y = {start} px)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
