"""Fee schedule computation: exact cents, status filter, NA handling, OPPS cap, CMS parity."""

from __future__ import annotations

import time
from decimal import Decimal
from pathlib import Path

import polars as pl
import pytest

from pipelines.lib import fees, pfs
from pipelines.lib.conform import conform
from pipelines.lib.errors import SourceFormatError

KEY = ["hcpcs", "modifier", "mac", "locality"]
RVU25D = Path("mpfs-rvu/rvu25d")
RVU26C = Path("mpfs-rvu/rvu26c")


def _fx(fixtures: Path, name: str) -> bytes:
    return (fixtures / "pfs" / name).read_bytes()


@pytest.fixture(scope="module")
def fx(fixtures: Path) -> dict[str, pl.DataFrame]:
    return {
        "rvu25": pfs.parse_pprrvu(_fx(fixtures, "PPRRVU2025_fixture.csv"), "rvu25"),
        "rvu26": pfs.parse_pprrvu(_fx(fixtures, "PPRRVU2026_fixture_nonQPP.csv"), "rvu26"),
        "gpci": pfs.parse_gpci(_fx(fixtures, "GPCI_fixture.csv"), "gpci"),
        "opps": pfs.parse_oppscap(_fx(fixtures, "OPPSCAP_fixture.csv"), "opps"),
    }


def _at(df: pl.DataFrame, hcpcs: str, modifier: str, mac: str, locality: str) -> dict:
    hit = df.filter(
        (pl.col("hcpcs") == hcpcs) & (pl.col("modifier") == modifier)
        & (pl.col("mac") == mac) & (pl.col("locality") == locality)
    )
    assert hit.height == 1
    return hit.row(0, named=True)


def _check_against_scalar(joined: pl.DataFrame, cf: Decimal) -> None:
    for r in joined.iter_rows(named=True):
        g = (r["work_gpci"], r["pe_gpci"], r["mp_gpci"])
        nf = fees.fee(r["work_rvu"], r["nonfac_pe_rvu"], r["mp_rvu"], *g, cf)
        fac = fees.fee(r["work_rvu"], r["fac_pe_rvu"], r["mp_rvu"], *g, cf)
        assert (r["nonfac_amount"], r["fac_amount"]) == (nf, fac), r


# --------------------------------------------------------------------------------------------
# scalar oracle
# --------------------------------------------------------------------------------------------


def test_scalar_fee_domain_examples() -> None:
    # DOMAIN.md §5: 99213 (2026) in Houston at CF 33.4009.
    cf = Decimal("33.4009")
    assert fees.fee("1.30", "1.46", "0.09", "1.008", "0.993", "1.376", cf) == Decimal("96.33")
    assert fees.fee("1.30", "0.33", "0.09", "1.008", "0.993", "1.376", cf) == Decimal("58.85")


def test_scalar_fee_rounds_half_up() -> None:
    assert fees.fee(1, 0, 0, 1, 0, 0, "0.0050") == Decimal("0.01")
    assert fees.fee(1, 0, 0, 1, 0, 0, "0.0049") == Decimal("0.00")


# --------------------------------------------------------------------------------------------
# vectorised schedule on fixtures
# --------------------------------------------------------------------------------------------


def test_schedule_prices_only_a_r_t_for_every_locality(fx: dict[str, pl.DataFrame]) -> None:
    out = fees.compute_fee_schedule(fx["rvu26"], fx["gpci"], Decimal("33.4009"))
    paid = fx["rvu26"].filter(pl.col("status").is_in(["A", "R", "T"]))
    assert out.height == paid.height * fx["gpci"].height
    assert set(out["hcpcs"]) == set(paid["hcpcs"])
    assert not set(out["hcpcs"]) & {"0001F", "0633T", "A9270"}  # I, C, N
    assert {"94760", "D0140"} <= set(out["hcpcs"])  # T, R
    assert out.select(KEY).is_unique().all()
    assert not out["opps_capped"].any()
    conform(out, "fee_schedule")
    visit = _at(out, "99213", "", "04412", "18")
    assert (visit["nonfac_amount"], visit["fac_amount"]) == (Decimal("96.33"), Decimal("58.85"))


def test_schedule_matches_scalar_fee_on_every_row(fx: dict[str, pl.DataFrame]) -> None:
    cf = Decimal("32.3465")
    out = fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], cf)
    joined = out.join(fx["rvu25"], on=["hcpcs", "modifier"]).join(
        fx["gpci"], on=["mac", "locality"]
    )
    assert joined.height == out.height
    _check_against_scalar(joined, cf)


def test_schedule_half_up_tie_in_integer_arithmetic(fx: dict[str, pl.DataFrame]) -> None:
    rvu = fx["rvu25"].filter(pl.col("hcpcs") == "99213").with_columns(
        work_rvu=pl.lit(Decimal("1.00")), nonfac_pe_rvu=pl.lit(Decimal("0.00")),
        fac_pe_rvu=pl.lit(Decimal("0.00")), mp_rvu=pl.lit(Decimal("0.00")),
    )
    gpci = fx["gpci"].filter(pl.col("state") == "AL")  # work GPCI 1.000
    out = fees.compute_fee_schedule(rvu, gpci, Decimal("0.0050"))
    assert out["nonfac_amount"].to_list() == [Decimal("0.01")]


