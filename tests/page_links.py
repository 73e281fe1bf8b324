"""Checks of static report pages as a browser reads them: links, anchors, scripts.

``broken_links(out, pages)`` parses each page with the standard library's HTML parser and
returns every ``href``/``src`` that does not resolve: a relative URL must name a file inside the
report folder (and, with a ``#fragment``, an element of that id in it); a fragment alone must name
an element of the page itself; any absolute URL (``http:``, ``javascript:``, ``data:``, ``//``)
counts as broken on a page that must work offline. ``active_content(page)`` lists what could run
in a browser (script elements, event-handler attributes, ``javascript:`` URLs).

Imported by the test modules as ``import page_links`` (pytest puts ``tests/`` on ``sys.path``).
"""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.urls: list[tuple[str, str]] = []
        self.ids: set[str] = set()
        self.active: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "iframe", "object", "embed"):
            self.active.append(f"<{tag}>")
        for name, value in attrs:
            value = value or ""
            if name == "id":
                self.ids.add(value)
            if name.startswith("on"):
                self.active.append(f"{tag} {name}")
            if name in ("href", "src"):
                self.urls.append((tag, value))
                if value.strip().lower().startswith("javascript:"):
                    self.active.append(f"{tag} {name}={value}")


def parse(page: Path) -> _Page:
    parser = _Page()
    parser.feed(page.read_text(encoding="utf-8"))
    return parser


_IDS: dict[Path, set[str]] = {}


def _ids(page: Path) -> set[str]:
    if page not in _IDS:
        _IDS[page] = parse(page).ids
    return _IDS[page]


def broken_links(out: Path, pages) -> list[str]:
    """Every URL of ``pages`` that does not resolve inside ``out`` (``page: url (why)``)."""
    _IDS.clear()
    root = out.resolve()
    broken = []
    for page in pages:
        page = Path(page)
        parsed = parse(page)
        _IDS[page.resolve()] = parsed.ids
        for _, url in parsed.urls:
            parts = urlsplit(url)
            where = f"{page.relative_to(out)}: {url}"
            if parts.scheme or parts.netloc:
                broken.append(f"{where} (not a relative link)")
                continue
            target = page.resolve() if not parts.path else (page.parent / unquote(parts.path))
            target = target.resolve()
            if not target.is_relative_to(root):
                broken.append(f"{where} (leaves the report folder)")
            elif not target.is_file():
                broken.append(f"{where} (no such file)")
            elif parts.fragment and unquote(parts.fragment) not in _ids(target):
                broken.append(f"{where} (no element with that id)")
    return broken


def active_content(page: Path) -> list[str]:
    """Scripts, event handlers and ``javascript:`` URLs of a page (none may appear)."""
    return parse(page).active


def visible_text(page: Path) -> str:
    """The page's text with tags removed (entities kept escaped)."""
    return re.sub(r"<[^>]+>", "", page.read_text(encoding="utf-8"))
