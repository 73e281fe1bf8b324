"""Property-based fuzzing of every import format (issue 21): deep nesting, extreme numbers, lone
surrogates and odd names anywhere in the agent's own log.

Whatever the log holds, an import ends in one of two ways (:func:`importer_sources.check_outcome`):
a documented fatal reason code that is not ``import.internal_*`` and no run written, or a run that
the archive reader reads without a single problem, with only documented recorded codes. Every
test runs 20 examples in the derandomised CI profile; ``make fuzz`` runs ten times as many,
unseeded.
"""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import importer_sources as S
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from importer_sources import check_outcome, try_import

#: Each example imports a source: 20 in CI; ``make fuzz`` multiplies them (tests/conftest.py).
FUZZ = settings(
    max_examples=20,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

#: Raw JSON text that replaces a placeholder string after serialisation (nesting, non-finite).
DEEP = st.integers(1, 3000).map(lambda d: "[" * d + "]" * d)
RAW_NUMBERS = st.sampled_from(["1e309", "-1e309", "NaN", "Infinity", "1e300", "-0.0",
                               "123456789012345678901234567890", "9007199254740993"])  # fmt: skip
NUMBERS = st.one_of(
    st.integers(-(10**30), 10**30),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, -1, 2**53 - 1, 2**53, S.T0, 253402300800, -62135596800]),
)
TEXT = st.text(st.characters(blacklist_categories=()), max_size=12)  # surrogates included
NAMES = st.one_of(
    st.sampled_from(
        [
            "../x",
            "a/b",
            ".h",
            "",
            "selected",
            "final",
            "x" * 300,
            "é",
            "a\x00b",
            "a.py",
            "a.py/b.py",
            "/etc/passwd",
            "stage_1_x_1_y",
            "\udcff",
        ]
    ),  # fmt: skip
    st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.\-]{0,40}", fullmatch=True),
    TEXT,
)
SCALARS = st.one_of(st.none(), st.booleans(), NUMBERS, TEXT, NAMES)


def hostile(default):
    """Either the well-formed ``default`` or something hostile in its place."""
    raw = st.one_of(DEEP, RAW_NUMBERS).map(lambda r: ("__RAW__", r))
    values = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                          | st.dictionaries(NAMES, inner, max_size=3), max_leaves=6)  # fmt: skip
    return st.one_of(st.just(default), st.just(default), st.just(default), values, raw)


def render(obj) -> str:
    """JSON text of ``obj`` with every ``("__RAW__", text)`` pair spliced in as raw JSON."""
    raws: list[str] = []

    def walk(x):
        if isinstance(x, tuple) and len(x) == 2 and x[0] == "__RAW__":
            raws.append(x[1])
            return f"__RAW{len(raws) - 1}__"
        if isinstance(x, dict):
            return {str(k): walk(v) for k, v in x.items()}
        if isinstance(x, list | tuple):
            return [walk(v) for v in x]
        return x

    text = json.dumps(walk(obj), separators=(",", ":"))
    for i, raw in enumerate(raws):
        text = text.replace(f'"__RAW{i}__"', raw)
    return text


@st.composite
def node_dict(draw, i: int, *, ais: bool = False) -> dict:
    base = S.ais_node(i) if ais else S.aide_node(i)
    keys = list(base)
    mutate = draw(st.lists(st.sampled_from(keys), max_size=3, unique=True))
    return {k: (draw(hostile(base[k])) if k in mutate else base[k]) for k in keys}


@st.composite
def aide_journal(draw, *, ais: bool = False) -> str:
    n = draw(st.integers(1, 3))
    nodes = [draw(node_dict(i, ais=ais)) for i in range(n)]
    n2p = draw(st.one_of(st.just({}), st.dictionaries(NAMES, NAMES, max_size=2),
                         st.just({f"{1:032x}": f"{0:032x}"})))  # fmt: skip
    doc = draw(hostile({"nodes": nodes, "node2parent": n2p, "__version": "2"}))
    return render(doc)


def _run(fmt: str, build, **opts) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = build(Path(tmp) / "20260601_101500")
        report, error = try_import(fmt, src, Path(tmp) / "dest", **opts)
        check_outcome(report, error, Path(tmp) / "dest")


@FUZZ
@given(aide_journal(), st.one_of(st.just("agent:\n  code:\n    model: m\n"), TEXT,
                                 DEEP.map(lambda d: "a: " + d)))  # fmt: skip
def test_fuzz_aide(journal, config):
    _run("aide", lambda d: S.build_aide(d, journal=journal, config=config or "x: 1\n"))


