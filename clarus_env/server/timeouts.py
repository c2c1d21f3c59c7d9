"""A header read timeout for uvicorn, which has none of its own.

uvicorn's ``timeout_keep_alive`` only covers the gap *between* requests: a client that opens a
connection and sends half a request line or half its headers holds a connection (and a slot
of ``limit_concurrency``) forever, so a few hundred such sockets lock everyone out. This
protocol closes a connection whose request headers are not complete within
``CLARUS_HEADER_TIMEOUT_S`` seconds (10 by default) of its first byte or of the connection
opening; the body has its own limit in the app (``CLARUS_BODY_TIMEOUT_S``, answered 408).
``clarus serve`` selects it with ``http=``.
"""

from __future__ import annotations

import asyncio
import os
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol


class HeaderTimeoutProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that drops connections stuck before the end of their headers."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._header_timeout_s = float(os.environ.get("CLARUS_HEADER_TIMEOUT_S", 10))
        self._header_timer: asyncio.TimerHandle | None = None

    def _arm(self) -> None:
        self._disarm()
        self._header_timer = self.loop.call_later(self._header_timeout_s, self._expire)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _expire(self) -> None:
        self._header_timer = None
        if not self.transport.is_closing():
            self.transport.close()

    def connection_made(self, transport: Any) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm()

    def on_headers_complete(self) -> None:
        self._disarm()
        super().on_headers_complete()
