"""NCCI PtP and MUE parsers: fixtures in the official layouts, bad inputs, real mirror files."""

from __future__ import annotations

import datetime as dt
import gzip

import polars as pl
import pytest

from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError
from pipelines.lib.ncci import (
    PTP_RATIONALES,
    generate_ptp_official,
    merge_ptp_parts,
    parse_mue_derived,
    parse_mue_official,
    parse_ptp_derived,
    parse_ptp_official,
)

SRC = "ccipra-test-f1.txt"


def _read(fixtures, name: str) -> bytes:
    return (fixtures / "ncci" / name).read_bytes()


def _err(fn, data: bytes, source: str = SRC) -> SourceFormatError:
    with pytest.raises(SourceFormatError) as exc:
        fn(data, source)
    assert source in str(exc.value)
    return exc.value


# --- PtP official -------------------------------------------------------------------------------


def test_ptp_official_fixture(fixtures):
    df = parse_ptp_official(_read(fixtures, "ptp_official.txt"), SRC)
    assert df.height == 9
    first = df.row(0, named=True)
    assert first == {
        "column_1": "00140", "column_2": "36400", "effective_date": dt.date(1996, 1, 1),
        "deletion_date": None, "prior_1996": True, "modifier_indicator": "0",
        "rationale": "Standard preparation/monitoring services for anesthesia",
    }
    deleted = df.filter(pl.col("modifier_indicator") == "9").row(0, named=True)
    assert deleted["deletion_date"] == dt.date(2011, 12, 31)
    assert deleted["prior_1996"] is False
    # the last line is cut mid-rationale and has no line end: kept, rationale short
    assert df.row(-1) == (
        "0591T", "0592T", dt.date(2020, 1, 1), None, False, "1", "Misuse of Column T",
    )
    assert not df["rationale"].str.contains("\r").any()
    assert conform(df, "ncci_ptp", SRC).num_rows == 9


def test_ptp_official_header_shifted_by_a_line(fixtures):
    data = _read(fixtures, "ptp_official.txt")
    shifted = b"\t\t\t\t\t\t\r\n" + data
    e = _err(parse_ptp_official, shifted)
    assert e.row == 3
    assert "Column 1 | Column 2 | *=in existence prior to 1996 | Effective Date" in str(e)
    assert "starts on line 4" in str(e)
    # a header line removed shifts it up
    lines = data.split(b"\r\n")
    e = _err(parse_ptp_official, b"\r\n".join(lines[1:]))
    assert "starts on line 2" in str(e)


def test_ptp_official_renamed_column(fixtures):
    data = _read(fixtures, "ptp_official.txt").replace(b"\tEffective\t", b"\tStart\t", 1)
    e = _err(parse_ptp_official, data)
    assert e.column == "Effective Date" and e.row == 3
    assert "Start Date" in str(e)


def test_ptp_official_bad_modifier(fixtures):
    data = _read(fixtures, "ptp_official.txt")
    data = data.replace(b"\t20150101\t*\t1\t", b"\t20150101\t*\t2\t")
    e = _err(parse_ptp_official, data)
    assert (e.row, e.found) == (10, "2")
    assert e.column == "Modifier 0=not allowed 1=allowed 9=not applicable"
    assert "0, 1 or 9" in str(e)


@pytest.mark.parametrize(
    ("old", "new", "column", "found"),
    [
        (b"\t20190101\t*\t0", b"\t20191301\t*\t0", "Effective Date", "20191301"),
        (b"\t20190101\t*\t0", b"\t2019-01-01\t*\t0", "Effective Date", "2019-01-01"),
        (b"\t20111231\t9", b"\t20110231\t9", "Deletion Date *=no data", "20110231"),
        (b"\t20111231\t9", b"\t\t9", "Deletion Date *=no data", ""),
        (b"11104\t11102", b"11104\t1110", "Column 2", "1110"),
        (b"11104\t11102\t", b"11104\t11102\tY", "*=in existence prior to 1996", "Y"),
    ],
)
def test_ptp_official_bad_values(fixtures, old, new, column, found):
    data = _read(fixtures, "ptp_official.txt")
    assert old in data
    e = _err(parse_ptp_official, data.replace(old, new, 1))
    assert e.column == column and e.found == found
    assert e.row in (8, 13)
    assert f"row {e.row}" in str(e)


def test_ptp_official_extra_field_and_empty(fixtures):
    data = _read(fixtures, "ptp_official.txt")
    data = data.replace(b"coding instruction\r\n", b"x\textra\r\n", 1)
    e = _err(parse_ptp_official, data)
    assert e.row == 8 and "too many" in str(e)
    e = _err(parse_ptp_official, b"")
    assert "empty" in str(e)
    header_only = b"\r\n".join(_read(fixtures, "ptp_official.txt").split(b"\r\n")[:6]) + b"\r\n"
    assert "no edit rows" in str(_err(parse_ptp_official, header_only))


