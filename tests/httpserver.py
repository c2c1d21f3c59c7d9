"""A tiny HTTP server on 127.0.0.1 for download tests: scripted answers per path."""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

Answer = tuple[int, bytes]


class Routes:
    """path -> list of answers consumed in order (the last one repeats), or a callable."""

    def __init__(self) -> None:
        self.answers: dict[str, list[Answer] | Callable[[], Answer]] = {}
        self.hits: Counter[str] = Counter()
        self.delay: dict[str, float] = {}

    def set(self, path: str, *answers: Answer) -> None:
        self.answers[path] = list(answers)

    def ok(self, path: str, body: bytes) -> None:
        self.set(path, (200, body))

    def answer(self, path: str) -> Answer:
        self.hits[path] += 1
        delay = self.delay.get(path)
        if delay:
            time.sleep(delay)
        spec = self.answers.get(path)
        if spec is None:
            return 404, b"not found"
        if callable(spec):
            return spec()
        return spec.pop(0) if len(spec) > 1 else spec[0]


@contextmanager
def serve(routes: Routes) -> Iterator[str]:
    """Serve ``routes`` on a free port; yields the base URL and always shuts down."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802
            status, body = routes.answer(self.path.split("?", 1)[0])
            try:
                self.send_response(status)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)
