"""Every fenced example of the README and ``docs/`` runs as written and does what it says.

Each fenced block is handled by its language:

- ``python``: executed, in a sandbox copy of the repository (below);
- ``bash``: every command is executed there too, except those listed in :data:`NOT_RUN`, each
  with the reason and the test that runs the same thing instead; a command's options must exist;
- ``text``: a synopsis or a diagram, not run; every ``automd ...`` line must name a real command
  and only options it has (placeholders in capitals, ``[optional]`` parts and ``a|b`` choices are
  allowed here and only here);
- ``yaml``, ``json``, ``toml``: parsed.

A block in any other language fails the test, so a new example is run or consciously listed.

**The sandbox.** The examples assume ``make demo`` has run: ``data/`` holds the demo tasks and
``runs_archive/demo`` the demo archive (about 8 minutes to build). The test builds a throwaway
repository instead: copies of the package, the notebooks and the manifests (so every default path
of ``automd`` - ``scores/<archive>``, ``reports/`` - lands in the sandbox, never in this checkout),
``data/`` with the demo tasks (built once per machine, ``demo_root``) *and the small fixture
archive's tasks*, and, **in place of the demo archive, the small test fixture archive
(``tests/fixtures/small/archive``) at ``runs_archive/demo``**: the commands run as written on
that archive. Where an example reads files a user would have (``submission.csv`` of docs/tasks.md)
the sandbox provides them, as :func:`sandbox` says.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
FIXTURE = ROOT / "tests" / "fixtures" / "small"
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
LANGUAGES = ("python", "bash", "text", "yaml", "json", "toml")

#: Commands of ``bash`` blocks that the test does not run (prefix of the command as written ->
#: why, and where the same thing is run instead).
NOT_RUN = {
    "make demo": "the 8-minute main job: CI builds it from a fresh clone; bench/ times it",
    "make test": "the test suite cannot run itself: CI runs `make test` on a fresh clone",
    "make test-fast": "a subset of `make test` (CI)",
    ".venv/bin/jupyter lab": "starts an interactive server; the notebook it opens is run by "
    "papermill in the next lines and by tests/test_regenerate.py",
    "automd regenerate runs_archive/demo --out reports --metric": "tests/test_regenerate.py "
    "runs regenerate with --metric my_metrics:sens_at_90_spec on the fixture archive",
    "automd import": "needs an agent's own logs; every format and option of these lines is "
    "imported by tests/test_importers_integration.py from logs written in each agent's format",
    "automd regenerate runs_archive/fmlbench": "reports on the archive the automd import line "
    "before it writes; tests/test_fmlbench_results.py regenerates an imported FML-bench tree",
    "A=runs_archive/study": "the variable of the import walkthrough (see automd import)",
    "for t in uci_diabetes": "the walkthrough's baselines on a benchmark task whose data is not "
    "redistributable; automd baselines runs in tests/test_harness_cli.py",
    "automd score $A": "scores the study archive of the walkthrough (see automd import)",
    "automd regenerate $A": "reports on the study archive of the walkthrough (see automd import)",
    "dask scheduler": "starts a Dask scheduler; tests/test_scoring_engine.py scores through a "
    "LocalCluster of two worker processes instead",
    "dask worker": "joins a Dask cluster (see dask scheduler)",
    "automd score /shared/": "scores on a real cluster with shared paths (see dask scheduler)",
}


@dataclass(frozen=True)
class Block:
    path: Path
    line: int
    language: str
    text: str

    def __str__(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{self.line} ({self.language})"


def fenced_blocks() -> list[Block]:
    """Every fenced code block of the README and docs/*.md."""
    out = []
    for path in DOCUMENTS:
        lines = path.read_text(encoding="utf-8").splitlines()
        i = 0
        while i < len(lines):
            opening = re.match(r"^```(\w*)\s*$", lines[i])
            if opening is None:
                i += 1
                continue
            end = next(j for j in range(i + 1, len(lines)) if lines[j].startswith("```"))
            out.append(Block(path, i + 1, opening.group(1), "\n".join(lines[i + 1 : end]) + "\n"))
            i = end + 1
    return out


BLOCKS = fenced_blocks()


def commands(text: str) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments and blanks dropped."""
    joined = re.sub(r"\\\n\s*", " ", text)
    out = []
    for line in joined.splitlines():
        line = re.sub(r"(^|\s)#.*$", "", line).strip()
        if line:
            out.append(line)
    return out


def test_every_block_has_a_handled_language():
    assert BLOCKS, "no fenced blocks found"
    unknown = [str(b) for b in BLOCKS if b.language not in LANGUAGES]
    assert not unknown, f"fenced blocks without a language this test runs or checks: {unknown}"


# ------------------------------------------------------------------------------------------------
# synopses: the commands and options exist


def _command_and_options(line: str) -> tuple[str, set[str]]:
    from cli_tree import command_paths

    words = line.split()
    if words[0].endswith("automd"):
        words = words[1:]
    paths = sorted(command_paths(), key=len, reverse=True)
    command = next((p for p in paths if " ".join(words[: len(p.split())]) == p), None)
    if command is None and words and words[0].startswith("-"):
        command = ""  # automd --version
    if command is None and words and words[0] == "annotate":
        command = "annotate archive"  # the main form: automd annotate ARCHIVE ...
    options = set(re.findall(r"(?<![\w-])(--[a-z][\w-]*)", line))
    return command, options


def _known_options(command: str) -> set[str]:
    from cli_tree import command_at

    found = {"--help"}
    for param in command_at(command).params:
        found |= {*param.opts, *param.secondary_opts}
    return found


def synopsis_lines() -> list[tuple[Block, str]]:
    out = []
    for block in BLOCKS:
        if block.language not in ("text", "bash"):
            continue
        for line in commands(block.text):
            if re.match(r"^(\.venv/bin/)?automd\s", line):
                out.append((block, line))
    readme_table = re.findall(r"^\| `(automd [^`]+)` \|", (ROOT / "README.md").read_text(), re.M)
    out += [(Block(ROOT / "README.md", 0, "table", ""), line) for line in readme_table]
    return out


@pytest.mark.parametrize("block, line", synopsis_lines(), ids=lambda v: str(v)[:60])
def test_every_automd_line_names_a_command_and_only_its_options(block, line):
    words = line.replace("\\|", "|").split()
    choice = next((i for i, w in enumerate(words) if "|" in w and not w.startswith("-")), None)
    variants = [line] if choice is None else [
        " ".join([*words[:choice], alternative, *words[choice + 1 :]])
        for alternative in words[choice].split("|")
    ]  # fmt: skip
    for variant in variants:
        command, options = _command_and_options(variant)
        assert command is not None, f"{block}: {variant!r} names no automd command"
        unknown = options - _known_options(command)
        assert not unknown, f"{block}: automd {command} has no option {sorted(unknown)}"


def test_bash_blocks_hold_no_placeholders():
    """A ``bash`` block is run as written: synopses with ``ARCHIVE``, ``[--x]`` or ``a|b`` are
    ``text`` blocks."""
    bad = []
    for block in BLOCKS:
        if block.language != "bash":
            continue
        for line in commands(block.text):
            placeholder = re.search(r"\[--|\b[A-Z]{3,}\b(?!=)|\w\|\w", line)
            shell = line.startswith("A=") or re.search(r"\$A\b", line) or "{" in line
            if placeholder and not shell:
                bad.append(f"{block}: {line}")
    assert not bad, "\n".join(bad)


# ------------------------------------------------------------------------------------------------
# data blocks parse


@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language in ("yaml", "json", "toml")],
                         ids=str)  # fmt: skip
def test_data_blocks_parse(block):
    parse = {"yaml": yaml.safe_load, "json": json.loads, "toml": tomllib.loads}[block.language]
    assert parse(block.text) is not None, str(block)


# ------------------------------------------------------------------------------------------------
# the sandbox and the runnable examples


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory, demo_root):
    """A throwaway repository: package, notebooks and manifests copied; ``data/`` with the demo
    tasks and the fixture's tasks; the **small fixture archive at ``runs_archive/demo``** (in place
    of the demo archive); a score store of it at ``scores/demo`` (what ``make demo`` leaves);
    ``submission.csv`` (docs/tasks.md validates one) = demo_support's sample submission."""
    root = tmp_path_factory.mktemp("doc-examples") / "repo"
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".ipynb_checkpoints")
    for name in ("automd_analysis", "automd_demo", "notebooks", "data_manifests"):
        shutil.copytree(ROOT / name, root / name, ignore=ignore)
    for manifest in (FIXTURE / "manifests").glob("*.yaml"):
        shutil.copy(manifest, root / "data_manifests" / manifest.name)
    data = root / "data"
    data.mkdir()
    for entry in Path(demo_root).iterdir():
        if entry.is_dir():
            (data / entry.name).symlink_to(entry.resolve())
    for entry in (FIXTURE / "data").iterdir():
        (data / entry.name).symlink_to(entry.resolve())
    shutil.copytree(FIXTURE / "archive", root / "runs_archive" / "demo")
    shutil.copy(Path(demo_root) / "tasks" / "demo_support" / "sample_submission.csv",
                root / "submission.csv")  # fmt: skip
    (root / "tmp").mkdir()
    module = next(b for b in BLOCKS if b.language == "python" and b.path.name == "extending.md")
    (root / "my_metrics.py").write_text(module.text)  # "Save this as my_metrics.py"
    done = run(root, "automd score runs_archive/demo --out scores/demo --no-progress")
    assert done.returncode == 0, done.stderr
    return root


def _env(root: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AUTOMD_")}
    return env | {"PYTHONPATH": str(root), "MPLBACKEND": "Agg"}


def run(root: Path, command: str, timeout: float = 1200) -> subprocess.CompletedProcess:
    """A documented command in the sandbox: ``automd``/``papermill`` (with or without
    ``.venv/bin/``) through this interpreter; ``/tmp/`` paths inside the sandbox."""
    words = shlex.split(command.replace("/tmp/", f"{root}/tmp/"))
    program = words[0].rsplit("/", 1)[-1]
    module = {"automd": "automd_analysis", "papermill": "papermill"}[program]
    return subprocess.run([sys.executable, "-m", module, *words[1:]], cwd=root, env=_env(root),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def run_python(root: Path, code: str, timeout: float = 600) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=root, env=_env(root),
                          capture_output=True, text=True, timeout=timeout)  # fmt: skip


def runnable() -> list[tuple[Block, str]]:
    out = []
    for block in BLOCKS:
        if block.language == "bash":
            out += [(block, c) for c in commands(block.text) if not c.startswith(tuple(NOT_RUN))]
    return out


def test_every_bash_command_is_run_or_listed_with_a_reason():
    """Nothing is left out silently: each command is run below or listed in :data:`NOT_RUN`."""
    for block in BLOCKS:
        for command in commands(block.text) if block.language == "bash" else []:
            run_here = command.split()[0].rsplit("/", 1)[-1] in ("automd", "papermill")
            assert run_here or command.startswith(tuple(NOT_RUN)), f"{block}: {command}"


def test_benchmark_commands_name_only_options_the_script_has():
    for block in BLOCKS:
        for command in commands(block.text) if block.language in ("bash", "text") else []:
            if not command.startswith("python bench/"):
                continue
            script = command.split()[1]
            shown = subprocess.run([sys.executable, str(ROOT / script), "--help"], cwd=ROOT,
                                   capture_output=True, text=True, timeout=120)  # fmt: skip
            assert shown.returncode == 0, shown.stderr
            for option in re.findall(r"(--[a-z][\w-]*)", command):
                assert option in shown.stdout, f"{block}: {script} has no {option}"


@pytest.mark.slow
@pytest.mark.parametrize("block, command", runnable(), ids=lambda v: str(v)[:70])
def test_bash_example_runs_as_written(block, command, sandbox):
    done = run(sandbox, command)
    assert done.returncode == 0, f"{block}: {command}\n{done.stderr[-3000:]}"
    if "--ece-bins 15" in command:  # the store is scored with 15 bins
        settings = json.loads((sandbox / "scores/demo-15-bins/store.json").read_text())
        assert settings["settings"]["ece_n_bins"] == 15
    if command.split()[0].endswith("papermill") and "-p n_bins 15" in command:
        # does what it says: the notebook reads the 15-bin store and says so, without a warning
        executed = nbformat.read(sandbox / "tmp" / "02.ipynb", as_version=4)
        shown = json.dumps([c.get("outputs", []) for c in executed.cells])
        assert "ece_n_bins = 15" in shown and "was requested, but" not in shown
    if "--help-notebook" in command:
        assert "--ece-bins" in done.stdout  # n_bins says how to set it


@pytest.mark.slow
@pytest.mark.parametrize("block", [b for b in BLOCKS if b.language == "python"], ids=str)
def test_python_example_runs_as_written(block, sandbox):
    code = block.text
    if block.path.name == "extending.md":  # the module the sandbox saved: it imports
        code = "import my_metrics; print(my_metrics.sens_at_90_spec.name)"
    done = run_python(sandbox, code)
    assert done.returncode == 0, f"{block}\n{done.stderr[-3000:]}"
    if block.path.name == "README.md":
        assert re.fullmatch(r"AUROC \d\.\d{3} \(95% CI \d\.\d{3} to \d\.\d{3}\), ECE \d\.\d{3}\n",
                            done.stdout), done.stdout  # fmt: skip
    if block.path.name == "tables.md":
        assert (sandbox / "reports" / "tables" / "table2_primary_scores.csv").is_file()
