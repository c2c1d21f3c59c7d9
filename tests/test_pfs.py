"""Parsers for the MPFS relative value release: authored fixtures, bad input, real files."""

from __future__ import annotations

import csv
import io
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib import pfs
from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError
from pipelines.lib.tables import TABLES

RVU25D = Path("mpfs-rvu/rvu25d")
RVU26C = Path("mpfs-rvu/rvu26c")


def _read(fixtures: Path, name: str) -> bytes:
    return (fixtures / "pfs" / name).read_bytes()


def _lines(data: bytes) -> list[str]:
    return data.decode().split("\r\n")


def _join(lines: list[str]) -> bytes:
    return "\r\n".join(lines).encode()


def _line_of(data: bytes, prefix: str) -> int:
    """1-based line number of the first line starting with ``prefix``."""
    return next(i for i, s in enumerate(_lines(data), start=1) if s.startswith(prefix))


def _row(df: pl.DataFrame, hcpcs: str, modifier: str = "") -> dict:
    hit = df.filter((pl.col("hcpcs") == hcpcs) & (pl.col("modifier") == modifier))
    assert hit.height == 1, (hcpcs, modifier, hit.height)
    return hit.row(0, named=True)


# --------------------------------------------------------------------------------------------
# PPRRVU on fixtures
# --------------------------------------------------------------------------------------------


def test_pprrvu_2026_fixture_maps_every_schema_column(fixtures: Path) -> None:
    df = pfs.parse_pprrvu(_read(fixtures, "PPRRVU2026_fixture_nonQPP.csv"), "fx26.csv")
    assert df.columns == [f.name for f in TABLES["hcpcs_rvu"].schema]
    assert df.height == 13
    table = conform(df, "hcpcs_rvu", "fx26.csv")
    assert table.num_rows == 13

    visit = _row(df, "99213")
    assert visit["work_rvu"] == Decimal("1.30")
    assert visit["nonfac_pe_rvu"] == Decimal("1.46")
    assert visit["fac_pe_rvu"] == Decimal("0.33")
    assert visit["mp_rvu"] == Decimal("0.09")
    assert visit["nonfac_total_rvu"] == Decimal("2.85")
    assert visit["conversion_factor"] == Decimal("33.4009")
    assert visit["pricing_ind"] == "9"
    assert visit["endo_base"] is None
    assert (visit["nonfac_na"], visit["fac_na"]) == (False, False)

    xray_tc = _row(df, "71046", "TC")
    assert (xray_tc["nonfac_na"], xray_tc["fac_na"]) == (False, True)
    assert xray_tc["opps_nonfac_pe_rvu"] == Decimal("2.50")
    assert xray_tc["phys_supervision"] == "01"
    assert _row(df, "50688")["description"] == "Change ureter tube, stent"
    assert _row(df, "45378", "53")["endo_base"] == "45378"
    assert _row(df, "10040")["global_days"] == "010"


def test_pprrvu_2025_fixture_has_no_pricing_indicator(fixtures: Path) -> None:
    df = pfs.parse_pprrvu(_read(fixtures, "PPRRVU2025_fixture.csv"), "fx25.csv")
    assert df.height == 13
    assert df["pricing_ind"].null_count() == df.height
    assert set(df["conversion_factor"].to_list()) == {Decimal("32.3465")}
    conform(df, "hcpcs_rvu")


def test_pprrvu_csv_and_txt_fixtures_agree(fixtures: Path) -> None:
    from_csv = pfs.parse_pprrvu(_read(fixtures, "PPRRVU2025_fixture.csv"), "fx25.csv")
    from_txt = pfs.parse_pprrvu_txt(_read(fixtures, "PPRRVU2025_fixture.txt"), "fx25.txt")
    assert from_csv.equals(from_txt)


def test_pprrvu_header_found_after_extra_preamble_line(fixtures: Path) -> None:
    lines = _lines(_read(fixtures, "PPRRVU2026_fixture_nonQPP.csv"))
    moved = _join([lines[0], lines[0], *lines[1:]])
    assert pfs.parse_pprrvu(moved, "x.csv").equals(
        pfs.parse_pprrvu(_join(lines), "x.csv")
    )


