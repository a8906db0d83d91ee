"""Installs from a wheel (issue 8 item 10): the built wheel works outside the source tree.

A module fixture builds the wheel (``pip wheel --no-deps``), creates a fresh venv that sees the running
interpreter's site-packages (the heavy dependencies come from there; the package itself comes only from the wheel,
checked through ``git_memhtml.__file__``) and installs the wheel into it. Subprocesses run
with ``PYTHONPATH`` removed, ``PATH`` starting at the venv's ``bin`` and the current folder outside the source
tree, so nothing of the checkout can be imported by accident. Building needs setuptools from the package index
(PEP 517 build isolation), as ``pip install -e .`` does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("builds-from-the-checkout")]
"""One xdist worker for the whole module, so the wheel fixture is built once. Each build works on its own copy of
the checkout (:func:`_source_copy`): setuptools writes ``build/`` and ``git_memhtml.egg-info/`` into the tree it
builds, so two builds at once in the checkout collided, and a build killed half-way left a ``build/bdist…`` folder
that failed every later build with "File exists" (issue 26)."""


_NOT_SOURCE = shutil.ignore_patterns(".git", "build", "dist", "*.egg-info", "__pycache__", ".mypy_cache",
                                     ".ruff_cache", ".pytest_cache", ".hypothesis", ".venv", "venv")
"""What a copy of the checkout leaves out: git's folder, build output and tool caches."""


def _source_copy(tmp: Path) -> Path:
    """A private copy of the checkout's source under ``tmp`` (work-tree files as they are, uncommitted edits
    included), for one build to write its ``build/`` and ``*.egg-info`` into."""
    copy = tmp / "source"
    if not copy.exists():
        shutil.copytree(ROOT, copy, ignore=_NOT_SOURCE, symlinks=True)
    return copy


@dataclass(frozen=True)
class Venv:
    """A venv holding the installed wheel."""

    root: Path
    wheel: Path

    @property
    def bin(self) -> Path:
        return self.root / "bin"

    def env(self, **extra: str) -> dict[str, str]:
        """The test's environment without PYTHONPATH, the venv's bin first on PATH, plus ``extra``."""
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
        env["PATH"] = f"{self.bin}{os.pathsep}{os.environ.get('PATH', '/usr/bin:/bin')}"
        env.update(extra)
        return env


