"""Run the real Clarus app under a real uvicorn server on a free 127.0.0.1 port.

Tests that prove the wire contract must go through sockets, HTTP parsing and uvicorn's
protocol handling (TestClient skips all three), so this helper starts ``uvicorn.Server`` in a
background thread, waits until it accepts requests, and always shuts it down.

    with running_server(capacity=4, idle_ttl_s=0.5) as base_url:
        httpx.get(f"{base_url}/health")

or, in a test module, use the module-scoped ``server`` fixture (``from .serverutil import
server``), which yields the base URL of a default app.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


def free_port() -> int:
    """A port the OS says is free now (bind to 0, read it back, release it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def running_server(app: Any = None, startup_timeout_s: float = 20.0, http: str = "auto",
                   **create_app_kwargs: Any) -> Iterator[str]:
    """Serve ``app`` (or ``create_app(**create_app_kwargs)``); yields ``http://127.0.0.1:PORT``.

    The server runs in a daemon thread with its own event loop; on exit it is asked to stop
    and joined, so ports and threads do not leak between tests.
    """
    import uvicorn

    if app is None:
        from clarus_env.server.app import create_app

        app = create_app(**create_app_kwargs)
    elif create_app_kwargs:
        raise TypeError("pass either app or create_app keyword arguments, not both")

    # Bind the socket ourselves so there is no race between choosing a port and listening.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = int(sock.getsockname()[1])
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                            timeout_keep_alive=30, ws_ping_interval=None,
                            timeout_graceful_shutdown=5, http=http)
    server = uvicorn.Server(config)
    server.install_signal_handlers = lambda: None  # type: ignore[method-assign]
    errors: list[BaseException] = []

    def run() -> None:
        try:
            server.run(sockets=[sock])  # uvicorn picks its event loop (uvloop if present)
        except BaseException as exc:  # surfaced to the caller below
            errors.append(exc)

    thread = threading.Thread(target=run, name=f"uvicorn-{port}", daemon=True)
    thread.start()
    deadline = time.monotonic() + startup_timeout_s
    while not server.started:
        if errors or not thread.is_alive():
            sock.close()
            raise RuntimeError(f"uvicorn failed to start: {errors[0] if errors else 'exited'}")
        if time.monotonic() > deadline:
            server.should_exit = True
            thread.join(5)
            sock.close()
            raise RuntimeError(f"uvicorn did not start within {startup_timeout_s} s")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(15)
        if thread.is_alive():  # a stuck connection: force it
            server.force_exit = True
            thread.join(5)
        sock.close()


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """Base URL of a default Clarus app served by uvicorn for the whole test module."""
    with running_server() as base_url:
        yield base_url


@contextmanager
def clarus_serve(*args: str, startup_timeout_s: float = 60.0
                 ) -> Iterator[tuple[subprocess.Popen, str]]:
    """``clarus serve --port P *args`` as a real deployment (its own process, so the load a
    test generates does not share a GIL with the server); yields (process, base URL) and
    stops it (SIGINT, then SIGKILL)."""
    import httpx

    port = free_port()
    cmd = [os.path.join(os.path.dirname(sys.executable), "clarus"), "serve", "--port",
           str(port), "--log-level", "warning", *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + startup_timeout_s
        while True:
            try:
                if httpx.get(f"{base}/health", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if proc.poll() is not None:
                err = proc.stderr.read().decode()[-2000:] if proc.stderr else ""
                raise RuntimeError(f"clarus serve exited: {err}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"clarus serve did not start within {startup_timeout_s} s")
            time.sleep(0.1)
        yield proc, base
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
