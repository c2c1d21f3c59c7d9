"""MPFS payment amounts per HCPCS × modifier × locality, reproducing CMS to the cent.

``fee = round_half_up((work RVU × work GPCI + PE RVU × PE GPCI + MP RVU × MP GPCI) × CF, 2)``
[42 CFR 414.20; RVU file documentation]. CMS's national payment file (PFALL/PFREV) is this
product rounded once, half up, from the exact decimal inputs, so the computation is done in
scaled integers (RVU in hundredths, GPCI in thousandths, CF in ten-thousandths): a float
product is off by a cent on a few thousand of the ~1.1M amounts.

``parse_payment_file`` reads CMS's published amounts so tests can check the computation
against them record by record.
"""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import polars as pl

from .errors import SourceFormatError

__all__ = ["PAID_STATUSES", "compute_fee_schedule", "fee", "parse_payment_file"]

#: Status codes whose RVUs are used for payment (RVU documentation, Attachment A). C is
#: contractor-priced (no national amount); the rest are bundled, excluded or not valid.
PAID_STATUSES: tuple[str, ...] = ("A", "R", "T")

_RVU_SCALE, _GPCI_SCALE, _CF_SCALE = 2, 3, 4
# RVU×GPCI×CF is in units of 10^-(2+3+4) dollars; cents are 10^-2, so divide by 10^7.
_TO_CENTS = 10 ** (_RVU_SCALE + _GPCI_SCALE + _CF_SCALE - 2)
_KEY = ["hcpcs", "modifier", "mac", "locality"]


def fee(
    work_rvu: Decimal | str | int,
    pe_rvu: Decimal | str | int,
    mp_rvu: Decimal | str | int,
    work_gpci: Decimal | str | int,
    pe_gpci: Decimal | str | int,
    mp_gpci: Decimal | str | int,
    cf: Decimal | str | int,
) -> Decimal:
    """One fee with Decimal arithmetic: an independent oracle for the vectorised version."""
    d = [Decimal(str(v)) for v in (work_rvu, pe_rvu, mp_rvu, work_gpci, pe_gpci, mp_gpci, cf)]
    w, pe, mp, wg, pg, mg, c = d
    return ((w * wg + pe * pg + mp * mg) * c).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)


def _scaled(col: str, scale: int) -> pl.Expr:
    """Exact integer ``value × 10^scale`` from a Decimal (or decimal-string) column."""
    return (pl.col(col).cast(pl.Decimal(38, scale)) * (10**scale)).cast(pl.Int64).alias(col)


