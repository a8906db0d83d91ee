"""No fake secret of our corpus reaches the trace plane (issue 13 item 4): every stored head and name passes
``traces/heads.py``, which redacts before it cuts, so not even a secret's first characters are kept."""

from __future__ import annotations

import json
from pathlib import Path

from git_memhtml.index.db import open_index
from git_memhtml.index.traces import TraceTables
from tests.secrets.corpus import CORPUS
from tests.traces.trace_helpers import SID, claude_line, claude_root, scan_roots


def test_no_corpus_secret_is_stored_anywhere_in_the_trace_plane(tmp_path: Path) -> None:
    lines = b"".join(claude_line("user", sample.line, uuid=f"u{i}") for i, sample in enumerate(CORPUS))
    lines += (json.dumps({"type": "summary", "summary": f"Deploy with {CORPUS[0].line}"}) + "\n").encode()
    lines += claude_line("assistant", "ok", cwd=f"/home/u/{CORPUS[1].secret}", gitBranch=CORPUS[2].secret)
    root, _ = claude_root(tmp_path, lines)
    index, state = tmp_path / "index.db", tmp_path / "state.db"
    db = open_index(index, state)
    try:
        report = scan_roots(db, root, tmp_path / "no-codex")
        assert report.prompts == len(CORPUS) and report.redactions >= len(CORPUS)
        session = TraceTables(db).load_session(SID)
        assert session is not None and session.redactions == report.redactions
        assert "[redacted:" in session.first_prompt and "[redacted:" in session.ai_title
        stored = [session.first_prompt, session.ai_title, session.cwd, session.git_branch,
                  *(p.head for p in session.prompts)]
        for sample in CORPUS:
            for text in stored:
                assert sample.secret not in text, sample.name
                assert sample.secret[:12] not in text, sample.name  # no head keeps a secret's start either
        assert TraceTables(db).search_sessions(CORPUS[0].secret) == [] or all(
            CORPUS[0].secret not in s.first_prompt for s in TraceTables(db).search_sessions(CORPUS[0].secret))
    finally:
        db.close()
    blob = b"".join(p.read_bytes() for p in tmp_path.glob("state.db*"))
    for sample in CORPUS:
        assert sample.secret.encode() not in blob, sample.name  # nor in the FTS index or any page of the file
