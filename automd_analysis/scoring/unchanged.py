"""Recognise a scoring whose inputs did not change, so that it can keep the published store as is.

Re-scoring an unchanged archive does no metric work (every content is in the cache), but it
still reads every run, hashes every submission and rebuilds every table - seconds on the demo,
minutes on a large archive. :func:`inputs_fingerprint` summarises everything the published store
depends on without reading any content:

- every file and directory under the archive, the generated annotations, the manifests and the
  data root, by ``lstat``: relative path, type, size, modification and status-change times
  (``st_ctime_ns`` changes with every write, and cannot be set back by a user), inode and device,
  and the target of each symbolic link;
- the scoring options (bootstrap replicates and seed, annotations, preference) and the scorer
  settings;
- the code and environment that score (:mod:`automd_analysis.fingerprint`).

After a complete publication, :func:`record` writes ``<store>/.inputs.json`` (the fingerprint,
the published generation and the summary); :func:`recorded_summary` returns that summary only if
the fingerprint is equal, ``current`` still points at that generation and every file of it is
present. Any change - a touched file, a new run, a new package version - scores normally.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path

from automd_analysis._atomic import write_text_atomic
from automd_analysis.fingerprint import code_fingerprint, environment_fingerprint

__all__ = ["INPUTS_FILE", "inputs_fingerprint", "record", "recorded_summary"]

#: Where the fingerprint of the last complete publication is kept (beside the generations).
INPUTS_FILE = ".inputs.json"


def _tree(root: Path, digest) -> None:
    """Feed the ``lstat`` facts of every entry under ``root`` (sorted) into ``digest``."""
    digest.update(f"\0root={root}".encode())
    if not root.exists():
        digest.update(b"\0absent")
        return
    for current, dirs, files in os.walk(root):
        dirs.sort()
        for name in [*dirs, *sorted(files)]:
            path = os.path.join(current, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            link = os.readlink(path) if os.path.islink(path) else ""
            facts = (rel, st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino,
                     st.st_dev, link)  # fmt: skip
            digest.update(("\0" + "\x1f".join(map(str, facts))).encode("utf-8", "surrogateescape"))


def inputs_fingerprint(roots: Iterable[Path | None], options: Mapping[str, object]) -> str:
    """sha256 of the trees under ``roots`` (``None`` entries skipped), ``options`` (JSON) and the
    code and environment fingerprints."""
    digest = hashlib.sha256()
    for root in roots:
        if root is not None:
            _tree(Path(root), digest)
    digest.update(json.dumps(dict(options), sort_keys=True, default=str).encode())
    digest.update(code_fingerprint().encode() + environment_fingerprint().encode())
    return digest.hexdigest()


def _published(out: Path) -> str | None:
    link = out / "current"
    return os.readlink(link).rsplit("/", 1)[-1] if link.is_symlink() else None


def recorded_summary(out: Path, fingerprint: str, files: Iterable[str]) -> dict | None:
    """The summary recorded with ``fingerprint``, if the store it describes is still the
    published one and complete (``files``: the file names of a generation); else ``None``."""
    try:
        doc = json.loads((out / INPUTS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(doc, dict) or doc.get("fingerprint") != fingerprint:
        return None
    generation = doc.get("generation")
    if generation is None or _published(out) != generation:
        return None
    if not all((out / "generations" / generation / name).is_file() for name in files):
        return None
    summary = doc.get("summary")
    return summary if isinstance(summary, dict) else None


def record(out: Path, fingerprint: str, summary: Mapping[str, object]) -> None:
    """Remember that the published generation of ``out`` was built from ``fingerprint``."""
    doc = {"fingerprint": fingerprint, "generation": _published(out), "summary": dict(summary)}
    write_text_atomic(out / INPUTS_FILE, json.dumps(doc, sort_keys=True, default=str) + "\n")