def test_pprrvu_non_numeric_rvu_names_file_row_column_value(fixtures: Path) -> None:
    data = _read(fixtures, "PPRRVU2025_fixture.csv")
    line = _line_of(data, "10040,")
    bad = data.replace(b"10040,,Acne surgery,A,,0.91,", b"10040,,Acne surgery,A,,0.9l,")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(bad, "PPRRVU_bad.csv")
    e = err.value
    assert (e.source, e.row, e.column, e.found) == ("PPRRVU_bad.csv", line, "WORK RVU", "0.9l")
    assert f"PPRRVU_bad.csv, row {line}, column 'WORK RVU'" in str(e)
    assert "'0.9l'" in str(e)


def test_pprrvu_extra_decimal_places_are_an_error_not_rounded(fixtures: Path) -> None:
    data = _read(fixtures, "PPRRVU2025_fixture.csv")
    bad = data.replace(b"10040,,Acne surgery,A,,0.91,2.13,", b"10040,,Acne surgery,A,,0.91,2.135,")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(bad, "p.csv")
    assert err.value.column == "NON-FAC PE RVU"
    assert err.value.found == "2.135"


def test_pprrvu_blank_required_rvu_is_an_error(fixtures: Path) -> None:
    data = _read(fixtures, "PPRRVU2025_fixture.csv")
    bad = data.replace(b"A,,0.91,2.13,,0.80,,0.10,", b"A,,0.91,2.13,,0.80,,,")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(bad, "p.csv")
    assert (err.value.column, err.value.row) == ("MP RVU", _line_of(data, "10040,"))


def test_pprrvu_bad_na_indicator(fixtures: Path) -> None:
    data = _read(fixtures, "PPRRVU2025_fixture.csv")
    bad = data.replace(b"1.20,1.05,NA,", b"1.20,1.05,N/A,")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(bad, "p.csv")
    assert err.value.column == "NON-FAC NA INDICATOR"
    assert err.value.row == _line_of(data, "50688,")


def test_pprrvu_renamed_column_says_which_header_was_expected(fixtures: Path) -> None:
    lines = _lines(_read(fixtures, "PPRRVU2026_fixture_nonQPP.csv"))
    h = next(i for i, s in enumerate(lines) if s.startswith("HCPCS,"))
    lines[h - 1] = lines[h - 1].replace(",WORK,", ",WRK,")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(_join(lines), "renamed.csv")
    e = err.value
    assert e.column == "WORK RVU" and e.row == h + 1
    assert "expected a column headed 'WORK RVU'" in str(e)
    assert "WRK RVU" in str(e)


def test_pprrvu_missing_column_says_which_header_was_expected(fixtures: Path) -> None:
    rows = list(csv.reader(io.StringIO(_read(fixtures, "PPRRVU2025_fixture.csv").decode())))
    h = next(i for i, r in enumerate(rows) if r and r[0] == "HCPCS")
    conv = rows[h].index("FACTOR")
    out = io.StringIO()
    csv.writer(out, lineterminator="\r\n").writerows(r[:conv] + r[conv + 1:] for r in rows)
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(out.getvalue().encode(), "nocf.csv")
    assert err.value.column == "CONV FACTOR"
    assert "expected a column headed 'CONV FACTOR'" in str(err.value)


def test_pprrvu_header_line_shifted_down_is_detected(fixtures: Path) -> None:
    # The HCPCS line moved up one line: the STATUS/WORK/... line now sits under it.
    lines = _lines(_read(fixtures, "PPRRVU2026_fixture_nonQPP.csv"))
    h = next(i for i, s in enumerate(lines) if s.startswith("HCPCS,"))
    lines[h - 1], lines[h] = lines[h], lines[h - 1]
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(_join(lines), "shifted.csv")
    assert err.value.column == "STATUS CODE"
    assert err.value.row == h  # the HCPCS line, now one line earlier
    assert "expected a column headed 'STATUS CODE'" in str(err.value)


