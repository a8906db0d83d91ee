"""Trust rule: a path argument names a memory, or it is refused before anything moves (issue 8 item 1).

Every path-taking command runs against every hostile path: the git dir, the state and index databases, the
committed artifacts, dotfiles and dot-folders, the root README, absolute paths outside and inside, ``..``
escapes, symlinks (file and folder, committed and uncommitted, pointing inside and outside), percent-escapes,
backslashes, control characters and non-UTF-8 names. Each run must exit 1 or 2 with a stderr line naming the
path, and leave every byte in place: the work tree, the whole git dir (HEAD, refs, index, config, objects and
``memhtml/{index,state}.db``: nothing is excluded, because a refusal happens before the index is opened) and the
folder the outside links point at.

The rows are data: a command joins by adding one :class:`Command` to :data:`COMMANDS`, a hostile input by adding a
string to :data:`HOSTILE`. A positive row set proves the legitimate forms still work: relative to a sub-folder
as the current folder, ``-C`` a sub-folder, ``./x``, ``../x`` and absolute paths inside the work tree.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from git_memhtml.cli.main import main
from git_memhtml.gitrepo import GitRepo
from git_memhtml.pathnames import shown_name

NOW = "2026-03-01T00:00:00Z"
GOOD = "areas/inbox/good.html"
OTHER = "areas/inbox/other.html"
ARCHIVED = "archive/2026/areas/inbox/old.html"
SECRET_TITLE = "Outside secret zebracorn"


@dataclass(frozen=True)
class Command:
    """One path-taking command: ``argv(path, base)`` builds its arguments (``base`` holds ``repo/`` and the
    ``scratch/`` folder outside the repository for input files); ``verb`` is its key in ``VERB_NEEDS``;
    ``resolved(envelope)`` reads back the repository path the command acted on (for the positive rows)."""

    name: str
    verb: str
    argv: Callable[[str, Path], list[str]]
    resolved: Callable[[dict[str, Any]], str]


def _apply_file(path: str, base: Path) -> list[str]:
    line = {"op": "write", "title": "Apply hostile", "type": "semantic", "claim": "Apply claims a hostile path.",
            "path": path}
    (base / "scratch").mkdir(exist_ok=True)
    source = base / "scratch" / "ops.jsonl"
    source.write_text(json.dumps(line) + "\n", encoding="utf-8")
    return ["apply", "--file", str(source)]


COMMANDS: list[Command] = [
    Command("read", "read", lambda p, s: ["read", p], lambda d: d["path"]),
    Command("neighbors", "neighbors", lambda p, s: ["neighbors", p], lambda d: d["path"]),
    Command("archive", "archive", lambda p, s: ["archive", p, "--reason", "trust test"], lambda d: d["path"]),
    Command("correct", "correct", lambda p, s: ["correct", p, "--title", "Corrected", "--claim",
                                                 "The corrected claim holds."],
            lambda d: d["archived_path"].removeprefix("archive/2026/")),
    Command("link-src", "link-src", lambda p, b: ["link", p, "relates_to", str(b / "repo" / OTHER)],
            lambda d: d["srcPath"]),
    Command("link-dst", "link-dst", lambda p, b: ["link", str(b / "repo" / OTHER), "relates_to", p],
            lambda d: d["dstPath"]),
    Command("reinforce", "reinforce", lambda p, s: ["reinforce", p], lambda d: d["bumped"][0]),
    Command("write", "write", lambda p, s: ["write", "--type", "semantic", "--title", "Hostile write", "--claim",
                                             "Write claims a hostile path.", "--path", p], lambda d: d["path"]),
    Command("apply", "apply", _apply_file, lambda d: d["results"][0]["path"]),
    Command("task-status", "task-status", lambda p, s: ["task", "status", p, "doing"], lambda d: d["path"]),
]
"""Every CLI command that takes a repository path (``link`` twice: both ends)."""

HOSTILE: list[str] = [
    # the git dir and the state/index planes
    ".git/HEAD", ".git/config", ".git/memhtml/state.db", ".git/memhtml/index.db", ".git/hooks/pre-commit.html",
    "{root}/.git/HEAD", "{root}/.git/config", "{root}/.git/memhtml/state.db",
    # committed artifacts, generated listings, the root page
    ".memhtml/state/access.jsonl", ".memhtml/sleep/sleep-2026-01-01.html", "areas/index.html", "index.html",
    "sitemap.xml", "README.html", "{root}/areas/index.html",
    "areas/inbox/INDEX.HTML", "areas/Index.html", "projects/x/Sitemap.XML",  # a listing on a case-insensitive disk
    # dotfiles and dot-folders anywhere
    "areas/.x.html", ".hidden/x.html", "areas/.hidden/x.html", "areas/inbox/.good.html",
    # outside the work tree, absolute or by ..
    "/etc/passwd", "/areas/inbox/good.html", "{outside}/secret.html", "../outside/secret.html",
    "areas/../../outside/secret.html", "areas/inbox/../../.git/HEAD", "{root}", ".", "areas", "areas/inbox/",
    # not a memory file
    "areas/inbox/good.txt", "areas/good.html.bak", "areas/.html",
    # percent-escapes, backslashes, control characters, non-UTF-8, empty
    "areas/%2e%2e/%2e%2e/outside/secret.html", "areas/inbox/%2E%2E/inbox/good.html", "areas%2Finbox%2Fgood.html",
    "%2e%2e/outside/secret.html", "areas\\inbox\\good.html", "areas/inbox/good.html\x00", "areas/inbox/\x1bgood.html",
    "areas/inbox/good\x7f.html", "areas/inbox/bad\udcfename.html", "", " areas/inbox/good.html",
    "{link}/.git/HEAD", "{link}/areas/dir-out/secret.html", "{link}/../outside/secret.html",
    "areas/inbox/good.html/", "areas/inbox/\u202egood.html", "areas/inbox/a\nb.html", "areas/inbox/\x85good.html",
    "areas/" + "a" * 300 + ".html", "areas/" + "a/" * 3000 + "x.html", "areas/inbox/fifo.html",
    # symlinks: file and folder, committed and uncommitted, pointing inside and outside
    "areas/inbox/link-in.html", "areas/inbox/link-out.html", "areas/inbox/ulink-in.html", "areas/inbox/ulink-out.html",
    "areas/inbox/dangling.html", "areas/dir-in/good.html", "areas/dir-out/secret.html", "areas/udir-in/good.html",
    "areas/udir-out/secret.html", "{root}/areas/inbox/link-out.html", "areas/dir-out/../inbox/link-in.html",
]
"""Hostile paths every command refuses (``{root}``/``{outside}`` become the absolute folders)."""

VERB_HOSTILE: list[tuple[str, str]] = [
    *[(verb, ARCHIVED) for verb in ("archive", "correct", "link-src", "reinforce", "write", "apply",
                                    "task-status")],
    *[(verb, "archive/2026/areas/inbox/new.html") for verb in ("write", "apply")],
    # a new path not in Unicode NFC (decomposed é, a decomposed Hangul syllable, in a folder name too)
    *[(verb, path) for verb in ("write", "apply") for path in (
        "areas/inbox/cafe\u0301.html", "areas/inbox/\u1100\u1161.html", "areas/cafe\u0301/note.html",
        "projects/A\u030a/x.html")],
    *[(verb, "areas/inbox/missing.html") for verb in ("read", "neighbors", "archive", "correct", "link-src",
                                                      "link-dst", "reinforce", "task-status")],
]
"""Refusals that depend on the verb (``VERB_NEEDS``): archive/ only where the verb reads; a memory that must
exist (a link target too); a new path that is not NFC."""


def _hash_tree(base: Path) -> dict[str, tuple[str, str]]:
    """Every entry under ``base`` (symlinks not followed): files by sha256, links by target, folders by name."""
    out: dict[str, tuple[str, str]] = {}
    for folder, dirs, files in os.walk(base):
        for name in dirs + files:
            full = Path(folder, name)
            rel = full.relative_to(base).as_posix()
            if full.is_symlink():
                out[rel] = ("link", os.readlink(full))
            elif full.is_dir():
                out[rel] = ("dir", "")
            elif not full.is_file():
                out[rel] = ("special", oct(full.lstat().st_mode))
            else:
                out[rel] = ("file", hashlib.sha256(full.read_bytes()).hexdigest())
    return out


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True).stdout


def _memory(title: str, claim: str, tail: str = "") -> str:
    from git_memhtml.document.draft import MemoryDraft
    from git_memhtml.document.template import render_memory

    text = render_memory(MemoryDraft(title=title, memory_type="semantic", claim=claim, body=()),
                         now="2026-01-01T00:00:00Z")
    return text.replace("</mark></p>", f"</mark>{tail}</p>") if tail else text


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """``base/repo`` (a memory repository with committed and uncommitted symlinks) and ``base/outside``."""
    base = tmp_path_factory.mktemp("trust-paths")
    with pytest.MonkeyPatch.context() as mp:
        home = base / "home"
        home.mkdir()
        (home / ".gitconfig").write_text(
            "[user]\n\tname = T\n\temail = t@example.invalid\n[init]\n\tdefaultBranch = main\n")
        for key in list(os.environ):
            if key.startswith(("GIT_", "MEMHTML_")):
                mp.delenv(key, raising=False)
        for key, value in {"HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1", "MEMHTML_EMBED": "fake",
                           "MEMHTML_NOW": NOW, "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid",
                           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid",
                           "GIT_AUTHOR_DATE": "2026-01-15T12:00:00+00:00",
                           "GIT_COMMITTER_DATE": "2026-01-15T12:00:00+00:00"}.items():
            mp.setenv(key, value)
        root, outside = base / "repo", base / "outside"
        outside.mkdir()
        os.symlink("repo", base / "repo-link")  # the work tree reached another way, from outside it
        (outside / "secret.html").write_text(_memory(SECRET_TITLE, "The outside secret is zebracorn."),
                                             encoding="utf-8")
        assert main(["init", str(root)]) == 0
        for path, title, claim in ((GOOD, "Good memory", "The good memory is here."),
                                   (OTHER, "Other memory", "The other memory is there."),
                                   ("areas/inbox/old.html", "Old memory", "The old memory was archived.")):
            assert main(["-C", str(root), "write", "--type", "semantic", "--title", title, "--claim", claim,
                         "--path", path]) == 0
        assert main(["-C", str(root), "archive", "areas/inbox/old.html", "--reason", "setup"]) == 0
        links = {"areas/inbox/link-in.html": "good.html", "areas/inbox/link-out.html": "../../../outside/secret.html",
                 "areas/dir-in": "inbox", "areas/dir-out": "../../outside"}
        for path, target in links.items():
            os.symlink(target, root / path)
        _git(root, "add", "--", *links)
        _git(root, "commit", "-q", "-m", "hostile: committed symlinks")
        for path, target in {"areas/inbox/ulink-in.html": "good.html",
                             "areas/inbox/ulink-out.html": "../../../outside/secret.html",
                             "areas/inbox/dangling.html": "../../../outside/created-through-link.html",
                             "areas/udir-in": "inbox", "areas/udir-out": "../../outside"}.items():
            os.symlink(target, root / path)
        assert main(["-C", str(root), "index", "update"]) == 1  # warm; exit 1: the symlinks are reported, skipped
        yield base


@pytest.fixture
def world(template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A private copy of the template (links are relative, so they point inside the copy)."""
    base = tmp_path / "w"
    shutil.copytree(template, base, symlinks=True)
    os.mkfifo(base / "repo/areas/inbox/fifo.html")  # a read would block forever: it must never be opened
    monkeypatch.setenv("HOME", str(base / "home"))
    monkeypatch.setenv("MEMHTML_NOW", NOW)
    return base


