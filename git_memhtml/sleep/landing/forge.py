"""``sleep pr``: push a run's branch and open (or update) its pull request (issue 5 item 3; docs/git.md §8).

The body is the run's Markdown review (:mod:`sleep.review_markdown`), always written to
``<git common dir>/memhtml/pr/<run stem>.md`` first, so it survives whatever the forge does. Then:

- with ``gh`` (the GitHub CLI, found on ``PATH`` by the caller): ``gh pr list --head <branch>`` finds an open pull
  request; one found → ``gh pr edit <number> --title … --body-file <file>``; none → ``gh pr create --head <branch>
  --base main --title … --body-file <file>``. ``gh`` runs in the work tree, so it picks the repository from the
  remotes as it always does;
- without ``gh``: the compare address is derived from the remote URL (:func:`compare_url`) for GitHub-, Gitea- and
  GitLab-like hosts; for any other remote (a path, ``file://``) the report says there is none.

Every child starts in ``git_memhtml.gitrepo`` (``gh`` through :func:`~git_memhtml.gitrepo.process.run_program`,
with the repository's environment). The push uses the ``git`` binary (credentials, SSH agents and push hooks are
git's business) and forces only to replace an earlier version of the same run that ``sleep rebase`` rewrote
(:func:`replaced_run_version`, with ``--force-with-lease``); otherwise a rejected push means the remote branch
holds something else.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote

from git_memhtml.cut import clip
from git_memhtml.errors import GitError, MemhtmlError, UsageError
from git_memhtml.gitrepo import GitRepo
from git_memhtml.gitrepo.process import run_program
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.engine.runfiles import run_file_stem
from git_memhtml.sleep.engine.runref import resolve_sleep_run
from git_memhtml.sleep.engine.trunk import TRUNK, trunk_name
from git_memhtml.sleep.landing.rail import check_sleep_output
from git_memhtml.sleep.presentation.review import review_run
from git_memhtml.sleep.presentation.review_markdown import MarkdownBody, render_markdown

PR_DIR = "memhtml/pr"
"""Body files live under the git common dir, never in the work tree (docs/design.md §3.2)."""

GH_TIMEOUT_S = 120
"""Seconds one ``gh`` call may take (it talks to the network)."""


class ForgeError(MemhtmlError):
    """The forge CLI failed (not signed in, no such repository, network)."""

    code = "ERR_FORGE"


@dataclass(frozen=True)
class PullRequestReport:
    """The ``sleep.pr`` envelope."""

    run_id: str
    branch: str
    remote: str
    pushed_sha: str
    body_file: str
    body: MarkdownBody
    title: str
    forge: str  # gh | none
    action: str  # created | updated | compare | none
    url: str | None
    note: str | None = None

    def as_json(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "runId": self.run_id, "branch": self.branch, "remote": self.remote, "pushedSha": self.pushed_sha,
            "bodyFile": self.body_file, "bodyChars": len(self.body.text), "truncated": self.body.truncated,
            "title": self.title, "forge": self.forge, "action": self.action, "url": self.url, "note": self.note,
        }


_SCP = re.compile(r"^(?:[^@/]+@)?(?P<host>[^:/]+):(?P<path>[^/].*)$")
_URL = re.compile(r"^(?:https?|ssh|git)://(?:[^@/]+@)?(?P<host>[^/:]+)(?::\d+)?/(?P<path>.+)$")


def forge_web_base(remote_url: str) -> tuple[str, str] | None:
    """``(kind, https://host/owner/repo)`` of a forge remote, or ``None`` (a path, ``file://``, unknown shape).

    ``kind`` is ``gitlab`` when the host name contains ``gitlab``, else ``github`` (GitHub, Gitea and Forgejo
    share the ``/compare/<base>...<head>`` address). ``scp``-like (``git@host:o/r.git``), ``ssh://``,
    ``git://`` and ``http(s)://`` remotes are understood; credentials in the URL are dropped.
    """
    url = remote_url.strip()
    match = _URL.match(url) or (None if "://" in url else _SCP.match(url))
    if match is None:
        return None
    path = match.group("path").strip("/")
    if path.endswith(".git"):
        path = path[: -len(".git")]
    if path.count("/") < 1:
        return None
    host = match.group("host").lower()
    return ("gitlab" if "gitlab" in host else "github"), f"https://{host}/{path}"


def compare_url(remote_url: str, branch: str, base: str = TRUNK) -> str | None:
    """The address that opens a pull (merge) request of ``branch`` into ``base``, or ``None`` (not a forge)."""
    found = forge_web_base(remote_url)
    if found is None:
        return None
    kind, web = found
    if kind == "gitlab":
        return (f"{web}/-/merge_requests/new?merge_request%5Bsource_branch%5D={quote(branch, safe='')}"
                f"&merge_request%5Btarget_branch%5D={quote(base, safe='')}")
    return f"{web}/compare/{quote(base, safe='/')}...{quote(branch, safe='/')}?expand=1"


def pr_title(review: dict[str, Any]) -> str:
    """``Sleep run sleep/2026-01-15: 2 body-changed, 3 created, …`` (no memory text; counts only)."""
    counts = ", ".join(f"{n} {k}" for k, n in review["summary"].items() if n)
    return f"Sleep run {review['runId']}: {counts or 'no memory changes'}"


def body_file_path(repo: GitRepo, run_id: str) -> Path:
    """``<git common dir>/memhtml/pr/<run stem>.md``."""
    return repo.common_dir / PR_DIR / f"{run_file_stem(run_id)}.md"


def _gh(gh: Path, args: list[str], repo: GitRepo) -> str:
    try:
        proc = run_program([str(gh), *args], cwd=repo.root, env=repo.env, timeout=GH_TIMEOUT_S)
    except OSError as exc:  # not started, or out of time (TimeoutError)
        raise ForgeError(f"gh {args[0]} {args[1]} did not run: {exc}", hint="gh auth status") from exc
    if proc.returncode != 0:
        hint = "gh auth login" if proc.returncode == 4 else "gh auth status; then re-run git memhtml sleep pr"
        raise ForgeError(f"gh {args[0]} {args[1]} failed (exit {proc.returncode}): {clip(proc.stderr.strip(), 300)}",
                         hint=hint)
    return proc.stdout


def replaced_run_version(repo: GitRepo, remote: str, run_id: str, tip: str) -> str | None:
    """The remote branch's sha when it holds an earlier version of this same run that ``sleep rebase`` replaced,
    else ``None`` (then the push never forces).

    That is: the remote-tracking ``refs/remotes/<remote>/<run>`` (what the last push or fetch saw; no network
    is asked) is not an ancestor of ``tip``, and every commit it has beyond the trunk carries
    ``Memhtml-Run: <run>``. The push then uses ``--force-with-lease=refs/heads/<run>:<that sha>``, so it
    replaces exactly that version: if anyone pushed since, the remote refuses.
    """
    from git_memhtml.sleep.engine.commit import TRAILER_RUN  # noqa: PLC0415 - only a rebased run needs it

    try:
        listed = repo.run_git(["rev-parse", "--verify", "--quiet", f"refs/remotes/{remote}/{run_id}"]).split()
    except GitError:
        return None  # never pushed from here (or fetched): nothing of ours to replace
    if not listed or listed[0] == tip:
        return None
    remote_sha = listed[0]
    try:
        if repo.is_ancestor(remote_sha, tip):
            return None
        trunk = repo.branch_sha(trunk_name(repo)) or tip
        commits = repo.log_trailers(trunk, remote_sha, TRAILER_RUN)
    except GitError:
        return None  # not known here: someone else pushed it; the plain push is refused and says so
    if not commits or any(values != [run_id] for _sha, values in commits):
        return None
    return remote_sha


def check_base_branch(repo: GitRepo, base: str) -> str:
    """Return ``base`` when it is a branch name git accepts (``git check-ref-format --branch``), else refuse.

    A name starting with ``-`` is refused before git sees it (it would be read as an option by ``git push`` and
    ``gh``); so is one git would expand into another name (``@{-1}``).

    Raises:
        UsageError: (exit 2) naming ``--base``.
    """
    hint = "pass --base NAME with a branch name git accepts (`git check-ref-format --branch NAME`), e.g. main"
    if not base or base.startswith("-"):
        raise UsageError(f"--base {base!r}: is not a branch name (it is empty or starts with '-')", hint=hint)
    try:
        checked = repo.run_git(["check-ref-format", "--branch", base]).strip()
    except GitError:
        raise UsageError(f"--base {base!r}: is not a valid branch name", hint=hint) from None
    if checked != base:
        raise UsageError(f"--base {base!r}: is not a plain branch name (git reads it as {checked!r})", hint=hint)
    return base


def open_pull_request(
    repo: GitRepo, db: IndexDB, run_id: str, *, remote: str = "origin", gh: Path | None, base: str | None = None,
    allow_failed: bool = False,
) -> PullRequestReport:
    """Write the body file, push ``run_id``'s branch to ``remote``, then create or update the pull request.

    Args:
        gh: the ``gh`` executable, or ``None`` to print the compare address instead.
        base: the branch the request merges into (default: the trunk, :func:`sleep.trunk.trunk_name`).
        allow_failed: propose a run with failed phases (``--allow-failed``); refused otherwise.

    Raises:
        RunNotFound: no such run branch. RunVerbRefused: not a finished run (:mod:`sleep.runref`).
        UsageError: no such remote (the hint names the fix); ``base`` is not a branch name (:func:`check_base_branch`).
        GitError: the push was rejected.
        ForgeError: ``gh`` failed (the body file is written and named in the message).
        NotSleepOutput: the branch holds what sleep never produces (``sleep/landing/rail.py``), before any push.
    """
    base = trunk_name(repo) if base is None else check_base_branch(repo, base)
    run = resolve_sleep_run(repo, db, run_id, "pr", allow_failed=allow_failed)
    branch_sha = run.tip_sha
    check_sleep_output(repo, run.run_id, run.base_sha, branch_sha)  # a forged run never reaches a forge either
    try:
        remote_url = repo.run_git(["remote", "get-url", remote]).strip()
    except GitError as exc:
        raise UsageError(f"no remote {remote!r}", hint=f"git remote add {remote} <url>, or pass --remote NAME") from exc
    review = review_run(repo, db, run_id, verb="pr", allow_failed=allow_failed)
    body = render_markdown(repo, review)
    target = body_file_path(repo, run_id)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(body.text, encoding="utf-8")
    lease = replaced_run_version(repo, remote, run_id, branch_sha)
    repo.run_git(["push", "--quiet", *([f"--force-with-lease=refs/heads/{run_id}:{lease}"] if lease else []), remote,
                  f"refs/heads/{run_id}:refs/heads/{run_id}"])
    title = pr_title(review)
    report = PullRequestReport(run_id, run_id, remote, branch_sha, str(target), body, title, "none", "none", None)
    if gh is None:
        url = compare_url(remote_url, run_id, base)
        note = None if url else f"{remote} ({remote_url}) is not a known forge: open the pull request there by hand"
        return replace(report, action="compare" if url else "none", url=url, note=note)
    listed = _gh(gh, ["pr", "list", "--head", run_id, "--base", base, "--state", "open", "--json", "number,url"],
                 repo)
    try:
        existing = json.loads(listed or "[]")
    except json.JSONDecodeError:
        existing = []
    if existing:
        number = str(existing[0]["number"])
        _gh(gh, ["pr", "edit", number, "--title", title, "--body-file", str(target)], repo)
        return replace(report, forge="gh", action="updated", url=existing[0].get("url"))
    out = _gh(gh, ["pr", "create", "--head", run_id, "--base", base, "--title", title, "--body-file", str(target)],
              repo)
    url = next((line.strip() for line in out.splitlines() if line.strip().startswith("http")), None)
    return replace(report, forge="gh", action="created", url=url)
