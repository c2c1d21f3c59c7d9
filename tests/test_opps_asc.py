"""Facility payment rates: OPPS Addendum B and ASC Addendum AA.

Parsers on authored fixtures in the official layouts (tests/fixtures/opps, tests/fixtures/asc),
malformed input with the exact error, the table builders' blocking checks, the real mirror
files when present, and the committed 2026C bundle read through clarus_env.
"""

from __future__ import annotations

import csv
import hashlib
import io
import subprocess
import sys
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from clarus_env import open_reference
from clarus_env.cli import main
from pipelines.defs.asc.assets import build_asc_rate
from pipelines.defs.opps.assets import build_opps_rate, mirror_copy_problems
from pipelines.lib import asc, opps
from pipelines.lib.bundle import table_bytes
from pipelines.lib.checks import table_problems
from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError
from pipelines.lib.fetch import Fetched
from pipelines.lib.tables import TABLES
from pipelines.sources import release_inputs

REPO = Path(__file__).resolve().parents[1]
OPPS_B = Path("opps/2025_nfrm_addenda.11142024/2025 NFRM Addendum B.11122024.txt")
OPPS_A = Path("opps/2025_nfrm_addenda.11142024/2025 NFRM Addendum A.11122024.txt")
ASC_2026_04 = Path("asc/2026/20260401/AA.csv")
ASC_2025_01 = Path("asc/2025/20250101/AA.csv")


def b_bytes(fixtures: Path) -> bytes:
    return (fixtures / "opps" / "addendum_b.txt").read_bytes()


def a_bytes(fixtures: Path) -> bytes:
    return (fixtures / "opps" / "addendum_a.txt").read_bytes()


def aa_bytes(fixtures: Path) -> bytes:
    return (fixtures / "asc" / "addendum_aa.csv").read_bytes()


def lines(data: bytes) -> list[str]:
    return data.decode("latin-1").split("\r\n")


def join(ls: list[str]) -> bytes:
    return "\r\n".join(ls).encode("latin-1")


def edit(data: bytes, prefix: str, old: str, new: str) -> tuple[bytes, int]:
    """Replace ``old`` by ``new`` on the line starting with ``prefix``; returns its 1-based row."""
    ls = lines(data)
    i = next(i for i, s in enumerate(ls) if s.startswith(prefix))
    assert old in ls[i], (old, ls[i])
    ls[i] = ls[i].replace(old, new, 1)
    return join(ls), i + 1


def row(df: pl.DataFrame, code: str) -> dict:
    hit = df.filter(pl.col("hcpcs") == code)
    assert hit.height == 1, code
    return hit.row(0, named=True)


def fetched(key: str, data: bytes, file: str, release: str, origin: str = "download") -> Fetched:
    return Fetched(key=key, url="https://example.invalid/x.zip", file=file, origin=origin,
                   data=data, release=release)


# --------------------------------------------------------------------------------------------
# OPPS Addendum B on the fixture
# --------------------------------------------------------------------------------------------


def test_addendum_b_fixture_maps_every_column(fixtures: Path) -> None:
    df = opps.parse_addendum_b(b_bytes(fixtures), "b.txt")
    assert df.columns == list(opps.ADDENDUM_B_COLUMNS)
    assert set(df.columns) | {"apc_title"} == {f.name for f in TABLES["opps_rate"].schema}
    assert df.height == 11
    table = conform(opps.join_addendum_a(df, None)[0], "opps_rate", "b.txt")
    assert table_problems(table, "opps_rate", row_ranges=False) == {
        "formats": [], "unique_key": [], "row_count": []}

    knee = row(df, "0100T")
    assert (knee["status_indicator"], knee["apc"]) == ("J1", "5492")
    assert knee["relative_weight"] == Decimal("40.0000")
    assert knee["payment_rate"] == Decimal("3200.00")  # quoted "$3,200.00"
    assert knee["national_copay"] is None  # '.' = no value
    assert knee["minimum_copay"] == Decimal("640.00")
    assert knee["pass_through_expires"] is False and knee["note"] is None

    pacer = row(df, "33208")
    assert pacer["adjusted_copay"] == Decimal("1632.00")
    assert pacer["note"] == "Copayments capped at inpatient deductible of $1,632.00."

    drug = row(df, "C9999")  # a drug rate has a third decimal; CI and SI carry CMS's blanks
    assert drug["payment_rate"] == Decimal("1001.125")
    assert (drug["comment_indicator"], drug["status_indicator"]) == ("NI", "G")
    assert drug["ira_coinsurance_pct"] == Decimal("18.500")
    assert drug["pass_through_expires"] is True
    assert row(df, "J9999")["note"] == "Inflation-Adjusted Coinsurance"

    assert row(df, "50999")["minimum_copay"] == Decimal("36.00")  # unformatted amount
    assert row(df, "G0999")["national_copay"] == Decimal("30.00")
    office = row(df, "99203")  # not paid under OPPS
    assert (office["status_indicator"], office["apc"], office["payment_rate"]) == ("B", None, None)
    # CMS's quirks in the code cell: a trailing blank and a stray 0xFF byte
    assert row(df, "0999U")["status_indicator"] == "A"
    assert row(df, "A9999")["description"] == "Misc dme supply accessory"


