"""Getting release files: over HTTP from cms.gov, or from a local mirror directory.

The request phase (connect, 5xx, 429 with ``Retry-After``) is retried by urllib3's ``Retry``
mounted on the session; a body cut off mid-file is retried with the same ``Retry`` policy
object (its counters and backoff), not a hand-written schedule. A body is streamed so a
total deadline and a low-speed floor (curl's ``--speed-limit``/``--speed-time``) can stop a
server that trickles bytes forever, which a per-read timeout never does. cms.gov serves
AMA-licensed zips (NCCI, some RVU files) behind a click-through page; that page is answered
the way a browser does (its accept form is submitted) and, if the file still does not come,
the error says a licence page came back and how to put the file in the mirror by hand.
Everything here is plain functions over bytes so tests drive it against a local HTTP server.
"""

from __future__ import annotations

import hashlib
import re
import time
from dataclasses import dataclass
from functools import cached_property
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import parse_qs, urlencode, urljoin, urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.exceptions import MaxRetryError, ProtocolError, ReadTimeoutError
from urllib3.util.retry import Retry

from .archive import read_zip_member
from .errors import FetchError, IntegrityError

USER_AGENT = "clarus-pipelines (+reference-data refresh)"
# File types a release ships; a URL ending in one of these must not answer with HTML.
DATA_SUFFIXES = (".zip", ".csv", ".txt", ".xml", ".xlsx", ".xls", ".gz", ".tsv", ".pdf")
LICENCE_PATH = re.compile(r"/licen[cs]e/", re.IGNORECASE)


@dataclass(frozen=True)
class Fetched:
    """One input file as obtained, with what the manifest needs to say about it."""

    key: str  # input key within its source, e.g. "pprrvu"
    url: str  # official URL of the file or of the zip that holds it
    file: str  # file name (``zip!member`` when taken from an archive)
    origin: str  # "download" or "mirror:<relative path>"
    data: bytes
    excerpt: bool = False
    derived: bool = False
    release: str = ""
    note: str = ""

    @cached_property
    def sha256(self) -> str:
        # cached: the IO manager, the provenance and the pins each ask (0.3 s per 165 MB)
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size(self) -> int:
        return len(self.data)


@dataclass(frozen=True)
class Limits:
    """How long and how slowly one download may go before it is abandoned."""

    timeout_s: float = 60.0  # connect timeout and longest silence on the socket
    deadline_s: float = 1800.0  # whole download, retries and Retry-After waits included
    low_speed_bps: int = 1024  # abort when slower than this ...
    low_speed_s: float = 30.0  # ... averaged over this long
    max_bytes: int = 4 << 30  # refuse bodies larger than this (Content-Length or counted)
    retries: int = 3
    backoff_s: float = 1.0


class LicencePageError(FetchError):
    """A licence click-through page came back instead of the file."""

    def __init__(self, url: str, page: str, why: str) -> None:
        self.url, self.page = url, page
        super().__init__(
            f"GET {url} answered with a licence page ({page}) instead of the file, and {why}. "
            f"Fetch it by hand: open {page} in a browser, accept the licence, and save the file "
            "in the mirror (CLARUS_CMS_MIRROR)"
        )


def make_retry(limits: Limits) -> Retry:
    """The one retry policy: 5xx, 429 (honouring Retry-After), resets and read timeouts."""
    return Retry(
        total=limits.retries, connect=limits.retries, read=limits.retries,
        status=limits.retries, other=0, backoff_factor=limits.backoff_s,
        status_forcelist=(429, 500, 502, 503, 504), respect_retry_after_header=True,
        allowed_methods=frozenset({"GET"}), raise_on_status=True,
    )


def make_session(limits: Limits) -> requests.Session:
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    adapter = HTTPAdapter(max_retries=make_retry(limits))
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def expects_html(url: str) -> bool:
    """True unless the URL names a data file (a release page or the CARC page is HTML)."""
    return not urlsplit(url).path.lower().endswith(DATA_SUFFIXES)


class _BodyCut(Exception):
    """The connection ended before the whole body arrived (retried)."""

    def __init__(self, got: int, length: int | None, cause: Exception) -> None:
        self.got, self.length, self.cause = got, length, cause
        super().__init__(str(cause))


def http_get(session: requests.Session, url: str, limits: Limits) -> bytes:
    """GET ``url`` within ``limits``; every failure is a FetchError that names the URL."""
    start = time.monotonic()
    attempts = limits.retries + 1
    retry = make_retry(limits)
    while True:
        try:
            return _get_once(session, url, limits, start, attempts)
        except _BodyCut as cut:
            of = f" of {cut.length:,}" if cut.length is not None else ""
            try:
                retry = retry.increment(method="GET", url=url, error=ProtocolError(str(cut)))
            except (MaxRetryError, ProtocolError):
                raise FetchError(
                    f"GET {url}: the connection was lost mid-file ({cut.got:,}{of} bytes "
                    f"received) on each of {len(retry.history) + 1} attempts: {cut.cause}"
                ) from None
            if time.monotonic() - start + retry.get_backoff_time() > limits.deadline_s:
                raise FetchError(
                    f"GET {url}: the connection was lost mid-file ({cut.got:,}{of} bytes) and "
                    f"no time is left within the {limits.deadline_s:g} s deadline"
                ) from None
            retry.sleep()


