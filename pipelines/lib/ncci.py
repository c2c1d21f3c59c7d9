"""Parsers for the NCCI practitioner PtP edit table and the practitioner MUE table.

The PtP table has millions of rows per quarter, so its parsers stay inside polars' native CSV
reader and vectorised expressions; the per-row Python loop only runs on the error path, to point
the data engineer at the exact line that broke. Every bad input becomes a ``SourceFormatError``
naming the file, the 1-based line as an editor shows it, the column and what was expected.
"""

from __future__ import annotations

import csv
import gzip
import io
import math
import random
import re

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from .conform import key_order, repeated_rows, take_columns, typed
from .errors import SourceFormatError

CODE_RE = r"^(?:\d{4}[0-9A-Z]|[A-Z]\d{4})$"
CODE_EXPECTED = "a 5-character HCPCS/CPT code such as 12345, 0001A or G0439"

# The official TXT stacks its header over lines 3-6; these are the per-column texts joined top
# to bottom with single spaces.
PTP_OFFICIAL_HEADER: tuple[str, ...] = (
    "Column 1",
    "Column 2",
    "*=in existence prior to 1996",
    "Effective Date",
    "Deletion Date *=no data",
    "Modifier 0=not allowed 1=allowed 9=not applicable",
    "PTP Edit Rationale",
)
PTP_OFFICIAL_HEADER_LINES = 6  # lines 1-2 are the AMA notice and the title

# Column header -> output column, for the derived TSV (one header line, Effective Date dropped by
# the R import that produced it; the Q3 export also dropped the pre-1996 flag).
_PTP_DERIVED_COLUMNS: dict[str, str] = {
    "Column 1": "column_1",
    "Column 2": "column_2",
    "*=in existence prior to 1996": "prior_1996",
    "Effective Date": "effective_date",
    "Deletion Date *=no data": "deletion_date",
    "Modifier 0=not allowed 1=allowed 9=not applicable": "modifier_indicator",
    "PTP Edit Rationale": "rationale",
}
_PTP_DERIVED_REQUIRED = (
    "Column 1", "Column 2", "Deletion Date *=no data",
    "Modifier 0=not allowed 1=allowed 9=not applicable", "PTP Edit Rationale",
)

PTP_COLUMNS = (
    "column_1", "column_2", "effective_date", "deletion_date", "prior_1996",
    "modifier_indicator", "rationale",
)

# Finding (2024 Q2 and Q3 complete tables): (column_1, column_2, deletion_date) is NOT unique:
# 88108/88162, deleted 19960101, modifier 9, appears twice with two different rationales. With
# the effective date missing from those files the bundle key (c1, c2, effective, deletion) cannot
# tell them apart either, and a modifier-9 edit is normally effective on its deletion date, so
# the official file very likely repeats that key too. Adding the rationale makes every row of
# both quarters unique, so that is the key merge_ptp_parts enforces.
PTP_UNIQUE_KEY: tuple[str, ...] = (
    "column_1", "column_2", "effective_date", "deletion_date", "rationale",
)

# The 12 rationale strings CMS uses (as spelled in the 2024 complete table).
PTP_RATIONALES: tuple[str, ...] = (
    "Anesthesia service included in surgical procedure",
    "CPT Manual or CMS manual coding instruction",
    "CPT Separate procedure definition",
    "Gender-specific procedures",
    "HCPCS/CPT procedure code definition",
    "Laboratory panel",
    "Misuse of Column Two code with Column One code",
    "More extensive procedure",
    "Mutually exclusive procedures",
    "Sequential procedure",
    "Standard preparation/monitoring services for anesthesia",
    "Standards of medical/surgical practice",
)

MUE_OFFICIAL_HEADER: tuple[str, ...] = (
    "HCPCS/CPT Code",
    "Practitioner Services MUE Values",
    "MUE Adjudication Indicator",
    "MUE Rationale",
)

_GZIP_MAGIC = b"\x1f\x8b"


# ---------------------------------------------------------------------------------------------
# shared helpers