def test_addendum_b_508_csv_layout_reads_the_same(fixtures: Path) -> None:
    """The quarterly web Addendum B is a comma CSV with the same header: same rows."""
    text = b_bytes(fixtures).decode("latin-1")
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n")
    for cells in csv.reader(io.StringIO(text, newline=""), delimiter="\t"):
        writer.writerow(cells)
    as_csv = out.getvalue().encode("latin-1")
    assert b"\t" not in as_csv
    assert opps.parse_addendum_b(as_csv, "b.csv").equals(
        opps.parse_addendum_b(b_bytes(fixtures), "b.txt"))


def test_addendum_a_titles_apcs_and_cross_checks_rates(fixtures: Path) -> None:
    apcs = opps.parse_addendum_a(a_bytes(fixtures), "a.txt")
    assert apcs.columns == list(opps.ADDENDUM_A_COLUMNS) and apcs.height == 7
    # a stray quote before a title (as in the CY2025 file) leaves no tab in the title
    assert apcs.filter(pl.col("apc") == "9997")["group_title"].item() == "Test drug, per 1 mg"
    b = opps.parse_addendum_b(b_bytes(fixtures), "b.txt")
    df, note, problems = opps.join_addendum_a(b, apcs)
    assert problems == []
    assert note == ("cross-check with Addendum A (7 APCs): 7 of 7 codes with an APC and a rate "
                    "are paid their APC's rate")
    assert row(df, "33208")["apc_title"] == "Level 3 Pacemaker and Similar Procedures"
    assert row(df, "99203")["apc_title"] is None
    # a code paid another rate than its APC's, and an APC Addendum A does not list
    b2 = b.with_columns(
        pl.when(pl.col("hcpcs") == "20610").then(pl.lit(Decimal("841"))).otherwise(
            pl.col("payment_rate")).cast(pl.Decimal(12, 3)).alias("payment_rate"),
        pl.when(pl.col("hcpcs") == "G0999").then(pl.lit("5013")).otherwise(
            pl.col("apc")).alias("apc"))
    _, note, problems = opps.join_addendum_a(b2, apcs)
    assert problems == [
        "1 codes have an APC that Addendum A does not list, e.g. G0999 (APC 5013)",
        "1 codes are not paid their APC's Addendum A rate, e.g. 20610 APC 5442: 841.000 vs "
        "840.000"]
    assert opps.join_addendum_a(b, None)[1] == \
        "no Addendum A: APC titles empty, rates not cross-checked"
    data, line = edit(a_bytes(fixtures), "5371", "5371", "537")
    with pytest.raises(SourceFormatError) as err:
        opps.parse_addendum_a(data, "a.txt")
    assert str(err.value) == f"a.txt, row {line}, column 'APC': bad APC; expected 4 digits, " \
        "found '537'"


def test_addendum_b_is_deterministic(fixtures: Path) -> None:
    a = conform(opps.join_addendum_a(opps.parse_addendum_b(b_bytes(fixtures), "b.txt"),
                                     None)[0], "opps_rate")
    b = conform(opps.join_addendum_a(opps.parse_addendum_b(b_bytes(fixtures), "b.txt"),
                                     None)[0], "opps_rate")
    assert table_bytes(a) == table_bytes(b)
    assert a.column("hcpcs").to_pylist() == sorted(a.column("hcpcs").to_pylist())


