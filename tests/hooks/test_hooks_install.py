"""install / uninstall with real git repositories: receipt, chaining, hooksPath, byte-identical round trip."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from git_memhtml.cli.common import init_memory as init_repo
from git_memhtml.hooks.install import HookConflict, HooksPathSet, install, uninstall
from git_memhtml.hooks.shims import HOOK_NAMES, has_fingerprint, shim_bytes
from tests.hooks.hooks_helpers import git, snapshot

PROJECT = Path(__file__).resolve().parents[2]
FOREIGN = "#!/bin/sh\necho foreign-ran >> \"$(git rev-parse --git-dir)/foreign.log\"\nexit 0\n"


def _plain_repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    git(tmp_path, "init", "-q", str(root))
    return root


def test_project_hooks_folder_holds_the_package_shims_byte_for_byte() -> None:
    for name in HOOK_NAMES:
        shipped = (PROJECT / "hooks" / name).read_bytes()
        assert shipped == shim_bytes(name)
        assert has_fingerprint(shipped)
        assert os.access(PROJECT / "hooks" / name, os.X_OK)
        subprocess.run(["sh", "-n", str(PROJECT / "hooks" / name)], check=True)


def test_install_writes_four_shims_and_one_include_and_reinstall_is_a_no_op(tmp_path: Path) -> None:
    root = _plain_repo(tmp_path)
    report = install(root, root / ".git")
    assert {a.action for a in report.hooks} == {"installed"}
    for name in HOOK_NAMES:
        assert (root / ".git" / "hooks" / name).read_bytes() == shim_bytes(name)
    assert git(root, "config", "--get", "merge.memhtml.driver").stdout.strip() == \
        "git-memhtml merge-driver %O %A %B %P"
    assert git(root, "config", "--get-all", "include.path").stdout.split() == ["memhtml/gitconfig"]
    before = snapshot(root)
    again = install(root, root / ".git")
    assert {a.action for a in again.hooks} == {"unchanged"} and not again.config_changed
    assert snapshot(root) == before


def test_install_uninstall_is_byte_identical_with_a_foreign_post_commit(tmp_path: Path) -> None:
    root = _plain_repo(tmp_path)
    hook = root / ".git" / "hooks" / "post-commit"
    hook.write_text(FOREIGN)
    hook.chmod(0o755)
    with (root / ".git" / "config").open("a") as fh:
        fh.write("[user]\n\tname = Someone\n")
    before = snapshot(root)
    report = install(root, root / ".git")
    assert ("post-commit", "chained") in {(a.hook, a.action) for a in report.hooks}
    assert (root / ".git" / "hooks" / "post-commit.legacy").read_text() == FOREIGN
    uninstall(root, root / ".git")
    assert snapshot(root) == before


def test_install_uninstall_is_byte_identical_on_an_init_repository(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    init_repo(root)
    before = snapshot(root)
    install(root, root / ".git")
    assert snapshot(root) != before
    report = uninstall(root, root / ".git")
    assert snapshot(root) == before
    assert any("init" in note for note in report.notes)
    assert git(root, "config", "--get", "merge.memhtml.driver").returncode == 0


def test_chained_hook_runs_first_on_a_real_commit(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMHTML_HOOKS", "0")
    root = _plain_repo(tmp_path)
    hook = root / ".git" / "hooks" / "post-commit"
    hook.write_text(FOREIGN)
    hook.chmod(0o755)
    install(root, root / ".git")
    (root / "a.txt").write_text("a")
    git(root, "add", "a.txt")
    git(root, "commit", "-qm", "a")
    assert (root / ".git" / "foreign.log").read_text() == "foreign-ran\n"


def test_core_hooks_path_is_refused_with_the_fix_unless_followed(tmp_path: Path) -> None:
    root = _plain_repo(tmp_path)
    git(root, "config", "core.hooksPath", ".husky/_")
    before = snapshot(root)
    with pytest.raises(HooksPathSet) as caught:
        install(root, root / ".git")
    assert "git config --local --unset core.hooksPath" in (caught.value.hint or "")
    assert "--hooks-path=follow" in (caught.value.hint or "")
    assert snapshot(root) == before
    report = install(root, root / ".git", hooks_path_follow=True)
    assert report.hooks_dir == str((root / ".husky" / "_").resolve())
    assert (root / ".husky" / "_" / "post-merge").read_bytes() == shim_bytes("post-merge")
    uninstall(root, root / ".git")
    assert not (root / ".husky").exists()
    assert snapshot(root) == before


def test_edited_shim_is_refused_unless_forced_and_kept_by_uninstall(tmp_path: Path) -> None:
    root = _plain_repo(tmp_path)
    install(root, root / ".git")
    hook = root / ".git" / "hooks" / "post-merge"
    hook.write_bytes(shim_bytes("post-merge") + b"echo mine\n")
    with pytest.raises(HookConflict):
        install(root, root / ".git")
    report = uninstall(root, root / ".git")
    assert hook.exists() and ("post-merge", "kept") in {(a.hook, a.action) for a in report.hooks}
    install(root, root / ".git", force=True)
    assert hook.read_bytes() == shim_bytes("post-merge")


def test_foreign_hook_with_an_existing_legacy_is_refused_and_nothing_changes(tmp_path: Path) -> None:
    root = _plain_repo(tmp_path)
    hooks = root / ".git" / "hooks"
    (hooks / "post-checkout").write_text(FOREIGN)
    (hooks / "post-checkout.legacy").write_text(FOREIGN + "# older\n")
    before = snapshot(root)
    with pytest.raises(HookConflict) as caught:
        install(root, root / ".git")
    assert "post-checkout.legacy" in caught.value.message
    assert snapshot(root) == before


def test_global_scope_writes_only_the_driver_definition(tmp_path: Path) -> None:
    home = Path(os.environ["HOME"])
    before = (home / ".gitconfig").read_bytes()
    report = install(tmp_path, tmp_path, scope="global")
    assert report.hooks == () and report.config_changed
    root = _plain_repo(tmp_path)
    assert git(root, "config", "--get", "merge.memhtml.driver").stdout.strip().startswith("git-memhtml")
    assert not (root / ".git" / "hooks" / "post-commit").exists()
    uninstall(tmp_path, tmp_path, scope="global")
    assert (home / ".gitconfig").read_bytes() == before
    assert git(root, "config", "--get", "merge.memhtml.driver", check=False).returncode == 1


def test_init_upgrades_merge_ours_lines_in_place(tmp_path: Path) -> None:
    root = tmp_path / "old"
    root.mkdir()
    (root / ".gitattributes").write_text("*.png binary\nindex.html merge=ours linguist-generated\n"
                                         "sitemap.xml merge=ours linguist-generated\n*.html diff=html\n")
    init_repo(root)
    lines = (root / ".gitattributes").read_text().splitlines()
    assert lines == ["*.png binary", "index.html merge=memhtml linguist-generated",
                     "sitemap.xml merge=memhtml linguist-generated", "*.html diff=html",
                     ".memhtml/state/access.jsonl merge=memhtml linguist-generated"]
    assert init_repo(root).commit_sha is None


def test_uninstall_after_the_repository_moved(tmp_path: Path) -> None:
    root = _plain_repo(tmp_path)
    before = snapshot(root)
    install(root, root / ".git")
    moved = tmp_path / "moved"
    root.rename(moved)
    report = uninstall(moved, moved / ".git")
    assert {a.action for a in report.hooks} == {"removed"}
    assert snapshot(moved) == before


def test_doctor_checks_report_hooks_and_driver(tmp_path: Path) -> None:
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.hooks.checks import git_integration_checks

    root = tmp_path / "mem"
    init_repo(root)
    repo = GitRepo.discover(root)
    before = {c.name: c.ok for c in git_integration_checks(repo)}
    assert before == {"merge-driver": True, "hooks": False}
    install(root, root / ".git")
    assert all(c.ok for c in git_integration_checks(repo))
