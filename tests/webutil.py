"""Real Chromium for the browser tests: Debian's ``chromium`` (installed by the Makefile's
bootstrap) driven by Playwright's Python package, never a browser Playwright downloads.

One browser per test module (starting Chromium costs seconds); each test gets a fresh page
whose console errors and uncaught exceptions are collected, so a test can assert the page
ran clean. Screenshots go to ``test-artifacts/`` (git-ignored).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = os.environ.get("CLARUS_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--no-first-run"]
ARTIFACTS = Path(__file__).resolve().parents[1] / "test-artifacts"


def chromium_or_skip() -> str:
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        pytest.skip(f"Chromium not found at {CHROMIUM} (make bootstrap installs Debian's "
                    "chromium; or set CLARUS_CHROMIUM)")
    return CHROMIUM


@pytest.fixture(scope="module", name="browser")
def browser_fixture() -> Iterator[Any]:
    executable = chromium_or_skip()
    sync_api = pytest.importorskip("playwright.sync_api",
                                   reason="playwright is installed by the bootstrap (.[dev])")
    os.environ.setdefault("PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD", "1")
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class Page:
    """A page plus the console errors and page errors it produced."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.errors: list[str] = []
        page.on("console", lambda m: self.errors.append(f"console: {m.text}")
                if m.type == "error" else None)
        page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))

    def shot(self, name: str, selector: str | None = None) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        if selector:
            self.page.locator(selector).first.screenshot(path=str(path))
        else:
            self.page.evaluate("window.scrollTo(0, 0)")
            self.page.screenshot(path=str(path), full_page=False)
        return path


@pytest.fixture(name="page")
def page_fixture(browser: Any) -> Iterator[Page]:
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    context.set_default_timeout(15_000)
    p = Page(context.new_page())
    try:
        yield p
    finally:
        context.close()
