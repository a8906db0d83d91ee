"""The world the commands run in, resolved once at the CLI edge: repository, settings, embedder, clock.

Core functions receive these explicitly (docs/style.md §2). ``MEMHTML_NOW`` pins the clock (ISO UTC) for
reproducible runs and tests; nothing below the CLI reads the clock or the environment: :attr:`App.env` is the
process environment copied once per invocation, and the repository, settings, embedder key, identity check and
hooks receive it from here (docs/architecture.md "Environment and configuration").
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING

from git_memhtml.errors import ConfigError, MemhtmlError, UsageError
from git_memhtml.output import log, progress_for, warn

if TYPE_CHECKING:  # the CLI's start-up imports none of these (issue 12 item 4): each method imports what it uses
    from git_memhtml.config import ResolvedSettings
    from git_memhtml.document.model import MemoryDocument
    from git_memhtml.embed.base import Embedder
    from git_memhtml.gitrepo import GitRepo
    from git_memhtml.index.db import IndexDB
    from git_memhtml.index.indexer import IndexReport
    from git_memhtml.index.retrieval import ArmWeights
    from git_memhtml.progress import Progress

_INSTANT = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$")


def utc_now() -> str:
    """Return the current instant (or ``MEMHTML_NOW``) as ``YYYY-MM-DDTHH:MM:SSZ``."""
    pinned = os.environ.get("MEMHTML_NOW")
    if pinned:
        if not _INSTANT.match(pinned):
            raise UsageError(f"MEMHTML_NOW={pinned!r} is not an instant", hint="use YYYY-MM-DDTHH:MM:SSZ")
        return pinned
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def environment_snapshot() -> Mapping[str, str]:
    """A read-only copy of the process environment as it is now (later changes to ``os.environ`` do not show)."""
    return MappingProxyType(dict(os.environ))


def check_start_folder(repo_path: Path | None, env: Mapping[str, str]) -> None:
    """Refuse to start in a folder the command cannot read, before any command looks at it (git refuses the same).

    The folder is ``-C PATH`` when given, else the process's current folder; a relative ``-C`` is read from the
    current folder, so that folder must exist too. ``env["PWD"]`` (the shell's record of the current folder) names
    a current folder that was deleted, since the system can no longer tell its path.

    Raises:
        UsageError: naming ``-C PATH`` or the current folder, when it was deleted (or moved), is not a folder, or
            cannot be listed and entered (no read or execute permission).
    """
    if repo_path is None or not repo_path.is_absolute():
        try:
            here = Path.cwd()
        except OSError:  # FileNotFoundError: the folder was removed under the process
            shown = env.get("PWD") or "(unknown path)"
            raise UsageError(f"the current folder {shown} no longer exists (it was deleted or moved)",
                             hint="cd into a folder that exists (for example your repository), or pass -C PATH",
                             path=shown) from None
        if not os.access(here, os.R_OK | os.X_OK):
            raise UsageError(f"the current folder {here} cannot be read (no read or execute permission)",
                             hint="cd into a folder you can read, or pass -C PATH", path=str(here))
    if repo_path is not None:
        if not repo_path.is_dir():
            what = "is not a folder" if repo_path.exists() else "does not exist (deleted or never made)"
            raise UsageError(f"-C {repo_path}: the folder {what}",
                             hint="pass -C an existing folder inside your repository", path=str(repo_path))
        if not os.access(repo_path, os.R_OK | os.X_OK):
            raise UsageError(f"-C {repo_path}: the folder cannot be read (no read or execute permission)",
                             hint="pass -C a folder you can read", path=str(repo_path))


@dataclass
class App:
    """Lazily resolved collaborators of one command invocation.

    Attributes:
        env: the process environment, copied when the invocation starts (:func:`environment_snapshot`): the
            commit identity and dates (``GIT_AUTHOR_*``, ``GIT_COMMITTER_*``, ``EMAIL``), ``HOME`` and
            ``XDG_CONFIG_HOME``, ``MEMHTML_*`` settings, ``MEMHTML_FAULT_POINT``, and the base environment of
            every git child.
    """

    repo_path: Path | None = None
    json: bool = False
    quiet: bool = False
    """``--quiet``/``-q``: no progress bar."""
    env: Mapping[str, str] = field(default_factory=environment_snapshot)
    flags: Mapping[str, object | None] = field(default_factory=dict)
    """Settings given on the command line (``{"llm": "openai"}``), above every other source."""
    _repo: GitRepo | None = field(default=None, repr=False)
    _settings: ResolvedSettings | None = field(default=None, repr=False)
    _embedder: Embedder | None = field(default=None, repr=False)
    _embedder_loaded: bool = False
    _warned: set[tuple[str, str]] = field(default_factory=set, repr=False)
    """``(path, reason)`` pairs :meth:`reindex` already warned about: one command says each once, however many
    times it catches the index up (before and after its commit)."""

    def repo(self) -> GitRepo:
        """The repository containing ``--repo`` (default: the current directory)."""
        if self._repo is None:
            from git_memhtml.gitrepo import GitRepo

            self._repo = GitRepo.discover(self.repo_path or Path.cwd(), env=self.env)
            self._repo.fault_point = self.env.get("MEMHTML_FAULT_POINT") or None  # tests only (docs/store.md)
            try:
                self._repo.lock_timeout = self.settings().settings.lock_timeout
            except ConfigError:
                pass  # the command's own first read of the settings reports the bad value
        return self._repo

    def cwd(self) -> Path:
        """The folder relative path arguments are read from, as git reads them: ``-C``, else the process's current
        folder (resolved)."""
        return (self.repo_path or Path.cwd()).resolve()

    def memory_path(self, argument: str, verb: str, *, name: str = "PATH") -> str:
        """Resolve a path argument of ``verb`` (a key of ``VERB_NEEDS``) against :meth:`cwd` with the one resolver;
        return the repository path. Called before anything opens the index, so a refusal moves nothing.

        Raises:
            PathRefused, PathNotFound: see :func:`git_memhtml.tree.paths.resolve_memory_path`.
        """
        from git_memhtml.tree.paths import VERB_NEEDS, resolve_memory_path

        return resolve_memory_path(self.repo().root, argument, need=VERB_NEEDS[verb], base=self.cwd(), name=name).path

    def landed_commits(self) -> list[str]:
        """Commits this invocation put on a branch of its repository (``[]`` when it opened none)."""
        return [] if self._repo is None else list(self._repo.landed)

    def catch_up_after_commit(self, db: IndexDB, documents: Mapping[str, MemoryDocument] | None = None) -> None:
        """:meth:`reindex` after a commit landed: a failure is a warning, never the command's failure (the commit
        stands; the next command catches the index up). ``documents`` (``{git blob id: document}``, the writer's
        :attr:`BatchResult.documents`) spares the pass a parse of each file the commit wrote."""
        try:
            self.reindex(db, documents=documents)
        except MemhtmlError as exc:
            warn(f"the commit landed, but the index did not catch up: {exc.message} (the next command does)")

    def settings(self) -> ResolvedSettings:
        """Effective settings: defaults < git config < MEMHTML_* < flags."""
        if self._settings is None:
            from git_memhtml.config import resolve_settings

            repo: GitRepo | None
            try:
                repo = self.repo()
            except Exception:
                repo = None
            lookup = repo.config_get if repo is not None else (lambda key: None)
            self._settings = resolve_settings(git_config=lookup, env=self.env, flags=self.flags)
        return self._settings

    def embedder(self) -> Embedder | None:
        """The configured embedder (``None`` when ``embed=off``); ``openai`` reads its API key from the environment
        variable named by ``memhtml.embedkeyenv`` here, at the CLI edge; ``fake`` takes an explicitly set
        ``memhtml.embeddim`` as its dimension."""
        if not self._embedder_loaded:
            from git_memhtml.embed.registry import get_embedder

            s = self.settings().settings
            options = None
            if s.embed == "openai":
                from git_memhtml.embed.openai import OpenAIOptions

                options = OpenAIOptions(url=s.embed_url, model=s.embed_model, dim=s.embed_dim,
                                        api_key=self.env.get(s.embed_key_env) or None, key_env=s.embed_key_env,
                                        timeout=s.embed_timeout, batch=s.embed_batch)
            explicit_dim = self.settings().sources.get("embed_dim", "default") != "default"
            self._embedder = get_embedder(s.embed, openai=options,
                                          fake_dim=s.embed_dim if s.embed == "fake" and explicit_dim else None)
            self._embedder_loaded = True
        return self._embedder

    def warn_vector_arm_unavailable(self, consequence: str) -> None:
        """Warn that a read ran without its vector arm, saying why when the embedder recorded its failure
        (``OpenAIEmbedder.last_failure``: the URL, the status, a missing key) and its hint on a second line.
        ``consequence`` ends the first line, e.g. ``"results come from the lexical arms only"``."""
        failure = getattr(self._embedder, "last_failure", None) if self._embedder_loaded else None
        if failure is None:
            warn(f"the vector arm is unavailable; {consequence}")
            return
        warn(f"the vector arm is unavailable; {consequence}: {failure.message}")
        if failure.hint:
            log(f"hint: {failure.hint}")

    def weights(self) -> ArmWeights:
        """RRF arm weights: per key, the user's value (git config ``memhtml.weight*``, ``MEMHTML_WEIGHT_*``,
        flag) or else the configured embedder's measured default (:func:`default_weights`)."""
        from git_memhtml.index.retrieval import ArmWeights
        from git_memhtml.index.weights import default_weights

        resolved = self.settings()
        s, sources = resolved.settings, resolved.sources
        base = default_weights(s.embed)

        def pick(key: str, fallback: float) -> float:
            return float(getattr(s, key)) if sources.get(key, "default") != "default" else fallback

        weights = ArmWeights(
            fts=pick("weight_fts", base.fts),
            vector=pick("weight_vector", base.vector),
            recency=pick("weight_recency", base.recency),
            salience=pick("weight_salience", base.salience),
        )
        if max(weights.fts, weights.vector, weights.recency, weights.salience) <= 0:
            raise ConfigError(
                "every retrieval arm has weight 0, so no search can rank anything",
                hint="give at least one arm a positive weight, e.g. git config memhtml.weightfts 1",
            )
        return weights

    def before_write(self, *, on_head: bool = True) -> None:
        """The one check of every command that commits (issue 8 item 11), before anything is written:

        - the commit identity resolves by git's rules (else :class:`IdentityUnknown` with git's hint, exit 1);
        - a clone whose ``.gitattributes`` routes files to our merge driver without defining it gets one
          ``warning:`` line (``git memhtml install``);
        - with ``on_head`` (the commit lands on HEAD), a detached HEAD gets one ``warning:`` line: the commit
          will be on no branch.
        """
        from git_memhtml.gitrepo.identity import require_identity
        from git_memhtml.hooks.checks import undefined_driver_warning

        repo = self.repo()
        require_identity(self.env, repo.config_get)
        note = undefined_driver_warning(repo)
        if note:
            warn(note)
        if on_head and repo.head_sha() is not None and repo.current_branch() is None:
            warn(f"HEAD is detached at {str(repo.head_sha())[:12]}: the commit will be on no branch; keep it with "
                 "git switch -c <branch>")

    @contextmanager
    def index(self, *, catch_up: bool = True) -> Iterator[IndexDB]:
        """Open the checkout's index; with ``catch_up`` bring it to HEAD + work tree first (logging skipped files)."""
        from git_memhtml.index.db import IndexDB

        repo = self.repo()
        if repo.has_journal():  # a killed writer's landed commit: finish its work tree before indexing it
            with repo.write_lock("recover a killed write"):
                pass
        db = IndexDB.for_repo(repo, recover=True)
        if db.recovered_from is not None:
            warn(f"the index was corrupt; moved it to {db.recovered_from} and rebuilding (it is a cache)")
        if db.read_only is not None:
            warn(f"the index {db.index_path} cannot be opened for writing ({db.read_only}); it is healthy, so it is "
                 "served read-only as of its last update: it cannot be caught up with the work tree, and reads are "
                 "not recorded")
        try:
            if catch_up and db.read_only is None:
                self.reindex(db)
            yield db
        finally:
            db.close()

    def progress(self, *, as_json: bool = False) -> Progress:
        """The progress reporter of this command's long work: a bar on stderr when it is a terminal, unless
        ``--quiet`` or ``as_json`` (``--json`` output never shows one); else the silent one."""
        return progress_for(show=not (self.quiet or as_json or self.json))

    def reindex(self, db: IndexDB, *, documents: Mapping[str, MemoryDocument] | None = None) -> IndexReport:
        """Incrementally update ``db`` to the work tree; skipped files are warned about on stderr, each
        ``(path, reason)`` once per command. A long catch-up (an ``apply`` of thousands of memories) draws the
        progress bar of :meth:`progress`."""
        from git_memhtml.index.indexer import update

        report = update(self.repo(), db, self.embedder(), now=utc_now(), progress=self.progress(),
                        documents=documents)
        for path, reason in report.errors:
            if (path, reason) not in self._warned:
                warn(f"{path}: not indexed: {reason}")
            self._warned.add((path, reason))
        if report.embed_error:
            warn(f"embedding stopped early: {report.embed_error}")
        return report
