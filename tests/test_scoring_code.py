"""What the scorer publishes for the process analyses and the report: each version's code text
(``code.parquet`` + ``code_texts.parquet``) and the task facts (``tasks.parquet``)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from automd_analysis.analysis.store import ScoreStore, code_problems, load_store
from automd_analysis.archive import Run, open_archive
from automd_analysis.errors import ArchiveError, ScoreStoreError
from automd_analysis.scoring import score_archive
from automd_analysis.scoring.code import (
    MAX_CODE_FILE_BYTES,
    code_tables,
    node_code_files,
    version_code,
)
from automd_analysis.scoring.publish import run_key, task_rows
from automd_analysis.tasks import load_manifests

SMALL = Path(__file__).resolve().parent / "fixtures" / "small"


def _run(files: dict[str, str | Exception], versions: dict[str, list[str]]):
    reads = []

    def read_text(rel, max_bytes):
        reads.append((rel, max_bytes))
        value = files[rel]
        if isinstance(value, Exception):
            raise value
        return value

    run = SimpleNamespace(
        run_id="main/a/t/rep0",
        versions=[SimpleNamespace(version_id=v, code_files=c) for v, c in versions.items()],
        steps=None,
        read_text=read_text,
    )
    return run, reads


def test_version_code_joins_sorted_files_read_through_the_reader():
    run, reads = _run({"code/v1/b.py": "B", "code/v1/a.py": "A"}, {"v1": ["code/v1/b.py",
                                                                      "code/v1/a.py"]})  # fmt: skip
    problems: list[dict] = []
    assert version_code(run, run.versions[0], problems) == ("A\nB", 2)
    assert reads == [("code/v1/a.py", MAX_CODE_FILE_BYTES), ("code/v1/b.py", MAX_CODE_FILE_BYTES)]
    assert problems == []


def test_the_layout_places_every_file_in_its_version_s_text():
    run, _ = _run({"code/v1/b.py": "B\nb\n", "code/v1/a.py": "A", "code/v1/c.json": "{}"},
                  {"v1": ["code/v1/c.json", "code/v1/b.py", "code/v1/a.py"]})  # fmt: skip
    layout: list[dict] = []
    rows, texts, _ = code_tables([run], lambda r: {"run_id": r.run_id}, layout)
    text = texts[0]["text"]
    assert [r["file"] for r in layout] == ["code/v1/a.py", "code/v1/b.py", "code/v1/c.json"]
    assert [text[r["start"] : r["start"] + r["length"]] for r in layout] == ["A", "B\nb\n", "{}"]
    assert {r["version"] for r in layout} == {"v1"} and rows[0]["n_files"] == 3


def test_an_unreadable_file_is_left_out_and_listed():
    too_large = ArchiveError("file too large", code="archive.too_large", path="code/v1/big.py")
    run, _ = _run(
        {"code/v1/big.py": too_large, "code/v1/ok.py": "ok", "code/v2/big.py": too_large},
        {"v1": ["code/v1/big.py", "code/v1/ok.py"], "v2": ["code/v2/big.py"], "v3": []},
    )
    rows, texts, unreadable = code_tables([run], lambda r: {"run_id": r.run_id})
    assert [(r["version"], r["n_files"]) for r in rows] == [("v1", 1)]  # v2: nothing readable
    assert texts == [{"code_sha256": hashlib.sha256(b"ok").hexdigest(), "text": "ok"}]
    assert [(u["version"], u["file"], u["error"].code) for u in unreadable] == [
        ("v1", "code/v1/big.py", "archive.too_large"),
        ("v2", "code/v2/big.py", "archive.too_large"),
    ]


def test_identical_code_is_stored_once():
    run, _ = _run({"a.py": "same", "b.py": "same"}, {"v1": ["a.py"], "v2": ["b.py"]})
    rows, texts, _ = code_tables([run], lambda r: {"run_id": r.run_id})
    assert len(rows) == 2 and len(texts) == 1
    assert rows[0]["code_sha256"] == rows[1]["code_sha256"] == texts[0]["code_sha256"]


def _node_run(root: Path, files: dict[str, str], nodes: list[str | None], versions=()):
    """A run folder holding ``files`` whose ``run.json`` steps name ``nodes``, read through the
    archive's own safe reader."""
    run_dir = root / "main" / "a" / "t" / "rep0"
    for rel, text in files.items():
        (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / rel).write_text(text)
    run = SimpleNamespace(
        run_id="main/a/t/rep0", dir=run_dir, archive_root=root, versions=list(versions),
        steps=tuple(SimpleNamespace(node=n, version=None) for n in nodes),
    )  # fmt: skip
    run.read_text = lambda rel, max_bytes: Run.read_text(run, rel, max_bytes)
    return run


