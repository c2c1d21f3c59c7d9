"""Issue 11's failures, reproduced against the local CMS site and now refused.

* a table that failed a blocking check is never stored, and ``reference_bundle`` run on its
  own refuses while that table's latest check evaluation is a failure;
* each check reports its own result; a table the release declares absent is reported
  absent, one it does not declare fails;
* a changed raw file with a partial selection cannot put the new file's sha256 next to
  tables built from the old one;
* publishing flips a link to an immutable directory, so a reader never mixes releases.
"""

from __future__ import annotations

import hashlib
import json
import threading
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from dagster import AssetCheckSeverity, DagsterInstance, materialize

from clarus_env.reference import ReferenceBundle
from pipelines import sources
from pipelines.definitions import make_definitions
from pipelines.lib import bundle as bundlelib
from pipelines.resources import BundleStore, CmsSource
from pipelines.storage import ArrowIOManager

from .httpserver import Routes, serve
from .test_pipeline_http import FIX, RVU26C, _rvu26c_zip, cms_site, failures

GPCI = (FIX / "pfs" / "GPCI_fixture.csv").read_bytes()
HOUSTON = b"04412,TX,18,HOUSTON,1.008,0.993,1.376\r\n"
DUP_GPCI = GPCI.replace(HOUSTON, HOUSTON + HOUSTON)  # a duplicate locality
NEW_GPCI = GPCI.replace(b"1.008,0.993", b"1.008,1.986")  # a valid change of PE GPCI


class Site:
    """One Dagster instance, intermediate store and publish root across several runs."""

    def __init__(self, tmp: Path, instance: DagsterInstance) -> None:
        self.root = tmp / "published"
        self.io = ArrowIOManager(base_dir=str(tmp / "io"))
        self.instance = instance

    def run(self, routes: Routes, select: list[str] | None = None) -> Any:
        with serve(routes) as base:
            defs = make_definitions(
                CmsSource(base_url=base, pins_file="", retries=0, timeout_s=10, mirror_dir=""),
                BundleStore(root=str(self.root), enforce_row_ranges=False), self.io)
            return materialize(list(defs.assets), partition_key="2026C", instance=self.instance,
                               resources=defs.resources, raise_on_error=False, selection=select)

    def published(self) -> dict[str, bytes]:
        path = self.root / "2026C"
        return {p.name: p.read_bytes() for p in path.iterdir()}


@pytest.fixture
def site(tmp_path: Path) -> Any:
    with DagsterInstance.ephemeral() as instance:
        yield Site(tmp_path, instance)


def all_messages(result: Any) -> list[str]:
    """Every step failure's message and the messages of its causes."""
    out = []
    for ev in result.all_events:
        if ev.event_type_value == "STEP_FAILURE":
            err = ev.event_specific_data.error
            while err is not None:
                out.append(err.message)
                err = err.cause
    return out


def checks_of(result: Any, asset: str) -> dict[str, Any]:
    return {e.check_name: e for e in result.get_asset_check_evaluations()
            if e.asset_key.to_user_string() == asset}


def test_failed_check_then_bundle_alone_is_refused(site: Site) -> None:
    assert site.run(cms_site()).success
    before = site.published()
    bad = cms_site()
    bad.ok(RVU26C, _rvu26c_zip(DUP_GPCI))
    result = site.run(bad)
    assert not result.success
    gpci = checks_of(result, "gpci")
    # each check reports its own result: the duplicate fails unique_key only
    assert not gpci["unique_key"].passed and gpci["formats"].passed and gpci["row_count"].passed
    assert "duplicate keys" in gpci["unique_key"].metadata["problems"].value
    assert "gpci (2026C) failed blocking checks, not stored" in "\n".join(failures(result))
    # the reproduction: a later run of reference_bundle alone
    alone = site.run(cms_site(), select=["reference_bundle"])
    assert not alone.success
    msg = "\n".join(failures(alone))
    assert "not published" in msg and "gpci.unique_key: latest evaluation failed" in msg, msg
    assert site.published() == before


def test_bundle_alone_without_any_check_evaluation_is_refused(tmp_path: Path) -> None:
    with DagsterInstance.ephemeral() as first:
        assert Site(tmp_path, first).run(cms_site()).success
    # the stored tables survive, their check history does not (a new DAGSTER_HOME)
    with DagsterInstance.ephemeral() as second:
        site = Site(tmp_path, second)
        before = site.published()
        result = site.run(cms_site(), select=["reference_bundle"])
        assert not result.success
        msg = "\n".join(failures(result))
        assert "hcpcs_rvu.unique_key: never evaluated for 2026C" in msg, msg
        assert site.published() == before


def test_bundle_alone_without_stored_tables_names_what_to_materialize(site: Site) -> None:
    assert site.run(cms_site(), select=["pfs_raw", "gpci"]).success
    result = site.run(cms_site(), select=["reference_bundle"])
    assert not result.success
    msg = "\n".join(all_messages(result))
    assert "has nothing stored" in msg and "materialize it first" in msg, msg
    assert not (site.root / "2026C").exists()


def test_declared_absent_table_is_reported_absent_not_passed(site: Site) -> None:
    result = site.run(cms_site())
    assert result.success
    cap = checks_of(result, "opps_cap")
    assert set(cap) == {"formats", "unique_key", "row_count"}
    for e in cap.values():
        assert not e.passed and e.severity == AssetCheckSeverity.WARN
        assert e.metadata["status"].value == "absent"
    m = json.loads((site.root / "2026C" / "manifest.json").read_text())
    assert "opps_cap" not in m["outputs"]


