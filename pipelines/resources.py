"""Dagster resources: where CMS files come from, and where bundles go."""

from __future__ import annotations

from pathlib import Path

from dagster import ConfigurableResource
from pydantic import Field

from .fetcher import Fetcher, load_pins

REPO = Path(__file__).resolve().parents[1]


class CmsSource(ConfigurableResource):
    """CMS release files, downloaded from the official URLs or read from a local mirror.

    With ``mirror_dir`` set, nothing is downloaded: the same
    files are read from that directory, which is how offline builds and CI work.
    """

    mirror_dir: str | None = Field(
        default=None,
        description="Local mirror of CMS files (the definitions read $CLARUS_CMS_MIRROR through "
                    "EnvVar); None or '' downloads from cms.gov.",
    )
    base_url: str | None = Field(
        default=None, description="Send every request to this host instead (test servers)."
    )
    timeout_s: float = Field(default=60.0, description="Connect timeout and longest silence "
                                                         "on the socket.")
    retries: int = Field(default=3, description="Retries on 5xx, 429, resets and timeouts.")
    backoff_s: float = Field(default=1.0, description="Backoff factor between retries.")
    deadline_s: float = Field(default=1800.0, description="Whole download, retries included.")
    low_speed_bps: int = Field(default=1024, description="Abort a download slower than this "
                                                          "many bytes/s ...")
    low_speed_s: float = Field(default=30.0, description="... averaged over this many seconds.")
    max_bytes: int = Field(default=4 << 30, description="Largest file accepted.")
    pins_file: str | None = Field(
        default=None,
        description="JSON {release: {file name: sha256}} to verify against; default "
                    "pipelines/pins.json, '' disables; a missing file is an error.",
    )

    def fetcher(self) -> Fetcher:
        return Fetcher(
            mirror=Path(self.mirror_dir) if self.mirror_dir else None, base_url=self.base_url,
            timeout_s=self.timeout_s, retries=self.retries, backoff_s=self.backoff_s,
            deadline_s=self.deadline_s, low_speed_bps=self.low_speed_bps,
            low_speed_s=self.low_speed_s, max_bytes=self.max_bytes,
            pins=load_pins(self.pins_file),
        )


class BundleStore(ConfigurableResource):
    """Where reference bundles are published, and how strict the pre-publish checks are."""

    root: str = Field(
        description="Publish target: <root>/<release> links to an immutable "
                    "<root>/.releases/<release>-<hash>/. Set explicitly ($CLARUS_BUNDLE_ROOT); "
                    "never the checkout's committed bundles/reference.",
    )
    zstd_level: int = Field(
        default=19, description="zstd level of the bundle's tables; 19 halves the bundle "
                                "(measured), lower levels only for builds that need speed.")
    enforce_row_ranges: bool = Field(
        default=True,
        description="Fail when a table's row count is outside its expected range (turn off "
                    "only for builds from small fixtures).",
    )
