"""``git memhtml validate``: default file set, path safety, one line per finding, exit codes, --strict, --json."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.cli.main import main
from git_memhtml.document.parse import MAX_FILE_BYTES
from git_memhtml.gitrepo import GitRepo
from git_memhtml.store.validate_files import default_memory_paths, validate_files

GOLDEN = Path(__file__).resolve().parents[1] / "document" / "golden"
GOOD = (GOLDEN / "example_memory.html").read_text(encoding="utf-8")
TASK = (GOLDEN / "example_task.html").read_text(encoding="utf-8")
CLAIM_P = "<p><mark>Prod rollbacks take   two minutes.</mark> Use <code>kubectl rollout undo</code>.</p>"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A scaffolded memory repository with two good memories; the current directory is its root."""
    root = tmp_path / "mem"
    init_repo(root)
    (root / "areas" / "oncall").mkdir(parents=True)
    (root / "areas" / "oncall" / "rollbacks.html").write_text(GOOD, encoding="utf-8")
    (root / "projects" / "tls").mkdir(parents=True)
    (root / "projects" / "tls" / "rotate.html").write_text(TASK, encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[str], str]:
    """Run ``git memhtml validate <args>`` in-process: (exit code, the finding lines, the summary and stderr).

    The whole report is on stdout (docs/cli.md "Streams"): the finding lines, then the summary as the last line;
    stderr never holds the summary. An error before any file is read prints no report."""
    capsys.readouterr()
    code = main(["validate", *args])
    captured = capsys.readouterr()
    lines = captured.out.splitlines()
    assert "validate ok" not in captured.err and "validate failed" not in captured.err, captured.err
    if not lines:
        return code, [], captured.err
    assert lines[-1].startswith(("validate ok: ", "validate failed: ")), lines
    return code, lines[:-1], lines[-1] + "\n" + captured.err