def test_na_settings_priced_by_default_or_null_on_request(fx: dict[str, pl.DataFrame]) -> None:
    cf = Decimal("32.3465")
    priced = fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], cf)
    stent = _at(priced, "50688", "", "04412", "18")  # non-facility NA, same PE RVU both sides
    assert stent["nonfac_amount"] == stent["fac_amount"] is not None
    nulled = fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], cf, null_na=True)
    stent = _at(nulled, "50688", "", "04412", "18")
    assert stent["nonfac_amount"] is None and stent["fac_amount"] is not None
    xray = _at(nulled, "71046", "", "04412", "18")  # facility NA
    assert xray["fac_amount"] is None and xray["nonfac_amount"] is not None
    conform(nulled, "fee_schedule")


def test_opps_cap_lowers_only_where_cheaper(fx: dict[str, pl.DataFrame]) -> None:
    cf = Decimal("32.3465")
    plain = fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], cf)
    capped = fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], cf, fx["opps"])
    assert capped.height == plain.height
    tc = _at(capped, "71046", "TC", "04412", "18")
    assert _at(plain, "71046", "TC", "04412", "18")["nonfac_amount"] > Decimal("21.50")
    assert (tc["nonfac_amount"], tc["fac_amount"], tc["opps_capped"]) == (
        Decimal("21.50"), Decimal("20.00"), True,
    )
    glob = _at(capped, "71046", "", "04412", "18")  # cap 99.99 is above the MPFS amount
    assert glob == _at(plain, "71046", "", "04412", "18")
    assert not glob["opps_capped"]
    assert capped["opps_capped"].sum() == 1
    changed = capped.join(plain, on=KEY).filter(
        (pl.col("nonfac_amount") != pl.col("nonfac_amount_right"))
        | (pl.col("fac_amount") != pl.col("fac_amount_right"))
    )
    assert changed.height == 1
    conform(capped, "fee_schedule")


def test_duplicate_opps_cap_key_rejected(fx: dict[str, pl.DataFrame]) -> None:
    doubled = pl.concat([fx["opps"], fx["opps"].head(1)])
    with pytest.raises(ValueError, match="opps_cap lists a key twice"):
        fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], Decimal("32.3465"), doubled)


def test_bad_conversion_factor() -> None:
    empty = pl.DataFrame()
    with pytest.raises(ValueError, match="conversion factor"):
        fees.compute_fee_schedule(empty, empty, Decimal("33.40091"))


# --------------------------------------------------------------------------------------------
# payment file parser
# --------------------------------------------------------------------------------------------


def test_payment_file_fixture_reproduced(fixtures: Path, fx: dict[str, pl.DataFrame]) -> None:
    pf = fees.parse_payment_file(_fx(fixtures, "PFREV_fixture.txt"), "pfrev.txt")
    assert pf.height == 40  # TRL lines skipped
    assert set(pf["modifier"]) == {"", "26", "TC"}
    assert pf["nonfac_amount"].dtype == pl.Decimal(12, 2)
    ours = fees.compute_fee_schedule(fx["rvu25"], fx["gpci"], Decimal("32.3465"))
    m = pf.join(ours, on=KEY, how="left", suffix="_ours")
    assert m["nonfac_amount_ours"].null_count() == 0
    assert (m["nonfac_amount"] == m["nonfac_amount_ours"]).all()
    assert (m["fac_amount"] == m["fac_amount_ours"]).all()


def test_payment_file_bad_input(fixtures: Path) -> None:
    data = _fx(fixtures, "PFREV_fixture.txt")
    bad = data.replace(b'"0000070.75"', b'"00000A0.75"', 1)
    with pytest.raises(SourceFormatError) as err:
        fees.parse_payment_file(bad, "pf.txt")
    assert (err.value.row, err.value.column, err.value.found) == (1, "nonfac_amount", "00000A0.75")
    bad = data.replace(b',"9","0000000.00","0000000.00"\r\n', b',"9","0000000.00"\r\n', 1)
    with pytest.raises(SourceFormatError, match="16 quoted") as err:
        fees.parse_payment_file(bad, "pf.txt")
    assert err.value.row == 1
    with pytest.raises(SourceFormatError, match="pf.txt: file is empty"):
        fees.parse_payment_file(b"", "pf.txt")


# --------------------------------------------------------------------------------------------
# real CMS files
# --------------------------------------------------------------------------------------------


def _load(mirror: Path, rel: Path, parser) -> pl.DataFrame:
    return parser((mirror / rel).read_bytes(), rel.name)


