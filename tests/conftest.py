"""Shared test fixtures.

``mirror`` is the offline copy of real CMS release files in ``../shared/cms-data/raw``; tests
that need it skip with a clear reason when it is absent (a fork without ``shared/``).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def mirror_dir() -> Path:
    env = os.environ.get("CLARUS_CMS_MIRROR")
    return Path(env) if env else REPO.parent / "shared" / "cms-data" / "raw"


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = mirror_dir()
    if not path.is_dir():
        pytest.skip(f"CMS mirror not found at {path} (set CLARUS_CMS_MIRROR to run this test)")
    return path


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    """A private ``redis-server`` on a free 127.0.0.1 port (no persistence), stopped after the
    session; skips where Debian's redis-server is not installed (``make bootstrap`` installs it).
    """
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server not installed (make bootstrap installs Debian's "
                    "redis-server; apt-get install -y redis-server)")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no", "--loglevel", "warning"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                break
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"redis-server did not start on port {port}")
            time.sleep(0.05)
    try:
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
