"""``automd ... --help`` reads at 80 columns: every option's full name, descriptions in a wide
column, no option name split across lines, command summaries whole.

Every command and group is enumerated from the Typer application (plugins included).
"""

from __future__ import annotations

import re

import pytest
from cli_tree import command_at, command_paths

from automd_analysis.cli import main

WIDTH = 80
#: Click's layout puts descriptions at most 30 columns in (plus the two-space indent).
DESCRIPTION_COLUMN = 34


def render_help(path: str, capsys, monkeypatch) -> str:
    monkeypatch.setenv("COLUMNS", str(WIDTH))
    capsys.readouterr()
    with pytest.raises(SystemExit) as stop:
        main([*path.split(), "--help"])
    assert stop.value.code == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("path", command_paths(groups=True))
def test_help_reads_at_80_columns(path, capsys, monkeypatch):
    text = render_help(path, capsys, monkeypatch)
    lines = text.splitlines()
    assert "Traceback" not in text
    assert all(len(line) <= WIDTH for line in lines), [line for line in lines if len(line) > WIDTH]
    assert "…" not in text  # nothing cut
    # no option name broken at a hyphen at the end of a line
    assert not re.search(r"--[a-z][\w-]*-$", text, re.M), re.findall(r"--[\w-]*-$", text, re.M)
    cmd = command_at(path)
    for param in cmd.params:
        for name in (*param.opts, *param.secondary_opts):
            if not name.startswith("-"):
                continue
            assert re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text), (name, text)
            if not param.help:
                continue
            # the description starts in a wide column: on the option's line or the next one
            row = next(
                i
                for i, line in enumerate(lines)
                if line.lstrip().startswith("-")
                and name in re.split(r"[ ,/]+", line.strip().split("  ")[0])
            )
            here = re.search(r"\S  +(\S)", lines[row])
            start = here.start(1) if here else len(lines[row + 1]) - len(lines[row + 1].lstrip())
            assert start <= DESCRIPTION_COLUMN, (name, lines[row : row + 2])
    # command listings show each summary whole (click cut them at "paper App." or 45 chars)
    for name, sub in getattr(cmd, "commands", {}).items():
        if sub.hidden:
            continue
        listed = " ".join(" ".join(lines).split())
        assert sub.get_short_help_str(limit=WIDTH) in listed, name
        assert not sub.get_short_help_str(limit=WIDTH).endswith("..."), name


def test_regenerate_parameter_fixed_by_the_pipeline_names_the_option(tmp_path, capsys):
    from automd_analysis.app.pipeline import PIPELINE_PARAMETERS

    archive = tmp_path / "a"
    archive.mkdir()
    (archive / "archive.yaml").write_text("schema_version: 1\nname: a\nexperiments: {main: m}\n")
    capsys.readouterr()
    for name, via in PIPELINE_PARAMETERS.items():
        with pytest.raises(SystemExit) as stop:
            main(["regenerate", str(archive), "--out", str(tmp_path / "o"), "-p", f"{name}=1"])
        err = capsys.readouterr().err
        assert stop.value.code == 2, err
        assert f"{name!r} is fixed by the pipeline (set by {via})" in err, err
        if via.startswith("--"):
            assert f"Fix: use {via}" in err
    regenerate_options = {o for p in command_at("regenerate").params for o in p.opts}
    options = {v for v in PIPELINE_PARAMETERS.values() if v.startswith("--")}
    assert options <= regenerate_options, options - regenerate_options
