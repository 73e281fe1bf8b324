"""Content-addressed cache of code answers (like the score cache: one JSON file per key).

The key of a version's code is

    sha256(json([rules version, package version, [(path relative to the code root,
                 sha256 of the text), ...] sorted, entry paths, task kind]))

so identical code in two runs (or the same run annotated again) is analysed once, and a changed
file, file name, rule set or package version gives a new key. Entries hold the answers *before*
task eligibility (which depends on the task, not the code), with evidence as ``(file number,
line)``. Entries are written to a temporary file in the same directory and ``os.replace``-d into
place with the umask's file mode (:mod:`automd_analysis._atomic`); a corrupt or foreign entry is
treated as missing.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from pathlib import Path

from automd_analysis._atomic import write_text_atomic
from automd_analysis._version import __version__
from automd_analysis.annotate.practices import Finding

__all__ = ["CACHE_FORMAT", "RULES_VERSION", "AnnotationCache", "code_key", "forensics_key"]

#: Version of the analyser's rules; part of every key (bump when an answer can change).
RULES_VERSION = 3
#: Layout of an entry.
CACHE_FORMAT = 2


def code_key(
    files: Sequence[tuple[str, str]],
    entries: Sequence[str] | None = None,
    task_kind: str | None = None,
) -> str:
    """Cache key of a set of ``(relative path, text)`` files (and the task kind, which the
    analysis uses for code that branches on it).

    Examples
    --------
    >>> a = code_key([("train.py", "x = 1\\n")])
    >>> a == code_key([("train.py", "x = 1\\n")]), a == code_key([("main.py", "x = 1\\n")])
    (True, False)
    """
    parts = sorted(
        (path, hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest())
        for path, text in files
    )
    doc = [RULES_VERSION, __version__, CACHE_FORMAT, parts, sorted(entries or []), task_kind]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def forensics_key(submission: bytes, task) -> str:
    """Cache key of the forensics of a submitted file for a task (:class:`~.runs.TaskInfo`).

    Examples
    --------
    >>> from automd_analysis.annotate.practices import TaskFacts
    >>> from automd_analysis.annotate.runs import TaskInfo
    >>> t = TaskInfo(TaskFacts(kind="classification"), "p", ("id",), 0.1)
    >>> forensics_key(b"id,p\\n1,0.5\\n", t) == forensics_key(b"id,p\\n1,0.6\\n", t)
    False
    """
    facts = task.facts
    doc = [
        "forensics",
        RULES_VERSION,
        __version__,
        CACHE_FORMAT,
        hashlib.sha256(submission).hexdigest(),
        [facts.kind, task.probability_column, list(task.id_columns), task.prevalence],
    ]
    return hashlib.sha256(json.dumps(doc).encode()).hexdigest()


def _encode(findings: dict[str, Finding]) -> dict:
    out = {}
    for name, f in sorted(findings.items()):
        out[name] = {
            "value": list(f.value) if isinstance(f.value, tuple) else f.value,
            "evidence": [list(e) for e in f.evidence],
            "affected_weight": f.affected_weight,
        }
    return out


def _decode(doc: dict) -> dict[str, Finding]:
    out = {}
    for name, f in doc.items():
        value = tuple(f["value"]) if isinstance(f["value"], list) else str(f["value"])
        evidence = tuple((int(a), int(b)) for a, b in f["evidence"])
        weight = f.get("affected_weight")
        out[name] = Finding(name, value, evidence, None if weight is None else float(weight))
    return out


class AnnotationCache:
    """The cache directory (``<key[:2]>/<key>.json`` entries).

    Parameters
    ----------
    directory : str or Path
        Created on the first write.
    """

    def __init__(self, directory: str | Path):
        self.directory = Path(directory)

    def path(self, key: str) -> Path:
        """Where the entry of ``key`` lives."""
        return self.directory / key[:2] / f"{key}.json"

    def get(self, key: str) -> tuple[dict[str, Finding], list[str], dict] | None:
        """``(findings, notes, signature)`` for ``key``, or ``None`` if absent, unreadable or
        foreign."""
        try:
            doc = json.loads(self.path(key).read_text(encoding="utf-8"))
            if doc.get("key") != key or doc.get("format") != CACHE_FORMAT:
                return None
            signature = doc.get("signature", {})
            if not isinstance(signature, dict):
                return None
            return _decode(doc["findings"]), [str(n) for n in doc.get("notes", [])], signature
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def get_doc(self, key: str) -> dict | None:
        """A plain JSON entry (forensics) for ``key``, or ``None``."""
        try:
            doc = json.loads(self.path(key).read_text(encoding="utf-8"))
            if doc.get("key") != key or doc.get("format") != CACHE_FORMAT:
                return None
            value = doc["doc"]
            return value if isinstance(value, dict) else None
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None

    def put_doc(self, key: str, value: dict) -> Path:
        """Store a plain JSON entry atomically."""
        doc = {"key": key, "format": CACHE_FORMAT, "doc": value}
        return write_text_atomic(self.path(key), json.dumps(doc, sort_keys=True) + "\n")

    def put(
        self,
        key: str,
        findings: dict[str, Finding],
        notes: Sequence[str] = (),
        signature: dict | None = None,
    ) -> Path:
        """Store ``findings`` (and the code signature used by version pairs) atomically."""
        doc = {
            "key": key,
            "format": CACHE_FORMAT,
            "findings": _encode(findings),
            "notes": list(notes),
            "signature": signature or {},
        }
        return write_text_atomic(self.path(key), json.dumps(doc, sort_keys=True) + "\n")