def test_ptp_official_latin1_rationale(fixtures):
    data = _read(fixtures, "ptp_official.txt")
    data = data.replace(b"exclusive procedures\r\n", b"exclusive proc\xe9dures\r\n", 1)
    df = parse_ptp_official(data, SRC)
    assert "Mutually exclusive proc\u00e9dures" in df["rationale"].to_list()


def test_generate_ptp_official_roundtrip():
    data = generate_ptp_official(50_000, seed=3)
    assert data == generate_ptp_official(50_000, seed=3)
    assert data != generate_ptp_official(50_000, seed=4)
    assert data.count(b"\r\n") == 50_006
    df = parse_ptp_official(data, "generated")
    assert df.height == 50_000
    assert set(df["modifier_indicator"].unique()) == {"0", "1", "9"}
    assert set(df["rationale"].unique()) <= set(PTP_RATIONALES)
    assert df.filter(pl.col("modifier_indicator") == "9")["deletion_date"].null_count() == 0
    assert (df["deletion_date"] >= df["effective_date"]).all()
    assert df["prior_1996"].any()
    assert df["column_1"].is_sorted()
    assert not df.select("column_1", "column_2").is_duplicated().any()  # each pair once
    assert conform(df, "ncci_ptp", "generated").num_rows == 50_000


@pytest.mark.slow
def test_generated_quarter_has_no_duplicate_pairs_when_groups_are_large():
    """Past 2.56M rows column-1 codes are capped at 12,800, so each code's group outgrows a
    fixed column-2 pool; the 4x benchmark quarter (10.2M rows) had duplicate keys."""
    df = parse_ptp_official(generate_ptp_official(3_000_000, seed=7), "generated")
    assert df["column_1"].n_unique() == 12_800
    assert not df.select("column_1", "column_2").is_duplicated().any()


# --- PtP derived --------------------------------------------------------------------------------


def test_ptp_derived_q3_and_q2_fixtures(fixtures):
    q3 = parse_ptp_derived(_read(fixtures, "ptp_derived_q3.tsv"), "q3.tsv")
    assert q3.height == 7
    assert q3["effective_date"].null_count() == 7
    assert q3["prior_1996"].null_count() == 7  # absent column: unknown, not False
    assert q3["deletion_date"].null_count() == 4
    q2_gz = gzip.compress(_read(fixtures, "ptp_derived_q2.tsv"))
    q2 = parse_ptp_derived(q2_gz, "q2.tsv.gz")
    assert q2["prior_1996"].to_list() == [True, False, False]
    conform(q2, "ncci_ptp", "q2.tsv.gz")


def test_ptp_derived_bad_inputs(fixtures):
    data = _read(fixtures, "ptp_derived_q3.tsv")
    e = _err(parse_ptp_derived, data.replace(b"PTP Edit Rationale", b"Rationale"), "q3.tsv")
    assert e.row == 1 and e.column == "Rationale"
    e = _err(parse_ptp_derived, b"\n" + data, "q3.tsv")
    assert e.row == 1
    e = _err(parse_ptp_derived, data.replace(b"*\t1\tCPT", b"*\tX\tCPT"), "q3.tsv")
    assert (e.row, e.found) == (3, "X") and e.column.startswith("Modifier")
    e = _err(parse_ptp_derived, data.replace(b"20111231", b"2011123"), "q3.tsv")
    assert (e.row, e.column) == (7, "Deletion Date *=no data")
    e = _err(parse_ptp_derived, data.replace(b"80053\t", b"8005\t"), "q3.tsv")
    assert (e.row, e.column) == (4, "Column 1")
    assert "empty" in str(_err(parse_ptp_derived, gzip.compress(b""), "q3.tsv"))


def test_merge_ptp_parts(fixtures):
    part = parse_ptp_official(_read(fixtures, "ptp_official.txt"), SRC)
    parts = [part.head(4), part.slice(4)]
    merged = merge_ptp_parts(parts)
    assert parts == []  # consumed, so a 10M-row quarter's parts are freed as they merge
    assert merged.equals(conform(part, "ncci_ptp"))
    # parts out of key order are sorted, and give the same table as in order
    assert merge_ptp_parts([part.slice(4), part.head(4)]).equals(merged)
    with pytest.raises(SourceFormatError, match=r"part #1 row 1, part #2 row 3"):
        merge_ptp_parts([part.slice(2), part.head(3)])
    with pytest.raises(SourceFormatError, match=r"part #1 row 2, part #2 row 1"):
        merge_ptp_parts([part.head(2), part.slice(1)])
    # 88108/88162 deleted 19960101 twice with two rationales (as in the real table) is fine
    q3 = parse_ptp_derived(_read(fixtures, "ptp_derived_q3.tsv"), "q3.tsv")
    assert merge_ptp_parts([q3]).num_rows == 7
    with pytest.raises(SourceFormatError, match="other columns"):
        merge_ptp_parts([part.drop("rationale")])


# --- MUE ----------------------------------------------------------------------------------------