#: Sub-stage folder names: AI-Scientist-v2's LLM names sub-stages, so any text (a ``/`` makes
#: nested folders, as its ``save_run`` does).
STAGE_NAMES = st.one_of(
    st.just(S.AIS_STAGES[1]),
    st.just(S.AIS_FREE_TEXT_STAGE),
    TEXT.filter(lambda t: "\x00" not in t and t not in (".", "..") and len(t.encode(
        "utf-8", "surrogateescape")) < 200).map(lambda t: "stage_4_ablation_studies_1_" + t),
)  # fmt: skip


@FUZZ
@given(aide_journal(ais=True), aide_journal(ais=True), NAMES, STAGE_NAMES)
def test_fuzz_aiscientist_v2(stage1, stage4, best, stage4_name):
    stages = {S.AIS_STAGES[0]: stage1, stage4_name: stage4}
    _run("aiscientist-v2", lambda d: S.build_ais(d, stages, best={stage4_name: best}))


@st.composite
def rollout_text(draw) -> str:
    lines = S.rollout().splitlines()
    extra = draw(st.lists(st.fixed_dictionaries({
        "timestamp": hostile("2026-05-01T09:30:00Z"),
        "type": hostile("event_msg"),
        "payload": hostile({"type": "token_count", "info": {"total_token_usage": {
            "input_tokens": draw(hostile(5)), "output_tokens": draw(hostile(1)),
            "total_tokens": draw(hostile(6))}}}),
    }), max_size=3))  # fmt: skip
    lines += [render(e) for e in extra]
    cut = draw(st.booleans())
    text = "\n".join(lines) + "\n"
    return text[: -draw(st.integers(2, 20))] if cut else text


@FUZZ
@given(rollout_text(), st.sampled_from(["train.py", "src/m.py", "a" * 250 + ".py"]))
def test_fuzz_codex(text, script):
    def build(d):
        S.build_codex(d, text)
        S.write(d / script, "print(1)\n")
        return d

    _run("codex", build)


@FUZZ
@given(st.lists(st.lists(st.one_of(TEXT, NUMBERS.map(str), st.sampled_from(
    ["keep", "discard", "crash", "ok", "failed", "partial", "0.5", "nan", "1e999", ""])),
    min_size=5, max_size=5), max_size=4), rollout_text(),
    st.sampled_from(["commit", "git_commit", "\ufeffgit_commit", "Commit"]))  # fmt: skip
def test_fuzz_autoresearch(rows, text, commit):
    header = f"{commit}\troc_auc\tmemory_gb\tstatus\tdescription\n"
    body = "".join("\t".join(c.replace("\t", " ").replace("\n", " ") for c in r) + "\n"
                   for r in rows)  # fmt: skip
    _run("autoresearch", lambda d: S.build_autoresearch(d, header + body, rollout_text=text),
         llm="m")  # fmt: skip


@st.composite
def fml_summary(draw, **extra) -> str:
    steps = [{k: draw(hostile(v)) if draw(st.booleans()) else v
              for k, v in S.fml_step(i + 1).items()} for i in range(draw(st.integers(1, 3)))]  # fmt: skip
    summary = S.fml_summary(steps, **extra)
    for key in draw(st.lists(st.sampled_from(list(summary)), max_size=2, unique=True)):
        summary[key] = draw(hostile(summary[key]))
    return render(summary)


@FUZZ
@given(fml_summary(), st.dictionaries(NAMES, TEXT, max_size=4))
def test_fuzz_fmlbench(summary, snapshot):
    _run("fmlbench", lambda d: S.build_fmlbench(d, summary, snapshots={1: snapshot}))


@FUZZ
@given(fml_summary(baseline_primary_metric=0.8,
                   task_config={"metric": "mae_mean", "metric_direction": "lower"}),
       st.dictionaries(NAMES, TEXT, max_size=4))  # fmt: skip
def test_fuzz_fmlbench_process_only(summary, snapshot):
    """FML-bench's own task (no manifest): a process-only run, or a documented fatal code."""
    _run("fmlbench", lambda d: S.build_fmlbench(d, summary, snapshots={1: snapshot}),
         task="Causality_causalml")  # fmt: skip


@FUZZ
@given(st.dictionaries(NAMES, hostile({"success": True}), max_size=3), aide_journal())
def test_fuzz_mlebench(runs, journal):
    runs = {f"{S.TASK}_0f1e2d3c-1f2e-4d3c-8b4a-5968778695a4": {"success": True}, **runs}
    metadata = render({"run_group": "g", "runs": runs})
    _run("mlebench", lambda d: S.build_mlebench(d, metadata=metadata, journal=journal))