@pytest.mark.parametrize(("prefix", "old", "new", "column", "message"), [
    ("20610", "$840.00", "$84O.00", "Payment Rate",
     "bad amount; expected dollars like $1,234.56 (at most 3 decimals) or an empty cell, "
     "found '$84O.00'"),
    ("20610", "$168.00", "$168.001", "Minimum Unadjusted Copayment",
     "bad amount; expected dollars like $1,234.56 (at most 2 decimals) or an empty cell or "
     "'.', found '$168.001'"),
    ("20610", "20610", "2061", "HCPCS Code",
     "bad HCPCS code; expected 5 characters 0-9/A-Z, found '2061'"),
    ("20610", "\tT\t", "\tJ12\t", "SI",
     "bad status indicator; expected a letter, optionally followed by a digit, found 'J12'"),
    ("20610", "5442", "54A2", "APC", "bad APC; expected 4 digits or an empty cell, found '54A2'"),
    ("20610", "10.5000", "10.50001", "Relative Weight",
     "bad relative weight; expected a decimal with at most 4 places or an empty cell, "
     "found '10.50001'"),
    ("C9999", "18.500%", "18.5", "IRA Coinsurance percentage",
     "bad percentage; expected a percentage like 20.000% or an empty cell, found '18.5'"),
    ("C9999", "\t*\t", "\tx\t", "Drug and Device Pass-Through Expiration during Calendar Year",
     "bad pass-through expiration flag; expected '*' or an empty cell, found 'x'"),
    ("20610", "Drain/inj joint/bursa w/o us", "", "Short Descriptor",
     "empty short descriptor; expected a description"),
])
def test_addendum_b_bad_cells_name_file_row_and_column(
        fixtures: Path, prefix: str, old: str, new: str, column: str, message: str) -> None:
    data, line = edit(b_bytes(fixtures), prefix, old, new)
    with pytest.raises(SourceFormatError) as err:
        opps.parse_addendum_b(data, "b.txt")
    assert str(err.value) == f"b.txt, row {line}, column {column!r}: {message}"
    assert (err.value.row, err.value.column) == (line, column)


def test_addendum_b_layout_errors(fixtures: Path) -> None:
    data = b_bytes(fixtures)
    dup, line = edit(data, "G0999", "G0999", "20610")
    with pytest.raises(SourceFormatError) as err:
        opps.parse_addendum_b(dup, "b.txt")
    assert str(err.value) == (f"b.txt, row {line}, column 'HCPCS Code': code listed twice "
                              "(first on row 8); expected each code once, found '20610'")

    renamed, hline = edit(data, "HCPCS Code", "Payment Rate", "Payment Amount")
    with pytest.raises(SourceFormatError) as err:
        opps.parse_addendum_b(renamed, "b.txt")
    assert str(err.value).startswith(
        f"b.txt, row {hline}, column 'Payment Rate': required column not found in the header; "
        "expected a column headed 'Payment Rate', found 'HCPCS Code, Short Descriptor, CI, SI, ")

    ls = lines(data)
    no_header = join(ls[:4] + ls[5:])
    with pytest.raises(SourceFormatError) as err:
        opps.parse_addendum_b(no_header, "b.txt")
    assert str(err.value).startswith(
        "b.txt, row 5, column 'HCPCS Code': a data row appears above the header (header "
        "missing or shifted?)")

    with pytest.raises(SourceFormatError, match=r"^b\.txt: file is empty"):
        opps.parse_addendum_b(b"  \r\n", "b.txt")
    with pytest.raises(SourceFormatError, match=r"^b\.txt, row 5: no code rows below the header"):
        opps.parse_addendum_b(join(ls[:5]), "b.txt")
    note = "NOTE: authored footnote" + "\t" * 12
    trailing = join(ls[:-1] + [note, ls[-2].replace("G0999", "G0998"), ""])
    with pytest.raises(SourceFormatError, match=r"row 18, column 'HCPCS Code': a row follows the "
                                                r"footnotes"):
        opps.parse_addendum_b(trailing, "b.txt")
    footnoted = join(ls[:-1] + [note, ""])
    assert opps.parse_addendum_b(footnoted, "b.txt").height == 11


