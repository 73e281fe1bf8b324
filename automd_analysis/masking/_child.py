"""The sandbox child: apply the limits, call one installed re-runner, report as JSON.

Started by :class:`automd_analysis.masking.sandbox.SandboxedRerun` as
``python -s -P -m automd_analysis.masking._child spec.json`` in the sandbox directory. The spec holds
paths (as data) and the ``module:function`` of the re-runner; nothing in it is ever evaluated.
The outcome goes to ``spec["result"]``: ``{"ok": true}`` or ``{"ok": false, "error": {code,
message, fix}}``.
"""

from __future__ import annotations

import importlib
import json
import resource
import sys
import traceback
from pathlib import Path


def _apply_limits(limits: dict) -> None:
    for name, value in limits.items():
        kind = getattr(resource, name)
        soft, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        resource.setrlimit(kind, (value, value))


def _load(target: str):
    module_name, _, attr = target.partition(":")
    function = getattr(importlib.import_module(module_name), attr, None)
    if not callable(function):
        raise TypeError(f"{target} is not a callable re-runner")
    return function


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    _apply_limits(spec["rlimits"])
    outcome: dict = {"ok": False}
    try:
        rerun = _load(spec["target"])
        for test_features, out in spec["jobs"]:
            rerun(
                Path(spec["run_dir"]),
                Path(test_features),
                Path(out),
                data=spec["data"],
                manifests=spec["manifests"],
            )
        outcome = {"ok": True}
    except BaseException as exc:  # report every failure of foreign code as data
        outcome["error"] = {
            "code": getattr(exc, "code", None) or type(exc).__name__,
            "message": getattr(exc, "message", None) or str(exc),
            "fix": getattr(exc, "fix", None),
            "traceback": traceback.format_exc()[-3000:],
        }
    Path(spec["result"]).write_text(json.dumps(outcome, default=str), encoding="utf-8")
    return 0 if outcome["ok"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