def test_a_run_without_versions_publishes_the_code_of_the_nodes_its_steps_name(tmp_path):
    run = _node_run(
        tmp_path,
        {"code/n1/runfile.py": "A", "code/n1/lib/util.py": "U\n", "code/n2/runfile.py": "A\nU\n",
         "code/stray/x.py": "not a step", "code/n3.py": "not a folder"},
        ["n2", "n1", None, "n1", "n3", "n4"],
    )  # fmt: skip
    assert node_code_files(run) == {"n2": ["code/n2/runfile.py"],
                                    "n1": ["code/n1/lib/util.py", "code/n1/runfile.py"]}  # fmt: skip
    layout: list[dict] = []
    rows, texts, unreadable = code_tables([run], lambda r: {"run_id": r.run_id}, layout)
    sha = hashlib.sha256(b"U\n\nA").hexdigest()
    assert rows == [
        {"run_id": "main/a/t/rep0", "version": "n1", "n_files": 2, "code_sha256": sha},
        {"run_id": "main/a/t/rep0", "version": "n2", "n_files": 1,
         "code_sha256": hashlib.sha256(b"A\nU\n").hexdigest()},
    ]  # fmt: skip
    assert [(r["version"], r["file"], r["start"], r["length"]) for r in layout] == [
        ("n1", "code/n1/lib/util.py", 0, 2), ("n1", "code/n1/runfile.py", 3, 1),
        ("n2", "code/n2/runfile.py", 0, 4),
    ]  # fmt: skip
    assert {t["code_sha256"]: t["text"] for t in texts}[sha] == "U\n\nA" and unreadable == []


def test_a_run_with_versions_publishes_its_versions_code_only(tmp_path):
    version = SimpleNamespace(version_id="v1", code_files=["code/v1/a.py"])
    run = _node_run(tmp_path, {"code/v1/a.py": "v", "code/n1/a.py": "node"}, ["n1"], [version])
    assert node_code_files(run) == {}
    rows, _, _ = code_tables([run], lambda r: {"run_id": r.run_id})
    assert [r["version"] for r in rows] == ["v1"]


def test_unsafe_node_files_are_listed_as_problems_and_the_others_read(tmp_path):
    run = _node_run(tmp_path, {"code/n1/ok.py": "ok\x00</script>", "code/n1/big.py": "x" * 10,
                               "code/n1/bad\nname.py": "y"}, ["n1"])  # fmt: skip
    (run.dir / "code" / "n1" / "leak.py").symlink_to("/etc/passwd")
    (run.dir / "code" / "n1" / "linked").symlink_to("/etc", target_is_directory=True)
    (run.dir / "code" / "n1" / "big.py").write_bytes(b"#" * (MAX_CODE_FILE_BYTES + 1))
    rows, texts, unreadable = code_tables([run], lambda r: {"run_id": r.run_id})
    assert [(r["version"], r["n_files"]) for r in rows] == [("n1", 1)]
    assert [t["text"] for t in texts] == ["ok\x00</script>"]  # kept as text; the page escapes it
    assert sorted((u["file"], u["error"].code) for u in unreadable) == [
        ("code/n1/bad\nname.py", "archive.bad_name"), ("code/n1/big.py", "archive.too_large"),
        ("code/n1/leak.py", "archive.unsafe_path"),
    ]  # fmt: skip
    # the symlinked directory is neither entered nor read


