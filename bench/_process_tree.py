"""Time one ``automd`` command as a user runs it: a fresh process, its stage lines, the wall and
CPU seconds and peak memory of its whole process tree (scoring workers, notebook kernels).

Used by ``bench_scoring.py`` (run as ``python bench/<script>.py``, so this directory is on
``sys.path``). Needs ``psutil`` (installed with ``distributed``).
"""

from __future__ import annotations

import contextlib
import os
import re
import resource
import subprocess
import sys
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _tree(root) -> list:
    """psutil processes of ``root`` and its living descendants."""
    import psutil

    try:
        return [root, *root.children(recursive=True)]
    except psutil.Error:
        return [root]


def _tree_cpu(root) -> float:
    """CPU seconds of the process tree so far: every living process with the children it has
    reaped (a finished worker is counted in its parent's ``children_*``)."""
    import psutil

    total = 0.0
    for proc in _tree(root):
        try:
            t = proc.cpu_times()
        except psutil.Error:
            continue
        total += t.user + t.system + t.children_user + t.children_system
    return total


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


class _MemorySampler:
    """The largest process and the largest sum over the tree, sampled every 0.2 s."""

    def __init__(self, root) -> None:
        self.root, self.rss_max, self.rss_sum_max = root, 0, 0
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import psutil

        while not self._done.wait(0.2):
            rss = []
            for proc in _tree(self.root):
                with contextlib.suppress(psutil.Error):
                    rss.append(proc.memory_info().rss)
            if rss:
                self.rss_max = max(self.rss_max, max(rss))
                self.rss_sum_max = max(self.rss_sum_max, sum(rss))

    def stop(self) -> None:
        self._done.set()
        self._thread.join()


def steps_between(lines, markers, wall: float, cpu: float) -> list[tuple[str, float, float]]:
    """(step, wall s, CPU s) from each marker's first line to the next marker found (the first
    step, ``start-up``, from the start; the last to ``wall``/``cpu``, the end).

    ``lines`` are ``(wall s, CPU s, text)`` in the order logged; ``markers`` are ``(step name,
    regular expression)`` in the order the steps run; a marker never logged is left out.
    """
    points = [("start-up", 0.0, 0.0)]
    for name, pattern in markers:
        hit = next(((t, c) for t, c, text in lines if re.match(pattern, text)), None)
        if hit is not None:
            points.append((name, *hit))
    points.append(("end", wall, cpu))
    return [(a[0], b[1] - a[1], b[2] - a[2]) for a, b in zip(points, points[1:], strict=False)]


class Command:
    """Run ``python -m automd_analysis *args`` from the repository and measure it.

    Attributes: ``lines`` ((wall s, tree CPU s, stderr line) as logged, without the ``automd: ``
    prefix), ``wall``, ``cpu`` (exact CPU seconds of the whole tree, from ``getrusage``),
    ``rss_max`` / ``rss_sum_max`` (bytes), ``load`` (1-minute load average before and after),
    ``stdout``. A command that fails raises ``SystemExit`` with the end of its log.
    """

    def __init__(self, args: list[str]):
        import psutil

        self.args, self.lines = args, []
        cpu0, self.load = _children_cpu(), [os.getloadavg()[0]]
        start = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "automd_analysis", *args], cwd=REPO,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHONPATH": str(REPO)})  # fmt: skip
        root = psutil.Process(proc.pid)
        memory = _MemorySampler(root)
        for line in proc.stderr:
            text = line.rstrip("\n").removeprefix("automd: ")
            self.lines.append((time.perf_counter() - start, _tree_cpu(root), text))
        self.stdout = proc.stdout.read()
        proc.wait()
        memory.stop()
        self.wall, self.cpu = time.perf_counter() - start, _children_cpu() - cpu0
        self.rss_max, self.rss_sum_max = memory.rss_max, memory.rss_sum_max
        self.load.append(os.getloadavg()[0])
        if proc.returncode != 0:
            tail = "\n".join(text for _, _, text in self.lines[-40:])
            raise SystemExit(f"automd {' '.join(args)} failed ({proc.returncode}):\n{tail}")

    def steps(self, markers) -> list[tuple[str, float, float]]:
        """:func:`steps_between` of this command's lines."""
        return steps_between(self.lines, markers, self.wall, self.cpu)

    def notebooks(self) -> dict[str, int]:
        """Seconds of each executed notebook, as the command logged them."""
        found = (re.search(r"notebook (\S+): (?:ok|FAILED) \((\d+) s\)", text)
                 for _, _, text in self.lines)  # fmt: skip
        return {m[1]: int(m[2]) for m in found if m}

    def row(self, label: str) -> str:
        """A Markdown row: label, wall s, CPU s, largest process GiB, tree GiB, load."""
        return (
            f"| {label} | {self.wall:.1f} | {self.cpu:.1f} | {self.rss_max / 2**30:.2f} | "
            f"{self.rss_sum_max / 2**30:.2f} | {self.load[0]:.1f} / {self.load[1]:.1f} |"
        )

    def to_dict(self, markers) -> dict:
        """The numbers, JSON-ready."""
        return {"args": self.args, "wall_s": self.wall, "cpu_s": self.cpu,
                "rss_max_gib": self.rss_max / 2**30, "rss_tree_gib": self.rss_sum_max / 2**30,
                "load": self.load, "steps": self.steps(markers),
                "notebooks": self.notebooks()}  # fmt: skip