def _maybe_gunzip(data: bytes, source: str) -> bytes:
    if data[:2] != _GZIP_MAGIC:
        return data
    try:
        return gzip.decompress(data)
    except (OSError, EOFError) as exc:
        raise SourceFormatError(source, f"gzip data is corrupt ({exc})") from None


def _as_utf8(data: bytes) -> bytes:
    """Return ``data`` as UTF-8 because polars' reader only takes UTF-8.

    CMS ships Windows files; when the bytes are not valid UTF-8 they are read as cp1252 (falling
    back to Latin-1, which accepts every byte) rather than failing on a stray ``®``.
    """
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if data.isascii():  # no decoded copy of a 165 MB part just to learn it is valid
        return data
    try:
        data.decode("utf-8")
        return data
    except UnicodeDecodeError:
        return _decode_legacy(data).encode("utf-8")


def _decode_legacy(data: bytes) -> str:
    try:
        return data.decode("cp1252")
    except UnicodeDecodeError:
        return data.decode("latin-1")


def _decode_text(data: bytes) -> str:
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return _decode_legacy(data)


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def _ymd(col: str) -> pl.Expr:
    return pl.col(col).str.to_date("%Y%m%d", strict=False)


def _bad_ymd(col: str) -> pl.Expr:
    """True where ``col`` is not an 8-digit valid calendar date (null counts as bad)."""
    return (pl.col(col).str.len_bytes() != 8).fill_null(True) | _ymd(col).is_null()


def _raise_first_bad(
    df: pl.DataFrame,
    checks: list[tuple[str, str, pl.Expr, str]],
    source: str,
    first_line: int,
) -> None:
    """Raise for the earliest row failing any check; a no-op when every row passes.

    ``checks`` holds (frame column, column name for the message, bad-row mask, expected).
    Row ``i`` of ``df`` is line ``first_line + i`` of the file.
    """
    if df.height == 0:
        return
    firsts = df.select(
        [mask.fill_null(True).arg_true().first().alias(f"c{i}") for i, (_, _, mask, _) in
         enumerate(checks)]
    ).row(0)
    hits = [(idx, i) for i, idx in enumerate(firsts) if idx is not None]
    if not hits:
        return
    idx, i = min(hits)
    col, label, _, expected = checks[i]
    value = df[col][idx]
    raise SourceFormatError(
        source, "bad value", row=first_line + idx, column=label, expected=expected,
        found="" if value is None else str(value),
    )


def _ragged_line(body: bytes, n_fields: int, first_line: int) -> tuple[int, int] | None:
    """Find the first line with too many tab-separated fields (error path only)."""
    for i, line in enumerate(body.split(b"\n")):
        n = line.count(b"\t") + 1
        if n > n_fields:
            return first_line + i, n
    return None


def _read_tsv(
    body: bytes, columns: list[str], source: str, first_line: int, has_header: bool
) -> pl.DataFrame:
    try:
        return pl.read_csv(
            body,
            separator="\t",
            has_header=has_header,
            schema=dict.fromkeys(columns, pl.String) if not has_header else None,
            infer_schema=False,
            quote_char=None,
            raise_if_empty=False,
        )
    except pl.exceptions.PolarsError as exc:
        where = _ragged_line(body, len(columns), first_line - (1 if has_header else 0))
        if where is not None:
            line, n = where
            raise SourceFormatError(
                source, "too many tab-separated fields", row=line,
                expected=f"{len(columns)} fields", found=f"{n} fields",
            ) from None
        raise SourceFormatError(source, f"cannot be read as tab-separated text ({exc})") from None


def _drop_trailing_blank(df: pl.DataFrame, first_col: str) -> pl.DataFrame:
    """Drop blank lines at the end of a file (they read as all-null rows)."""
    n = df.height
    col = df[first_col]
    while n and col[n - 1] is None and all(df[c][n - 1] is None for c in df.columns):
        n -= 1
    return df.head(n) if n != df.height else df


