"""A tiny HTTP server on 127.0.0.1 for download tests: scripted answers per path.

An answer is ``(status, body)`` or a ``Reply`` when a test needs headers (``Retry-After``,
``Content-Type``), a server that trickles its body, or one that drops the connection
mid-file. POSTs are answered from the same routes and their form bodies recorded.
"""

from __future__ import annotations

import socket
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class Reply:
    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)
    trickle_s: float = 0.0  # send the body one byte at a time, this far apart
    cut_at: int | None = None  # send this many body bytes, then reset the connection


Answer = tuple[int, bytes] | Reply


class Routes:
    """path -> list of answers consumed in order (the last one repeats), or a callable."""

    def __init__(self) -> None:
        self.answers: dict[str, list[Answer] | Callable[[], Answer]] = {}
        self.hits: Counter[str] = Counter()
        self.delay: dict[str, float] = {}
        self.posts: list[tuple[str, bytes, str]] = []  # (path, form body, cookie header)
        self.stop = threading.Event()  # set at shutdown so trickling handlers end

    def set(self, path: str, *answers: Answer) -> None:
        self.answers[path] = list(answers)

    def ok(self, path: str, body: bytes) -> None:
        self.set(path, (200, body))

    def answer(self, path: str) -> Reply:
        self.hits[path] += 1
        delay = self.delay.get(path)
        if delay:
            time.sleep(delay)
        spec = self.answers.get(path)
        if spec is None:
            return Reply(404, b"not found")
        got = spec() if callable(spec) else (spec.pop(0) if len(spec) > 1 else spec[0])
        return got if isinstance(got, Reply) else Reply(*got)


@contextmanager
def serve(routes: Routes) -> Iterator[str]:
    """Serve ``routes`` on a free port; yields the base URL and always shuts down."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:  # noqa: N802
            self._reply(routes.answer(self.path.split("?", 1)[0]))

        def do_POST(self) -> None:  # noqa: N802
            n = int(self.headers.get("Content-Length") or 0)
            form = self.rfile.read(n)
            path = self.path.split("?", 1)[0]
            routes.posts.append((path, form, self.headers.get("Cookie", "")))
            self._reply(routes.answer(path))

        def _reply(self, r: Reply) -> None:
            try:
                self.send_response(r.status)
                for k, v in r.headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(r.body)))
                if r.cut_at is not None or r.trickle_s:
                    self.send_header("Connection", "close")
                self.end_headers()
                if r.cut_at is not None:
                    self.wfile.write(r.body[:r.cut_at])
                    self.wfile.flush()
                    # RST instead of FIN: the client sees a reset mid-file
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                               b"\x01\x00\x00\x00\x00\x00\x00\x00")
                    self.close_connection = True
                    self.connection.close()
                    return
                if r.trickle_s:
                    for i in range(len(r.body)):
                        if routes.stop.wait(r.trickle_s):
                            return
                        self.wfile.write(r.body[i:i + 1])
                        self.wfile.flush()
                    self.close_connection = True
                    return
                self.wfile.write(r.body)
            except (BrokenPipeError, ConnectionResetError, OSError):
                self.close_connection = True

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        routes.stop.set()
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