def _get_once(session: requests.Session, url: str, limits: Limits, start: float,
              attempts: int) -> bytes:
    resp = _request(session, "GET", url, limits, attempts)
    body = _body(resp, url, limits, start)
    if not _is_html(resp, body):
        return body
    if LICENCE_PATH.search(urlsplit(resp.url).path) or LICENCE_PATH.search(urlsplit(url).path) \
            or (not expects_html(url) and _licence_like(body)):
        return _accept_licence(session, url, resp.url, body, limits, start, attempts)
    if not expects_html(url):
        raise FetchError(
            f"GET {url} answered with an HTML page ({resp.headers.get('Content-Type', '?')}, "
            f"{len(body):,} bytes) where a data file was expected"
        )
    return body


def _request(session: requests.Session, method: str, url: str, limits: Limits, attempts: int,
             data: dict[str, str] | None = None) -> requests.Response:
    try:
        resp = session.request(method, url, data=data, stream=True,
                               timeout=(limits.timeout_s, limits.timeout_s))
    except requests.exceptions.RetryError as exc:
        raise FetchError(
            f"{method} {url} kept failing after {attempts} attempts: {_reason(exc)}"
        ) from None
    except requests.exceptions.Timeout:
        raise FetchError(
            f"{method} {url} timed out after {attempts} attempts ({limits.timeout_s:g} s each)"
        ) from None
    except requests.exceptions.RequestException as exc:
        raise FetchError(
            f"{method} {url} failed after {attempts} attempts: {_reason(exc)}"
        ) from None
    if resp.status_code >= 400:
        resp.close()
        raise FetchError(f"{method} {url} answered HTTP {resp.status_code} {resp.reason}")
    return resp


def _body(resp: requests.Response, url: str, limits: Limits, start: float) -> bytes:
    """Stream the body, enforcing the size cap, the deadline and the low-speed floor."""
    header = resp.headers.get("Content-Length")
    length = int(header) if header and header.isdigit() else None
    if length is not None and length > limits.max_bytes:
        resp.close()
        raise FetchError(f"GET {url} announces {length:,} bytes, more than the "
                         f"{limits.max_bytes:,}-byte limit")
    chunks: list[bytes] = []
    got = 0
    window_start, window_bytes = time.monotonic(), 0
    try:
        while True:
            try:
                chunk = resp.raw.read1(1 << 16, decode_content=True)
            except (ProtocolError, ReadTimeoutError, requests.exceptions.ConnectionError,
                    OSError) as exc:
                raise _BodyCut(got, length, exc) from None
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
            window_bytes += len(chunk)
            now = time.monotonic()
            if got > limits.max_bytes:
                raise FetchError(f"GET {url} sent more than the {limits.max_bytes:,}-byte limit")
            if now - start > limits.deadline_s:
                raise FetchError(f"GET {url} did not finish within the {limits.deadline_s:g} s "
                                 f"deadline ({got:,} bytes received)")
            if now - window_start >= limits.low_speed_s:
                rate = window_bytes / (now - window_start)
                if rate < limits.low_speed_bps:
                    raise FetchError(
                        f"GET {url} is too slow: {rate:,.0f} bytes/s over the last "
                        f"{now - window_start:.0f} s, below the {limits.low_speed_bps:,} bytes/s "
                        f"floor ({got:,} bytes received)")
                window_start, window_bytes = now, 0
    finally:
        resp.close()
    if length is not None and got != length and not resp.headers.get("Content-Encoding"):
        raise _BodyCut(got, length, ProtocolError(f"body ended after {got:,} of {length:,} bytes"))
    return b"".join(chunks)


def file_name(url: str) -> str:
    """The file a URL delivers: its last path segment, or the ``file=`` a licence URL names."""
    parts = urlsplit(url)
    target = parse_qs(parts.query).get("file")
    path = target[0] if target and LICENCE_PATH.search(parts.path) else parts.path
    return path.rstrip("/").rsplit("/", 1)[-1]


def _is_html(resp: requests.Response, body: bytes) -> bool:
    ctype = resp.headers.get("Content-Type", "").split(";", 1)[0].strip().lower()
    head = body[:512].lstrip().lower()
    return ctype in ("text/html", "application/xhtml+xml") or head.startswith(
        (b"<!doctype html", b"<html"))


def _licence_like(body: bytes) -> bool:
    text = body[:200_000].decode("utf-8", errors="replace").lower()
    return "licen" in text and ("accept" in text or "agree" in text)


