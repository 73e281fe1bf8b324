"""Where each run's page lives in a report folder, and links to it from the other pages.

A run's page is ``runs/<experiment>/<agent>/<task>/rep<k>.html`` when every part of its run id
is a plain archive name (``[A-Za-z0-9][A-Za-z0-9_.-]*``, not ending in ``.html``); any other run
id (a store built by hand) gets ``runs/_id/<sha256 prefix>.html``, so no archive string ever
becomes a path component that could leave the folder. Names starting with ``_`` are reserved for
the shared files (``runs/_code/``: code and diff pages stored once by content).

:func:`link_run_ids` turns every run id shown as text on a report page (a table cell such as
``main/<wbr/>aide/<wbr/>demo_sepsis/<wbr/>rep0``, a sentence of a caption) into a link to the
run's page; attributes, existing links, styles and scripts are left alone.
"""

from __future__ import annotations

import hashlib
import html
import posixpath
import re
from collections.abc import Collection
from urllib.parse import quote

from automd_analysis.schema import NAME_PATTERN

__all__ = [
    "RUNS_DIR",
    "RUNS_INDEX",
    "link_run_ids",
    "relative_href",
    "run_page",
]

#: Folder of the run pages inside a report folder.
RUNS_DIR = "runs"
#: The runs index, relative to the report folder.
RUNS_INDEX = f"{RUNS_DIR}/index.html"
_REP = re.compile(r"^rep[0-9]{1,6}$")
_NAME = r"[A-Za-z0-9][A-Za-z0-9_.\-]*"
_BREAK = r"(?:<wbr\s*/?>)?"
#: Text a run id may be shown as (with optional ``<wbr>`` after each ``/``), or a part of the page
#: where nothing is linked (an element's tag, an existing link, a style or script block).
_SCAN = re.compile(
    r"(?P<skip><a\b[^>]*>.*?</a\s*>|<(?P<block>style|script)\b.*?</(?P=block)\s*>|<[^>]*>)"
    rf"|(?<![\w./-])(?P<id>{_NAME}/{_BREAK}{_NAME}/{_BREAK}{_NAME}/{_BREAK}rep[0-9]+)(?![\w./-])",
    re.S | re.I,
)


def _plain_name(part: str) -> bool:
    return bool(NAME_PATTERN.match(part)) and len(part) <= 200 and not part.endswith(".html")


def run_page(run_id: str) -> str:
    """The page of a run, relative to the report folder (``/`` separated).

    Examples
    --------
    >>> run_page("main/aide/demo_sepsis/rep2")
    'runs/main/aide/demo_sepsis/rep2.html'
    >>> run_page("../../etc/passwd/rep0").startswith("runs/_id/")
    True
    """
    parts = run_id.split("/")
    if len(parts) == 4 and all(_plain_name(p) for p in parts[:3]) and _REP.match(parts[3]):
        return "/".join((RUNS_DIR, *parts[:3], f"{parts[3]}.html"))
    digest = hashlib.sha256(run_id.encode("utf-8", errors="surrogatepass")).hexdigest()
    return f"{RUNS_DIR}/_id/{digest[:24]}.html"


def relative_href(source: str, target: str) -> str:
    """The URL of report file ``target`` from the page ``source`` (both report-relative), each
    path segment percent-encoded.

    Examples
    --------
    >>> relative_href("html/07_methods.html", "runs/main/aide/t/rep0.html")
    '../runs/main/aide/t/rep0.html'
    >>> relative_href("runs/main/aide/t/rep0.html", "runs/_code/ab/abc.html")
    '../../../_code/ab/abc.html'
    """
    rel = posixpath.relpath(target, posixpath.dirname(source) or ".")
    return "/".join(quote(part) for part in rel.split("/"))


def link_run_ids(body: str, run_ids: Collection[str], page: str) -> str:
    """``body`` (an HTML page) with every run id of ``run_ids`` shown as text linked to its page.

    Parameters
    ----------
    body : str
        The page's HTML.
    run_ids : collection of str
        The runs that have a page (others are left as text).
    page : str
        The page's own path relative to the report folder (``html/01_primary_scores.html``).

    Returns
    -------
    str

    Examples
    --------
    >>> cell = '<td class="x">main/<wbr/>aide/<wbr/>t/<wbr/>rep0</td>'
    >>> link_run_ids(cell, {"main/aide/t/rep0"}, "html/p.html")
    '<td class="x"><a class="automd-run" href="../runs/main/aide/t/rep0.html">main/<wbr/>aide/<wbr/>t/<wbr/>rep0</a></td>'
    >>> link_run_ids('<img alt="main/aide/t/rep0">', {"main/aide/t/rep0"}, "html/p.html")
    '<img alt="main/aide/t/rep0">'
    """
    known = set(run_ids)
    if not known:
        return body

    def replace(match: re.Match) -> str:
        shown = match.group("id")
        if shown is None:
            return match.group(0)
        run_id = re.sub(r"<wbr\s*/?>", "", shown, flags=re.I)
        if run_id not in known:
            return shown
        href = html.escape(relative_href(page, run_page(run_id)), quote=True)
        return f'<a class="automd-run" href="{href}">{shown}</a>'

    return _SCAN.sub(replace, body)