# --------------------------------------------------------------------------------------------
# ASC Addendum AA on the fixture
# --------------------------------------------------------------------------------------------


def test_addendum_aa_fixture_maps_every_column(fixtures: Path) -> None:
    data = aa_bytes(fixtures)
    df = asc.parse_addendum_aa(data, "aa.csv")
    assert df.columns == [f.name for f in TABLES["asc_rate"].schema]
    assert df.height == 6  # the NOTE rows and blank rows are not codes
    assert asc.addendum_aa_period(data, "aa.csv") == "2026-04"
    table = conform(df, "asc_rate", "aa.csv")
    assert table_problems(table, "asc_rate", row_ranges=False)["formats"] == []

    retina = row(df, "0100T")
    assert retina["payment_indicator"] == "J8"
    assert retina["payment_rate"] == Decimal("2000.00")  # "$2,000.00 " with CMS's blank
    assert retina["payment_weight"] == Decimal("40.0000")
    assert retina["multiple_procedure_discount"] is True and retina["comment_flag"] is None
    packaged = row(df, "0999T")
    assert (packaged["payment_indicator"], packaged["payment_rate"]) == ("N1", None)
    assert packaged["multiple_procedure_discount"] is False
    office = row(df, "20610")  # office-based: paid at the MPFS amount, no weight
    assert (office["payment_weight"], office["payment_rate"]) == (None, Decimal("75.31"))
    assert row(df, "64999")["comment_flag"] == "*"  # " *" in the file
    assert row(df, "G0999")["comment_flag"] == "**"


@pytest.mark.parametrize(("prefix", "old", "new", "column", "message"), [
    ("20610", "P3", "P", "April 2026 Payment Indicator",
     "bad payment indicator; expected a letter and a digit, e.g. A2, found 'P'"),
    ("20610", ",Y,", ",Yes,", "Subject to Multiple Procedure Discounting",
     "bad multiple procedure discounting flag; expected Y or N, found 'YES'"),
    ("20610", "$75.31 ", "$75.315", "April 2026 Payment Rate",
     "bad amount; expected dollars like $1,234.56 (at most 2 decimals) or an empty cell, "
     "found '$75.315'"),
    ("0100T", "40.0000", "forty", "April 2026  Payment Weight",
     "bad relative weight; expected a decimal with at most 4 places or an empty cell, "
     "found 'forty'"),
    ("64999", " *", "+", "column 2 (unnamed)",
     "bad comment flag; expected '*', '**' or an empty cell, found '+'"),
])
def test_addendum_aa_bad_cells_name_file_row_and_column(
        fixtures: Path, prefix: str, old: str, new: str, column: str, message: str) -> None:
    data, line = edit(aa_bytes(fixtures), prefix, old, new)
    with pytest.raises(SourceFormatError) as err:
        asc.parse_addendum_aa(data, "aa.csv")
    assert str(err.value) == f"aa.csv, row {line}, column {column!r}: {message}"


def test_addendum_aa_quarter_errors(fixtures: Path) -> None:
    data, line = edit(aa_bytes(fixtures), "HCPCS Code", "April 2026 Payment Rate",
                      "July 2026 Payment Rate")
    with pytest.raises(SourceFormatError) as err:
        asc.addendum_aa_period(data, "aa.csv")
    assert str(err.value) == (
        f"aa.csv, row {line}, column 'Payment Indicator/Weight/Rate': payment columns name "
        "different quarters; expected one month and year, found '2026-04, 2026-07'")
    undated = aa_bytes(fixtures).replace(b"April 2026 ", b"").replace(b"April 2026  ", b"")
    assert asc.addendum_aa_period(undated, "aa.csv") is None
    assert asc.parse_addendum_aa(undated, "aa.csv").height == 6


# --------------------------------------------------------------------------------------------
# table builders and their blocking checks
# --------------------------------------------------------------------------------------------


