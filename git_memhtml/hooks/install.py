"""``git memhtml install`` / ``uninstall``: hook shims, the merge-driver config and the receipt (docs/design.md §3.9).

Rules (docs/git.md §0.1–0.2, §1.10):

- hooks go into ``$(git rev-parse --git-path hooks)``, shared by every worktree; a set ``core.hooksPath`` (other
  than the default folder) is refused with the exact fix unless ``hooks_path_follow``;
- a shim identical to ours is left alone (re-install is a no-op); one of an older shipped version is upgraded; a
  shim carrying our fingerprint but edited by hand is refused unless ``force``; a foreign hook is moved to
  ``<hook>.legacy`` and run first by the shim; a foreign hook when ``<hook>.legacy`` already exists is refused
  (nothing is ever overwritten that we did not write);
- every check runs before the first write, so a refusal changes nothing;
- uninstall deletes only files whose bytes are ours, moves ``<hook>.legacy`` back, removes the config that
  *install* wrote (the driver config written by ``init`` stays: it belongs to the repository's scaffold) and
  leaves every foreign file untouched.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from git_memhtml.config import live_env
from git_memhtml.errors import MemhtmlError
from git_memhtml.gitrepo.process import run_git
from git_memhtml.hooks.gitconfig import (
    ConfigPlace,
    Scope,
    ensure_config,
    global_place,
    local_place,
    read_receipt,
    remove_config,
    write_receipt,
)
from git_memhtml.hooks.shims import HOOK_NAMES, LEGACY_SUFFIX, has_fingerprint, known_digests, sha256, shim_bytes


class HooksPathSet(MemhtmlError):
    """``core.hooksPath`` points elsewhere and the user did not ask to follow it."""

    code = "ERR_GIT"


class HookConflict(MemhtmlError):
    """A hook file cannot be installed or replaced without losing someone else's bytes."""

    code = "ERR_GIT"


@dataclass(frozen=True)
class HookAction:
    """What happened to one hook: ``installed``, ``unchanged``, ``upgraded``, ``replaced``, ``chained`` (foreign
    hook kept as ``.legacy``), ``removed``, ``restored`` (``.legacy`` moved back), ``kept`` (edited, not ours)."""

    hook: str
    action: str


@dataclass(frozen=True)
class InstallReport:
    """Outcome of install/uninstall: scope, hooks folder (``None`` for ``--global``), per-hook actions, whether
    the config changed, and notes (files left in place, attributes to add)."""

    scope: str
    hooks_dir: str | None
    hooks: tuple[HookAction, ...]
    config_changed: bool
    notes: tuple[str, ...]


def _git(root: Path, env: Mapping[str, str], *args: str) -> tuple[int, str]:
    proc = run_git(args, cwd=root, env=env)
    return proc.returncode, proc.stdout.strip()


def hooks_dir(root: Path, common_dir: Path, *, follow: bool, env: Mapping[str, str] | None = None) -> Path:
    """The folder git runs hooks from (``git rev-parse --git-path hooks``, run with ``env``; default
    :func:`git_memhtml.config.live_env`).

    Raises:
        HooksPathSet: ``core.hooksPath`` names another folder and ``follow`` is false (the hint gives the fix).
    """
    env = live_env() if env is None else env
    code, out = _git(root, env, "rev-parse", "--git-path", "hooks")
    folder = (root / out).resolve() if code == 0 and out else (common_dir / "hooks").resolve()
    default = (common_dir / "hooks").resolve()
    if folder != default and not follow:
        _, scoped = _git(root, env, "config", "--show-scope", "--get", "core.hooksPath")
        scope = scoped.split("\t", 1)[0] if "\t" in scoped else "local"
        raise HooksPathSet(
            f"core.hooksPath is set ({scope} config) to {folder}; git-memhtml will not write into a folder another "
            "tool manages",
            hint=f"`git config --{scope} --unset core.hooksPath` then re-run `git memhtml install`, or run "
            "`git memhtml install --hooks-path=follow` to install into that folder",
        )
    return folder


