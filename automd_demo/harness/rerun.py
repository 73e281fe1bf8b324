"""Re-run an archived demo run's selected model on another test-features file (paper App. G).

The masking test of the real-time rule reruns "the code that produced the selected submission" on
a masked test file and compares alarms at the retained hours. For runs written by this harness
that code is fully determined by ``code/<version>/config.json``: :func:`rerun_submission`
validates the config against the harness's typed schema (:mod:`.config_schema`: integers,
finite floats, booleans and closed vocabularies only), re-renders the script from the *validated*
values with the harness's own renderer, checks that it is *identical* to the archived script (so
a tampered archive is refused rather than executed), refits it deterministically on the task's
public training data and predicts the given file. Baseline runs are refitted with
:func:`automd_demo.baselines.fit_baseline`.

Archive bytes are never executed and never pasted into source text: only the re-rendered text of
validated values runs. The toolkit calls this function only inside its sandbox
(``automd masking run --allow-code-execution``; ``automd_analysis.masking.sandbox``): a separate
process with resource limits, no network where the machine allows it, and a working directory that
holds the task's public files only. It is registered as the re-runner ``demo`` (entry-point group
``automd.rerunners``).
"""

from __future__ import annotations

from pathlib import Path

from automd_analysis.archive.safe import (
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    check_name,
    json_loads_strict,
    read_bounded,
)
from automd_analysis.errors import ArchiveError
from automd_analysis.tasks import get_task
from automd_demo.harness.config_schema import BaselineConfigFile, validate_config_file
from automd_demo.harness.lab import Lab
from automd_demo.harness.render import render
from automd_demo.harness.script_runner import Memo
from automd_demo.harness.taskdata import load_profile


def _json(path: Path, root: Path) -> dict:
    return json_loads_strict(read_bounded(path, MAX_JSON_BYTES, root), path, "archive.invalid_json")


def _header(text: str) -> list[str]:
    """The docstring lines of an archived script (the part outside the content key)."""
    if not text.startswith('"""'):
        return []
    head = text[3:].split('"""', 1)[0]
    return head.rstrip("\n").split("\n")


def rerun_submission(
    run_dir: str | Path,
    test_features_csv: str | Path,
    out_csv: str | Path,
    data: str | Path | None = None,
    manifests: str | Path | None = None,
) -> Path:
    """Refit the selected version of ``run_dir`` and write predictions for ``test_features_csv``.

    Parameters
    ----------
    run_dir : path
        ``<archive>/<experiment>/<agent>/<task>/rep<k>`` written by the demo harness or by
        ``automd baselines``.
    test_features_csv : path
        A test-features file with the task's columns (e.g. the masked file of App. G).
    out_csv : path
        Where to write the submission.
    data, manifests : path, optional
        Data root / manifest directory of the task.

    Returns
    -------
    Path
        ``out_csv``.

    Raises
    ------
    ArchiveError
        ``archive.no_selection`` (the run selected nothing), ``archive.rerun_unsupported``
        (no harness config), ``archive.rerun_mismatch`` (the archived script is not what its
        config renders to), ``archive.rerun_failed`` (the script raised).
    """
    from automd_demo.harness import binning_memo

    binning_memo.install()  # pure: the refit is what it was, its ensemble members bin once
    run_dir = Path(run_dir).resolve()
    run = _json(run_dir / "run.json", run_dir)
    version = (run.get("selection") or {}).get("selected_version")
    if not version:
        raise ArchiveError(
            "the run selected no version, so there is nothing to re-run",
            path=run_dir / "run.json",
            location="selection.selected_version",
            code="archive.no_selection",
        )
    check_name(version, run_dir / "run.json", "selected version")
    config_path = run_dir / "code" / version / "config.json"
    if not config_path.is_file():
        raise ArchiveError(
            f"no harness config for version {version!r}",
            path=config_path,
            code="archive.rerun_unsupported",
            fix="only runs written by the demo harness or `automd baselines` can be re-run",
        )
    stored = validate_config_file(_json(config_path, run_dir), config_path)
    task = get_task(stored.task, data, manifests)
    out_csv = Path(out_csv)
    out_csv.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(stored, BaselineConfigFile):  # a simple-baseline run
        from automd_demo.baselines import fit_baseline

        fit = fit_baseline(task, stored.seed, test_features=Path(test_features_csv))
        fit.submission.to_csv(out_csv, index=False, lineterminator="\n")
        return out_csv
    archived_path = run_dir / "code" / version / "train.py"
    archived = read_bounded(archived_path, MAX_TEXT_BYTES, run_dir).decode("utf-8")
    profile = load_profile(task)
    config = stored.config.model_dump(mode="json")
    script = render(config, profile, _header(archived))
    if script.text != archived:
        raise ArchiveError(
            "the archived script is not what its config renders to; refusing to run it",
            path=archived_path,
            code="archive.rerun_mismatch",
            fix="rebuild the run with `automd demo archive`",
        )
    lab = Lab(task, profile, Memo(None), test_features=Path(test_features_csv))
    _, result = lab.execute(config, _header(archived), version)
    if not result.ok:
        raise ArchiveError(
            f"the re-run failed: {result.error}",
            path=archived_path,
            code="archive.rerun_failed",
            details={"log": result.log[-2000:]},
        )
    out_csv.write_bytes(result.csv)
    return out_csv