def _run(
    argv: list[str], *, cwd: Path, env: Mapping[str, str], timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(argv, cwd=cwd, env=dict(env), capture_output=True, text=True, timeout=timeout, check=False)


def _site_dirs() -> list[str]:
    """The running interpreter's ``site-packages`` folders, where the dependencies were installed: a venv's own when
    the tests run in a venv, the interpreter's when they do not."""
    return [entry for entry in sys.path
            if Path(entry).name in ("site-packages", "dist-packages") and Path(entry).is_dir()]


def _install(tmp: Path, *pip_args: str) -> Venv:
    """A fresh venv under ``tmp`` that sees the running interpreter's dependencies, with ``pip install --no-deps
    *pip_args``.

    ``--system-site-packages`` is not enough: a venv made from a venv's python gets the *base* interpreter's
    site-packages, not the outer venv's, so a suite run from a virtualenv (the README's way on a fresh machine)
    lost click there (issue 26). A ``.pth`` file in the new venv names the running interpreter's site-packages
    folders instead. Their own ``.pth`` files are not run (a path line adds the folder to ``sys.path`` without
    processing it as a site folder), so an editable install of the checkout there stays invisible."""
    root = tmp / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(root)], check=True, timeout=300)
    venv = Venv(root, Path())
    purelib = _run([str(venv.bin / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                   cwd=tmp, env=venv.env())
    assert purelib.returncode == 0, purelib.stderr
    (Path(purelib.stdout.strip()) / "memhtml-test-dependencies.pth").write_text(
        "".join(f"{entry}\n" for entry in _site_dirs()), encoding="utf-8")
    done = _run([str(venv.bin / "python"), "-m", "pip", "install", "--no-deps", "--disable-pip-version-check",
                 "-q", *pip_args], cwd=tmp, env=venv.env())
    assert done.returncode == 0, done.stderr[-3000:]
    return venv


@pytest.fixture(scope="module")
def wheel_venv(tmp_path_factory: pytest.TempPathFactory) -> Venv:
    """Build the wheel and install it into a fresh venv."""
    tmp = tmp_path_factory.mktemp("wheel")
    out = tmp / "dist"
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q",
                  "-w", str(out), str(_source_copy(tmp))], cwd=tmp,
                 env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert built.returncode == 0, built.stderr[-3000:]
    wheels = list(out.glob("git_memhtml-*.whl"))
    assert len(wheels) == 1, wheels
    venv = _install(tmp, str(wheels[0]))
    return Venv(venv.root, wheels[0])


def test_the_wheel_ships_the_demo_corpus_and_the_man_page(wheel_venv: Venv) -> None:
    names = set(zipfile.ZipFile(wheel_venv.wheel).namelist())
    assert "git_memhtml/resources/demo/memories.jsonl" in names
    assert any(n.endswith(".data/data/share/man/man1/git-memhtml.1") for n in names), sorted(names)[:20]


def test_the_package_is_imported_from_the_venv_not_the_source_tree(wheel_venv: Venv, tmp_path: Path) -> None:
    done = _run([str(wheel_venv.bin / "python"), "-c", "import git_memhtml; print(git_memhtml.__file__)"],
                cwd=tmp_path, env=wheel_venv.env())
    assert done.returncode == 0, done.stderr
    location = Path(done.stdout.strip()).resolve()
    assert location.is_relative_to(wheel_venv.root.resolve()), location
    assert not location.is_relative_to(ROOT), location


def test_demo_runs_offline_from_the_wheel_and_leaves_no_temp_folder(wheel_venv: Venv, tmp_path: Path) -> None:
    """The README's ``git memhtml demo``, default (offline) embedder, a private TMPDIR to count leftovers."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir()
    home = tmp_path / "home"  # a fresh account: no ~/.gitconfig, no git identity
    home.mkdir()
    env = wheel_venv.env(TMPDIR=str(tmpdir), HF_HUB_OFFLINE="1", HOME=str(home), XDG_CONFIG_HOME=str(home / ".config"))
    for key in ("MEMHTML_EMBED", "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
                "EMAIL"):
        env.pop(key, None)
    done = _run(["git", "memhtml", "demo"], cwd=tmp_path, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "no git identity is set" in done.stderr  # the demo repository got its own local identity
    assert "6. merge     merged" in done.stdout
    left = sorted(p.name for p in tmpdir.iterdir())
    # only the demo repository itself stays, on purpose: its path is printed for the user to explore
    assert len(left) == 1 and left[0].startswith("memhtml-demo-"), left
    assert str(tmpdir / left[0]) in done.stdout


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed (apt-get install -y man-db)")
def test_man_finds_the_page_from_the_venv_path(wheel_venv: Venv, tmp_path: Path) -> None:
    env = wheel_venv.env(PATH=f"{wheel_venv.bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
    env.pop("MANPATH", None)
    found = _run(["man", "-w", "git-memhtml"], cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).resolve() == (wheel_venv.root / "share/man/man1/git-memhtml.1").resolve()
    page = _run(["git", "memhtml", "--help"], cwd=tmp_path, env={**env, "MANPAGER": "cat", "PAGER": "cat"})
    assert page.returncode == 0, page.stderr
    assert "GIT-MEMHTML(1)" in page.stdout and "sleep merge" in page.stdout


@pytest.mark.skipif(shutil.which("man") is None, reason="man is not installed (apt-get install -y man-db)")
def test_the_readme_editable_install_also_installs_the_man_page(tmp_path: Path) -> None:
    """``pip install -e .`` (the README's step): build_backend/memhtml_build.py adds the page to editable wheels."""
    venv = _install(tmp_path, "-e", str(_source_copy(tmp_path)))
    env = venv.env(PATH=f"{venv.bin}{os.pathsep}/usr/bin{os.pathsep}/bin")
    env.pop("MANPATH", None)
    found = _run(["man", "-w", "git-memhtml"], cwd=tmp_path, env=env)
    assert found.returncode == 0, found.stderr
    assert Path(found.stdout.strip()).resolve() == (venv.root / "share/man/man1/git-memhtml.1").resolve()


def test_the_sdist_rebuilds_a_complete_wheel(tmp_path: Path) -> None:
    """``python -m build`` makes the wheel from the sdist: it must carry the in-tree backend and the man page
    (MANIFEST.in)."""
    out = tmp_path / "sdist"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    script = ("import sys; sys.path.insert(0, 'build_backend'); import memhtml_build; "
              f"print(memhtml_build.build_sdist({str(out)!r}))")
    made = _run([sys.executable, "-c", script], cwd=_source_copy(tmp_path), env=env)
    assert made.returncode == 0, made.stderr[-3000:]
    archive = out / made.stdout.strip().splitlines()[-1]
    with tarfile.open(archive) as tar:
        _extract(tar, tmp_path / "src")
    (src,) = list((tmp_path / "src").iterdir())
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--disable-pip-version-check", "-q", "-w",
                  str(tmp_path / "dist"), str(src)], cwd=tmp_path, env=env)
    assert built.returncode == 0, built.stderr[-3000:]
    (wheel,) = list((tmp_path / "dist").glob("*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "git_memhtml/resources/demo/memories.jsonl" in names
    assert any(n.endswith(".data/data/share/man/man1/git-memhtml.1") for n in names)


def _extract(tar: tarfile.TarFile, dest: Path) -> None:
    """Unpack our own sdist into ``dest``, refusing a member that would land outside it or be a link.

    ``extractall(filter="data")`` (PEP 706) arrived in Python 3.11.4; Debian 12's ``/usr/bin/python3`` is 3.11.2,
    which ``requires-python = ">=3.11"`` admits (issue 26). So the test checks the members itself on every Python
    and extracts with the filter only where the interpreter has it."""
    root = dest.resolve()
    for member in tar.getmembers():
        assert (root / member.name).resolve().is_relative_to(root), member.name
        assert member.isfile() or member.isdir(), member.name
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
    else:
        tar.extractall(dest)  # the members were checked above