def _ptp_checks(
    has_effective: bool, has_prior: bool
) -> list[tuple[str, str, pl.Expr, str]]:
    checks: list[tuple[str, str, pl.Expr, str]] = [
        ("column_1", "Column 1", ~pl.col("column_1").str.contains(CODE_RE), CODE_EXPECTED),
        ("column_2", "Column 2", ~pl.col("column_2").str.contains(CODE_RE), CODE_EXPECTED),
    ]
    if has_prior:
        checks.append((
            "prior_1996", "*=in existence prior to 1996",
            pl.col("prior_1996").is_not_null() & (pl.col("prior_1996") != "*"),
            "'*' or empty",
        ))
    if has_effective:
        checks.append((
            "effective_date", "Effective Date", _bad_ymd("effective_date"),
            "a date as YYYYMMDD",
        ))
    checks += [
        (
            "deletion_date", "Deletion Date *=no data",
            (pl.col("deletion_date") != "*").fill_null(True) & _bad_ymd("deletion_date"),
            "a date as YYYYMMDD or '*' (no deletion)",
        ),
        (
            "modifier_indicator", "Modifier 0=not allowed 1=allowed 9=not applicable",
            ~pl.col("modifier_indicator").is_in(["0", "1", "9"]), "0, 1 or 9",
        ),
        (
            "rationale", "PTP Edit Rationale", pl.col("rationale").str.len_bytes() == 0,
            "a PTP edit rationale",
        ),
    ]
    return checks


def _ptp_output(df: pl.DataFrame, has_effective: bool, has_prior: bool) -> pl.DataFrame:
    dele = pl.col("deletion_date")
    return df.select(
        pl.col("column_1"),
        pl.col("column_2"),
        (_ymd("effective_date") if has_effective else pl.lit(None, pl.Date))
        .alias("effective_date"),
        pl.when(dele != "*").then(_ymd("deletion_date")).alias("deletion_date"),
        (pl.col("prior_1996").is_not_null() if has_prior else pl.lit(None, pl.Boolean))
        .alias("prior_1996"),
        pl.col("modifier_indicator"),
        pl.col("rationale"),
    )


# ---------------------------------------------------------------------------------------------
# PtP: official TXT


def _official_header(lines: list[bytes]) -> list[str]:
    """Join the stacked header cells of lines 3-6 column by column."""
    rows = [_decode_text(x).rstrip("\r").split("\t") for x in lines[2:PTP_OFFICIAL_HEADER_LINES]]
    width = max(len(r) for r in rows)
    return [_norm(" ".join(r[c] if c < len(r) else "" for r in rows)) for c in range(width)]


def _check_official_header(lines: list[bytes], source: str) -> None:
    expected = " | ".join(PTP_OFFICIAL_HEADER)
    if len(lines) < PTP_OFFICIAL_HEADER_LINES:
        raise SourceFormatError(
            source, f"file ends inside the header (has {len(lines)} lines)", row=len(lines) or 1,
            expected=f"{PTP_OFFICIAL_HEADER_LINES} header lines stacking {expected}",
        )
    found = _official_header(lines)
    while found and found[-1] == "":
        found.pop()
    if tuple(found) == PTP_OFFICIAL_HEADER:
        return
    hint = ""
    for i, line in enumerate(lines[:PTP_OFFICIAL_HEADER_LINES]):
        if _decode_text(line).startswith("Column 1\t") and i != 2:
            hint = f" (the header starts on line {i + 1}, not line 3)"
    bad = next(
        (i for i, want in enumerate(PTP_OFFICIAL_HEADER) if i >= len(found) or found[i] != want),
        len(PTP_OFFICIAL_HEADER),
    )
    column = PTP_OFFICIAL_HEADER[bad] if bad < len(PTP_OFFICIAL_HEADER) else f"#{bad + 1}"
    raise SourceFormatError(
        source, f"unexpected PtP header on lines 3-6{hint}", row=3, column=column,
        expected=expected, found=" | ".join(found),
    )


