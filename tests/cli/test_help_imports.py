"""``-h`` and usage errors of EVERY command, at every depth, import none of the heavy libraries (issue 12 item 4).

One fresh interpreter walks the whole click tree (hidden commands included): for each command path it runs the real
entry point with ``-h``, then with an unknown flag (a usage error, exit 2), and reports which heavy top-level packages
``sys.modules`` gained. The walk loads each command's module exactly as ``-h`` does, so whichever module first pulls a
heavy import is named. One process for all paths keeps the test cheap.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from git_memhtml.cli import op_schema_help
from git_memhtml.store.ops import op_schema_text

HEAVY = ("numpy", "pygit2", "apsw", "pydantic", "httpx", "html5lib", "selectolax", "wordllama", "sqlite_vec", "mcp",
         "mcp_types", "anyio")
"""Top-level packages help must not load: the issue's list plus the vector extension and the MCP SDK (only
``git memhtml mcp`` itself imports it, docs/mcp.md)."""

USAGE_ERRORS = [
    ["write", "--type", "nope", "--title", "x"],
    ["search"],
    ["search", "--limit", "abc", "q"],
    ["recall", "--budget", "-5", "q"],
    ["neighbors"],
    ["link", "a"],
    ["doctor", "--fix-leftovers", "bogus"],
    ["eval", "discriminate", "--size", "x"],
    ["sleep", "nope"],
    ["index", "rebuild", "extra-argument"],
]
"""Bad values, missing arguments and unknown sub-commands: click refuses them (exit 2) before any command body runs,
so they import nothing heavy either. A row per kind; a new kind joins by adding a row."""

_WALK = r"""
import contextlib, io, json, sys
import click
from git_memhtml.cli.main import cli, main

HEAVY = set(sys.argv[1].split(","))
USAGE_ERRORS = json.loads(sys.argv[2])

def heavy():
    return {m.split(".")[0] for m in sys.modules if m.split(".")[0] in HEAVY}

def visit(command, words, parent):
    ctx = click.Context(command, info_name=words[-1] if words else "git memhtml", parent=parent,
                        resilient_parsing=True, **command.context_settings)
    yield words
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from visit(sub, (*words, name), ctx)

rows = []
seen = set()
def run(args):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(args)
    return code, out.getvalue(), err.getvalue()

for words in visit(cli, (), None):
    help_code, help_out, _ = run([*words, "-h"])
    bogus_code, _, bogus_err = run([*words, "--no-such-flag-xyz"])
    now = heavy()
    rows.append({"path": " ".join(words), "help": help_code, "usage": help_out.startswith("Usage: "),
                 "bogus": bogus_code, "bogus_names_flag": "--no-such-flag-xyz" in bogus_err,
                 "new_heavy": sorted(now - seen)})
    seen |= now
errors = []
for args in USAGE_ERRORS:
    code, _, err = run(args)
    now = heavy()
    errors.append({"argv": " ".join(args), "code": code, "said": "error: " in err, "new_heavy": sorted(now - seen)})
    seen |= now
print(json.dumps({"commands": rows, "usage_errors": errors}))
"""


def test_no_command_help_or_usage_error_imports_a_heavy_library(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-c", _WALK, ",".join(HEAVY), json.dumps(USAGE_ERRORS)],
                          capture_output=True, text=True, cwd=tmp_path, check=False)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout)
    rows, errors = report["commands"], report["usage_errors"]
    paths = {row["path"] for row in rows}
    assert {"", "sleep", "sleep run", "index rebuild", "apply", "search", "validate", "hook", "merge-driver",
            "eval discriminate", "doctor", "install"} <= paths, sorted(paths)
    assert len(rows) == len(paths) > 30
    for row in rows:
        assert (row["help"], row["usage"]) == (0, True), row
        assert (row["bogus"], row["bogus_names_flag"]) == (2, True), row
    assert {row["path"] or "git memhtml": row["new_heavy"] for row in rows if row["new_heavy"]} == {}
    assert [(e["argv"], e["code"], e["said"]) for e in errors] == [(" ".join(a), 2, True) for a in USAGE_ERRORS]
    assert {e["argv"]: e["new_heavy"] for e in errors if e["new_heavy"]} == {}


def test_the_apply_help_schema_is_the_models() -> None:
    """``apply -h`` reads the op schema from a generated module (no pydantic at help time): it is the model's."""
    assert op_schema_text() == op_schema_help.OP_SCHEMA_TEXT, \
        "cli/op_schema_help.py is stale: paste store.ops.op_schema_text() into OP_SCHEMA_TEXT"