def test_mue_official_fixture_latin1(fixtures):
    data = _read(fixtures, "mue_official.csv")
    assert b"\xae" in data  # the (R) sign in Latin-1
    df = parse_mue_official(data, "mue.csv")
    assert df.height == 7
    assert df.row(0) == ("11102", 1, "2", "CMS Policy")
    j1100 = df.filter(pl.col("hcpcs") == "J1100").row(0)
    assert j1100 == ("J1100", 120, "1", "Prescribing Information")
    # the same file saved as UTF-8 parses the same
    utf8 = data.decode("latin-1").encode("utf-8")
    assert parse_mue_official(utf8, "mue.csv").equals(df)
    conform(df, "mue", "mue.csv")


def test_mue_official_bad_inputs(fixtures):
    data = _read(fixtures, "mue_official.csv")
    e = _err(parse_mue_official, data.replace(b"MUE Adjudication Indicator", b"MAI"), "mue.csv")
    assert e.column == "MUE Adjudication Indicator" and e.row == 6  # header ends on 7
    e = _err(parse_mue_official, data.replace(b"HCPCS/\nCPT Code", b"Code"), "mue.csv")
    assert "header record not found" in str(e)
    e = _err(parse_mue_official, data.replace(b"4,3 Date", b"4,4 Date"), "mue.csv")
    assert (e.row, e.column) == (12, "MUE Adjudication Indicator")
    e = _err(parse_mue_official, data.replace(b"J1100,120", b"J1100,1.5"), "mue.csv")
    assert (e.row, e.found) == (14, "1.5")
    e = _err(parse_mue_official, data.replace(b"17110,", b"11102,"), "mue.csv")
    assert "more than once" in str(e) and e.row == 9
    assert "empty" in str(_err(parse_mue_official, b"  \r\n", "mue.csv"))


def test_mue_derived_fixture(fixtures):
    df = parse_mue_derived(_read(fixtures, "mue_derived.tsv"), "mue.tsv")
    assert df.height == 7  # the Outpatient Hospital row is dropped
    official = parse_mue_official(_read(fixtures, "mue_official.csv"), "mue.csv")
    assert df.sort("hcpcs").equals(official.sort("hcpcs"))
    data = _read(fixtures, "mue_derived.tsv")
    e = _err(parse_mue_derived, data.replace(b"36415\t2\t3", b"36415\tx\t3"), "mue.tsv")
    assert (e.row, e.column, e.found) == (5, "mue_units", "x")
    e = _err(parse_mue_derived, data.replace(b"mue_mai", b"mai"), "mue.tsv")
    assert e.row == 1 and e.column == "mue_mai"


# --- real mirror files --------------------------------------------------------------------------


def test_real_ptp_official_excerpt(mirror):
    path = mirror / "ncci-ptp" / "ccipra-v322r0-f1.excerpt.txt"
    df = parse_ptp_official(path.read_bytes(), path.name)
    assert df.height == 155
    assert df["column_1"].unique().sort().to_list()[0] == "0001A"
    assert df.row(-1)[:2] == ("0001U", "81167") and df["rationale"][-1] == "Misuse of Column T"
    conform(df, "ncci_ptp", path.name)


@pytest.mark.slow
def test_real_ptp_derived_q3(mirror):
    path = mirror / "ncci-ptp" / "ccipra-2024q3.practitioner.northstar-derived.tsv.gz"
    df = parse_ptp_derived(path.read_bytes(), path.name)
    assert df.height == 2_546_017
    assert df["deletion_date"].null_count() == 1_669_820
    assert df["effective_date"].null_count() == df.height
    # the key finding: (c1, c2, deletion) repeats once; adding the rationale makes it unique
    key = ["column_1", "column_2", "deletion_date"]
    dups = df.filter(pl.struct(key).is_duplicated())
    assert dups.select("column_1", "column_2").unique().rows() == [("88108", "88162")]
    assert merge_ptp_parts([df]).equals(conform(df, "ncci_ptp", path.name))


def test_real_mue_2026_excerpt_agrees_with_2024_derived(mirror):
    d = mirror / "ncci-mue"
    excerpt = parse_mue_official(
        (d / "MCR_MUE_PractitionerServices_Eff_07-01-2026.excerpt.csv").read_bytes(),
        "MCR_MUE_PractitionerServices_Eff_07-01-2026.excerpt.csv",
    )
    assert excerpt.height == 44
    derived = parse_mue_derived(
        (d / "MCR_MUE_PractitionerServices_Eff_07-01-2024.northstar-derived.tsv").read_bytes(),
        "MCR_MUE_PractitionerServices_Eff_07-01-2024.northstar-derived.tsv",
    )
    assert derived.height == 14_677
    conform(derived, "mue")
    shared = excerpt.join(derived, on="hcpcs", suffix="_2024")
    assert shared.height == 43
    assert (shared["mue_units"] == shared["mue_units_2024"]).all()
    assert (shared["mai"] == shared["mai_2024"]).all()
    assert derived.filter(pl.col("hcpcs") == "99396").row(0)[1:3] == (0, "3")
