"""Getting release files: over HTTP from cms.gov, or from a local mirror directory.

Retries use urllib3's ``Retry`` (backoff on 5xx, connect and read timeouts) rather than a
hand-written loop. Everything here is plain functions over bytes so tests can drive it
against a local HTTP server without Dagster.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urljoin, urlsplit, urlunsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.util.retry import Retry

from .archive import read_zip_member
from .errors import FetchError, IntegrityError

USER_AGENT = "clarus-pipelines (+reference-data refresh)"


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

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size(self) -> int:
        return len(self.data)


def make_session(retries: int, backoff_s: float) -> requests.Session:
    retry = Retry(
        total=retries, connect=retries, read=retries, status=retries,
        backoff_factor=backoff_s, status_forcelist=(500, 502, 503, 504),
        allowed_methods=frozenset({"GET"}), raise_on_status=True,
    )
    session = requests.Session()
    session.headers["User-Agent"] = USER_AGENT
    adapter = HTTPAdapter(max_retries=retry)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session


def http_get(session: requests.Session, url: str, timeout_s: float, attempts: int) -> bytes:
    """GET ``url``; 5xx and timeouts are retried by the session, anything else fails clearly."""
    try:
        resp = session.get(url, timeout=timeout_s)
    except requests.exceptions.RetryError as exc:
        raise FetchError(
            f"GET {url} kept failing after {attempts} attempts: {_reason(exc)}"
        ) from None
    except requests.exceptions.Timeout:
        raise FetchError(
            f"GET {url} timed out after {attempts} attempts ({timeout_s:g} s each)"
        ) from None
    except requests.exceptions.ConnectionError as exc:
        raise FetchError(f"GET {url} failed after {attempts} attempts: {_reason(exc)}") from None
    if resp.status_code >= 400:
        raise FetchError(f"GET {url} answered HTTP {resp.status_code} {resp.reason}")
    return resp.content


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
