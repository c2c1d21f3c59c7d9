"""Obtain one ``InputSpec`` from the mirror or over HTTP (no Dagster here, so tests and
scripts can use it directly; ``pipelines.resources.CmsSource`` wraps it for assets)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import requests

from .lib.archive import read_zip_member
from .lib.errors import FetchError
from .lib.fetch import Fetched, find_link, http_get, make_session, read_mirror, rebase, verify_pin
from .sources import InputSpec

DEFAULT_PINS = Path(__file__).with_name("pins.json")


def load_pins(path: str | Path | None) -> dict[str, str]:
    """sha256 pins by file name; ``""`` disables pinning (test fixtures are not CMS files)."""
    if path == "":
        return {}
    p = Path(path) if path else DEFAULT_PINS
    if not p.exists():
        return {}
    try:
        return json.loads(p.read_text())
    except json.JSONDecodeError as exc:
        raise FetchError(f"pins file {p} is not valid JSON: {exc}") from None


@dataclass
class Fetcher:
    mirror: Path | None = None
    base_url: str | None = None
    timeout_s: float = 60.0
    retries: int = 3
    backoff_s: float = 1.0
    pins: dict[str, str] = field(default_factory=dict)
    _session: requests.Session | None = None
    _cache: dict[str, bytes] = field(default_factory=dict)

    @property
    def session(self) -> requests.Session:
        if self._session is None:
            self._session = make_session(self.retries, self.backoff_s)
        return self._session

    def get(self, url: str) -> bytes:
        """GET once per fetcher: several inputs share one release zip and one release page."""
        if url not in self._cache:
            self._cache[url] = http_get(self.session, rebase(url, self.base_url), self.timeout_s,
                                        self.retries + 1)
        return self._cache[url]

    def obtain(self, spec: InputSpec) -> Fetched | None:
        """The file for ``spec``, or None when it is optional and not obtainable here."""
        fetched = self._from_mirror(spec) if self.mirror else self._download(spec)
        if fetched is not None:
            verify_pin(fetched, self.pins.get(fetched.file.rsplit("!", 1)[-1]))
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
        data = self.get(url)
        name = url.rsplit("/", 1)[-1]
        if spec.member:
            member, data = read_zip_member(data, spec.member, name)
            name = f"{name}!{member}"
        return Fetched(
            key=spec.key, url=url, file=name, origin="download", data=data,
            excerpt=False, derived=False, release=spec.release, note=spec.note,
        )
