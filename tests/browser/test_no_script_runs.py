"""No script runs in any page we accept or generate (issue 8 item 5), proved in a real scripting browser.

A loopback HTTP server (127.0.0.1, ephemeral port) serves, unmodified: every golden fixture
(``tests/document/golden``), every file of a repository built by a real ``git memhtml demo`` run (the
``the demo corpus (git_memhtml/resources/demo)`` memories plus one whose title, body, tag and entity are script
markup kept as text, the ``index.html`` listings, ``sitemap.xml``, ``README.html`` and the sleep report
page). Headless Chromium opens one harness page that frames each of them (the harness itself has no script; the
pages get nothing injected) and runs with a virtual-time budget so timers, handlers and redirects have their
chance. Any request to ``/beacon`` means a script (or a refresh, or a fetching element) ran. Positive controls in
the same browser prove the beacon fires: a page with ``<script>fetch('/beacon')</script>`` and a hostile memory
that ``validate`` refuses (the ``<noscript>`` differential: harmless to a scripting-off parser, live in a browser).

Needs the ``chromium`` binary (Debian: ``apt-get install -y chromium``); skipped with that reason when absent
(``-ra`` in pytest's addopts prints the reason in CI).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import quote

import pytest

from git_memhtml.document.validate import check_document

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install -y chromium): "
                                "the no-script browser test cannot run")

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "document" / "golden"

CONTROL_SCRIPT = "<!doctype html><title>control</title><script>fetch('/beacon?control-script')</script>\n"

HOSTILE_NOSCRIPT = (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>Hostile</title>\n'
    '<meta name="memhtml-type" content="semantic">\n<meta name="memhtml-status" content="active">\n'
    '<meta name="memhtml-created" content="2026-01-02T03:04:05Z">\n'
    '<meta name="memhtml-updated" content="2026-01-02T03:04:05Z">\n</head>\n<body>\n<article>\n'
    "<p><mark>A claim.</mark></p>\n"
    '<noscript><p title="</noscript><img src=/missing.png onerror=fetch(&quot;/beacon?control-noscript&quot;)>">'
    "</p></noscript>\n</article>\n</body>\n</html>\n"
)


class _Server:
    """A loopback static server over ``root`` that records every request path."""

    def __init__(self, root: Path) -> None:
        self.paths: list[str] = []
        seen = self.paths

        class Handler(SimpleHTTPRequestHandler):
            def __init__(self, *args: object, **kwargs: object) -> None:
                super().__init__(*args, directory=str(root), **kwargs)  # type: ignore[arg-type]

            def do_GET(self) -> None:
                seen.append(self.path)
                if self.path.startswith("/beacon"):
                    self.send_response(204)
                    self.end_headers()
                    return
                super().do_GET()

            def log_message(self, format: str, *args: object) -> None:
                return

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def beacons(self) -> list[str]:
        return [path for path in self.paths if path.startswith("/beacon")]


@pytest.fixture
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, _Server]]:
    root = tmp_path_factory.mktemp("site")
    server = _Server(root)
    server.thread.start()
    try:
        yield root, server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


def _browse(server: _Server, harness: str, profile: Path) -> None:
    """Open ``harness`` in headless Chromium with a virtual-time budget (scripts, timers and loads run)."""
    assert CHROMIUM is not None
    subprocess.run(
        [CHROMIUM, "--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
         "--disable-background-networking", "--disable-sync", "--disable-component-update",
         f"--user-data-dir={profile}", "--virtual-time-budget=8000", "--dump-dom", server.url(harness)],
        check=True, capture_output=True, timeout=120,
    )


def _harness(root: Path, name: str, pages: list[str]) -> str:
    """A script-free page framing every page of ``pages`` (site paths); returns its site path."""
    frames = "".join(f'<iframe src="{quote(page)}"></iframe>\n' for page in pages)
    (root / name).write_text(f"<!doctype html><title>harness</title>\n{frames}", encoding="utf-8")
    return "/" + name


HOSTILE_TEXT_OPS = [
    {"op": "write", "type": "semantic", "title": "T </title><script>fetch('/beacon?title')</script>",
     "body": "Claims can quote <script>fetch('/beacon?body')</script> and <img src=x onerror=fetch('/beacon?img')>.",
     "tags": ["\"><script>fetch('/beacon?tag')</script>"],
     "entities": ["service:<svg onload=fetch('/beacon?entity')>"], "workspace": "checkout-v2"},
]
"""Valid memories whose text fields are markup: every generated page must show them as text."""


def _demo_repository(target: Path) -> Path:
    """A real demo run (init, apply the demo corpus (git_memhtml/resources/demo) plus :data:`HOSTILE_TEXT_OPS`,
    sleep run, review, merge): memories, listings, sitemap and the sleep report page."""
    corpus = target.parent / "corpus.jsonl"
    corpus.write_text((ROOT / "git_memhtml" / "resources" / "demo" / "memories.jsonl").read_text(encoding="utf-8")
                      + "".join(json.dumps(op) + "\n" for op in HOSTILE_TEXT_OPS), encoding="utf-8")
    env = {"PATH": "/usr/bin:/bin", "HOME": str(target.parent), "MEMHTML_EMBED": "fake", "GIT_CONFIG_NOSYSTEM": "1",
           "MEMHTML_NOW": "2026-01-15T12:00:00Z", "PYTHONPATH": str(ROOT),
           "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.invalid",
           "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.invalid"}
    subprocess.run([sys.executable, "-m", "git_memhtml", "demo", str(target), "--corpus", str(corpus)], check=True,
                   capture_output=True, env=env, timeout=300)
    return target


def test_no_accepted_or_generated_page_runs_script(site: tuple[Path, _Server], tmp_path: Path) -> None:
    root, server = site
    shutil.copytree(GOLDEN, root / "golden")
    demo = _demo_repository(tmp_path / "demo")
    shutil.copytree(demo, root / "demo", ignore=shutil.ignore_patterns(".git"))
    pages = sorted(
        "/" + path.relative_to(root).as_posix()
        for path in root.rglob("*")
        if path.is_file() and path.suffix in (".html", ".xml")
    )
    kinds = {
        "memory": [p for p in pages if p.startswith("/demo/") and p.endswith(".html") and "/index.html" not in p
                   and "/.memhtml/" not in p and p != "/demo/README.html"],
        "listing": [p for p in pages if p.endswith("/index.html")],
        "sitemap": [p for p in pages if p == "/demo/sitemap.xml"],
        "sleep report": [p for p in pages if p.startswith("/demo/.memhtml/sleep/") and p.endswith(".html")],
        "golden": [p for p in pages if p.startswith("/golden/")],
    }
    assert all(kinds.values()), {kind: len(found) for kind, found in kinds.items()}
    carrying = [page for page in kinds["listing"] + kinds["sleep report"]
                if "beacon?title" in (root / page.lstrip("/")).read_text(encoding="utf-8")]
    assert carrying, "the hostile-title memory reaches no generated page"
    for page in kinds["memory"] + [p for p in kinds["golden"] if "/examples/" in p or "example_" in p]:
        violations, _ = check_document((root / page.lstrip("/")).read_text(encoding="utf-8"))
        assert violations == [], (page, violations)  # every framed memory is one validate accepts

    _browse(server, _harness(root, "harness.html", pages), tmp_path / "profile")

    loaded = {path.split("?", 1)[0] for path in server.paths}
    assert set(pages) <= {p.replace("%20", " ") for p in loaded}, sorted(set(pages) - loaded)[:5]
    assert server.beacons() == []


def test_controls_fire_the_beacon(site: tuple[Path, _Server], tmp_path: Path) -> None:
    """The same browser, server and harness do report script: a plain script and a hostile memory."""
    root, server = site
    (root / "control.html").write_text(CONTROL_SCRIPT, encoding="utf-8")
    (root / "hostile.html").write_text(HOSTILE_NOSCRIPT, encoding="utf-8")
    violations, _ = check_document(HOSTILE_NOSCRIPT)
    assert "<noscript> is not allowed: a memory file holds no active, embedded or unknown element" in violations

    _browse(server, _harness(root, "harness.html", ["/control.html", "/hostile.html"]), tmp_path / "profile")

    assert sorted(server.beacons()) == ["/beacon?control-noscript", "/beacon?control-script"]