def test_builders_on_fixtures_pass_their_checks(fixtures: Path) -> None:
    b = fetched("opps_addendum_b", b_bytes(fixtures), "b.txt", "CY2025-final")
    a = fetched("opps_addendum_a", a_bytes(fixtures), "a.txt", "CY2025-final")
    result, checks = build_opps_rate({"opps_addendum_b": b, "opps_addendum_a": a},
                                     complete=False)
    assert result.table.num_rows == 11
    assert result.inputs == {"opps_addendum_b": 11, "opps_addendum_a": 7}
    assert result.built_from == ["opps_addendum_b"]  # Addendum A titles and cross-checks
    assert checks == {"spot_check": [], "conversion_factor": [], "addendum_a": [],
                      "mirror_copy": []}
    assert "Level 2 Nerve Injections" in result.table.column("apc_title").to_pylist()
    result, checks = build_opps_rate({"opps_addendum_b": b}, complete=False)  # A is optional
    assert result.table.column("apc_title").null_count == 11 and checks["addendum_a"] == []
    assert any("80.000 (the conversion factor) on 5 of 5 weighted rows" in n
               for n in result.notes)

    aa = fetched("asc_addendum_aa", aa_bytes(fixtures), "aa.csv", "2026-04")
    result, checks = build_asc_rate({"asc_addendum_aa": aa}, complete=False)
    assert result.table.num_rows == 6
    assert checks == {"spot_check": [], "conversion_factor": [], "quarter": [],
                      "mirror_copy": []}
    assert "payment columns for 2026-04: 6 codes, 5 with a national unadjusted payment rate" \
        in result.notes[0]


def test_builder_checks_catch_bad_releases(fixtures: Path) -> None:
    b = fetched("opps_addendum_b", b_bytes(fixtures), "b.txt", "CY2025-final")
    _, checks = build_opps_rate({"opps_addendum_b": b}, complete=True)  # a complete release
    assert "opps_rate: 47562 missing" in checks["spot_check"]
    # a known code with another value than the release file's
    wrong, _ = edit(b_bytes(fixtures), "G0999", "G0999", "G0463")
    _, checks = build_opps_rate(
        {"opps_addendum_b": fetched("opps_addendum_b", wrong, "b.txt", "CY2025-final")},
        complete=False)
    assert checks["spot_check"] == [
        "opps_rate: G0463 payment_rate is Decimal('120.000'), the release file says "
        "Decimal('128.87')"]
    # a rate that does not follow the conversion factor (column shift, wrong scale)
    shifted = b_bytes(fixtures).replace(b"$840.00", b"$8,400.00").replace(b"$180.00", b"$18.00")
    _, checks = build_opps_rate(
        {"opps_addendum_b": fetched("opps_addendum_b", shifted, "b.txt", "CY2099")},
        complete=False)
    assert checks["conversion_factor"] == [
        "opps_rate: only 3 of 5 weighted rows give the conversion factor 80.000 (columns "
        "shifted or mis-scaled?)"]
    _, checks = build_opps_rate(
        {"opps_addendum_b": fetched("opps_addendum_b", b_bytes(fixtures), "b.txt", "CY2099")},
        complete=True)
    assert checks["spot_check"] == ["no spot values recorded for release CY2099"]
    # the quarter in the header must be the release's
    aa = fetched("asc_addendum_aa", aa_bytes(fixtures), "aa.csv", "2026-01")
    _, checks = build_asc_rate({"asc_addendum_aa": aa}, complete=False)
    assert checks["quarter"] == ["aa.csv: payment columns are for 2026-04, the release is "
                                 "2026-01"]


def test_mirror_copy_is_checked_against_sources(fixtures: Path) -> None:
    spec = next(s for s in release_inputs("2026C") if s.key == "asc_addendum_aa")
    f = fetched("asc_addendum_aa", aa_bytes(fixtures), "AA.csv", "2026-04",
                origin=f"mirror:{spec.mirror[0]}")
    assert mirror_copy_problems(f) == [
        f"AA.csv (mirror:{spec.mirror[0]}): sha256 {f.sha256}, sources.py records "
        f"{spec.mirror_sha256}"]
    assert mirror_copy_problems(fetched("asc_addendum_aa", b"x", "AA.csv", "2026-04")) == []


def test_sources_record_both_partitions() -> None:
    for release, quarter in (("2026C", "2026-04"), ("2025D", "2025-01")):
        specs = {s.key: s for s in release_inputs(release) if s.source in ("opps", "asc")}
        assert specs["opps_addendum_b"].release == "CY2025-final"
        assert specs["asc_addendum_aa"].release == quarter
        assert specs["asc_addendum_aa"].mirror_sha256
        assert specs["asc_addendum_aa"].url.startswith("https://www.cms.gov/files/zip/")