def test_pprrvu_header_cells_shifted_one_column_is_detected(fixtures: Path) -> None:
    # PRIC IND header dropped but data still carries the column: names and data disagree.
    lines = _lines(_read(fixtures, "PPRRVU2026_fixture_nonQPP.csv"))
    h = next(i for i, s in enumerate(lines) if s.startswith("HCPCS,"))
    lines[h - 1] = lines[h - 1].replace(",PRIC,", ",")
    lines[h] = lines[h].replace(",IND,BASE,", ",BASE,")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(_join(lines), "misaligned.csv")
    assert err.value.row == h + 1
    assert "header" in str(err.value)


def test_pprrvu_row_width_mismatch(fixtures: Path) -> None:
    data = _read(fixtures, "PPRRVU2026_fixture_nonQPP.csv")
    bad = data.replace(b",0.00,0.00,0.00\r\n10040,", b",0.00,0.00\r\n10040,", 1)
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu(bad, "ragged.csv")
    assert err.value.row == _line_of(data, "10040,") - 1
    assert "32 cells" in str(err.value)


@pytest.mark.parametrize("data", [b"", b"\r\n  \r\n"])
def test_pprrvu_empty_file(data: bytes) -> None:
    with pytest.raises(SourceFormatError, match=r"empty\.csv: file is empty"):
        pfs.parse_pprrvu(data, "empty.csv")
    with pytest.raises(SourceFormatError, match=r"empty\.txt: file is empty"):
        pfs.parse_pprrvu_txt(data, "empty.txt")


def test_pprrvu_without_header_or_data(fixtures: Path) -> None:
    lines = _lines(_read(fixtures, "PPRRVU2026_fixture_nonQPP.csv"))
    with pytest.raises(SourceFormatError, match="first cell is 'HCPCS'"):
        pfs.parse_pprrvu(_join(lines[:5]), "preamble.csv")
    h = next(i for i, s in enumerate(lines) if s.startswith("HCPCS,"))
    with pytest.raises(SourceFormatError, match="no data rows"):
        pfs.parse_pprrvu(_join(lines[: h + 1]), "header_only.csv")


def test_pprrvu_txt_errors_name_positions(fixtures: Path) -> None:
    data = _read(fixtures, "PPRRVU2025_fixture.txt")
    lines = _lines(data)
    n = _line_of(data, "10040")
    lines[n - 1] = lines[n - 1][:59] + "  0.9x" + lines[n - 1][65:]
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_pprrvu_txt(_join(lines), "p.txt")
    assert (err.value.row, err.value.column) == (n, "positions 60-65 (WORK RVU)")
    lines = _lines(data)
    lines[n - 1] = lines[n - 1][:120]
    with pytest.raises(SourceFormatError, match="shorter than the fixed-width layout") as err:
        pfs.parse_pprrvu_txt(_join(lines), "p.txt")
    assert err.value.row == n


# --------------------------------------------------------------------------------------------
# GPCI, LOCCO, ANES, OPPSCAP on fixtures
# --------------------------------------------------------------------------------------------


def test_gpci_fixture(fixtures: Path) -> None:
    df = pfs.parse_gpci(_read(fixtures, "GPCI_fixture.csv"), "gpci.csv")
    assert df.height == 5  # footnotes after the data are not localities
    alaska = df.row(1, named=True)
    assert alaska == {
        "mac": "02102", "state": "AK", "locality": "01", "locality_name": "ALASKA",
        "work_gpci": Decimal("1.500"), "pe_gpci": Decimal("1.081"), "mp_gpci": Decimal("0.592"),
    }
    assert df["locality_name"][4] == "WYOMING"
    conform(df, "gpci")
    from_txt = pfs.parse_gpci_txt(_read(fixtures, "GPCI_fixture.txt"), "gpci.txt")
    assert from_txt.equals(df)


