"""Which report notebooks are up to date, and how a re-executed one replaces its published outputs.

``automd regenerate`` re-executes a notebook only when one of its inputs changed. The inputs of a
notebook (:func:`notebook_inputs`) are the score store's generation (a hash of its content), the
masking results it reads, the parameters it receives, its own source, and the code that runs it
(the package's version and source files, the installed Python distributions:
:mod:`automd_analysis.fingerprint`). Their hash is the notebook's *key*.

After a notebook ran, its **stamp** ``OUT/.automd/<notebook>.json`` records the key, the inputs, the
page title and the sha256 of every file it published (its tables, figures, executed copy and HTML
page). A later run reuses the notebook - executes nothing, keeps its files - when the stamp's key
equals the new key and every listed file is present with its recorded hash (:func:`check_stamp`).

**Publishing is stamped last.** A notebook executes into its own staging folder
(``OUT/.automd/staging/<notebook>/``); :func:`publish_outputs` then removes the stamp, removes the
files of the previous run, moves the new files into ``OUT/tables``, ``OUT/figures``, ``OUT/html``
and ``OUT/notebooks`` and writes the new stamp (atomically) only after every file is in place. A
regenerate killed at any point therefore never leaves a notebook marked up to date with missing or
partial outputs: it is re-executed by the next run, whose :func:`sweep` also removes files that no
stamp lists.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from automd_analysis._atomic import write_text_atomic
from automd_analysis.fingerprint import code_fingerprint, environment_fingerprint
from automd_analysis.tasks import sha256_file as file_sha256

__all__ = [
    "OUTPUT_DIRS",
    "STATE_DIR",
    "Stamp",
    "check_stamp",
    "notebook_inputs",
    "notebook_key",
    "publish_outputs",
    "read_stamp",
    "remove_stamp",
    "staging_dir",
    "store_fingerprint",
    "sweep",
]

#: Hidden folder of a report directory holding the stamps and the staging folders.
STATE_DIR = ".automd"
#: Report sub-folders whose files belong to notebooks (each file to exactly one).
OUTPUT_DIRS = ("tables", "figures", "findings", "notebooks", "html")
_STAMP_VERSION = 1


@dataclass(frozen=True)
class Stamp:
    """What a notebook published the last time it ran (``OUT/.automd/<notebook>.json``).

    Attributes
    ----------
    notebook : str
        The notebook's file stem.
    key : str
        :func:`notebook_key` of the inputs it ran with.
    inputs : dict
        Those inputs (:func:`notebook_inputs`), to say what changed.
    title : str
        The title of its HTML page.
    outputs : dict
        Report-relative path (``tables/x.csv``) -> sha256 of every file it published.
    notes : dict
        Pipeline notes that depend on this notebook's run (e.g. the code embeddings).
    seconds : float
        How long it took (to start the longest notebooks first next time).
    """

    notebook: str
    key: str
    inputs: dict
    title: str
    outputs: dict
    notes: dict
    seconds: float = 0.0

    def to_json(self) -> str:
        doc = {"version": _STAMP_VERSION, **self.__dict__}
        return json.dumps(doc, indent=1, sort_keys=True) + "\n"


def staging_dir(out: Path, notebook: str) -> Path:
    """Where notebook ``notebook`` executes before its outputs are published."""
    return out / STATE_DIR / "staging" / notebook


def _stamp_path(out: Path, notebook: str) -> Path:
    return out / STATE_DIR / f"{notebook}.json"


def store_fingerprint(scores_dir: Path) -> str:
    """The published generation of a score store (its id is a hash of its content); for a store
    written without generations, a hash of its files."""
    link = scores_dir / "current"
    if link.is_symlink():
        return "generation:" + os.readlink(link).rsplit("/", 1)[-1]
    digest = hashlib.sha256()
    for path in sorted(scores_dir.glob("*.parquet")) + sorted(scores_dir.glob("store.json")):
        digest.update(path.name.encode() + b"\0" + file_sha256(path).encode())
    return "files:" + digest.hexdigest()


def notebook_inputs(
    source: Path,
    parameters: Mapping[str, object],
    store: str,
    masking: str | None,
    provenance: str = "",
) -> dict:
    """Everything a notebook's outputs depend on: its source, the parameters it receives, the
    store's generation, the masking results it reads (``None`` if it reads none), the provenance
    line its page shows (from ``archive.yaml``, not in the store) and the code and environment
    that execute it."""
    return {
        "notebook": file_sha256(source),
        "parameters": json.loads(json.dumps(dict(parameters), sort_keys=True, default=str)),
        "store": store,
        "masking": masking,
        "provenance": provenance,
        "package": code_fingerprint(),
        "environment": environment_fingerprint(),
    }


def notebook_key(inputs: Mapping[str, object]) -> str:
    """sha256 of the inputs (canonical JSON)."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()


