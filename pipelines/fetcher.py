"""Obtain one ``InputSpec`` from the mirror or over HTTP (no Dagster here, so tests and
scripts can use it directly; ``pipelines.resources.CmsSource`` wraps it for assets)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import requests

from .lib.archive import read_zip_member
from .lib.errors import FetchError
from .lib.fetch import (
    Fetched,
    LicencePageError,
    Limits,
    file_name,
    find_link,
    http_get,
    make_session,
    read_mirror,
    rebase,
    verify_pin,
)
from .sources import InputSpec

DEFAULT_PINS = Path(__file__).with_name("pins.json")
Pins = dict[str, dict[str, str]]


def load_pins(path: str | Path | None) -> Pins:
    """sha256 pins as ``{source release: {file name: sha256}}``; ``""`` disables pinning.

    Keyed by release because CMS reuses file names across releases (``GPCI2026.csv`` ships
    in RVU26A..D with different content). A pins file that is named but missing is an
    error: a typo must not silently turn verification off.
    """
    if path == "":
        return {}
    p = Path(path) if path else DEFAULT_PINS
    if not p.is_file():
        raise FetchError(f"pins file {p} does not exist; give an existing file, or '' to "
                         "build without verifying pins (test fixtures only)")
    try:
        pins = json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise FetchError(f"pins file {p} is not valid JSON: {exc}") from None
    if not isinstance(pins, dict) or not all(
            isinstance(v, dict) and all(isinstance(s, str) for s in v.values())
            for v in pins.values()):
        raise FetchError(f"pins file {p} must map each release to {{file name: sha256}}")
    return pins


@dataclass
class Fetcher:
    mirror: Path | None = None
    base_url: str | None = None
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    pins: Pins = field(default_factory=dict)
    deadline_s: float = 1800.0
    low_speed_bps: int = 1024
    low_speed_s: float = 30.0
    max_bytes: int = 4 << 30
    _session: requests.Session | None = None
    _cache: dict[str, bytes] = field(default_factory=dict)

    @property
    def limits(self) -> Limits:
        return Limits(timeout_s=self.timeout_s, deadline_s=self.deadline_s,
                      low_speed_bps=self.low_speed_bps, low_speed_s=self.low_speed_s,
                      max_bytes=self.max_bytes, retries=self.retries, backoff_s=self.backoff_s)

    @property
    def session(self) -> requests.Session:
        if self._session is None:
            self._session = make_session(self.limits)
        return self._session

    def get(self, url: str) -> bytes:
        """GET once per fetcher: several inputs share one release zip and one release page."""
        if url not in self._cache:
            self._cache[url] = http_get(self.session, rebase(url, self.base_url), self.limits)
        return self._cache[url]

    def obtain(self, spec: InputSpec) -> Fetched | None:
        """The file for ``spec``, or None when it is optional and not obtainable here."""
        fetched = self._from_mirror(spec) if self.mirror else self._download(spec)
        if fetched is not None:
            member = fetched.file.rsplit("!", 1)[-1]
            verify_pin(fetched, self.pins.get(fetched.release, {}).get(member))
        return fetched

    def _from_mirror(self, spec: InputSpec) -> Fetched | None:
        assert self.mirror is not None
        for rel in spec.mirror:
            if (self.mirror / rel).is_file():
                name, data = read_mirror(self.mirror, rel, spec.member, spec.key)
                return Fetched(
                    key=spec.key, url=spec.url, file=name, origin=f"mirror:{rel}", data=data,
                    excerpt=spec.mirror_excerpt, derived=spec.derived, release=spec.release,
                    note=spec.note,
                )
        if spec.optional:
            return None
        tried = ", ".join(spec.mirror) or "(no mirror path is known for it)"
        raise FetchError(
            f"input {spec.key!r} ({spec.release}) is not in the mirror {self.mirror}; tried {tried}"
        )

    def _download(self, spec: InputSpec) -> Fetched | None:
        if spec.mirror_only:
            if spec.optional:
                return None
            raise FetchError(f"input {spec.key!r} exists only in a mirror; set CLARUS_CMS_MIRROR")
        url = spec.url
        if spec.page and spec.link:
            page = self.get(spec.page)
            url = find_link(page, spec.link, spec.page)
        name = file_name(url)
        try:
            data = self.get(url)
        except LicencePageError as exc:
            where = spec.mirror[0] if spec.mirror else f"<mirror>/{spec.source}/{name}"
            raise FetchError(f"input {spec.key!r} ({spec.release}): {exc}, as {where}; then "
                             "build with CLARUS_CMS_MIRROR set") from None
        if spec.member:
            member, data = read_zip_member(data, spec.member, name)
            name = f"{name}!{member}"
        return Fetched(
            key=spec.key, url=url, file=name, origin="download", data=data,
            excerpt=False, derived=False, release=spec.release, note=spec.note,
        )
