"""CARC / RARC / group-code parsers: fixtures, bad inputs and the real x12.org files."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib.carc import (
    parse_carc_csv,
    parse_carc_html,
    parse_rarc_csv,
    split_dates,
)
from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError

HTML = "carc-rarc/carc_codes_full.html"
CARC_CSV = "carc-rarc/carc_codes.csv"
RARC_CSV = "carc-rarc/rarc_codes.csv"


def one(df: pl.DataFrame, code: str) -> dict:
    rows = df.filter(pl.col("code") == code).to_dicts()
    assert len(rows) == 1, code
    return rows[0]


# --- the date splitter -------------------------------------------------------------------------

def test_split_dates_all_fields_any_order() -> None:
    assert split_dates("Deductible AmountStart: 01/01/1995", "f", 2) == (
        "Deductible Amount", date(1995, 1, 1), None, None, None)
    got = split_dates("Alert: x.Start: 01/01/1997 | Stop: 03/01/2024 | Last Modified: "
                      "03/01/2023Notes: (Modified 10/31/02)", "f", 3)
    assert got == ("Alert: x.", date(1997, 1, 1), date(2024, 3, 1), date(2023, 3, 1),
                   "(Modified 10/31/02)")
    got = split_dates("Y.Start: 09/30/2012 | Last Modified: 06/02/2013 | Stop: 07/01/2014 "
                      "Notes: Use code P23", "f", 4)
    assert got[2:] == (date(2014, 7, 1), date(2013, 6, 2), "Use code P23")


@pytest.mark.parametrize(("text", "problem"), [
    ("Coinsurance Amount", "no 'Start:' date"),
    ("Coinsurance AmountStart: 13/45/1995", "invalid date"),
    ("Coinsurance AmountStart: 01/01/1995 | Ended: 01/01/2000", "unrecognized date trailer"),
    ("Start: 01/01/1995", "description is empty"),
    ("xStart: 01/01/1995 | Stop: 01/01/2000 | Stop: 01/01/2001", "'Stop:' given twice"),
])
def test_split_dates_errors(text: str, problem: str) -> None:
    with pytest.raises(SourceFormatError, match=r"^carc\.csv, row 7, column 'description': "
                       + problem):
        split_dates(text, "carc.csv", 7)


# --- CSV fixtures ------------------------------------------------------------------------------

def test_carc_csv_fixture(fixtures: Path) -> None:
    df = parse_carc_csv((fixtures / "carc" / "carc_small.csv").read_bytes(), "carc_small.csv")
    assert df.height == 4
    c15 = one(df, "15")
    assert (c15["stop_date"], c15["last_modified"]) == (date(2018, 5, 1), date(2017, 11, 1))
    assert c15["description"].endswith("billed services or provider.")
    assert one(df, "1")["description"] == "Deductible Amount"
    conform(df, "carc", "carc_small.csv")


def test_rarc_csv_fixture(fixtures: Path) -> None:
    df = parse_rarc_csv((fixtures / "carc" / "rarc_small.csv").read_bytes(), "rarc_small.csv")
    assert df["code"].to_list() == ["M2", "M4", "MA01", "N919"]
    m4 = one(df, "M4")
    assert (m4["last_modified"], m4["notes"]) == (date(2007, 4, 1), "(Modified 4/1/07)")
    ma01 = one(df, "MA01")  # Stop before Last Modified, as RARC rows have it
    assert (ma01["stop_date"], ma01["last_modified"]) == (date(2024, 3, 1), date(2023, 3, 1))
    conform(df, "rarc", "rarc_small.csv")


def test_csv_missing_start_names_file_and_row(fixtures: Path) -> None:
    with pytest.raises(SourceFormatError) as err:
        parse_carc_csv((fixtures / "carc" / "carc_missing_start.csv").read_bytes(),
                       "carc_missing_start.csv")
    assert (err.value.source, err.value.row, err.value.column) == \
        ("carc_missing_start.csv", 3, "description")
    assert str(err.value).startswith("carc_missing_start.csv, row 3, column 'description'")
    assert "Start:" in str(err.value)


@pytest.mark.parametrize(("data", "row", "match"), [
    (b"", 1, "file is empty"),
    (b"\n\n", 1, "file is empty"),
    (b"id,text\n\"1\",\"xStart: 01/01/1995\"\n", 1, "header lacks required columns"),
    (b"code,description\n", 2, "no data rows"),
    (b"code,description\n\"1\",\"aStart: 01/01/1995\"\n\"1\",\"bStart: 01/01/1995\"\n", 3,
     "code 1 appears twice"),
    (b"code,description\n\"1\",\"aStart: 01/01/1995\",\"extra\"\n", 2, "3 fields"),
    (b"code,description\n\"CO45\",\"aStart: 01/01/1995\"\n", 2, "malformed CARC code"),
])
def test_carc_csv_bad_inputs(data: bytes, row: int, match: str) -> None:
    with pytest.raises(SourceFormatError, match=match) as err:
        parse_carc_csv(data, "carc.csv")
    assert (err.value.source, err.value.row) == ("carc.csv", row)


def test_rarc_rejects_carc_code() -> None:
    with pytest.raises(SourceFormatError, match=r"rarc\.csv, row 2, column 'code'"):
        parse_rarc_csv(b"code,description\n\"45\",\"xStart: 01/01/1995\"\n", "rarc.csv")


# --- HTML fixture ------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def small_html(fixtures: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    return parse_carc_html((fixtures / "carc" / "carc_small.html").read_bytes(),
                           "carc_small.html")


def test_html_fixture_codes(small_html: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    carc, _ = small_html
    assert carc["code"].to_list() == ["1", "15", "45", "201", "A0", "B13", "Y3"]
    y3 = one(carc, "Y3")
    assert (y3["stop_date"], y3["notes"]) == (date(2014, 7, 1), "Use code P23")
    assert y3["description"].endswith("P&C Auto only.")  # entity decoded
    assert "'set aside arrangement'" in one(carc, "201")["description"]
    assert one(carc, "45")["stop_date"] is None
    conform(carc, "carc", "carc_small.html")


def test_html_fixture_groups(small_html: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    _, groups = small_html
    assert groups["code"].to_list() == ["CO", "CR", "OA", "PI", "PR"]  # <strong>P</strong>I
    cr = one(groups, "CR")
    assert cr["name"] == "Corrections and Reversal"
    assert cr["description"].endswith("Note: This value is not to be used with 005010 and up.")
    assert "may not be billed" in one(groups, "CO")["description"]
    conform(groups, "carc_group", "carc_small.html")


def test_html_and_csv_fixtures_agree(fixtures: Path,
                                     small_html: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    csv_df = parse_carc_csv((fixtures / "carc" / "carc_small.csv").read_bytes(), "c.csv")
    joined = csv_df.join(small_html[0], on="code", how="left")
    for col in ("description", "start_date", "stop_date", "last_modified", "notes"):
        assert joined.filter(pl.col(col).ne_missing(pl.col(f"{col}_right"))).height == 0, col


def test_html_row_without_start(fixtures: Path) -> None:
    data = (fixtures / "carc" / "carc_small.html").read_bytes()
    bad = data.replace(b"<br>Start: 01/01/1995</span></td></tr>\n<tr class=\"prod-set "
                       b"deactivated\"><td class=\"code\">15", b"</span></td></tr>\n<tr "
                       b"class=\"prod-set deactivated\"><td class=\"code\">15", 1)
    assert bad != data
    with pytest.raises(SourceFormatError) as err:
        parse_carc_html(bad, "page.html")
    assert err.value.source == "page.html" and err.value.column == "td.description"
    assert err.value.row == data.decode().splitlines().index(
        next(ln for ln in data.decode().splitlines() if '"code">1<' in ln)) + 1


def test_html_bad_inputs(fixtures: Path) -> None:
    data = (fixtures / "carc" / "carc_small.html").read_bytes()
    with pytest.raises(SourceFormatError, match=r"page\.html, row 1: file is empty"):
        parse_carc_html(b"", "page.html")
    with pytest.raises(SourceFormatError, match=r"page\.html, column 'table#codelist': 0"):
        parse_carc_html(data.replace(b'id="codelist"', b'id="other"'), "page.html")
    with pytest.raises(SourceFormatError, match=r"page\.html, column 'table': 0 group-code"):
        parse_carc_html(data.replace(b"<strong>OA</strong>", b"<strong>OAX</strong>"),
                        "page.html")
    with pytest.raises(SourceFormatError, match=r"page\.html, row \d+, column 'td.code'"):
        parse_carc_html(data.replace(b'"code">B13<', b'"code">B-13<'), "page.html")


# --- real files --------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def real_html(mirror: Path) -> tuple[pl.DataFrame, pl.DataFrame]:
    return parse_carc_html((mirror / HTML).read_bytes(), HTML)


def test_real_counts(real_html: tuple[pl.DataFrame, pl.DataFrame], mirror: Path) -> None:
    carc, groups = real_html
    assert carc.height == 407
    assert groups["code"].to_list() == ["CO", "CR", "OA", "PI", "PR"]
    numeric = carc.filter(pl.col("code").str.contains(r"^\d+$"))
    assert sorted(int(c) for c in numeric["code"]) == list(range(1, 309))
    alpha = carc.filter(~pl.col("code").str.contains(r"^\d+$"))["code"]
    expected = {f"{p}{i}" for p, lo, hi in [("A", 0, 8), ("B", 1, 23), ("D", 1, 23),
                                            ("P", 1, 32), ("W", 1, 9), ("Y", 1, 3)]
                for i in range(lo, hi + 1)}
    assert set(alpha) == expected
    rarc = parse_rarc_csv((mirror / RARC_CSV).read_bytes(), RARC_CSV)
    assert rarc.height == 1197
    assert rarc["stop_date"].is_not_null().sum() == 79
    assert rarc["start_date"].max() == date(2026, 3, 1)
    conform(carc, "carc", HTML)
    conform(groups, "carc_group", HTML)
    conform(rarc, "rarc", RARC_CSV)


def test_real_stop_dates(real_html: tuple[pl.DataFrame, pl.DataFrame]) -> None:
    carc, _ = real_html
    assert one(carc, "15")["stop_date"] == date(2018, 5, 1)
    for code in ("1", "2", "3", "16", "18", "29", "45", "50", "97", "197", "236", "253", "B13"):
        assert one(carc, code)["stop_date"] is None, code


def test_real_csv_agrees_with_html(real_html: tuple[pl.DataFrame, pl.DataFrame],
                                   mirror: Path) -> None:
    """The 308 numeric codes agree on every field once whitespace is normalized.

    Without normalization two descriptions differ (CARC 201 and 254 have a double space after a
    sentence in the HTML, a single one in the CSV); nothing else differs.
    """
    csv_df = parse_carc_csv((mirror / CARC_CSV).read_bytes(), CARC_CSV)
    assert csv_df.height == 308 and csv_df["stop_date"].is_not_null().sum() == 63
    joined = csv_df.join(real_html[0], on="code", how="left")
    assert joined["description_right"].null_count() == 0
    for col in ("description", "start_date", "stop_date", "last_modified", "notes"):
        diff = joined.filter(pl.col(col).ne_missing(pl.col(f"{col}_right")))
        assert diff.height == 0, diff.select("code", col, f"{col}_right").to_dicts()


def test_rarc_html_page_layout(fixtures) -> None:  # noqa: ANN001
    """A download brings x12.org's HTML page (the mirror holds a CSV scrape of it)."""
    from pipelines.lib.carc import parse_rarc_html

    df = parse_rarc_html((fixtures / "carc" / "rarc_small.html").read_bytes(), "rarc.html")
    rows = {r["code"]: r for r in df.iter_rows(named=True)}
    assert sorted(rows) == ["M15", "MA01", "N19"]
    assert rows["MA01"]["stop_date"].isoformat() == "2024-03-01"
    assert rows["MA01"]["notes"] == "(Modified 10/31/02) Deactivated."
    assert rows["N19"]["stop_date"] is None
    assert rows["N19"]["description"] == "Procedure code incidental to primary procedure."
    conform(df, "rarc", "rarc.html")