def test_gpci_bad_value_and_renamed_column(fixtures: Path) -> None:
    data = _read(fixtures, "GPCI_fixture.csv")
    with pytest.raises(SourceFormatError) as err:
        pfs.parse_gpci(data.replace(b"HOUSTON,1.008,", b"HOUSTON,1.0o8,"), "g.csv")
    assert err.value.row == _line_of(data, "04412,")
    assert err.value.column == "2026 PW GPCI (WITH 1.0 FLOOR)***"
    assert err.value.found == "1.0o8"
    with pytest.raises(SourceFormatError, match="expected a column headed '<year> PE GPCI'"):
        pfs.parse_gpci(data.replace(b"2026 PE GPCI", b"2026 PRACTICE EXPENSE"), "g.csv")
    with pytest.raises(SourceFormatError, match="file is empty"):
        pfs.parse_gpci(b"", "g.csv")


def test_locco_fixture(fixtures: Path) -> None:
    df = pfs.parse_locco(_read(fixtures, "LOCCO_fixture.csv"), "locco.csv")
    assert df.select("mac", "locality").rows() == [
        ("10112", "00"), ("02102", "01"), ("01182", "18"), ("01112", "62"), ("05302", "99"),
        ("04412", "18"), ("04412", "99"),
    ]
    riverside = df.row(3, named=True)
    assert riverside["state"] == "CALIFORNIA"  # carried down from the state's first row
    assert riverside["counties"] == "SAN BERNARDINO, RIVERSIDE"
    assert df.row(0, named=True) == {
        "mac": "10112", "locality": "00", "state": "ALABAMA", "fee_schedule_area": "STATEWIDE",
        "counties": "ALL COUNTIES",
    }
    assert df.row(4, named=True)["fee_schedule_area"] == "REST OF STATE"
    conform(df, "locality_county")


def test_anes_fixture(fixtures: Path) -> None:
    data = _read(fixtures, "ANES_fixture.csv")
    assert pfs.anes_national_cf(data, "anes.csv") == Decimal("20.3178")
    df = pfs.parse_anes(data, "anes.csv")
    assert df.rows() == [
        ("10112", "00", "ALABAMA", Decimal("19.31")),
        ("02102", "01", "ALASKA", Decimal("27.86")),
        ("04412", "18", "HOUSTON", Decimal("20.52")),
    ]
    conform(df, "anes_cf")
    with pytest.raises(SourceFormatError, match="National Anes CF"):
        pfs.anes_national_cf(data.replace(b"National Anes CF of 20.3178", b"CF"), "anes.csv")


def test_oppscap_fixture(fixtures: Path) -> None:
    df = pfs.parse_oppscap(_read(fixtures, "OPPSCAP_fixture.csv"), "opps.csv")
    assert df.height == 4
    row = df.filter((pl.col("modifier") == "TC") & (pl.col("hcpcs") == "71046")).row(0, named=True)
    assert (row["mac"], row["locality"], row["fac_price"], row["nonfac_price"]) == (
        "04412", "18", Decimal("20.00"), Decimal("21.50"),
    )
    assert df.row(1, named=True)["modifier"] == ""
    conform(df, "opps_cap")


# --------------------------------------------------------------------------------------------
# Real CMS files (mirror)
# --------------------------------------------------------------------------------------------


def test_real_pprrvu_2026(mirror: Path) -> None:
    path = mirror / RVU26C / "PPRRVU2026_Jul_nonQPP.csv"
    df = pfs.parse_pprrvu(path.read_bytes(), path.name)
    assert df.height == 19_356
    counts = dict(df["modifier"].value_counts().rows())
    assert counts == {"": 17_095, "26": 1_138, "TC": 1_119, "53": 4}
    assert df["conversion_factor"].unique().to_list() == [Decimal("33.4009")]
    assert df["pricing_ind"].null_count() == 0
    visit = _row(df, "99213")
    assert [visit[c] for c in ("work_rvu", "nonfac_pe_rvu", "fac_pe_rvu", "mp_rvu")] == [
        Decimal("1.30"), Decimal("1.46"), Decimal("0.33"), Decimal("0.09"),
    ]
    assert (visit["nonfac_total_rvu"], visit["fac_total_rvu"]) == (Decimal("2.85"), Decimal("1.72"))
    assert _row(df, "69210")["bilat_surg"] == "2"
    counts = dict(df["status"].value_counts().rows())
    assert (counts["A"], counts["R"], counts["T"]) == (9_408, 1_082, 8)
    assert conform(df, "hcpcs_rvu", path.name).num_rows == 19_356