def _expand(path: str, base: Path) -> str:
    return (path.replace("{root}", str(base / "repo")).replace("{outside}", str(base / "outside"))
            .replace("{link}", str(base / "repo-link")))


def _names(path: str, root: Path) -> list[str]:
    """Strings one of which a refusal must show: the argument as given (escaped) or its repository path."""
    shown = [shown_name(path) or "''", "''"] if not path else [shown_name(path)]
    try:
        lexical = path.replace(str(root.parent / "repo-link"), str(root), 1)  # the link to the root, followed
        rel = Path(os.path.normpath(root / lexical)).relative_to(root).as_posix()
        shown.append(shown_name(rel))
    except ValueError:
        pass
    return shown


def _run_refused(world: Path, command: Command, raw: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = world / "repo"
    path = _expand(raw, world)
    argv = command.argv(path, world)
    before = {k: v for k, v in _hash_tree(world).items() if not k.startswith("scratch")}
    head = GitRepo.discover(root).head_sha()
    capsys.readouterr()
    code = main(["-C", str(root), *argv])
    err = capsys.readouterr().err
    assert code in (1, 2), (command.name, raw, code, err)
    assert any(name in err for name in _names(path, root)), (command.name, raw, err)
    assert "internal error" not in err
    after = {k: v for k, v in _hash_tree(world).items() if not k.startswith("scratch")}
    changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
    assert changed == [], (command.name, raw, changed)
    assert GitRepo.discover(root).head_sha() == head


@pytest.mark.parametrize("raw", HOSTILE)
@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c.name)
def test_hostile_path_is_refused_and_nothing_moves(world: Path, command: Command, raw: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    _run_refused(world, command, raw, capsys)


@pytest.mark.parametrize(("verb", "raw"), VERB_HOSTILE)
def test_verb_specific_refusals(world: Path, verb: str, raw: str, capsys: pytest.CaptureFixture[str]) -> None:
    command = next(c for c in COMMANDS if c.verb == verb)
    _run_refused(world, command, raw, capsys)


def test_every_path_verb_has_a_row() -> None:
    from git_memhtml.tree.paths import VERB_NEEDS

    assert {c.verb for c in COMMANDS} == set(VERB_NEEDS)


# -- the legitimate forms ----------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Form:
    """A legitimate way to name ``target``: ``cwd`` (relative to the repository; ``None`` = ``-C`` the root),
    ``c_dir`` (``-C`` this sub-folder) and the argument (``{root}`` expands)."""

    label: str
    argument: str
    cwd: str | None = None
    c_dir: str | None = None


EXISTING_FORMS = [
    Form("root-relative", GOOD),
    Form("dot-slash", "./" + GOOD),
    Form("folded-dots", "areas/inbox/../inbox/./good.html"),
    Form("absolute-inside", "{root}/" + GOOD),
    Form("cwd-subfolder", "good.html", cwd="areas/inbox"),
    Form("cwd-subfolder-dot", "./good.html", cwd="areas/inbox"),
    Form("cwd-parent", "../inbox/good.html", cwd="areas/inbox"),
    Form("cwd-absolute", "{root}/" + GOOD, cwd="areas"),
    Form("dash-C-subfolder", "inbox/good.html", c_dir="areas"),
    Form("absolute-through-a-link-to-the-root", "{link}/" + GOOD),
]


def _run_form(world: Path, argv: list[str], form: Form, monkeypatch: pytest.MonkeyPatch,
              capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    root = world / "repo"
    if form.cwd is not None:
        monkeypatch.chdir(root / form.cwd)
        prefix: list[str] = []
    else:
        prefix = ["-C", str(root / form.c_dir) if form.c_dir else str(root)]
    capsys.readouterr()
    code = main([*prefix, *argv, "--json"])
    out, err = capsys.readouterr()
    assert code == 0, (form.label, argv, out, err)
    return dict(json.loads(out)["data"])


@pytest.mark.parametrize("form", EXISTING_FORMS, ids=lambda f: f.label)
@pytest.mark.parametrize("command", [c for c in COMMANDS if c.verb not in ("write", "apply", "link-src",
                                                                         "task-status")],
                         ids=lambda c: c.name)
def test_resolver_accepts_the_legitimate_forms(world: Path, command: Command, form: Form,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    argument = _expand(form.argument, world)
    data = _run_form(world, command.argv(argument, world), form, monkeypatch, capsys)
    assert command.resolved(data) == GOOD


@pytest.mark.parametrize("form", EXISTING_FORMS, ids=lambda f: f.label)
def test_link_source_accepts_the_legitimate_forms(world: Path, form: Form, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    argument = _expand(form.argument, world)
    data = _run_form(world, ["link", argument, "relates_to", _expand("{root}/" + OTHER, world)], form,
                     monkeypatch, capsys)
    assert (data["srcPath"], data["dstPath"]) == (GOOD, OTHER)
    assert f'href="/{OTHER}"' in (world / "repo" / GOOD).read_text(encoding="utf-8")


@pytest.mark.parametrize("form", EXISTING_FORMS, ids=lambda f: f.label)
def test_task_status_accepts_the_legitimate_forms(world: Path, form: Form, monkeypatch: pytest.MonkeyPatch,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """``task status`` needs a task: the same forms name one written in GOOD's folder."""
    root = world / "repo"
    assert main(["-C", str(root), "task", "add", "--title", "Good task", "--claim", "Finish the good task.",
                 "--path", "areas/inbox/task.html"]) == 0
    argument = _expand(form.argument, world).replace("good.html", "task.html")
    data = _run_form(world, ["task", "status", argument, "doing"], form, monkeypatch, capsys)
    assert data["path"] == "areas/inbox/task.html" and data["changed"] is True


NEW = "areas/inbox/brand-new.html"
NEW_FORMS = [
    Form("root-relative", NEW), Form("dot-slash", "./" + NEW), Form("absolute-inside", "{root}/" + NEW),
    Form("cwd-subfolder", "brand-new.html", cwd="areas/inbox"), Form("dash-C-subfolder", "inbox/brand-new.html",
                                                                       c_dir="areas"),
]


@pytest.mark.parametrize("form", NEW_FORMS, ids=lambda f: f.label)
def test_write_path_resolves_like_git(world: Path, form: Form, monkeypatch: pytest.MonkeyPatch,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    write = next(c for c in COMMANDS if c.verb == "write")
    data = _run_form(world, write.argv(_expand(form.argument, world), world), form, monkeypatch, capsys)
    assert write.resolved(data) == NEW and (world / "repo" / NEW).is_file()


@pytest.mark.parametrize("argument", [NEW, "./" + NEW, "{root}/" + NEW])
def test_apply_path_is_a_repository_path(world: Path, argument: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The apply stream has no current folder: its paths are read from the work-tree root (docs/store.md)."""
    apply = next(c for c in COMMANDS if c.verb == "apply")
    capsys.readouterr()
    code = main(["-C", str(world / "repo" / "areas"), *apply.argv(_expand(argument, world), world),
                 "--json"])
    out, err = capsys.readouterr()
    assert code == 0, (out, err)
    assert apply.resolved(json.loads(out)["data"]) == NEW


def test_archived_memories_are_read_and_linked_to(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(world / "repo")
    for argv in (["read", ARCHIVED], ["neighbors", ARCHIVED], ["link", GOOD, "relates_to", ARCHIVED]):
        capsys.readouterr()
        assert main(["-C", root, *argv, "--json"]) == 0, capsys.readouterr()


def test_the_console_script_resolves_against_its_current_folder(world: Path) -> None:
    """The real process: ``python -m git_memhtml read good.html`` started in ``areas/inbox``."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run([sys.executable, "-m", "git_memhtml", "read", "good.html", "--json"],
                          cwd=world / "repo" / "areas" / "inbox", env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["data"]["path"] == GOOD
    done = subprocess.run([sys.executable, "-m", "git_memhtml", "archive", "../../.git/HEAD", "--reason", "x"],
                          cwd=world / "repo" / "areas" / "inbox", env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 2 and ".git/HEAD" in done.stderr
    assert (world / "repo" / ".git" / "HEAD").read_text(encoding="utf-8").startswith("ref: ")


NFD_CAFE, NFC_CAFE = "areas/inbox/cafe\u0301.html", "areas/inbox/caf\u00e9.html"


def test_a_non_nfc_new_path_is_refused_with_its_nfc_form_and_the_nfc_path_is_written(
        world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = str(world / "repo")
    write = next(c for c in COMMANDS if c.verb == "write")
    capsys.readouterr()
    assert main(["-C", root, *write.argv(NFD_CAFE, world), "--json"]) == 2
    envelope = json.loads(capsys.readouterr().out)
    assert envelope["error"].startswith("--path ") and "NFC" in envelope["error"]
    assert envelope["hint"].endswith(NFC_CAFE)
    assert main(["-C", root, *write.argv(NFC_CAFE, world), "--json"]) == 0
    assert [p.name for p in (world / "repo" / "areas" / "inbox").iterdir() if p.name.startswith("caf")] == [
        "caf\u00e9.html"]


def test_an_existing_non_nfc_file_is_still_read_and_validate_names_it(
        world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Decision (docs/store.md): nobody is locked out of a memory committed under a decomposed name."""
    root = world / "repo"
    _git(root, "mv", GOOD, NFD_CAFE)
    _git(root, "commit", "-q", "-m", "a decomposed name, made by hand")
    capsys.readouterr()
    assert main(["-C", str(root), "read", NFD_CAFE, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["path"] == NFD_CAFE
    assert main(["-C", str(root), "validate", NFD_CAFE]) == 1
    out, err = capsys.readouterr()
    assert "not in Unicode NFC" in out + err and NFC_CAFE in out + err


@pytest.mark.parametrize("verb", ["write", "apply"])
@pytest.mark.parametrize(("existing", "typed"), [
    (NFD_CAFE, NFC_CAFE),  # the file itself
    ("areas/cafe\u0301/note.html", "areas/caf\u00e9/other.html"),  # a folder on the way
])
def test_a_new_path_beside_a_lookalike_in_another_unicode_form_is_refused(
        world: Path, verb: str, existing: str, typed: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = world / "repo"
    (root / existing).parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(root / GOOD, root / existing)
    _git(root, "add", "--", existing)
    _git(root, "commit", "-q", "-m", "a decomposed name, made by hand")
    command = next(c for c in COMMANDS if c.verb == verb)
    _run_refused(world, command, typed, capsys)


@pytest.mark.parametrize("name", ["UP.HTML", "Mixed.Html"])
def test_a_memory_named_in_upper_case_html_is_read_like_validate_and_the_index_take_it(
        world: Path, name: str, capsys: pytest.CaptureFixture[str]) -> None:
    root = world / "repo"
    _git(root, "mv", GOOD, f"areas/inbox/{name}")
    _git(root, "commit", "-q", "-m", "upper-case suffix")
    capsys.readouterr()
    assert main(["-C", str(root), "read", f"areas/inbox/{name}", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["path"] == f"areas/inbox/{name}"
    assert main(["-C", str(root), "validate", f"areas/inbox/{name}"]) == 0
