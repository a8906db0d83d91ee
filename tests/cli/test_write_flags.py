"""``write``/``correct`` flags fill the memory draft through the ``flag`` column of ``HEAD_FIELDS`` (issue 9 item 4).

The click options stay hand-written (their ``--help`` text is in the man page); these tests hold them and the
table together, and write one memory per meta flag to see its value reach the committed file.
"""

from __future__ import annotations

import json
from pathlib import Path

import click
import pytest

from git_memhtml.cli.main import main
from git_memhtml.cli.memory_cmds import correct_cmd, write_cmd
from git_memhtml.document.draft import HEAD_FIELDS, HeadField
from git_memhtml.document.parse import parse_memory

TABLE_FLAGS = {spec.flag for spec in HEAD_FIELDS if spec.flag is not None}
OWN_OPTIONS: dict[str, set[str]] = {"write": {"--path", "--workspace", "--json"}, "correct": {"--reason", "--json"}}
"""Options of each command that are not draft fields: placement, the correction's reason, the output format."""

FLAG_VALUES: dict[str, str] = {"--type": "procedural", "--entity": "person:Priya", "--tag": "ops",
                               "--session-id": "s-42", "--importance": "7", "--confidence": "0.125"}
"""A CLI value of each meta flag of ``write`` (a new meta flag needs one here)."""


def _options(command: click.Command) -> set[str]:
    return {opt for param in command.params if isinstance(param, click.Option) for opt in param.opts}


@pytest.mark.parametrize("command", [write_cmd, correct_cmd], ids=["write", "correct"])
def test_every_content_option_is_a_table_flag(command: click.Command) -> None:
    options = _options(command)
    assert options - TABLE_FLAGS == OWN_OPTIONS[str(command.name)]


def test_every_table_flag_is_an_option_of_write_and_has_an_op_key() -> None:
    assert _options(write_cmd) >= TABLE_FLAGS
    assert [spec.attr for spec in HEAD_FIELDS if spec.flag is not None and spec.op_key is None] == []  # flags go
    # through the op model, as an apply line does: a flag without an op key would be dropped unseen


@pytest.mark.parametrize("spec", [pytest.param(s, id=s.flag) for s in HEAD_FIELDS
                                  if s.flag is not None and s.kind in ("scalar", "repeatable")])
def test_each_meta_flag_reaches_the_committed_file(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                   spec: HeadField) -> None:
    root = tmp_path / "mem"
    assert main(["init", str(root)]) == 0
    args = ["--type", "semantic", "--title", "Flagged", "--claim", "The flag reaches the file."]
    if spec.flag == "--type":
        args = args[2:]
    args += [str(spec.flag), FLAG_VALUES[str(spec.flag)]]
    capsys.readouterr()
    assert main(["-C", str(root), "write", *args, "--json"]) == 0
    path = json.loads(capsys.readouterr().out)["data"]["path"]
    doc = parse_memory((root / path).read_bytes(), path=path)
    raw = FLAG_VALUES[str(spec.flag)]
    value: object = float(raw) if spec.attr == "confidence" else int(raw) if spec.attr == "importance" else raw
    assert (spec.meta, spec.text(value)) in doc.metas