def _write_executable(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.memhtml-tmp")
    tmp.write_bytes(data)
    try:
        tmp.chmod(0o755)
    except OSError:  # FAT/Windows: the executable bit may not exist (docs/git.md §1.3)
        pass
    os.replace(tmp, path)


def _plan_hook(folder: Path, name: str, recorded: str | None, *, force: bool) -> str:
    target = folder / name
    legacy = folder / (name + LEGACY_SUFFIX)
    if not target.exists() and not target.is_symlink():
        return "installed"
    data = target.read_bytes() if target.is_file() else b""
    if data == shim_bytes(name) and target.is_file() and not target.is_symlink():
        return "unchanged"
    digest = sha256(data)
    if not target.is_symlink() and (digest in known_digests() or digest == recorded):
        return "upgraded"
    if has_fingerprint(data) and not target.is_symlink():
        if force:
            return "replaced"
        raise HookConflict(
            f"{target}: a git-memhtml hook that was edited by hand",
            hint=f"move your edits to {legacy.name} (it is run first), or re-run with --force to replace it",
        )
    if legacy.exists() or legacy.is_symlink():
        raise HookConflict(
            f"{target} is another tool's hook and {legacy.name} already exists",
            hint=f"merge {legacy} into {target} (or move it away), then re-run `git memhtml install`",
        )
    return "chained"


def _attributes_note(root: Path) -> list[str]:
    attrs = root / ".gitattributes"
    text = attrs.read_text(encoding="utf-8", errors="replace") if attrs.is_file() else ""
    if "merge=memhtml" in text:
        return []
    return [".gitattributes does not route generated files to the merge driver; run `git memhtml init` "
            "(it adds the lines and commits them)"]


def install(root: Path, common_dir: Path, *, scope: Scope = "local", hooks_path_follow: bool = False,
            force: bool = False, env: Mapping[str, str] | None = None) -> InstallReport:
    """Install the hook shims of :data:`~git_memhtml.hooks.shims.HOOK_NAMES` (``local`` only) and the
    merge-driver config of ``scope``.

    Args:
        root: the work tree; common_dir: its git common dir (``local``); both unused for ``global`` hooks.
        hooks_path_follow: install into ``core.hooksPath`` when it is set.
        force: replace a hand-edited git-memhtml shim.
        env: the environment (``HOME``/``XDG_CONFIG_HOME`` for ``global``; the base of ``git`` children);
            default :func:`git_memhtml.config.live_env`.

    Raises:
        HooksPathSet, HookConflict: refused before anything was written. OSError: a file cannot be written.
    """
    env = live_env() if env is None else env
    if scope == "global":
        changed = ensure_config(global_place(env), "install", env=env)
        return InstallReport("global", None, (), changed, ())
    place = local_place(common_dir)
    folder = hooks_dir(root, common_dir, follow=hooks_path_follow, env=env)
    recorded: dict[str, Any] = dict(read_receipt(place).get("hooks") or {})
    plan = [(name, _plan_hook(folder, name, (recorded.get(name) or {}).get("sha256"), force=force))
            for name in HOOK_NAMES]
    changed = ensure_config(place, "install", env=env)
    receipt = read_receipt(place)
    missing = [d for d in (folder, *folder.parents) if not d.exists()]
    folder.mkdir(parents=True, exist_ok=True)
    actions: list[HookAction] = []
    for name, action in plan:
        target = folder / name
        legacy = bool((recorded.get(name) or {}).get("legacy"))
        if action == "chained":
            os.replace(target, folder / (name + LEGACY_SUFFIX))
            legacy = True
        if action != "unchanged":
            _write_executable(target, shim_bytes(name))
        recorded[name] = {"sha256": sha256(shim_bytes(name)), "legacy": legacy}
        actions.append(HookAction(name, action))
    receipt["hooks"] = recorded
    receipt["hooksDir"] = str(folder)
    receipt["hooksDirCreated"] = receipt.get("hooksDirCreated") or [str(d) for d in missing]
    write_receipt(place, receipt)
    return InstallReport("local", str(folder), tuple(actions), changed, tuple(_attributes_note(root)))


def _remove_hooks(place: ConfigPlace, receipt: dict[str, Any], default_dir: Path) -> tuple[list[HookAction],
                                                                                            list[str]]:
    recorded_dir = Path(receipt.get("hooksDir") or default_dir)
    folder = recorded_dir if recorded_dir.is_dir() else default_dir  # the repository may have moved
    recorded: dict[str, Any] = dict(receipt.get("hooks") or {})
    actions: list[HookAction] = []
    notes: list[str] = []
    for name in HOOK_NAMES:
        target = folder / name
        legacy = folder / (name + LEGACY_SUFFIX)
        entry = recorded.pop(name, None) or {}
        if target.is_file() and not target.is_symlink():
            data = target.read_bytes()
            if sha256(data) in known_digests() or sha256(data) == entry.get("sha256"):
                target.unlink()
                actions.append(HookAction(name, "removed"))
            elif has_fingerprint(data):
                notes.append(f"{target}: a git-memhtml hook edited by hand, kept (delete it yourself)")
                actions.append(HookAction(name, "kept"))
                continue
            else:
                continue
        if not target.exists() and not target.is_symlink() and (legacy.exists() or legacy.is_symlink()):
            os.replace(legacy, target)
            actions.append(HookAction(name, "restored"))
    receipt.pop("hooks", None)
    receipt.pop("hooksDir", None)
    for created in receipt.pop("hooksDirCreated", None) or []:
        if Path(created).is_dir() and not any(Path(created).iterdir()):
            Path(created).rmdir()
    return actions, notes


def uninstall(root: Path, common_dir: Path, *, scope: Scope = "local",
              env: Mapping[str, str] | None = None) -> InstallReport:
    """Remove exactly what :func:`install` wrote in ``scope``; restore chained hooks; keep foreign files.
    ``env`` as for :func:`install`.

    Raises:
        OSError: a file cannot be removed.
    """
    env = live_env() if env is None else env
    place = global_place(env) if scope == "global" else local_place(common_dir)
    receipt = read_receipt(place)
    actions: list[HookAction] = []
    notes: list[str] = []
    folder: str | None = None
    if scope == "local":
        current = hooks_dir(root, common_dir, follow=True, env=env)
        actions, notes = _remove_hooks(place, receipt, current)
        folder = str(current)
    changed = False
    config = receipt.get("config") or {}
    if config.get("owner") == "install":
        notes += remove_config(place, receipt, env=env)
        changed = True
    elif config:
        notes.append(f"{place.our_file}: the merge-driver config written by `git memhtml init` stays "
                     "(the repository's .gitattributes name it)")
    write_receipt(place, receipt)
    return InstallReport(scope, folder, tuple(actions), changed, tuple(notes))
