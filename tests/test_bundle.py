"""Bundle writing: exact bytes, atomic publish, and the loader's lookups on a tiny bundle."""

from __future__ import annotations

import json
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from clarus_env.reference import BundleError, ReferenceBundle, normalize_icd10cm
from pipelines.lib import bundle as bundlelib
from pipelines.lib.checks import table_problems
from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError


def tiny_tables() -> dict:
    ptp = pl.DataFrame({
        "column_1": ["96372", "96372", "20610", "96372"],
        "column_2": ["99211", "99213", "99213", "99212"],
        "effective_date": [None] * 4, "deletion_date": [None, None, None, "2020-12-31"],
        "prior_1996": [None] * 4, "modifier_indicator": ["0", "1", "1", "1"],
        "rationale": ["Misuse of column two code with column one code",
                      "Standards of medical/surgical practice",
                      "CPT Manual or CMS manual coding instruction", "x"],
    }).with_columns(pl.col("effective_date").cast(pl.Date),
                    pl.col("deletion_date").str.to_date(), pl.col("prior_1996").cast(pl.Boolean))
    fees = pl.DataFrame({
        "hcpcs": ["99213", "99213", "99214"], "modifier": ["", "", ""],
        "mac": ["04412", "10112", "04412"], "locality": ["18", "00", "18"],
        "nonfac_amount": ["96.33", "87.79", "137.41"], "fac_amount": ["58.85", "54.77", None],
        "opps_capped": [False, False, False],
    })
    icd = pl.DataFrame({
        "code": ["4", "E08-E13", "E11", "E11.9"], "kind": ["chapter", "block", "category", "code"],
        "description": ["Endocrine", "Diabetes mellitus", "Type 2 diabetes mellitus",
                        "Type 2 diabetes mellitus without complications"],
        "parent": [None, "4", "E08-E13", "E11"], "chapter": ["4"] * 4,
        "block": [None, "E08-E13", "E08-E13", "E08-E13"], "category": [None, None, "E11", "E11"],
        "billable": [False, False, False, True], "depth": [1, 2, 3, 4],
        "includes": [None] * 4, "excludes1": [None] * 4, "excludes2": [None] * 4,
        **{c: [None] * 4 for c in ("inclusion_terms", "use_additional_code", "code_first",
                                   "code_also", "notes", "seventh_characters")},
    })
    return {
        "ncci_ptp": conform(ptp, "ncci_ptp"),
        "fee_schedule": conform(fees, "fee_schedule"),
        "icd10cm": conform(icd, "icd10cm"),
    }


MANIFEST = {"builder": {"name": "test", "version": "0"}, "inputs": [], "gaps": []}


def test_same_tables_give_identical_bytes(tmp_path: Path) -> None:
    a = bundlelib.write_bundle(tmp_path / "a", "9999Z", tiny_tables(), MANIFEST)
    b = bundlelib.write_bundle(tmp_path / "b", "9999Z", tiny_tables(), MANIFEST)
    files = sorted(p.name for p in a.iterdir())
    assert files == ["fee_schedule.arrow", "icd10cm.arrow", "manifest.json", "ncci_ptp.arrow"]
    for name in files:
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    m = json.loads((a / "manifest.json").read_text())
    assert m["outputs"]["ncci_ptp"]["rows"] == 4
    assert m["release"] == "9999Z" and m["format_version"] == bundlelib.FORMAT_VERSION


def test_failed_write_leaves_previous_bundle_untouched(tmp_path: Path, monkeypatch) -> None:
    good = bundlelib.write_bundle(tmp_path, "9999Z", tiny_tables(), MANIFEST)
    before = {p.name: p.read_bytes() for p in good.iterdir()}
    calls = {"n": 0}
    real = bundlelib.table_bytes

    def flaky(table, level=bundlelib.ZSTD_LEVEL):  # noqa: ANN001, ANN202
        calls["n"] += 1
        if calls["n"] == 2:
            raise OSError("disk full")
        return real(table, level)

    monkeypatch.setattr(bundlelib, "table_bytes", flaky)
    with pytest.raises(OSError, match="disk full"):
        bundlelib.write_bundle(tmp_path, "9999Z", tiny_tables(), {**MANIFEST, "gaps": ["x"]})
    after = {p.name: p.read_bytes() for p in good.iterdir()}
    assert after == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".releases", "9999Z"]
    assert len(list((tmp_path / ".releases").iterdir())) == 1  # no temp dirs left


def test_loader_lookups(tmp_path: Path) -> None:
    path = bundlelib.write_bundle(tmp_path, "9999Z", tiny_tables(), MANIFEST)
    ref = ReferenceBundle(path)
    assert ref.fee("99213", "4412", "18") == Decimal("96.33")
    assert ref.fee("99213", "04412", "18", facility=True) == Decimal("58.85")
    assert ref.fee("99214", "04412", "18", facility=True) is None
    assert ref.fee("99215", "04412", "18") is None
    assert ref.ncci_edit("96372", "99211")["modifier_indicator"] == "0"
    assert ref.ncci_edit("96372", "99212") is None  # deleted edit is not active
    assert len(ref.ncci_edits("96372", active_only=False)) == 3
    assert ref.ncci_edit("20610", "96372") is None
    assert ref.icd10cm("e119")["billable"] is True
    assert [n["code"] for n in ref.icd10cm_ancestors("E11.9")] == ["E11.9", "E11", "E08-E13", "4"]
    assert ref.icd10cm("Z99.99") is None
    with pytest.raises(KeyError, match="no table 'mue'"):
        ref.mue("99213")


def test_loader_rejects_non_bundles(tmp_path: Path) -> None:
    with pytest.raises(BundleError, match="no manifest.json"):
        ReferenceBundle(tmp_path)
    (tmp_path / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(BundleError, match="unknown bundle format"):
        ReferenceBundle(tmp_path)


def test_normalize_icd10cm() -> None:
    assert normalize_icd10cm("s93401a") == "S93.401A"
    assert normalize_icd10cm("E11") == "E11"


def test_checks_catch_duplicates_formats_and_row_ranges() -> None:
    t = tiny_tables()["ncci_ptp"]
    probs = table_problems(_dup(t), "ncci_ptp")
    assert any("duplicate keys" in p for p in probs["unique_key"])
    assert any("rows, expected" in p for p in probs["row_count"])
    assert table_problems(t, "ncci_ptp", row_ranges=False) == {
        "formats": [], "unique_key": [], "row_count": []}
    bad = conform(pl.from_arrow(t).with_columns(pl.lit("9").alias("modifier_indicator"),
                                                 pl.lit("ABC").alias("column_2")), "ncci_ptp")
    formats = table_problems(bad, "ncci_ptp")["formats"]
    assert any("column_2" in p and "'ABC'" in p for p in formats)


def _dup(t):  # noqa: ANN001, ANN202
    import pyarrow as pa

    return pa.concat_tables([t, t.slice(0, 1)])


def test_conform_names_missing_columns_and_bad_types() -> None:
    with pytest.raises(SourceFormatError, match="missing columns.*name"):
        conform(pl.DataFrame({"code": ["CO"], "description": ["x"]}), "carc_group", "f.html")
    with pytest.raises(SourceFormatError, match="empty values"):
        conform(pl.DataFrame({"code": [None], "name": ["a"], "description": ["x"]},
                             schema={"code": pl.String, "name": pl.String,
                                     "description": pl.String}), "carc_group", "f.html")
