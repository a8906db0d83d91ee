"""git-memhtml's git configuration, kept in ONE included file, and the install receipt (docs/design.md §3.9).

The merge-driver definition lives in ``<git-common-dir>/memhtml/gitconfig`` (``--local``) or
``$XDG_CONFIG_HOME/git-memhtml/gitconfig`` (``--global``), pulled in by one ``[include] path = …`` block appended
to the repository's (or the user's) config file: the git-branchless pattern (docs/git.md §1.5), so that removing
it is one block plus one file. The receipt (``install.json`` beside it) records the SHA-256 of every file we own
and the exact bytes we appended, so uninstall removes exactly what was written and nothing a user added.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from git_memhtml.config import home_dir, live_env, xdg_dir
from git_memhtml.gitrepo.process import run_git
from git_memhtml.hooks.shims import sha256

DRIVER_NAME = "memhtml"
"""The ``merge=<name>`` attribute value and the ``merge.<name>.*`` config section (docs/design.md §3.10)."""
DRIVER_COMMAND = "git-memhtml merge-driver %O %A %B %P"
"""git substitutes ``%O`` (ancestor), ``%A`` (ours, also the result), ``%B`` (theirs), ``%P`` (path)
(gitattributes(5), docs/git.md §2.1). The executable is called directly, without a ``git`` hop."""
CONFIG_TEXT = (
    "# Written by git-memhtml (`git memhtml install` or `git memhtml init`); `git memhtml uninstall` removes it.\n"
    f'[merge "{DRIVER_NAME}"]\n'
    "\tname = git-memhtml: merge generated listings, sitemap and access sidecar by their entries\n"
    f"\tdriver = {DRIVER_COMMAND}\n"
)
"""The whole included file: both keys written at once, since a half-defined driver is fatal (docs/git.md §2.3)."""
RECEIPT_VERSION = 1
LOCAL_INCLUDE_VALUE = "memhtml/gitconfig"
"""``include.path`` value in ``<common-dir>/config`` (relative paths resolve against the including file's folder)."""

Scope = Literal["local", "global"]
Owner = Literal["init", "install"]


@dataclass(frozen=True)
class ConfigPlace:
    """Where one scope's configuration lives: the config file we append to, our folder, the include value."""

    scope: Scope
    config_file: Path
    folder: Path
    include_value: str

    @property
    def our_file(self) -> Path:
        """The included file holding the driver definition."""
        return self.folder / "gitconfig"

    @property
    def receipt_file(self) -> Path:
        """The receipt of everything installed in this scope."""
        return self.folder / "install.json"

    @property
    def block(self) -> str:
        """The exact ``[include]`` block appended to :attr:`config_file`."""
        return f"[include]\n\tpath = {self.include_value}\n"


def local_place(common_dir: Path) -> ConfigPlace:
    """The ``--local`` place of a repository whose git common dir is ``common_dir``."""
    return ConfigPlace("local", common_dir / "config", common_dir / "memhtml", LOCAL_INCLUDE_VALUE)


def global_place(env: Mapping[str, str] | None = None) -> ConfigPlace:
    """The ``--global`` place: ``~/.gitconfig`` including ``$XDG_CONFIG_HOME/git-memhtml/gitconfig`` (absolute),
    with ``HOME`` and ``XDG_CONFIG_HOME`` read from ``env`` (default :func:`git_memhtml.config.live_env`)."""
    environ = live_env() if env is None else env
    home = home_dir(environ)
    xdg = xdg_dir(environ, "XDG_CONFIG_HOME", home / ".config")
    folder = xdg / "git-memhtml"
    return ConfigPlace("global", home / ".gitconfig", folder, str(folder / "gitconfig"))


def read_receipt(place: ConfigPlace) -> dict[str, Any]:
    """The receipt of ``place`` (``{}`` when there is none or it is unreadable JSON)."""
    try:
        data = json.loads(place.receipt_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def write_receipt(place: ConfigPlace, receipt: dict[str, Any]) -> None:
    """Write ``receipt`` deterministically (sorted keys), or delete the file when it records nothing."""
    body = {k: v for k, v in receipt.items() if k != "version" and v}
    if not body:
        place.receipt_file.unlink(missing_ok=True)
        return
    body["version"] = RECEIPT_VERSION
    place.folder.mkdir(parents=True, exist_ok=True)
    place.receipt_file.write_text(json.dumps(body, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _git_config_get(config_file: Path, key: str, env: Mapping[str, str]) -> list[str]:
    proc = run_git(["config", "--file", str(config_file), "--get-all", key], cwd=None, env=env)
    return proc.stdout.splitlines() if proc.returncode == 0 else []


def ensure_config(place: ConfigPlace, owner: Owner, *, env: Mapping[str, str] | None = None) -> bool:
    """Write our included file and the ``[include]`` block if missing; record them in the receipt under ``owner``
    unless another owner already holds them. Returns whether anything was written. ``env`` is the base of the
    ``git config`` child (default :func:`git_memhtml.config.live_env`).

    Raises:
        OSError: a file cannot be written.
    """
    env = live_env() if env is None else env
    receipt = read_receipt(place)
    wrote = False
    created_folder = not place.folder.exists()
    if not place.our_file.is_file() or place.our_file.read_text(encoding="utf-8") != CONFIG_TEXT:
        place.folder.mkdir(parents=True, exist_ok=True)
        place.our_file.write_text(CONFIG_TEXT, encoding="utf-8")
        wrote = True
    appended = ""
    created_file = not place.config_file.exists()
    if place.include_value not in _git_config_get(place.config_file, "include.path", env):
        existing = "" if created_file else place.config_file.read_text(encoding="utf-8")
        appended = ("\n" if existing and not existing.endswith("\n") else "") + place.block
        place.config_file.parent.mkdir(parents=True, exist_ok=True)
        with place.config_file.open("a", encoding="utf-8") as fh:
            fh.write(appended)
        wrote = True
    config = receipt.get("config")
    if not config:
        receipt["config"] = {
            "owner": owner,
            "file": str(place.our_file),
            "sha256": sha256(CONFIG_TEXT.encode("utf-8")),
            "includedFrom": str(place.config_file),
            "appended": appended or place.block,
            "createdConfigFile": created_file,
            "createdFolder": created_folder,
        }
        write_receipt(place, receipt)
    elif wrote:
        config.update({"sha256": sha256(CONFIG_TEXT.encode("utf-8")), "appended": appended or config["appended"]})
        write_receipt(place, receipt)
    return wrote


def remove_config(place: ConfigPlace, receipt: dict[str, Any], *, env: Mapping[str, str] | None = None) -> list[str]:
    """Remove the included file (only if its bytes are ours) and the appended ``[include]`` block; return what
    was left in place because a user changed it (human-readable notes). Mutates ``receipt`` (drops ``config``).
    ``env`` as for :func:`ensure_config`."""
    env = live_env() if env is None else env
    notes: list[str] = []
    config = receipt.pop("config", None) or {}
    ours = place.our_file
    if ours.is_file():
        if sha256(ours.read_bytes()) == config.get("sha256", sha256(CONFIG_TEXT.encode("utf-8"))):
            ours.unlink()
        else:
            notes.append(f"{ours}: changed since install, kept")
    if place.config_file.is_file():
        text = place.config_file.read_text(encoding="utf-8")
        appended = str(config.get("appended") or place.block)
        at = text.rfind(appended)
        if at < 0 and appended != place.block:
            appended = place.block
            at = text.rfind(appended)
        if at >= 0:
            text = text[:at] + text[at + len(appended):]
            if not text and config.get("createdConfigFile"):
                place.config_file.unlink()
            else:
                place.config_file.write_text(text, encoding="utf-8")
        elif place.include_value in _git_config_get(place.config_file, "include.path", env):
            run_git(["config", "--file", str(place.config_file), "--fixed-value", "--unset-all", "include.path",
                     place.include_value], cwd=None, env=env)
            notes.append(f"{place.config_file}: include.path removed with `git config` (the block was edited)")
    if config.get("createdFolder") and place.folder.is_dir() and not _has_other_files(place):
        place.receipt_file.unlink(missing_ok=True)
        try:
            place.folder.rmdir()
        except OSError:
            pass
    return notes


def _has_other_files(place: ConfigPlace) -> bool:
    return any(p != place.receipt_file for p in place.folder.iterdir())