def test_rvu25d_reproduces_every_pfrev25d_record(mirror: Path) -> None:
    """THE parity test: our amounts equal CMS's published national payment file to the cent."""
    rvu = _load(mirror, RVU25D / "PPRRVU2025_Oct.csv", pfs.parse_pprrvu)
    gpci = _load(mirror, RVU25D / "GPCI2025.csv", pfs.parse_gpci)
    cap = _load(mirror, RVU25D / "OPPSCAP_Oct.csv", pfs.parse_oppscap)
    pf = _load(mirror, Path("mpfs-payment/pfrev25d/PFREV4.txt"), fees.parse_payment_file)
    assert pf.height == 1_526
    for opps in (cap, None):  # the 4 revised codes are not OPPS-capped: same either way
        ours = fees.compute_fee_schedule(rvu, gpci, Decimal("32.3465"), opps)
        m = pf.join(ours, on=KEY, how="left", suffix="_ours")
        assert m.height == 1_526
        assert m["nonfac_amount_ours"].null_count() == 0
        wrong = m.filter(
            (pl.col("nonfac_amount") != pl.col("nonfac_amount_ours"))
            | (pl.col("fac_amount") != pl.col("fac_amount_ours"))
        )
        assert wrong.height == 0, wrong.head(5)


def test_rvu25d_opps_cap_applies_to_every_listed_paid_code(mirror: Path) -> None:
    rvu = _load(mirror, RVU25D / "PPRRVU2025_Oct.csv", pfs.parse_pprrvu)
    gpci = _load(mirror, RVU25D / "GPCI2025.csv", pfs.parse_gpci)
    cap = _load(mirror, RVU25D / "OPPSCAP_Oct.csv", pfs.parse_oppscap)
    out = fees.compute_fee_schedule(rvu, gpci, Decimal("32.3465"), cap)
    listed = cap.filter(pl.col("status") == "A").join(out, on=KEY)
    assert listed.height > 6_000
    assert listed["opps_capped"].all()
    assert (listed["nonfac_amount"] == listed["nonfac_price"]).all()
    assert out["opps_capped"].sum() == listed.height


def test_rvu26c_schedule_size_speed_and_domain_examples(mirror: Path) -> None:
    rvu = _load(mirror, RVU26C / "PPRRVU2026_Jul_nonQPP.csv", pfs.parse_pprrvu)
    gpci = _load(mirror, RVU26C / "GPCI2026.csv", pfs.parse_gpci)
    t0 = time.perf_counter()
    out = fees.compute_fee_schedule(rvu, gpci, Decimal("33.4009"))
    elapsed = time.perf_counter() - t0
    assert out.height == (9_408 + 1_082 + 8) * 109 == 1_144_282
    assert elapsed < 2.0, elapsed
    expect = {  # DOMAIN.md §5
        ("99213", "", "04412", "18"): ("96.33", "58.85"),  # Houston
        ("99213", "", "13202", "01"): ("107.63", "63.78"),  # Manhattan
        ("99213", "", "10112", "00"): ("87.79", "54.77"),  # Alabama
        ("71046", "", "04412", "18"): ("33.20", None),
        ("71046", "26", "04412", "18"): ("10.18", None),
        ("71046", "TC", "04412", "18"): ("23.01", None),
    }
    for (h, mod, mac, loc), (nf, fac) in expect.items():
        row = _at(out, h, mod, mac, loc)
        assert row["nonfac_amount"] == Decimal(nf), (h, mod, mac, loc)
        if fac is not None:
            assert row["fac_amount"] == Decimal(fac)
    # QP conversion factor example from DOMAIN.md.
    qp = fees.compute_fee_schedule(rvu.filter(pl.col("hcpcs") == "99213"), gpci, Decimal("33.5675"))
    assert _at(qp, "99213", "", "04412", "18")["nonfac_amount"] == Decimal("96.81")


def test_rvu26c_vectorised_equals_scalar_on_sample(mirror: Path) -> None:
    rvu = _load(mirror, RVU26C / "PPRRVU2026_Jul_nonQPP.csv", pfs.parse_pprrvu)
    gpci = _load(mirror, RVU26C / "GPCI2026.csv", pfs.parse_gpci)
    cf = Decimal("33.4009")
    out = fees.compute_fee_schedule(rvu, gpci, cf).sample(3_000, seed=7)
    joined = out.join(rvu, on=["hcpcs", "modifier"]).join(gpci, on=["mac", "locality"])
    assert joined.height == 3_000
    _check_against_scalar(joined, cf)


def test_rvu26c_schedule_conforms(mirror: Path) -> None:
    rvu = _load(mirror, RVU26C / "PPRRVU2026_Jul_nonQPP.csv", pfs.parse_pprrvu)
    gpci = _load(mirror, RVU26C / "GPCI2026.csv", pfs.parse_gpci)
    table = conform(fees.compute_fee_schedule(rvu, gpci, Decimal("33.4009")), "fee_schedule")
    assert table.num_rows == 1_144_282