def test_undeclared_absent_table_fails(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sources, "ABSENT_TABLES", {})
    monkeypatch.setattr("pipelines.defs.common.ABSENT_TABLES", {})
    result = site.run(cms_site())
    assert not result.success
    cap = checks_of(result, "opps_cap")
    assert all(not e.passed and e.severity == AssetCheckSeverity.ERROR for e in cap.values())
    msg = "\n".join(failures(result))
    assert "opps_cap was not built" in msg and "does not declare it absent" in msg
    assert not (site.root / "2026C").exists()


def test_partial_selection_records_the_files_the_tables_came_from(site: Site) -> None:
    assert site.run(cms_site()).success
    old_sha = hashlib.sha256(GPCI).hexdigest()
    changed = cms_site()
    changed.ok(RVU26C, _rvu26c_zip(NEW_GPCI))
    # the reproduction: the raw file changed, only pfs_raw and the bundle selected
    result = site.run(changed, select=["pfs_raw", "reference_bundle"])
    assert result.success, failures(result)
    m = json.loads((site.root / "2026C" / "manifest.json").read_text())
    gpci = next(i for i in m["inputs"] if i["key"] == "gpci")
    assert gpci["sha256"] == old_sha  # what the published gpci table was built from
    ref = ReferenceBundle(site.root / "2026C")
    assert str(ref.locality("04412", "18")["pe_gpci"]) == "0.993"
    # a full refresh then records the new file with the new table
    assert site.run(changed).success
    m = json.loads((site.root / "2026C" / "manifest.json").read_text())
    gpci = next(i for i in m["inputs"] if i["key"] == "gpci")
    assert gpci["sha256"] == hashlib.sha256(NEW_GPCI).hexdigest()
    assert str(ReferenceBundle(site.root / "2026C").locality("04412", "18")["pe_gpci"]) == \
        "1.986"


def test_gaps_follow_the_inputs_actually_used() -> None:
    mirror_build = {"ncci_ptp": ["ptp_complete"], "mue": ["mue_complete"],
                    "locality_county": ["locco"], "opps_rate": ["opps_addendum_b"],
                    "opps_cap": None}
    gaps = sources.release_gaps("2026C", mirror_build)
    assert len(gaps) == 3 and any("2024 Q3" in g for g in gaps)
    download_build = {**mirror_build, "ncci_ptp": ["ptp_f1", "ptp_f2", "ptp_f3", "ptp_f4"],
                      "mue": ["mue_official"]}
    gaps = sources.release_gaps("2026C", download_build)
    assert not any("2024 Q3" in g for g in gaps) and len(gaps) == 2


# -- atomic, immutable publishing -------------------------------------------------------

def _publish(root: Path, version: int) -> None:
    pe = f"{version}.000"
    tables = {"gpci": pa.table({"pe": [pe]}), "fee_schedule": pa.table({"pe": [pe] * 1000})}
    bundlelib.write_bundle(root, "9999Z", tables, {"inputs": [{"version": version}]})


def test_concurrent_reader_never_mixes_releases(tmp_path: Path) -> None:
    _publish(tmp_path, 0)
    stop = threading.Event()
    seen: list[tuple[str, str, int]] = []
    errors: list[str] = []

    def reader() -> None:
        while not stop.is_set():
            try:
                ref = ReferenceBundle(tmp_path / "9999Z")
                version = ref.manifest["inputs"][0]["version"]
                fee = ref.table("fee_schedule").column("pe")[0].as_py()
                gpci = ref.table("gpci").column("pe")[0].as_py()
                seen.append((fee, gpci, version))
            except Exception as exc:  # a missing bundle or half-written file is the bug
                errors.append(repr(exc))

    threads = [threading.Thread(target=reader) for _ in range(2)]
    for t in threads:
        t.start()
    # a reader that opened before the refresh and reads its tables lazily afterwards
    early = ReferenceBundle(tmp_path / "9999Z")
    for v in range(1, 30):
        _publish(tmp_path, v)
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(seen) > 10
    assert all(fee == gpci == f"{v}.000" for fee, gpci, v in seen)
    assert early.table("gpci").column("pe")[0].as_py() == "0.000"
    assert early.table("fee_schedule").column("pe")[0].as_py() == "0.000"
    assert ReferenceBundle(tmp_path / "9999Z").table("gpci").column("pe")[0].as_py() == "29.000"
    # releases are immutable: one directory per content, the link points at the newest
    assert len([p for p in (tmp_path / ".releases").iterdir()]) == 30
    assert (tmp_path / "9999Z").is_symlink()


def test_republishing_same_content_keeps_the_directory(tmp_path: Path) -> None:
    _publish(tmp_path, 1)
    first = (tmp_path / "9999Z").resolve()
    mtime = (first / "manifest.json").stat().st_mtime_ns
    _publish(tmp_path, 1)
    assert (tmp_path / "9999Z").resolve() == first
    assert (first / "manifest.json").stat().st_mtime_ns == mtime


def test_plain_directory_target_is_refused(tmp_path: Path) -> None:
    """The checkout's committed bundle is a plain directory: never rewritten in place."""
    (tmp_path / "9999Z").mkdir()
    (tmp_path / "9999Z" / "manifest.json").write_text("{}")
    with pytest.raises(bundlelib.PublishError, match="plain directory"):
        _publish(tmp_path, 1)
    assert (tmp_path / "9999Z" / "manifest.json").read_text() == "{}"

