"""The Arrow IO manager: tables, absent tables and raw files round-trip; a torn write is
refused rather than read half old, half new."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from dagster import AssetKey, build_input_context, build_output_context

from pipelines.defs.common import Normalized
from pipelines.lib.errors import SourceError
from pipelines.lib.fetch import Fetched
from pipelines.storage import ArrowIOManager, loaded_for_step

PART = "2026C"


def _roundtrip(io: ArrowIOManager, asset: str, value: object) -> object:
    key = AssetKey(asset)
    io.handle_output(build_output_context(asset_key=key, partition_key=PART), value)
    upstream = build_output_context(asset_key=key, partition_key=PART)
    return io.load_input(build_input_context(asset_key=key, partition_key=PART,
                                             upstream_output=upstream))


def test_table_and_raw_round_trip(tmp_path: Path) -> None:
    io = ArrowIOManager(base_dir=str(tmp_path))
    table = pa.table({"mac": ["04412"], "pe": [pa.scalar(1, pa.int64())]})
    prov = {"gpci": {"sha256": "ab" * 32, "release": "RVU26C"}}
    got = _roundtrip(io, "gpci", Normalized(table, {"gpci": 1}, ["n"], None, prov))
    assert isinstance(got, Normalized) and got.table.equals(table)
    assert got.inputs == {"gpci": 1} and got.notes == ["n"] and got.provenance == prov
    assert loaded_for_step("gpci", PART) == prov
    absent = _roundtrip(io, "opps_cap", Normalized(None, notes=["no file"]))
    assert absent.table is None and absent.notes == ["no file"]
    f = Fetched(key="gpci", url="https://x/a.zip", file="a.zip!GPCI.csv", origin="download",
                data=b"mac,pe\n" * 1000, release="RVU26C")
    raw = _roundtrip(io, "pfs_raw", {"gpci": f})
    assert raw == {"gpci": f}
    assert loaded_for_step("pfs_raw", PART)["gpci"]["sha256"] == f.sha256
    assert not list(tmp_path.rglob("*.pickle"))


def test_torn_write_is_refused(tmp_path: Path) -> None:
    io = ArrowIOManager(base_dir=str(tmp_path))
    _roundtrip(io, "gpci", Normalized(pa.table({"a": [1, 2]}), {"gpci": 2}))
    (tmp_path / "gpci" / PART / "table.arrow").write_bytes(b"half a file")
    with pytest.raises(SourceError, match="interrupted"):
        io.load_input(build_input_context(
            asset_key=AssetKey("gpci"), partition_key=PART,
            upstream_output=build_output_context(asset_key=AssetKey("gpci"),
                                                 partition_key=PART)))