def parse_ptp_official(data: bytes, source: str) -> pl.DataFrame:
    """Parse one part (f1..f4) of the official CMS practitioner PtP TXT into ``ncci_ptp`` rows.

    The header is checked cell by cell because CMS has reshuffled its stacked header before; a
    silent column swap would turn deletion dates into effective dates. A file whose last line is
    cut short (the published excerpt is) keeps that row with whatever rationale text it has.
    """
    data = _maybe_gunzip(data, source)
    if not data.strip():
        raise SourceFormatError(source, "file is empty", expected="the CMS PtP TXT layout")
    data = _as_utf8(data)
    parts = data.split(b"\n", PTP_OFFICIAL_HEADER_LINES)
    _check_official_header(parts, source)
    body = parts[PTP_OFFICIAL_HEADER_LINES] if len(parts) > PTP_OFFICIAL_HEADER_LINES else b""
    first_line = PTP_OFFICIAL_HEADER_LINES + 1
    names = ["column_1", "column_2", "prior_1996", "effective_date", "deletion_date",
             "modifier_indicator", "rationale"]
    df = _drop_trailing_blank(_read_tsv(body, names, source, first_line, False), "column_1")
    if df.height == 0:
        raise SourceFormatError(
            source, "no edit rows after the header", row=first_line,
            expected="tab-separated PtP rows",
        )
    if not body.endswith(b"\n"):
        # The last line was cut mid-record: keep it, an absent rationale is just empty.
        df = df.with_columns(
            pl.when(pl.int_range(pl.len()) == pl.len() - 1)
            .then(pl.col("rationale").fill_null(""))
            .otherwise(pl.col("rationale"))
            .alias("rationale")
        )
        checks = _ptp_checks(has_effective=True, has_prior=True)
        checks[-1] = (
            "rationale", "PTP Edit Rationale",
            pl.col("rationale").is_null()
            | ((pl.col("rationale") == "") & (pl.int_range(pl.len()) < pl.len() - 1)),
            "a PTP edit rationale",
        )
    else:
        checks = _ptp_checks(has_effective=True, has_prior=True)
    _raise_first_bad(df, checks, source, first_line)
    return _ptp_output(df, has_effective=True, has_prior=True)


# ---------------------------------------------------------------------------------------------
# PtP: derived complete table


def parse_ptp_derived(data: bytes, source: str) -> pl.DataFrame:
    """Parse the complete PtP table exported from the northstar pins (gzip or plain TSV).

    It is the only complete PtP table we hold, but it lacks the Effective Date column (null) and,
    for Q3, the pre-1996 flag (null, not False: absent is not the same as "not pre-1996").
    """
    data = _maybe_gunzip(data, source)
    if not data.strip():
        raise SourceFormatError(source, "file is empty", expected="a header line and PtP rows")
    data = _as_utf8(data)
    nl = data.find(b"\n")
    header_line = data[: nl if nl >= 0 else len(data)].decode("utf-8").rstrip("\r")
    header = [_norm(h) for h in header_line.split("\t")]
    expected = ", ".join(_PTP_DERIVED_REQUIRED) + " (optional: *=in existence prior to 1996)"
    for i, name in enumerate(header):
        if name not in _PTP_DERIVED_COLUMNS:
            raise SourceFormatError(
                source, f"unknown column #{i + 1} in the header", row=1, column=name,
                expected=expected, found=header_line,
            )
    missing = [c for c in _PTP_DERIVED_REQUIRED if c not in header]
    if missing:
        raise SourceFormatError(
            source, "header lacks a required column", row=1, column=missing[0],
            expected=expected, found=header_line,
        )
    if len(set(header)) != len(header):
        raise SourceFormatError(
            source, "header repeats a column", row=1, expected=expected, found=header_line,
        )
    if nl < 0:
        raise SourceFormatError(source, "no rows after the header", row=2, expected="PtP rows")
    names = [_PTP_DERIVED_COLUMNS[h] for h in header]
    df = _read_tsv(data[nl + 1:], names, source, 2, False)
    df = _drop_trailing_blank(df, "column_1")
    has_eff = "effective_date" in names
    has_prior = "prior_1996" in names
    _raise_first_bad(df, _ptp_checks(has_eff, has_prior), source, 2)
    return _ptp_output(df, has_eff, has_prior)