# --------------------------------------------------------------------------------------------
# the real files (skipped without the mirror)
# --------------------------------------------------------------------------------------------


def test_real_addendum_b(mirror: Path) -> None:
    data = (mirror / OPPS_B).read_bytes()
    apcs = (mirror / OPPS_A).read_bytes()
    df = opps.parse_addendum_b(data, OPPS_B.name)
    assert df.height == 18_682
    assert df.filter(pl.col("payment_rate").is_not_null()).height == 6_636
    si = dict(df.group_by("status_indicator").len().iter_rows())
    assert (si["J1"], si["N"], si["B"], si["Q3"]) == (3_140, 2_228, 998, 182)
    assert row(df, "A4341")["status_indicator"] == "N"  # 'A4341' + 0xFF in the file
    assert row(df, "0526U")["comment_indicator"] == "NI"  # '0526U ' in the file
    f = fetched("opps_addendum_b", data, OPPS_B.name, "CY2025-final",
                origin=f"mirror:{OPPS_B.as_posix()}")
    a = fetched("opps_addendum_a", apcs, OPPS_A.name, "CY2025-final")
    result, checks = build_opps_rate({"opps_addendum_b": f, "opps_addendum_a": a})
    assert checks == {"spot_check": [], "conversion_factor": [], "addendum_a": [],
                      "mirror_copy": []}
    assert result.inputs == {"opps_addendum_b": 18_682, "opps_addendum_a": 994}
    assert any("6,635 of 6,635 codes with an APC and a rate are paid their APC's rate" in n
               for n in result.notes)
    assert table_problems(result.table, "opps_rate") == {
        "formats": [], "unique_key": [], "row_count": []}


@pytest.mark.parametrize(("rel", "release", "rows", "paid"), [
    (ASC_2026_04, "2026-04", 4_832, 4_334),
    (ASC_2025_01, "2025-01", 4_183, 3_740),
])
def test_real_addendum_aa(mirror: Path, rel: Path, release: str, rows: int, paid: int) -> None:
    data = (mirror / rel).read_bytes()
    spec = next(s for r in ("2026C", "2025D") for s in release_inputs(r)
                if s.key == "asc_addendum_aa" and s.release == release)
    assert hashlib.sha256(data).hexdigest() == spec.mirror_sha256
    f = fetched("asc_addendum_aa", data, "AA.csv", release, origin=f"mirror:{rel.as_posix()}")
    result, checks = build_asc_rate({"asc_addendum_aa": f})
    assert checks == {"spot_check": [], "conversion_factor": [], "quarter": [],
                      "mirror_copy": []}
    assert result.table.num_rows == rows
    assert result.table.num_rows - result.table.column("payment_rate").null_count == paid
    assert table_problems(result.table, "asc_rate") == {
        "formats": [], "unique_key": [], "row_count": []}


# --------------------------------------------------------------------------------------------
# the committed bundle, read through clarus_env
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ref():  # noqa: ANN201
    return open_reference(REPO / "bundles" / "reference" / "2026C")


def test_opps_accessor(ref) -> None:  # noqa: ANN001
    knee = ref.opps("29881")  # values read in the CY2025 final-rule Addendum B
    assert knee["hcpcs"] == "29881" and knee["release"] == "CY2025-final"
    assert (knee["status_indicator"], knee["apc"]) == ("J1", "5113")
    assert knee["payment_rate"] == Decimal("3244.61") and str(knee["payment_rate"]) == "3244.61"
    assert knee["relative_weight"] == Decimal("36.3872")
    assert knee["minimum_copay"] == Decimal("648.93") and knee["national_copay"] is None
    chole = ref.opps("47562")
    assert (chole["apc"], str(chole["payment_rate"])) == ("5361", "5834.36")
    assert chole["apc_title"] == "Level 1 Laparoscopy and Related Services"
    assert str(ref.opps("g0463")["payment_rate"]) == "128.87"  # case-insensitive
    assert ref.opps(" 71046 ")["status_indicator"] == "Q3"
    assert ref.opps("27447")["adjusted_copay"] == Decimal("1632.00")
    assert str(ref.opps("90371")["payment_rate"]) == "139.931"  # a drug's third decimal
    office = ref.opps("99213")  # paid under the MPFS, not OPPS (G0463 is the clinic visit)
    assert (office["status_indicator"], office["apc"], office["payment_rate"]) == ("B", None,
                                                                                    None)
    assert ref.opps("ZZZZZ") is None
    got = ref.opps("29881")
    got["payment_rate"] = Decimal("0")
    assert ref.opps("29881")["payment_rate"] == Decimal("3244.61")  # callers get copies


