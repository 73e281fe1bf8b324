"""Re-runners that probe the masking sandbox from the inside (used by tests/test_masking_sandbox.py).

Each has the re-runner signature ``rerun(run_dir, test_features_csv, out_csv, data, manifests)``
and is selected as ``"sandbox_probe:<name>"``; they stand in for hostile archive code.
"""

from __future__ import annotations

import json
import os
import resource
import socket
import time
from pathlib import Path


def report(run_dir, test_features_csv, out_csv, data=None, manifests=None):
    """Write what the code can see and do as JSON (in place of predictions)."""
    port = int(Path(run_dir, "code", "v0001", "port.txt").read_text())
    try:
        socket.create_connection(("127.0.0.1", port), timeout=3).close()
        network = "reachable"
    except OSError as exc:
        network = f"blocked: {type(exc).__name__}"
    files = sorted(str(p.relative_to(Path.cwd())) for p in Path.cwd().rglob("*") if p.is_file())
    info = {
        "cwd": os.getcwd(),
        "env": sorted(os.environ),
        "files": files,
        "network": network,
        "limits": {
            name: resource.getrlimit(getattr(resource, name))[0]
            for name in ("RLIMIT_CPU", "RLIMIT_AS", "RLIMIT_FSIZE", "RLIMIT_NOFILE")
        },
        "data": data,
        "test": str(test_features_csv),
    }
    Path(out_csv).write_text(json.dumps(info), encoding="utf-8")


def hog_memory(run_dir, test_features_csv, out_csv, data=None, manifests=None):
    blocks = []
    for _ in range(64):
        blocks.append(bytearray(1 << 30))  # 1 GiB at a time, far beyond the test's limit


def sleep_forever(run_dir, test_features_csv, out_csv, data=None, manifests=None):
    time.sleep(3600)


def write_huge(run_dir, test_features_csv, out_csv, data=None, manifests=None):
    with open(out_csv, "wb") as fh:
        for _ in range(64):
            fh.write(b"x" * (1 << 20))


def spin(run_dir, test_features_csv, out_csv, data=None, manifests=None):
    while True:
        pass


def symlink_out(run_dir, test_features_csv, out_csv, data=None, manifests=None):
    os.symlink("/etc/passwd", out_csv)