@pytest.fixture(scope="module")
def scored(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("code") / "scores"
    score_archive(
        SMALL / "archive", out, data=SMALL / "data", manifests=SMALL / "manifests", bootstrap=0
    )
    return out


@pytest.mark.slow
def test_the_store_holds_every_version_s_code_as_the_archive_has_it(scored):
    store = load_store(scored)
    archive = open_archive(SMALL / "archive")
    code = store.code_texts()
    expected = {}
    for run in archive.runs():
        for version in run.versions:
            files = sorted(version.code_files)
            if files:
                text = "\n".join((run.dir / f).read_text(encoding="utf-8") for f in files)
                expected.setdefault(run.run_id, {})[version.version_id] = text
    assert code == expected and len(code) > 10
    assert store.code_texts(["main/beta/fx_cls/rep0"]) == {
        "main/beta/fx_cls/rep0": expected["main/beta/fx_cls/rep0"]
    }
    assert code_problems(store).empty
    rows, _, _ = code_tables(archive.runs(), run_key)
    assert len(store.code) == len(rows)
    files = store.code_files_texts()
    expected_files = {
        run.run_id: {
            v.version_id: {f: (run.dir / f).read_text(encoding="utf-8") for f in v.code_files}
            for v in run.versions
            if v.code_files
        }
        for run in archive.runs()
    }
    assert files == {r: vs for r, vs in expected_files.items() if vs}


@pytest.mark.slow
def test_the_store_holds_the_task_facts_of_its_runs(scored):
    store = load_store(scored)
    manifests = load_manifests(SMALL / "manifests")
    tasks = store.tasks.set_index("task")
    assert list(tasks.index) == sorted(set(store.runs["task"]))
    for task, row in tasks.iterrows():
        m = manifests[task]
        assert (row["unit"], row["access"], row["metric"]) == (
            m.sizes.unit,
            m.source.access,
            m.metric.value,
        )
        assert row["manifest_sha256"] == store.meta["tasks"][task]


@pytest.mark.slow
def test_a_store_missing_code_texts_says_so(scored, tmp_path):
    store = load_store(scored)
    broken = ScoreStore.from_frames(
        scores=store.scores, runs=store.runs, code=store.code, path=tmp_path
    )
    with pytest.raises(ScoreStoreError) as info:
        broken.code_texts()
    assert info.value.code == "store.missing_table" and "code_texts.parquet" in str(info.value)
    partial = ScoreStore.from_frames(
        scores=store.scores,
        runs=store.runs,
        code=store.code,
        code_texts=pd.DataFrame({"code_sha256": ["x"], "text": ["y"]}),
    )
    with pytest.raises(ScoreStoreError, match="lacks"):
        partial.code_texts()


@pytest.mark.slow
def test_a_store_without_the_layout_reads_each_version_as_one_file(scored):
    store = load_store(scored)
    old = ScoreStore.from_frames(scores=store.scores, runs=store.runs, code=store.code,
                                 code_texts=pd.read_parquet(scored / "code_texts.parquet"))  # fmt: skip
    whole = old.code_files_texts(["main/beta/fx_cls/rep0"])["main/beta/fx_cls/rep0"]
    assert whole == {v: {"code": t} for v, t in store.code_texts()["main/beta/fx_cls/rep0"].items()}
    layout = store.code_files.copy()
    layout.loc[0, "length"] = 10**9  # a slice beyond the text: the store is inconsistent
    bad = ScoreStore.from_frames(scores=store.scores, runs=store.runs, code=store.code,
                                 code_files=layout,
                                 code_texts=pd.read_parquet(scored / "code_texts.parquet"))  # fmt: skip
    with pytest.raises(ScoreStoreError, match="outside its version's code text"):
        bad.code_files_texts()


def test_task_rows_take_the_manifest_facts():
    manifests = load_manifests(SMALL / "manifests")
    rows = task_rows({"fx_icu": manifests["fx_icu"]}, {"fx_icu": "abc"})
    assert [(r["task"], r["unit"], r["access"], r["manifest_sha256"]) for r in rows] == [
        ("fx_icu", "stays", "synthetic", "abc")
    ]