def test_asc_accessor(ref) -> None:  # noqa: ANN001
    knee = ref.asc("29881")  # values read in the April 2026 ASC Addendum AA
    assert knee == {
        "hcpcs": "29881", "description": "Arthrs kne srg mnisectmy m/l", "comment_flag": None,
        "multiple_procedure_discount": True, "payment_indicator": "A2",
        "payment_weight": Decimal("29.2047"), "payment_rate": Decimal("1644.87"),
        "release": "2026-04",
    }
    assert ref.asc("47562")["payment_rate"] == Decimal("3030.97")
    assert ref.asc("27447")["payment_indicator"] == "J8"
    assert ref.asc("g0105")["comment_flag"] == "**"
    assert ref.asc("0095T")["payment_rate"] is None  # packaged (N1)
    assert ref.asc("99213") is None and ref.asc("71046") is None  # not surgical procedures
    # the point of these tables: a facility rate is not a multiple of the physician fee
    assert ref.opps("47562")["payment_rate"] > ref.asc("47562")["payment_rate"] > \
        ref.fee("47562", "04412", "18", facility=True)


def test_committed_manifest_records_the_facility_inputs(ref) -> None:  # noqa: ANN001
    inputs = {i["key"]: i for i in ref.manifest["inputs"]}
    b = inputs["opps_addendum_b"]
    assert b["sha256"] == "0ab69ea333f42cbc847e38a00b90776e9252feeea7cde3a49684c5edbd6e46b6"
    assert (b["release"], b["rows"], b["used_for"]) == ("CY2025-final", 18_682, ["opps_rate"])
    assert inputs["opps_addendum_a"]["rows"] == 994
    assert ref.manifest["outputs"]["opps_rate"]["cross_checked_with"] == ["opps_addendum_a"]
    aa = inputs["asc_addendum_aa"]
    assert aa["sha256"] == "a93f291a6010a42da26638d3f5cad73e20516edacd477d056c7889a9a18a3b5a"
    assert (aa["release"], aa["rows"], aa["origin"]) == ("2026-04", 4_832,
                                                         "mirror:asc/2026/20260401/AA.csv")
    assert ref.manifest["outputs"]["opps_rate"]["rows"] == 18_682
    assert ref.manifest["outputs"]["asc_rate"]["rows"] == 4_832
    assert any("CY2026 OPPS" in g for g in ref.manifest["gaps"])


def test_cli_lookup_prints_facility_rates(capsys: pytest.CaptureFixture[str]) -> None:
    bundle = str(REPO / "bundles" / "reference" / "2026C")
    assert main(["reference", "lookup", "--bundle", bundle, "--opps", "29881", "--asc",
                 "29881"]) == 0
    out = capsys.readouterr().out
    assert ("OPPS CY2025-final 29881 (Knee arthroscopy/surgery): status indicator J1, APC 5113 "
            "(Level 3 Musculoskeletal Procedures), relative weight 36.3872, national unadjusted "
            "rate $3,244.61") in out
    assert "ASC 2026-04 29881 (Arthrs kne srg mnisectmy m/l): payment indicator A2, national " \
        "unadjusted rate $1,644.87" in out
    assert main(["reference", "lookup", "--bundle", bundle, "--asc", "99213"]) == 1
    assert "not an ASC covered surgical procedure" in capsys.readouterr().out
    assert main(["reference", "summary", "--bundle", bundle]) == 0
    summary = capsys.readouterr().out
    assert "opps_rate" in summary and "asc_rate" in summary


def test_lookups_do_not_import_heavy_packages() -> None:
    code = ("import sys, clarus_env; r = clarus_env.open_reference(); r.opps('29881'); "
            "r.asc('29881'); bad = [m for m in ('dagster', 'polars', 'pipelines') "
            "if m in sys.modules]; print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