# ---------------------------------------------------------------------------------------------
# PtP: merging parts


def merge_ptp_parts(parts: list[pl.DataFrame | pa.Table],
                    source: str = "PtP parts f1-f4") -> pa.Table:
    """Concatenate the quarterly parts f1..f4 into the ``ncci_ptp`` table, sorted by its key,
    and refuse a row that appears in two places. ``parts`` is consumed (emptied), so each
    part's memory goes as soon as its rows are in the merged table.

    A repeated edit means a part was supplied twice or two parts overlap, which would double-count
    edits downstream. The key is ``PTP_UNIQUE_KEY`` (see the finding above it). Each part is
    typed on its own (pass them as ``conform.typed`` tables to free each parsed frame early);
    parts that arrive in key order, as CMS publishes them, are checked in one linear pass and
    never sorted, and a repeat is found among neighbours of the sorted table, so no per-row
    hash table or Python object is built for a 10M-row quarter.
    """
    if not parts:
        raise SourceFormatError(source, "no PtP parts to merge", expected="1 to 4 parsed parts")
    tables = []
    for i, f in enumerate(parts):
        cols = f.columns if isinstance(f, pl.DataFrame) else f.column_names
        if tuple(cols) != PTP_COLUMNS:
            raise SourceFormatError(
                source, f"part #{i + 1} has other columns", expected=", ".join(PTP_COLUMNS),
                found=", ".join(cols),
            )
        tables.append(typed(f, "ncci_ptp", f"{source} part #{i + 1}"))
    parts.clear()  # consumed: the only references to the parts are now in ``tables``
    sizes = [t.num_rows for t in tables]
    out = pa.concat_tables(tables)
    del tables
    order = key_order(out, PTP_UNIQUE_KEY)
    schema, columns = out.schema, list(out.columns)
    del out
    out = take_columns(columns, order, schema)
    repeats = repeated_rows(out, PTP_UNIQUE_KEY)
    if len(repeats):
        # every sorted position in a run of equal keys, mapped back to its input row
        runs = pc.indices_nonzero(pc.is_in(pa.array(range(out.num_rows)), pa.concat_arrays(
            [repeats, pc.subtract(repeats, 1)])))
        original = order.take(runs).to_pylist()
        keys = out.select(list(PTP_UNIQUE_KEY)).take(runs).to_pylist()
        first = original.index(min(original))
        row = keys[first]
        same = [o for o, k in zip(original, keys, strict=True) if k == row]
        where, start = [], 0
        for j, size in enumerate(sizes):
            where += [f"part #{j + 1} row {h - start + 1}" for h in sorted(same)
                      if start <= h < start + size]
            start += size
        raise SourceFormatError(
            source, "the same PtP edit appears more than once (" + ", ".join(where) + ")",
            column=", ".join(PTP_UNIQUE_KEY), expected="each edit once",
            found=" | ".join("" if row[k] is None else str(row[k]) for k in PTP_UNIQUE_KEY),
        )
    return out


# ---------------------------------------------------------------------------------------------
# PtP: synthetic official file for benchmarks