def read_stamp(out: Path, notebook: str) -> Stamp | None:
    """The notebook's stamp, or ``None`` when absent or unreadable (then it is re-executed)."""
    try:
        doc = json.loads(_stamp_path(out, notebook).read_text(encoding="utf-8"))
        if doc.pop("version") != _STAMP_VERSION:
            return None
        return Stamp(**doc)
    except (OSError, ValueError, TypeError, KeyError):
        return None


def remove_stamp(out: Path, notebook: str) -> None:
    """Mark the notebook as not up to date."""
    _stamp_path(out, notebook).unlink(missing_ok=True)


_WHAT = {
    "notebook": "the notebook changed",
    "parameters": "its parameters changed",
    "store": "the score store changed",
    "masking": "the masking results changed",
    "provenance": "the archive's description changed",
    "package": "the automd-analysis code changed",
    "environment": "the Python environment changed",
}


def check_stamp(out: Path, stamp: Stamp | None, key: str, inputs: Mapping) -> str | None:
    """``None`` when the notebook is up to date, else why it must run (one phrase)."""
    if stamp is None:
        return "no earlier successful run"
    if stamp.key != key:
        changed = [_WHAT[k] for k in _WHAT if stamp.inputs.get(k) != inputs.get(k)]
        return "; ".join(changed) or "its inputs changed"
    for rel, sha in sorted(stamp.outputs.items()):
        path = out / rel
        if not path.is_file() or file_sha256(path) != sha:
            return f"its output {rel} is missing or was modified"
    return None


def _staged_files(staging: Path, name: str) -> dict[str, Path]:
    """Report-relative target -> staged file: ``tables/*``, ``figures/*``, ``findings/*``, the
    executed copy, its log and the HTML page."""
    files = {}
    for sub in ("tables", "figures", "findings"):
        if (staging / sub).is_dir():
            for path in sorted((staging / sub).iterdir()):
                if path.is_file() and not path.name.startswith("."):  # no temporaries
                    files[f"{sub}/{path.name}"] = path
    for rel, path in (
        (f"notebooks/{name}.ipynb", staging / f"{name}.ipynb"),
        (f"notebooks/{name}.log", staging / f"{name}.log"),
        (f"html/{name}.html", staging / f"{name}.html"),
    ):
        if path.is_file():
            files[rel] = path
    return files


def publish_outputs(
    out: Path,
    name: str,
    *,
    stamp: Stamp | None,
    key: str | None = None,
    inputs: Mapping | None = None,
    title: str = "",
    notes: Mapping[str, str] | None = None,
    seconds: float = 0.0,
) -> list[str]:
    """Replace a notebook's published files with those of its staging folder.

    The old stamp is removed first and the old files after it; the staged files are moved into
    place; the new stamp is written last, and only when ``key`` is given (a notebook that failed
    publishes its partial outputs and executed copy, but no stamp). Returns the published
    report-relative paths.
    """
    staging = staging_dir(out, name)
    remove_stamp(out, name)
    for rel in stamp.outputs if stamp is not None else {}:
        (out / rel).unlink(missing_ok=True)
    published = {}
    for rel, path in _staged_files(staging, name).items():
        target = out / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        published[rel] = file_sha256(path)
        os.replace(path, target)
    if key is not None:
        new = Stamp(name, key, dict(inputs or {}), title, published, dict(notes or {}), seconds)
        write_text_atomic(_stamp_path(out, name), new.to_json())
    shutil.rmtree(staging, ignore_errors=True)
    return sorted(published)


def sweep(out: Path, keep_notebooks: Iterable[str], also_keep: Iterable[str] = ()) -> list[str]:
    """Remove what no current notebook owns: stamps of notebooks not in ``keep_notebooks``,
    leftover staging folders, and files of :data:`OUTPUT_DIRS` that neither a kept notebook's
    stamp nor ``also_keep`` (report-relative paths, e.g. a failed notebook's partial outputs)
    lists. Returns the removed report-relative paths."""
    keep_notebooks = set(keep_notebooks)
    state = out / STATE_DIR
    owned = set(also_keep)
    if state.is_dir():
        for path in state.glob("*.json"):
            stamp = read_stamp(out, path.stem)
            if path.stem in keep_notebooks and stamp is not None:
                owned.update(stamp.outputs)
            else:
                path.unlink(missing_ok=True)
        shutil.rmtree(state / "staging", ignore_errors=True)
    removed = []
    for sub in OUTPUT_DIRS:
        folder = out / sub
        if not folder.is_dir():
            continue
        for path in sorted(folder.iterdir()):
            rel = f"{sub}/{path.name}"
            if rel not in owned:
                if path.is_dir() and not path.is_symlink():
                    shutil.rmtree(path)
                else:
                    path.unlink()
                removed.append(rel)
    return removed