def test_the_report_is_on_stdout_and_nothing_else_on_stderr(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put(repo, "areas/bad/empty.html", b"")
    for args, code in (((), 1), (("areas/oncall/rollbacks.html",), 0)):
        capsys.readouterr()
        assert main(["validate", *args]) == code
        captured = capsys.readouterr()
        assert captured.err == ""
        assert captured.out.splitlines()[-1].startswith("validate failed: " if code else "validate ok: ")


def put(root: Path, rel: str, data: str | bytes) -> str:
    target = root / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        target.write_bytes(data)
    else:
        target.write_text(data, encoding="utf-8")
    return rel


def test_clean_repository_passes(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys)
    assert (code, out) == (0, [])
    assert "validate ok: 2 files checked, 0 violations, 0 warnings" in err


def test_default_set_is_every_memory_file_and_skips_generated(repo: Path) -> None:
    put(repo, "areas/oncall/index.html", "<p>generated</p>")
    put(repo, "sitemap.xml", "<urlset/>")
    put(repo, "areas/oncall/notes.txt", "not a memory")
    put(repo, "docs/page.html", "<p>outside the buckets</p>")
    put(repo, "areas/inbox/untracked.html", GOOD)
    put(repo, "areas/ignored/x.html", GOOD)
    (repo / ".gitignore").write_text((repo / ".gitignore").read_text() + "areas/ignored/\n")
    assert default_memory_paths(GitRepo.discover(repo)) == [
        "areas/inbox/untracked.html",
        "areas/oncall/rollbacks.html",
        "projects/tls/rotate.html",
    ]


BAD_INPUTS = [
    ("non-utf8", GOOD.encode().replace(b"Prod rollbacks take", b"Prod \xff rollbacks"),
     "not UTF-8 (invalid byte at offset"),
    ("empty", b"", "empty file"),
    ("5mb", b"<p>" + b"x" * (5 * 1024 * 1024) + b"</p>", f"over the {MAX_FILE_BYTES}-byte limit"),
    ("mark-in-details", GOOD.replace(CLAIM_P, f"<details>{CLAIM_P}</details>"), "<mark> inside <details>"),
    ("javascript", GOOD.replace("<code>", '<a href="javascript:alert(1)">x</a><code>'), "is a javascript: URL"),
    ("dotdot-link", GOOD.replace("/areas/oncall/paging.html", "../x.html"), 'href="../x.html"> is not root-relative'),
    ("dup-type", GOOD.replace("</title>", '</title>\n<meta name="memhtml-type" content="semantic">'),
     '<meta name="memhtml-type"> appears 2 times but is not repeatable'),
    ("bad-time", GOOD.replace('datetime="2026-01-02"', 'datetime="2026-13-45"'),
     '<time datetime="2026-13-45"> is not a valid ISO date or datetime'),
]


@pytest.mark.parametrize(("name", "data", "reason"), BAD_INPUTS, ids=[case[0] for case in BAD_INPUTS])
def test_each_bad_input_is_one_clear_line(
    repo: Path, capsys: pytest.CaptureFixture[str], name: str, data: str | bytes, reason: str
) -> None:
    rel = put(repo, f"areas/bad/{name}.html", data)
    code, out, err = run(capsys, rel)
    assert code == 1
    assert len(out) == 1 and out[0].startswith(f"{rel}: ") and reason in out[0], out
    assert "Traceback" not in err and "validate failed" in err
    code, out, _ = run(capsys)  # the default run finds it too, and only it
    assert code == 1 and len(out) == 1 and out[0].startswith(f"{rel}: ")


def test_symlink_is_refused_not_followed(repo: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    secret = tmp_path / "outside.html"
    secret.write_text("<p>secret</p>", encoding="utf-8")
    os.symlink(secret, repo / "areas" / "oncall" / "link.html")
    code, out, err = run(capsys, "areas/oncall/link.html")
    assert code == 1
    assert out == ["areas/oncall/link.html: is a symlink: refused, symlinks are never followed"]
    assert "secret" not in "".join(out) + err
    os.symlink(tmp_path, repo / "areas" / "linked-dir")
    code, out, _ = run(capsys, "areas/linked-dir/outside.html")
    assert code == 1
    assert out == ["areas/linked-dir/outside.html: goes through the symlink linked-dir: refused, "
                   "symlinks are never followed"]


def test_symlink_in_default_set_is_a_finding(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    os.symlink(repo / "areas" / "oncall" / "rollbacks.html", repo / "areas" / "oncall" / "alias.html")
    code, out, _ = run(capsys)
    assert code == 1 and out == ["areas/oncall/alias.html: is a symlink: refused, symlinks are never followed"]


def test_linked_folder_in_default_set_is_a_finding(repo: Path, tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "deep.html").write_text("<p>not read</p>", encoding="utf-8")
    os.symlink(outside, repo / "areas" / "linked")
    code, out, _ = run(capsys)
    assert code == 1 and out == ["areas/linked: is a symlink: refused, symlinks are never followed"]


def test_non_utf8_file_name_is_one_finding_not_a_crash(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = os.fsencode(repo) + b"/areas/oncall/bad\xfename.html"
    with open(bad, "wb") as handle:
        handle.write(GOOD.encode("utf-8"))
    subprocess.run(["git", "-C", str(repo), "add", "--", os.fsdecode(bad)], check=True, capture_output=True)
    line = "areas/oncall/bad\\xfename.html: file name is not UTF-8"
    code, out, err = run(capsys)
    assert (code, out) == (1, [line])
    assert "2 files checked, 1 violation" in err
    code, out, _ = run(capsys, "areas/oncall/bad\udcfename.html")  # an argument as click decodes it
    assert (code, out) == (1, [line])
    capsys.readouterr()
    code = main(["validate", "--json"])
    data = json.loads(capsys.readouterr().out)["data"]
    assert code == 1 and data["checked"] == ["areas/oncall/rollbacks.html", "projects/tls/rotate.html"]
    assert data["findings"] == [
        {"path": "areas/oncall/bad\\xfename.html", "reason": "file name is not UTF-8", "severity": "violation"}
    ]


@pytest.mark.parametrize(
    ("argument", "line"),
    [
        ("../escape.html", "../escape.html: outside the repository: only files inside it are validated"),
        ("/etc/hostname", "/etc/hostname: outside the repository: only files inside it are validated"),
        ("areas/oncall", "areas/oncall: is a directory: name files, or give no path to check them all"),
        (".", ".: is a directory: name files, or give no path to check them all"),
        ("areas/nope.html", "areas/nope.html: no such file"),
        ("areas/oncall/../../.gitignore", ".gitignore: not a memory file: memory files end in .html"),
    ],
)
def test_unusable_paths_are_one_line_each(
    repo: Path, capsys: pytest.CaptureFixture[str], argument: str, line: str
) -> None:
    code, out, err = run(capsys, argument)
    assert (code, out) == (1, [line])
    assert "Traceback" not in err


def test_generated_artifacts_and_root_readme_are_skipped(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    put(repo, "areas/oncall/index.html", "<p>generated listing</p>")
    put(repo, "sitemap.xml", "<urlset/>")
    code, out, err = run(capsys, "areas/oncall/index.html", "sitemap.xml", "README.html")
    assert (code, out) == (0, [])
    assert "3 skipped (generated or scaffold)" in err
    put(repo, "areas/README.html", "<p>not the root one</p>")
    code, out, _ = run(capsys, "areas/README.html")
    assert code == 1 and out


def test_paths_are_read_relative_to_the_current_folder(
    repo: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "areas" / "oncall")
    code, out, err = run(capsys, "rollbacks.html", "rollbacks.html", "../../projects/tls/rotate.html")
    assert (code, out) == (0, [])
    assert "2 files checked" in err


def test_warnings_show_but_fail_only_under_strict(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rel = put(repo, "areas/oncall/warn.html", GOOD.replace("<code>", "<b>bold</b><code>").replace('"0.85"', '"7"'))
    code, out, err = run(capsys, rel)
    assert code == 0
    assert out == [
        f'{rel}: warning: memhtml-confidence "7" is not a number in [0, 1]; dropped',
        f"{rel}: warning: <b> is not in the closed element vocabulary",
    ]
    assert "validate ok" in err
    code, out, err = run(capsys, "--strict", rel)
    assert code == 1 and len(out) == 2 and "--strict: warnings fail" in err


def test_all_findings_of_a_file_are_listed(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = GOOD.replace('datetime="2026-01-02"', 'datetime="2026-02-30"').replace("<p>", '<p class="x">', 1)
    rel = put(repo, "areas/oncall/many.html", bad.replace("<!doctype html>\n", ""))
    code, out, _ = run(capsys, rel)
    assert code == 1
    assert len(out) == 3
    assert "expected-doctype-but-got-start-tag" in out[0]
    assert "2026-02-30" in out[1] and "class attribute on <p>" in out[2]


def test_json_envelope(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rel = put(repo, "areas/oncall/empty.html", b"")
    capsys.readouterr()
    code = main(["validate", "--json", rel, "areas/oncall/rollbacks.html"])
    envelope = json.loads(capsys.readouterr().out)
    assert code == 1
    assert envelope["type"] == "validate.report" and envelope["apiVersion"] == "1"
    data = envelope["data"]
    assert (data["ok"], data["violations"], data["warnings"]) == (False, 1, 0)
    assert data["checked"] == [rel, "areas/oncall/rollbacks.html"]
    assert data["findings"] == [{"path": rel, "reason": "empty file", "severity": "violation"}]


def test_outside_a_repository_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    code, out, err = run(capsys, "x.html")
    assert code == 1 and out == []
    assert "not inside a git repository" in err and "hint:" in err


def test_core_refuses_oversized_file_without_reading_it(repo: Path) -> None:
    big = repo / "areas" / "oncall" / "big.html"
    with big.open("wb") as handle:
        handle.truncate(5 * 1024 * 1024 * 1024)  # a sparse 5 GiB file: reading it would take seconds and memory
    report = validate_files(repo, ["areas/oncall/big.html"])
    assert [f.line() for f in report.findings] == [
        f"areas/oncall/big.html: file is {5 * 1024**3} bytes, over the {MAX_FILE_BYTES}-byte limit"
    ]
    assert report.failed() and report.checked == ()