def _mix(i: pl.Expr, salt: int) -> pl.Expr:
    """A 32-bit integer hash in plain arithmetic, so the output is identical on every version."""
    m32 = 1 << 32
    x = ((i + salt) * 2654435761) % m32
    x = x.xor(x // 65536)
    x = (x * 2246822519) % m32
    x = x.xor(x // 8192)
    x = (x * 3266489917) % m32
    return x.xor(x // 65536)


def _random_codes(rng: random.Random, n: int) -> list[str]:
    codes: set[str] = set()
    while len(codes) < n:
        kind = rng.random()
        if kind < 0.80:
            codes.add(f"{rng.randint(10004, 99499):05d}")
        elif kind < 0.88:
            codes.add(f"0{rng.randint(1, 999):03d}{rng.choice('TUAM')}")
        else:
            codes.add(f"{rng.choice('GCJQ')}{rng.randint(1, 9999):04d}")
    return sorted(codes)


_OFFICIAL_PREAMBLE = (
    "CPT only copyright 2025 American Medical Association.  All rights reserved.\t\t\t\t\t\t\r\n"
    "Column1/Column2 Edits\t\t\t\t\t\t\r\n"
    "Column 1\tColumn 2\t*=in existence\tEffective\tDeletion\tModifier\tPTP Edit Rationale\r\n"
    "\t\tprior to 1996\tDate\tDate\t0=not allowed\t\r\n"
    "\t\t\t\t*=no data\t1=allowed\t\r\n"
    "\t\t\t\t\t9=not applicable\t\r\n"
).encode("ascii")


def generate_ptp_official(n_rows: int, seed: int) -> bytes:
    """Build a deterministic synthetic PtP TXT in the exact official layout.

    The real complete quarterly TXT is not available to us, so benchmarks and scale tests of
    ``parse_ptp_official`` run on this instead: sorted by column 1 then column 2, CRLF, the
    stacked 6-line header, plausible codes and dates, and the 12 official rationales.
    """
    if n_rows < 0:
        raise ValueError("n_rows must be >= 0")
    rng = random.Random(seed)
    n1 = max(1, min(12_800, n_rows // 200 or 1))
    col1 = _random_codes(rng, n1)
    # every column-1 code's rows need distinct column-2 codes: a pair listed twice with the
    # same dates is a duplicate key the pipeline rightly refuses (it broke the 4x benchmark)
    group = -(-max(n_rows, 1) // n1) + 1
    col2 = _random_codes(rng, max(4_000, group))
    m2 = len(col2)
    step = next(s for s in range(7_919, 7_919 + m2 + 1) if math.gcd(s, m2) == 1)
    salt = rng.randrange(1 << 30)
    i = pl.int_range(n_rows, dtype=pl.UInt64)
    i1 = (i * n1 // max(n_rows, 1))
    # position of the row within its column-1 group (groups are contiguous runs of i)
    j = i - ((i1 * max(n_rows, 1) + n1 - 1) // n1)
    year = 1996 + _mix(i, salt + 3) % 31
    month = 1 + 3 * (_mix(i, salt + 4) % 4)
    eff = year * 10000 + month * 100 + 1
    mod_draw = _mix(i, salt + 5) % 100
    modifier = pl.when(mod_draw < 29).then(pl.lit("0")).when(mod_draw < 96).then(pl.lit("1"))
    modifier = modifier.otherwise(pl.lit("9"))
    del_year = pl.min_horizontal(year + 1 + _mix(i, salt + 6) % 6, pl.lit(2026, pl.UInt64))
    deleted = (_mix(i, salt + 7) % 100) < 34
    deletion = (
        pl.when(mod_draw >= 96).then(eff.cast(pl.String))
        .when(deleted).then((del_year * 10000 + 1231).cast(pl.String))
        .otherwise(pl.lit("*"))
    )
    prior = pl.when((year == 1996) & (_mix(i, salt + 8) % 8 == 0)).then(pl.lit("*"))
    frame = pl.select(
        i1=i1.cast(pl.UInt32),
        i2=((_mix(i1, salt + 1) + j * step) % m2).cast(pl.UInt32),
        prior_1996=prior.otherwise(pl.lit("")),
        effective_date=eff.cast(pl.String),
        deletion_date=deletion,
        modifier_indicator=modifier,
        r=(_mix(i, salt + 2) % len(PTP_RATIONALES)).cast(pl.UInt32),
    ).sort("i1", "i2", maintain_order=True)
    out = pl.DataFrame({
        "column_1": pl.Series(col1, dtype=pl.String).gather(frame["i1"]),
        "column_2": pl.Series(col2, dtype=pl.String).gather(frame["i2"]),
        "prior_1996": frame["prior_1996"],
        "effective_date": frame["effective_date"],
        "deletion_date": frame["deletion_date"],
        "modifier_indicator": frame["modifier_indicator"],
        "rationale": pl.Series(PTP_RATIONALES, dtype=pl.String).gather(frame["r"]),
    })
    buf = io.BytesIO()
    buf.write(_OFFICIAL_PREAMBLE)
    out.write_csv(
        buf, separator="\t", include_header=False, line_terminator="\r\n", quote_style="never",
    )
    return buf.getvalue()


# ---------------------------------------------------------------------------------------------
# MUE


_MAI_RE = re.compile(r"^\s*([123])(?:\s|$)")
_UNITS_RE = re.compile(r"^\d{1,6}$")
_CODE_RE = re.compile(CODE_RE)


def _mue_frame(rows: list[tuple[str, int, str, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows,
        schema={"hcpcs": pl.String, "mue_units": pl.Int32, "mai": pl.String,
                "rationale": pl.String},
        orient="row",
    )


def _check_unique_codes(df: pl.DataFrame, lines: list[int], source: str, label: str) -> None:
    dup = df.select(pl.col("hcpcs").is_duplicated().arg_true()).to_series().to_list()
    if dup:
        code = df["hcpcs"][dup[0]]
        where = [lines[i] for i in dup if df["hcpcs"][i] == code]
        raise SourceFormatError(
            source, f"code listed more than once (lines {', '.join(map(str, where))})",
            row=where[-1], column=label, expected="one MUE per code", found=code,
        )


def parse_mue_official(data: bytes, source: str) -> pl.DataFrame:
    """Parse the official practitioner MUE CSV (AMA notice record, then a 2-line header).

    CMS writes it in Latin-1/cp1252 with quoted multi-line cells, so it goes through the csv
    module; at ~15k rows that costs a few milliseconds. The MAI keeps only its leading digit
    because the label text after it has changed wording between releases.
    """
    if not data.strip():
        raise SourceFormatError(source, "file is empty", expected="the CMS MUE CSV layout")
    text = _decode_text(data)
    reader = csv.reader(io.StringIO(text, newline=""))
    expected_header = ", ".join(MUE_OFFICIAL_HEADER)
    header_line = None
    start = 1
    try:
        for n, record in enumerate(reader):
            if n >= 10:
                break
            first = re.sub(r"\s+", "", record[0]).lower() if record else ""
            if first.startswith("hcpcs"):
                cells = [_norm(c).replace("/ ", "/") for c in record]
                while cells and cells[-1] == "":
                    cells.pop()
                for i, want in enumerate(MUE_OFFICIAL_HEADER):
                    got = cells[i] if i < len(cells) else ""
                    if got.lower() != want.lower():
                        raise SourceFormatError(
                            source, "unexpected MUE header", row=start, column=want,
                            expected=expected_header, found=", ".join(cells),
                        )
                header_line = start
                break
            start = reader.line_num + 1
        if header_line is None:
            raise SourceFormatError(
                source, "MUE header record not found in the first 10 records", row=start,
                expected=expected_header,
            )
        rows: list[tuple[str, int, str, str]] = []
        lines: list[int] = []
        for record in reader:
            line = reader.line_num
            cells = [c.strip() for c in record]
            if not any(cells):
                continue
            cells += [""] * (4 - len(cells))
            code, units, mai, rationale = cells[:4]
            if not _CODE_RE.match(code):
                raise SourceFormatError(source, "bad code", row=line, column="HCPCS/CPT Code",
                                        expected=CODE_EXPECTED, found=code)
            if not _UNITS_RE.match(units):
                raise SourceFormatError(
                    source, "bad MUE value", row=line, column=MUE_OFFICIAL_HEADER[1],
                    expected="a whole number of units", found=units,
                )
            m = _MAI_RE.match(mai)
            if not m:
                raise SourceFormatError(
                    source, "bad MUE adjudication indicator", row=line,
                    column=MUE_OFFICIAL_HEADER[2],
                    expected="1, 2 or 3 followed by its label", found=mai,
                )
            if not rationale:
                raise SourceFormatError(source, "empty MUE rationale", row=line,
                                        column=MUE_OFFICIAL_HEADER[3],
                                        expected="a rationale text")
            rows.append((code, int(units), m.group(1), rationale))
            lines.append(line)
    except csv.Error as exc:
        raise SourceFormatError(source, f"malformed CSV ({exc})", row=reader.line_num) from None
    df = _mue_frame(rows)
    if df.height == 0:
        raise SourceFormatError(source, "no MUE rows after the header", row=header_line + 1,
                                expected="MUE rows")
    _check_unique_codes(df, lines, source, MUE_OFFICIAL_HEADER[0])
    return df


_MUE_DERIVED_ALIASES: dict[str, tuple[str, ...]] = {
    "hcpcs": ("hcpcs_code", "hcpcs"),
    "mue_units": ("mue_units", "mue_uos"),
    "mai": ("mue_mai",),
    "rationale": ("mue_rationale",),
}
_MUE_SERVICE_ALIASES = ("mue_service", "mue_service_type")


def parse_mue_derived(data: bytes, source: str) -> pl.DataFrame:
    """Parse the northstar-derived MUE TSV (plain or gzip), keeping practitioner rows only.

    The derived files are the only complete MUE tables we hold; the all-services variant mixes
    in outpatient-hospital and DME rows that must not leak into the practitioner table.
    """
    data = _maybe_gunzip(data, source)
    if not data.strip():
        raise SourceFormatError(source, "file is empty", expected="a header line and MUE rows")
    data = _as_utf8(data)
    try:
        df = pl.read_csv(data, separator="\t", infer_schema=False, quote_char=None)
    except pl.exceptions.PolarsError as exc:
        raise SourceFormatError(source, f"cannot be read as tab-separated text ({exc})") from None
    header = [c.strip() for c in df.columns]
    df.columns = header
    picked: dict[str, str] = {}
    for out, names in _MUE_DERIVED_ALIASES.items():
        hit = next((n for n in names if n in header), None)
        if hit is None:
            raise SourceFormatError(
                source, "header lacks a required column", row=1, column=names[0],
                expected=", ".join(n[0] for n in _MUE_DERIVED_ALIASES.values()),
                found=", ".join(header),
            )
        picked[out] = hit
    service = next((n for n in _MUE_SERVICE_ALIASES if n in header), None)
    df = df.with_row_index("_line", offset=2)
    df = df.filter(~pl.all_horizontal(pl.col(picked.values()).is_null()))
    if service is not None:
        df = df.filter(pl.col(service).str.strip_chars() == "Practitioner")
    df = df.select("_line", *[pl.col(v).str.strip_chars().alias(k) for k, v in picked.items()])
    if df.height == 0:
        raise SourceFormatError(source, "no practitioner MUE rows", row=2, expected="MUE rows")
    checks = [
        ("hcpcs", picked["hcpcs"], ~pl.col("hcpcs").str.contains(CODE_RE), CODE_EXPECTED),
        ("mue_units", picked["mue_units"], ~pl.col("mue_units").str.contains(r"^\d{1,6}$"),
         "a whole number of units"),
        ("mai", picked["mai"], ~pl.col("mai").str.contains(r"^[123](?:\s|$)"),
         "1, 2 or 3"),
        ("rationale", picked["rationale"], pl.col("rationale").str.len_bytes() == 0,
         "a rationale text"),
    ]
    if df.height:
        firsts = df.select(
            [m.fill_null(True).arg_true().first().alias(f"c{i}")
             for i, (_, _, m, _) in enumerate(checks)]
        ).row(0)
        hits = [(idx, i) for i, idx in enumerate(firsts) if idx is not None]
        if hits:
            idx, i = min(hits)
            col, label, _, expected = checks[i]
            value = df[col][idx]
            raise SourceFormatError(
                source, "bad value", row=df["_line"][idx], column=label, expected=expected,
                found="" if value is None else value,
            )
    out = df.select(
        "hcpcs",
        pl.col("mue_units").cast(pl.Int32),
        pl.col("mai").str.slice(0, 1),
        "rationale",
    )
    _check_unique_codes(out, df["_line"].to_list(), source, picked["hcpcs"])
    return out
