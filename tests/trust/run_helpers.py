"""Shared by the run-branch trust tables: a real sleep run that dies mid-phase, for a forked child."""

from __future__ import annotations

import os
import signal
from typing import Any

from git_memhtml.embed.registry import get_embedder
from git_memhtml.gitrepo import GitRepo
from git_memhtml.index.db import IndexDB
from git_memhtml.sleep.run import run_sleep

DATE = "2026-02-01"
NOW = "2026-02-01T09:00:00Z"


def killed_mid_phase(repo: str) -> None:
    """Child: a real run that SIGKILLs itself inside retention-triage, after staging a half-written file."""
    os.environ["MEMHTML_EMBED"] = "fake"
    import git_memhtml.sleep.run as runner

    def dying(env: Any) -> Any:
        (env.repo.root / "areas" / "half.html").write_text("half")
        env.repo.stage(["areas/half.html"])
        os.kill(os.getpid(), signal.SIGKILL)

    runner.PHASE_BODIES = {**runner.PHASE_BODIES, "retention-triage": dying}
    main_repo = GitRepo.discover(repo)
    run_sleep(main_repo, IndexDB.for_repo(main_repo), date=DATE, embedder=get_embedder("fake"), clock=lambda: NOW)