def _round_cents(expr: pl.Expr) -> pl.Expr:
    """ROUND_HALF_UP (away from zero on a tie) of an integer in 10^-9 dollars, to cents."""
    mag = (expr.abs() + _TO_CENTS // 2) // _TO_CENTS
    return pl.when(expr < 0).then(-mag).otherwise(mag)


def _money(cents: pl.Expr, name: str) -> pl.Expr:
    return (cents.cast(pl.Decimal(38, 2)) / 100).cast(pl.Decimal(12, 2)).alias(name)


def compute_fee_schedule(
    rvu: pl.DataFrame,
    gpci: pl.DataFrame,
    conversion_factor: Decimal,
    opps_cap: pl.DataFrame | None = None,
    *,
    null_na: bool = False,
) -> pl.DataFrame:
    """Build the ``fee_schedule`` table: every paid HCPCS × modifier × every locality.

    Only status A, R and T rows are priced (the RVU documentation: "Only RVUs associated
    with status codes of A, R, or T are used for Medicare payment"); C codes are priced by
    each MAC and have no national amount, all other statuses are not paid under the MPFS.

    NA settings are priced by default. CMS marks a setting NA when the service is rarely or
    never done there, but the RVU file then repeats the other setting's PE RVU (true for
    every A/R/T row in RVU25D and RVU26C) and the national payment file prints the amount
    computed from it (e.g. 50688 in PFREV25D: non-facility NA, both amounts $90.92 in
    01112/05), because a claim for that setting is paid at that rate. Leaving the amount in
    keeps this table identical to CMS's published amounts; ``null_na=True`` blanks NA
    settings instead (the NA flags stay in ``hcpcs_rvu`` either way).

    With ``opps_cap`` (parsed OPPSCAP file) each setting's amount becomes the lower of the
    MPFS amount and the OPPS price for that HCPCS × modifier × MAC × locality, which is how
    the payment file's amounts are "capped at the level of the OPPS payment amount"
    (DRA 2005 §5102(b)); ``opps_capped`` is True where the cap lowered either amount.
    """
    cf = Decimal(str(conversion_factor))
    cf_int = cf.scaleb(_CF_SCALE)
    if cf_int != cf_int.to_integral_value() or cf <= 0:
        raise ValueError(f"conversion factor {cf} is not a positive amount with <= 4 decimals")
    cf_i = int(cf_int)

    paid = rvu.filter(pl.col("status").is_in(PAID_STATUSES)).select(
        "hcpcs",
        "modifier",
        _scaled("work_rvu", _RVU_SCALE),
        _scaled("nonfac_pe_rvu", _RVU_SCALE),
        _scaled("fac_pe_rvu", _RVU_SCALE),
        _scaled("mp_rvu", _RVU_SCALE),
        pl.col("nonfac_na").cast(pl.Boolean),
        pl.col("fac_na").cast(pl.Boolean),
    )
    geo = gpci.select(
        "mac",
        "locality",
        _scaled("work_gpci", _GPCI_SCALE),
        _scaled("pe_gpci", _GPCI_SCALE),
        _scaled("mp_gpci", _GPCI_SCALE),
    )
    base = pl.col("work_rvu") * pl.col("work_gpci") + pl.col("mp_rvu") * pl.col("mp_gpci")
    nonfac = _round_cents((base + pl.col("nonfac_pe_rvu") * pl.col("pe_gpci")) * cf_i)
    fac = _round_cents((base + pl.col("fac_pe_rvu") * pl.col("pe_gpci")) * cf_i)
    if null_na:
        nonfac = pl.when(pl.col("nonfac_na")).then(None).otherwise(nonfac)
        fac = pl.when(pl.col("fac_na")).then(None).otherwise(fac)

    out = (
        paid.lazy()
        .join(geo.lazy(), how="cross")
        .select("hcpcs", "modifier", "mac", "locality", nonfac.alias("nf"), fac.alias("f"))
    )
    if opps_cap is None:
        out = out.with_columns(pl.lit(False).alias("opps_capped"))
    else:
        dup = opps_cap.filter(pl.struct(_KEY).is_duplicated())
        if dup.height:
            raise ValueError(f"opps_cap lists a key twice: {dup.select(_KEY).row(0)}")
        cap = opps_cap.lazy().select(
            "hcpcs",
            "modifier",
            "mac",
            "locality",
            _scaled("nonfac_price", 2).alias("cap_nf"),
            _scaled("fac_price", 2).alias("cap_f"),
        )
        out = out.join(cap, on=_KEY, how="left")
        lower_nf = pl.col("cap_nf").is_not_null() & (pl.col("cap_nf") < pl.col("nf"))
        lower_f = pl.col("cap_f").is_not_null() & (pl.col("cap_f") < pl.col("f"))
        out = out.with_columns(
            pl.when(lower_nf).then(pl.col("cap_nf")).otherwise(pl.col("nf")).alias("nf"),
            pl.when(lower_f).then(pl.col("cap_f")).otherwise(pl.col("f")).alias("f"),
            (lower_nf | lower_f).fill_null(False).alias("opps_capped"),
        )
    return out.select(
        "hcpcs",
        "modifier",
        "mac",
        "locality",
        _money(pl.col("nf"), "nonfac_amount"),
        _money(pl.col("f"), "fac_amount"),
        "opps_capped",
    ).collect()


# ---------------------------------------------------------------------------------------------
# National payment amount file (PFALLyy / PFREVyyX)
# ---------------------------------------------------------------------------------------------

_PF_FIELDS = [
    "year", "mac", "locality", "hcpcs", "modifier", "nonfac_amount", "fac_amount", "_filler",
    "pctc", "status", "mult_surg", "therapy_nonfac_amount", "therapy_fac_amount",
    "opps_ind", "opps_nonfac_amount", "opps_fac_amount",
]
_PF_MONEY = [
    "nonfac_amount", "fac_amount", "therapy_nonfac_amount", "therapy_fac_amount",
    "opps_nonfac_amount", "opps_fac_amount",
]
_PF_AMOUNT = r"^\d{1,7}\.\d{2}$"


def parse_payment_file(data: bytes, source: str) -> pl.DataFrame:
    """Parse the quoted, comma-separated national payment file (layout PFyyPD).

    Kept as published: codes stripped (a blank modifier is ``''``), amounts as
    Decimal(12,2), one row per record (PFREV files repeat records; nothing is deduplicated).
    ``TRL`` copyright trailers are skipped. Vectorised because PFALL has ~1M records.
    """
    if not data or not data.strip():
        raise SourceFormatError(source, "file is empty", expected="payment file records")
    text = data.decode("cp1252", errors="replace")
    recs = (
        pl.DataFrame({"rec": text.splitlines()}, schema={"rec": pl.String})
        .with_row_index("_line", offset=1)
        .filter(~pl.col("rec").str.starts_with('"TRL') & (pl.col("rec").str.strip_chars() != ""))
    )
    if recs.height == 0:
        raise SourceFormatError(source, "no payment records", expected="quoted data records")
    shape = rf'^"[^"]*"(,"[^"]*"){{{len(_PF_FIELDS) - 1}}}$'
    bad = recs.filter(~pl.col("rec").str.contains(shape))
    if bad.height:
        raise SourceFormatError(
            source, "record is not the quoted payment-file layout", row=int(bad["_line"][0]),
            expected=f"{len(_PF_FIELDS)} quoted, comma-separated fields", found=bad["rec"][0],
        )
    parts = pl.col("rec").str.slice(1, pl.col("rec").str.len_chars() - 2).str.split('","')
    df = recs.select(
        "_line",
        *(parts.list.get(i).str.strip_chars().alias(f) for i, f in enumerate(_PF_FIELDS)),
    )
    for f in _PF_MONEY:
        bad = df.filter(~pl.col(f).str.contains(_PF_AMOUNT))
        if bad.height:
            raise SourceFormatError(
                source, "amount is not a number", row=int(bad["_line"][0]), column=f,
                expected="9(7).99, e.g. 0000077.78", found=bad[f][0],
            )
    return df.select(
        *(
            pl.col(f).cast(pl.Decimal(12, 2)) if f in _PF_MONEY else pl.col(f)
            for f in _PF_FIELDS
            if f != "_filler"
        )
    )