def test_real_pprrvu_2025_csv_equals_txt(mirror: Path) -> None:
    csv_path = mirror / RVU25D / "PPRRVU2025_Oct.csv"
    txt_path = mirror / RVU25D / "PPRRVU2025_Oct.txt"
    from_csv = pfs.parse_pprrvu(csv_path.read_bytes(), csv_path.name)
    from_txt = pfs.parse_pprrvu_txt(txt_path.read_bytes(), txt_path.name)
    assert from_csv.height == from_txt.height == 19_090
    assert from_csv.equals(from_txt)
    assert from_csv["pricing_ind"].null_count() == 19_090
    assert from_csv["conversion_factor"].unique().to_list() == [Decimal("32.3465")]
    conform(from_csv, "hcpcs_rvu", csv_path.name)


@pytest.mark.parametrize("rel", [RVU26C / "GPCI2026.csv", RVU25D / "GPCI2025.csv"])
def test_real_gpci(mirror: Path, rel: Path) -> None:
    df = pfs.parse_gpci((mirror / rel).read_bytes(), rel.name)
    assert df.height == 109
    assert df.select("mac", "locality").n_unique() == 109
    assert df["mac"].str.len_chars().unique().to_list() == [5]
    assert df["locality"].str.len_chars().unique().to_list() == [2]
    assert not df["locality_name"].str.contains("*", literal=True).any()
    houston = df.filter(pl.col("locality_name") == "HOUSTON")
    assert houston.select("mac", "locality", "state").rows() == [("04412", "18", "TX")]
    conform(df, "gpci", rel.name)


def test_real_gpci_2026_houston_and_2025_txt(mirror: Path) -> None:
    g26 = pfs.parse_gpci((mirror / RVU26C / "GPCI2026.csv").read_bytes(), "GPCI2026.csv")
    h = g26.filter((pl.col("mac") == "04412") & (pl.col("locality") == "18")).row(0, named=True)
    assert (h["work_gpci"], h["pe_gpci"], h["mp_gpci"]) == (
        Decimal("1.008"), Decimal("0.993"), Decimal("1.376"),
    )
    g25 = pfs.parse_gpci((mirror / RVU25D / "GPCI2025.csv").read_bytes(), "GPCI2025.csv")
    t25 = pfs.parse_gpci_txt((mirror / RVU25D / "GPCI2025.txt").read_bytes(), "GPCI2025.txt")
    assert t25.equals(g25)


def test_real_locco_2025(mirror: Path) -> None:
    data = (mirror / RVU25D / "25LOCCO.csv").read_bytes()
    in_file = [
        r for r in csv.reader(io.StringIO(data.decode()))
        if r and r[0].strip().isdigit()
    ]
    assert len(in_file) == 110
    df = pfs.parse_locco(data, "25LOCCO.csv")
    # 110 county rows in the file; MAC 05302 locality 99 is listed twice, identically.
    assert df.height == 109
    assert df.filter((pl.col("mac") == "05302") & (pl.col("locality") == "99")).height == 1
    assert df["state"].null_count() == 0
    houston = df.filter((pl.col("mac") == "04412") & (pl.col("locality") == "18"))
    assert houston.select("state", "counties").rows() == [("TEXAS", "HARRIS")]
    conform(df, "locality_county", "25LOCCO.csv")


def test_real_anes_and_oppscap_2025(mirror: Path) -> None:
    data = (mirror / RVU25D / "ANES2025.csv").read_bytes()
    assert pfs.anes_national_cf(data, "ANES2025.csv") == Decimal("20.3178")
    anes = pfs.parse_anes(data, "ANES2025.csv")
    assert anes.height == 109
    conform(anes, "anes_cf", "ANES2025.csv")
    opps = pfs.parse_oppscap((mirror / RVU25D / "OPPSCAP_Oct.csv").read_bytes(), "OPPSCAP_Oct.csv")
    assert opps.height == 16_100
    assert opps.select("hcpcs", "modifier").n_unique() == 140
    conform(opps, "opps_cap", "OPPSCAP_Oct.csv")
