"""Every error names the file or argument, with a hint (trust rule; issue 8 item 11).

One row per error path: (label, argv with ``{repo}``/``{tmp}``/``{bare}``/``{memory}`` placeholders, expected
exit code, the token the message must name). Each row runs twice in-process: for people (stderr has an
``error:`` line naming the token and a ``hint:`` line) and with ``--json`` (stdout is exactly one error envelope
``{"apiVersion": "1", "error", "code", "hint"}`` naming the token, with a non-empty hint). A new command's error
joins by adding a row.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.main import main
from tests.secrets.corpus import CORPUS

_TOKEN = next(s.secret for s in CORPUS if s.name == "github-classic")
"""A fake GitHub token in the real format (tests/secrets/corpus.py): a write carrying it is refused."""

ROWS: list[tuple[str, list[str], int, str]] = [
    ("search empty query", ["search", ""], 2, "QUERY"),
    ("search blank query", ["search", "   "], 2, "QUERY"),
    ("recall empty query", ["recall", ""], 2, "QUERY"),
    ("as-of without zone", ["search", "x", "--as-of", "2025-03-01T09:30"], 2, "--as-of"),
    ("as-of garbage", ["recall", "x", "--as-of", "last tuesday"], 2, "--as-of"),
    ("entity not type:name", ["search", "x", "--entity", "nocolon"], 2, "--entity"),
    ("blank workspace", ["search", "x", "--workspace", " "], 2, "--workspace"),
    ("unknown flag", ["search", "x", "--bogus"], 2, "--bogus"),
    ("bad choice", ["write", "--type", "nope", "--title", "t", "--claim", "c."], 2, "--type"),
    ("apply missing file", ["apply", "--file", "{tmp}/missing.jsonl"], 2, "missing.jsonl"),
    ("apply not UTF-8", ["apply", "--file", "{tmp}/latin1.jsonl"], 2, "latin1.jsonl:2"),
    ("apply a folder", ["apply", "--file", "{tmp}/plain"], 2, "plain"),
    ("apply malformed line", ["apply", "--file", "{tmp}/malformed.jsonl"], 2, "malformed.jsonl:2"),
    ("apply refused op", ["apply", "--file", "{tmp}/escape.jsonl"], 2, "../outside.html"),
    ("write path escapes", ["write", "--type", "semantic", "--title", "t", "--claim", "c.", "--path",
                            "../outside.html"], 2, "../outside.html"),
    ("write into archive", ["write", "--type", "semantic", "--title", "t", "--claim", "c.", "--path",
                            "archive/2020/x/y.html"], 2, "archive/2020/x/y.html"),
    ("write over existing", ["write", "--type", "semantic", "--title", "t", "--claim", "c.", "--path", "{memory}"],
     1, "{memory}"),
    ("write carrying a secret", ["write", "--type", "semantic", "--title", "t", "--claim", f"Push with {_TOKEN}."],
     2, "field claim carries a detected secret (github-token)"),
    ("apply carrying a secret", ["apply", "--file", "{tmp}/secret.jsonl"], 1, "secret.jsonl"),
    ("correct carrying a secret", ["correct", "{memory}", "--title", "t", "--claim", f"Now {_TOKEN}.", "--reason",
                                   "r"], 2, "field claim carries a detected secret (github-token)"),
    ("read missing", ["read", "areas/inbox/nope.html"], 1, "areas/inbox/nope.html"),
    ("archive missing", ["archive", "areas/inbox/nope.html", "--reason", "old"], 1, "areas/inbox/nope.html"),
    ("archive blank reason", ["archive", "{memory}", "--reason", " "], 2, "--reason"),
    ("correct missing", ["correct", "areas/inbox/nope.html", "--title", "t", "--claim", "c.", "--reason", "r"], 1,
     "areas/inbox/nope.html"),
    ("link missing source", ["link", "areas/inbox/nope.html", "relates_to", "{memory}"], 1, "areas/inbox/nope.html"),
    ("link unknown rel", ["link", "{memory}", "befriends", "{memory}"], 2, "befriends"),
    ("link to itself", ["link", "{memory}", "relates_to", "{memory}"], 2, "itself"),
    ("neighbors missing", ["neighbors", "areas/inbox/nope.html"], 1, "areas/inbox/nope.html"),
    ("reinforce missing", ["reinforce", "areas/inbox/nope.html", "--signal", "positive"], 1, "areas/inbox/nope.html"),
    ("sleep merge unknown run", ["sleep", "merge", "sleep/1999-01-01"], 1, "sleep/1999-01-01"),
    ("sleep resume unknown run", ["sleep", "resume", "sleep/1999-01-01"], 1, "sleep/1999-01-01"),
    ("sleep abort unknown run", ["sleep", "abort", "sleep/1999-01-01"], 1, "sleep/1999-01-01"),
    ("sleep review unknown run", ["sleep", "review", "sleep/1999-01-01"], 1, "sleep/1999-01-01"),
    ("write article-html with two claims", ["write", "--type", "semantic", "--title", "t", "--article-html",
                                            "{tmp}/two-marks.html"], 1, "two-marks.html"),
    ("sleep run bad date", ["sleep", "run", "--date", "2026-13-45"], 2, "--date"),
    ("sleep run phases naming none", ["sleep", "run", "--phases", ""], 2, "--phases"),
    ("sleep run phases a lone comma", ["sleep", "run", "--phases", ","], 2, "--phases"),
    ("sleep run negative max llm calls", ["sleep", "run", "--max-llm-calls", "-1"], 2, "--max-llm-calls"),
    ("sleep resume negative max llm calls", ["sleep", "resume", "sleep/1999-01-01", "--max-llm-calls", "-1"], 2,
     "--max-llm-calls"),
    ("sleep run model without llmmodel", ["-C", "{llmrepo}", "sleep", "run"], 2, "memhtml.llmmodel"),
    ("doctor model without llmmodel", ["-C", "{llmrepo}", "doctor", "--model"], 2, "memhtml.llmmodel"),
    ("doctor model with llm off", ["doctor", "--model"], 1, "memhtml.llm"),
    ("doctor model with fix", ["doctor", "--model", "--fix"], 2, "--model"),
    ("eval run unknown run", ["eval", "run", "sleep/1999-01-01"], 1, "sleep/1999-01-01"),
    ("eval run not a run name", ["eval", "run", "main"], 1, "main"),
    ("eval run dot-dot name", ["eval", "run", "sleep/../main"], 1, "sleep/../main"),
    ("eval run zero probes", ["eval", "run", "sleep/1999-01-01", "--probes", "0"], 2, "--probes"),
    ("eval run zero k", ["eval", "run", "sleep/1999-01-01", "--k", "0"], 2, "--k"),
    ("eval run negative max lost", ["eval", "run", "sleep/1999-01-01", "--max-lost", "-1"], 2, "--max-lost"),
    ("sleep review bad probes flag", ["sleep", "review", "sleep/1999-01-01", "--no-probes", "--bogus"], 2, "--bogus"),
    ("init in a bare repository", ["init", "{bare}"], 1, "{bare}"),
    ("man --out a file", ["man", "--out", "{memory_abs}"], 2, "--out"),
    ("demo into a non-empty folder", ["demo", "{repo}"], 2, "{repo}"),
    ("demo corpus not UTF-8", ["demo", "{tmp}/new-demo", "--corpus", "{tmp}/latin1.jsonl"], 2, "latin1.jsonl"),
    ("demo into a file", ["demo", "{memory_abs}"], 2, "{memory_abs}"),
    ("demo missing corpus", ["demo", "{tmp}/new-demo", "--corpus", "{tmp}/nope.jsonl"], 2, "nope.jsonl"),
    ("demo llm url without llm", ["demo", "{tmp}/new-demo", "--llm-url", "http://localhost:11434/v1"], 2, "--llm"),
    ("demo llm without model", ["demo", "{tmp}/new-demo", "--llm", "openai", "--llm-url",
                                "http://localhost:11434/v1"], 2, "memhtml.llmmodel"),
    ("demo llm bad url", ["demo", "{tmp}/new-demo", "--llm", "openai", "--llm-url", "ftp://host/v1", "--llm-model",
                          "m"], 2, "memhtml.llmurl"),
    ("demo llm unknown dialect", ["demo", "{tmp}/new-demo", "--llm", "gemini"], 2, "--llm"),
    ("demo negative max llm calls", ["demo", "{tmp}/new-demo", "--llm", "openai", "--max-llm-calls", "-2"], 2,
     "--max-llm-calls"),
    ("trace search bad since", ["trace", "search", "x", "--since", "last week"], 2, "--since"),
    ("trace search empty cwd", ["trace", "search", "x", "--cwd", " "], 2, "--cwd"),
    ("trace search zero limit", ["trace", "search", "x", "--limit", "0"], 2, "--limit"),
    ("trace links neither flag", ["trace", "links"], 2, "--session-id"),
    ("trace links both flags", ["trace", "links", "--session-id", "s1", "--path", "{memory}"], 2, "--session-id"),
    ("trace links session id with a slash", ["trace", "links", "--session-id", "../../x"], 2, "../../x"),
    ("trace links path escapes", ["trace", "links", "--path", "../../x.jsonl"], 2, "../../x.jsonl"),
    ("trace links missing memory", ["trace", "links", "--path", "areas/inbox/nope.html"], 1,
     "areas/inbox/nope.html"),
    ("agent install unparseable config", ["agent", "install", "cursor", "--scope", "project", "--project",
                                          "{tmp}/badcursor"], 1, "{tmp}/badcursor/.cursor/mcp.json"),
    ("agent install not a memory repository", ["-C", "{tmp}/gitonly", "agent", "install", "codex"], 1, "gitonly"),
    ("not a repository", ["-C", "{tmp}/plain", "search", "x"], 1, "plain"),
    ("-C a deleted folder", ["-C", "{tmp}/deleted", "write", "--type", "semantic", "--title", "t", "--claim", "c."],
     2, "-C {tmp}/deleted"),
    ("-C a deleted folder, search", ["-C", "{tmp}/deleted", "search", "x"], 2, "-C {tmp}/deleted"),
    ("-C a file", ["-C", "{tmp}/latin1.jsonl", "doctor"], 2, "latin1.jsonl"),
]

DELETED_CWD_ROWS: list[tuple[str, list[str]]] = [
    ("write", ["write", "--type", "semantic", "--title", "t", "--claim", "c."]),
    ("search", ["search", "x"]),
    ("doctor", ["doctor"]),
    ("sleep run", ["sleep", "run"]),
    ("index verify", ["index", "verify"]),
    ("man --out relative", ["man", "--out", "pages"]),
    ("init relative", ["init", "here"]),
    ("-C relative", ["-C", "sub", "search", "x"]),
]
"""Commands started in a current folder that was deleted under them: a usage error (exit 2) naming the folder,
with a hint, for people and with ``--json``; never a crash report."""


@pytest.fixture
def world(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, str]:
    repo = tmp_path / "mem"
    assert main(["init", str(repo)]) == 0
    assert main(["-C", str(repo), "write", "--type", "semantic", "--title", "Seed", "--claim", "A seed memory.",
                 "--path", "areas/inbox/seed.html"]) == 0
    (tmp_path / "two-marks.html").write_text("<p><mark>One claim.</mark> <mark>Another claim.</mark></p>")
    (tmp_path / "malformed.jsonl").write_text(
        json.dumps({"op": "write", "title": "ok", "type": "semantic", "body": "Fine."}) + "\n{not json\n")
    (tmp_path / "escape.jsonl").write_text(
        json.dumps({"op": "write", "title": "out", "type": "semantic", "body": "Out.", "path": "../outside.html"})
        + "\n")
    (tmp_path / "secret.jsonl").write_text(
        json.dumps({"op": "write", "title": "leak", "type": "semantic", "body": f"The CI token is {_TOKEN}."}) + "\n")
    (tmp_path / "plain").mkdir()
    (tmp_path / "badcursor" / ".cursor").mkdir(parents=True)
    (tmp_path / "badcursor" / ".cursor" / "mcp.json").write_text('{"mcpServers": {},}')  # a trailing comma
    subprocess.run(["git", "init", "-q", str(tmp_path / "gitonly")], check=True)  # git, but no memory scaffold
    (tmp_path / "deleted").mkdir()
    (tmp_path / "deleted").rmdir()  # `-C` names a folder that no longer exists
    (tmp_path / "latin1.jsonl").write_bytes(b'{"op": "write", "title": "ok", "type": "semantic", "body": "Fine."}\n'
                                            b'{"op": "write", "title": "caf\xe9", "type": "semantic", "body": "x"}\n')
    llmrepo = tmp_path / "llm"  # a model dialect chosen, but no model named
    assert main(["init", str(llmrepo)]) == 0
    subprocess.run(["git", "-C", str(llmrepo), "config", "memhtml.llm", "openai"], check=True)
    bare = tmp_path / "shared.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    capsys.readouterr()
    return {"repo": str(repo), "tmp": str(tmp_path), "bare": str(bare), "llmrepo": str(llmrepo),
            "memory": "areas/inbox/seed.html", "memory_abs": str(repo / "areas/inbox/seed.html")}


def _argv(world: dict[str, str], argv: list[str]) -> list[str]:
    args = [a.format(**world) for a in argv]
    return args if args[0] in ("-C", "init", "man", "demo") else ["-C", world["repo"], *args]


@pytest.mark.parametrize(("label", "argv", "code", "token"), ROWS, ids=[r[0] for r in ROWS])
def test_error_names_its_argument_and_hints(world: dict[str, str], capsys: pytest.CaptureFixture[str], label: str,
                                            argv: list[str], code: int, token: str) -> None:
    named = token.format(**world)
    assert main(_argv(world, argv)) == code
    captured = capsys.readouterr()
    errors = [line for line in captured.err.splitlines() if line.startswith("error:")]
    block = captured.err[captured.err.index("error:"):].split("\nhint: ", 1)[0]  # a message may list lines
    assert len(errors) == 1 and named in block, captured.err
    assert any(line.startswith("hint: ") and len(line) > len("hint: ") for line in captured.err.splitlines()), \
        captured.err


JSON_ROWS = [row for row in ROWS if row[1][0] != "demo"]
"""Every row of a command that has ``--json`` (``demo``'s output is a walk-through for people, with no envelope)."""


@pytest.mark.parametrize(("label", "argv", "code", "token"), JSON_ROWS, ids=[r[0] for r in JSON_ROWS])
def test_json_gives_one_error_envelope(world: dict[str, str], capsys: pytest.CaptureFixture[str], label: str,
                                       argv: list[str], code: int, token: str) -> None:
    assert main([*_argv(world, argv), "--json"]) == code
    out = capsys.readouterr().out
    envelope = json.loads(out)  # exactly one JSON document on stdout
    assert envelope["apiVersion"] == "1" and "data" not in envelope
    assert envelope["code"].startswith("ERR_") and envelope["hint"]
    assert token.format(**world) in envelope["error"]


@pytest.mark.parametrize(("label", "argv"), DELETED_CWD_ROWS, ids=[r[0] for r in DELETED_CWD_ROWS])
@pytest.mark.parametrize("as_json", [False, True], ids=["people", "json"])
def test_a_deleted_current_folder_is_a_usage_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], label: str, argv: list[str],
                                                   as_json: bool) -> None:
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    monkeypatch.setenv("PWD", str(gone))  # what the shell that cd'ed here would say
    gone.rmdir()
    assert main([*argv, "--json"] if as_json else argv) == 2
    captured = capsys.readouterr()
    if as_json:
        envelope = json.loads(captured.out)
        assert str(gone) in envelope["error"] and envelope["hint"] and envelope["code"] == "ERR_INVALID_FLAG"
    else:
        assert f"error: the current folder {gone} no longer exists" in captured.err, captured.err
        assert "hint: cd into a folder that exists" in captured.err and "internal error" not in captured.err


def test_the_console_script_in_a_deleted_folder_names_it(tmp_path: Path) -> None:
    """The attacker's repro, as a real process started by a shell whose folder was removed under it."""
    gone = tmp_path / "gone"
    gone.mkdir()
    proc = subprocess.run(["sh", "-c", f"cd {gone} && rmdir {gone} && exec git-memhtml write --type semantic "
                           "--title t --claim c"], capture_output=True, text=True, check=False)
    assert proc.returncode == 2, proc.stderr
    assert f"the current folder {gone} no longer exists" in proc.stderr and "crash report" not in proc.stderr
