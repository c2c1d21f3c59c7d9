"""HCPCS Level II parsers: TXT and XLSX on fixtures, bad inputs, the real Jan 2026 release."""

from __future__ import annotations

import datetime as dt

import polars as pl
import pytest

from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError
from pipelines.lib.hcpcs import parse_hcpcs_txt, parse_hcpcs_xlsx

SRC = "HCPC2099_JAN_ANWEB.txt"


def _read(fixtures, name: str) -> bytes:
    return (fixtures / "hcpcs" / name).read_bytes()


def _lines(fixtures) -> list[bytes]:
    return _read(fixtures, "hcpcs.txt").split(b"\r\n")


def _err(data: bytes) -> SourceFormatError:
    with pytest.raises(SourceFormatError) as exc:
        parse_hcpcs_txt(data, SRC)
    assert SRC in str(exc.value)
    return exc.value


def _set(line: bytes, begin: int, value: bytes) -> bytes:
    return line[: begin - 1] + value + line[begin - 1 + len(value):]


def test_txt_fixture(fixtures):
    df = parse_hcpcs_txt(_read(fixtures, "hcpcs.txt"), SRC)
    assert df.height == 6
    assert df.group_by("kind").len().sort("kind").rows() == [("code", 4), ("modifier", 2)]
    ga = df.filter(pl.col("code") == "GA").row(0, named=True)
    assert ga["kind"] == "modifier"
    assert ga["long_description"].endswith("payer policy, individual case")
    q = df.filter(pl.col("code") == "Q0091").row(0, named=True)
    assert q["long_description"] == (
        "Screening papanicolaou smear; obtaining, preparing and conveyance of cervical or "
        "vaginal smear to laboratory"
    )
    assert (q["termination_date"], q["action_code"], q["pricing_ind"]) == (
        dt.date(2025, 12, 31), "D", "13",
    )
    cane = df.filter(pl.col("code") == "E0100").row(0, named=True)  # the over-long line
    assert (cane["betos"], cane["type_of_service"], cane["coverage_code"]) == ("D1A", "R", "C")
    assert ga["pricing_ind"] is None and ga["betos"] is None
    assert conform(df, "hcpcs_level2", SRC).num_rows == 6


def test_xlsx_fixture_matches_txt(fixtures):
    x = parse_hcpcs_xlsx(_read(fixtures, "hcpcs.xlsx"), "HCPC2099_JAN_ANWEB.xlsx")
    t = parse_hcpcs_txt(_read(fixtures, "hcpcs.txt"), SRC)
    assert x.sort("code").equals(t.sort("code"))


def test_txt_bad_date(fixtures):
    lines = _lines(fixtures)
    lines[3] = _set(lines[3], 277, b"19841301")
    e = _err(b"\r\n".join(lines))
    assert (e.row, e.found) == (4, "19841301")
    assert e.column == "action_eff (positions 277-284)"


def test_txt_orphan_continuation_and_bad_recid(fixtures):
    lines = _lines(fixtures)
    e = _err(b"\r\n".join(lines[1:]))
    assert e.row == 1 and "continuation" in str(e) and "GA" in str(e)
    lines[5] = _set(lines[5], 11, b"5")
    e = _err(b"\r\n".join(lines))
    assert (e.row, e.column, e.found) == (6, "recid (position 11)", "5")


def test_txt_shifted_record_and_overlong_text(fixtures):
    lines = _lines(fixtures)
    lines[2] = b" " + lines[2]  # a record shifted right by one column
    e = _err(b"\r\n".join(lines))
    assert e.row == 3 and e.column == "recid (position 11)"
    lines = _lines(fixtures)
    lines[4] = lines[4] + b"JUNK"
    e = _err(b"\r\n".join(lines))
    assert e.row == 5 and "beyond the 320" in str(e)


def test_txt_empty_and_duplicate(fixtures):
    assert "empty" in str(_err(b""))
    assert "empty" in str(_err(b"   \r\n"))
    lines = _lines(fixtures)
    e = _err(b"\r\n".join(lines[:4] + [lines[3]]))
    assert e.row == 5 and "twice" in str(e) and e.found == "A4206"


def test_txt_latin1(fixtures):
    lines = _lines(fixtures)
    lines[2] = _set(lines[2], 12, "Séparé structure  ".encode("latin-1"))
    df = parse_hcpcs_txt(b"\r\n".join(lines), SRC)
    assert df.filter(pl.col("code") == "XS")["long_description"][0] == "Séparé structure"


def test_xlsx_bad_inputs(fixtures):
    with pytest.raises(SourceFormatError, match="cannot be read as an .xlsx"):
        parse_hcpcs_xlsx(_read(fixtures, "hcpcs.txt"), "bad.xlsx")
    with pytest.raises(SourceFormatError, match="empty"):
        parse_hcpcs_xlsx(b"", "bad.xlsx")


# --- real Jan 2026 release ----------------------------------------------------------------------

JAN = "hcpcs/hcpc2026-jan/extracted/HCPC2026_JAN_ANWEB_01122026"


def test_real_txt_and_xlsx_agree(mirror):
    txt = parse_hcpcs_txt((mirror / f"{JAN}.txt").read_bytes(), "HCPC2026_JAN_ANWEB_01122026.txt")
    xlsx = parse_hcpcs_xlsx(
        (mirror / f"{JAN}.xlsx").read_bytes(), "HCPC2026_JAN_ANWEB_01122026.xlsx"
    )
    for df in (txt, xlsx):
        assert df.height == 9_006
        assert df.group_by("kind").len().sort("kind").rows() == [("code", 8623), ("modifier", 383)]
        conform(df, "hcpcs_level2")
    j = txt.join(xlsx, on=["code", "kind"], how="full", coalesce=True, suffix="_x")
    assert j.height == 9_006
    for col in ("short_description", "add_date", "termination_date", "action_code", "betos",
                "pricing_ind", "coverage_code", "type_of_service"):
        assert j.filter(pl.col(col).ne_missing(pl.col(f"{col}_x"))).height == 0, col
    # The XLSX leaves ACT EFF DT blank on 117 codes whose TXT action date equals the add date.
    eff = j.filter(pl.col("action_effective_date").ne_missing(pl.col("action_effective_date_x")))
    assert eff.height == 117
    assert eff["action_effective_date_x"].null_count() == 117
    assert (eff["action_effective_date"] == eff["add_date"]).all()
    # Long descriptions agree up to whitespace: the TXT cannot carry a double space that CMS
    # split across two 80-character records (15 codes).
    cols = ("long_description", "long_description_x")
    ws = [pl.col(c).str.replace_all(r"\s+", " ") for c in cols]
    assert j.filter(ws[0] != ws[1]).height == 0
    assert j.filter(pl.col("long_description") != pl.col("long_description_x")).height == 15
    g9871 = txt.filter(pl.col("code") == "G9871").row(0, named=True)  # the 546-char line
    assert g9871["add_date"] == dt.date(2026, 1, 1) and g9871["action_code"] == "A"
    g9873 = txt.filter(pl.col("code") == "G9873")["long_description"][0]
    assert "attended by an mdpp beneficiary" in g9873