class _Forms(HTMLParser):
    """Forms (method, action, fields, submit labels) and links (href, text) of a page."""

    def __init__(self) -> None:
        super().__init__()
        self.forms: list[dict[str, object]] = []
        self.links: list[tuple[str, str]] = []
        self._form: dict[str, object] | None = None
        self._href: str | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k.lower(): v or "" for k, v in attrs}
        if tag == "form":
            self._form = {"method": a.get("method", "get").upper(), "action": a.get("action", ""),
                          "fields": {}, "labels": []}
            self.forms.append(self._form)
        elif tag in ("input", "button") and self._form is not None:
            kind = a.get("type", "submit" if tag == "button" else "text").lower()
            fields: dict[str, str] = self._form["fields"]  # type: ignore[assignment]
            labels: list[str] = self._form["labels"]  # type: ignore[assignment]
            if kind == "submit":
                labels.append((a.get("value", "") + " " + a.get("name", "")).lower())
                if a.get("name") and re.search(r"accept|agree", a.get("value", "") + a["name"],
                                               re.IGNORECASE):
                    fields[a["name"]] = a.get("value", "")
            elif kind in ("hidden", "text", "checkbox") and a.get("name"):
                fields[a["name"]] = a.get("value", "on" if kind == "checkbox" else "")
        elif tag == "a":
            self._href, self._text = a.get("href"), []

    def handle_data(self, data: str) -> None:
        if self._href is not None:
            self._text.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag == "form":
            self._form = None
        elif tag == "a" and self._href is not None:
            self.links.append((self._href, " ".join(self._text).strip()))
            self._href = None


def _accept_licence(session: requests.Session, url: str, page: str, html: bytes,
                    limits: Limits, start: float, attempts: int) -> bytes:
    """Submit the page's accept form (or follow its accept link) as a browser would."""
    parser = _Forms()
    parser.feed(html.decode("utf-8", errors="replace"))
    accept = re.compile(r"\b(accept|agree)", re.IGNORECASE)
    form = next((f for f in parser.forms if any(accept.search(str(x))
                                                for x in f["labels"])), None)  # type: ignore[union-attr]
    if form is not None:
        action = urljoin(page, str(form["action"]) or page)
        method = "POST" if form["method"] == "POST" else "GET"
        fields = dict(form["fields"])  # type: ignore[call-overload]
        if method == "GET":
            query = urlencode(fields)
            action = action + ("&" if "?" in action else "?") + query if query else action
            resp = _request(session, "GET", action, limits, attempts)
        else:
            resp = _request(session, "POST", action, limits, attempts, data=fields)
    else:
        link = next((h for h, text in parser.links if accept.search(text)), None)
        if link is None:
            raise LicencePageError(url, page, "the page has no accept form or link to follow")
        resp = _request(session, "GET", urljoin(page, link), limits, attempts)
    try:
        body = _body(resp, url, limits, start)
    except _BodyCut as cut:
        raise FetchError(f"GET {url}: the connection was lost after accepting the licence at "
                         f"{page}: {cut.cause}") from None
    if _is_html(resp, body):
        raise LicencePageError(url, page, "accepting it returned another page, not the file")
    return body


def _reason(exc: Exception) -> str:
    inner = exc.args[0] if exc.args else exc
    reason = getattr(inner, "reason", None)
    return str(reason or inner)


def rebase(url: str, base_url: str | None) -> str:
    """Point an official URL at another host (a test server or an internal proxy)."""
    if not base_url:
        return url
    base = urlsplit(base_url)
    parts = urlsplit(url)
    path = base.path.rstrip("/") + parts.path
    return urlunsplit((base.scheme, base.netloc, path, parts.query, ""))


def find_link(html: bytes, pattern: str, page_url: str) -> str:
    """The absolute URL of the one ``href`` on a release page whose target matches ``pattern``.

    CMS zip names change without notice (``rvu26c-updated-06-30-2026.zip``), so the release
    page, whose address is stable, is the source of truth for the current link.
    """
    text = html.decode("utf-8", errors="replace")
    rx = re.compile(pattern, re.IGNORECASE)
    hrefs = re.findall(r"""href\s*=\s*["']([^"']+)["']""", text, flags=re.IGNORECASE)
    hits = sorted({h for h in hrefs if rx.search(h)})
    if not hits:
        raise FetchError(f"release page {page_url} has no link matching /{pattern}/")
    if len(hits) > 1:
        raise FetchError(
            f"release page {page_url} has several links matching /{pattern}/: {', '.join(hits)}"
        )
    return urljoin(page_url, hits[0])


def read_mirror(mirror: Path, rel: str, member: str | None, label: str) -> tuple[str, bytes]:
    """Read ``rel`` under the mirror; when it is a zip and ``member`` is set, that member."""
    path = mirror / rel
    data = path.read_bytes()
    if member and path.suffix.lower() == ".zip":
        name, inner = read_zip_member(data, member, f"{label} ({rel})")
        return f"{path.name}!{name}", inner
    return path.name, data


def verify_pin(fetched: Fetched, pinned: str | None) -> None:
    if pinned and fetched.sha256 != pinned:
        raise IntegrityError(
            f"{fetched.file} (from {fetched.origin}): sha256 {fetched.sha256} does not match the "
            f"pinned {pinned}; the release changed or the file is damaged. Re-check it and update "
            "the pin if the new content is right."
        )
