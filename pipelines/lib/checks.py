"""Quality checks a table must pass before it may be published in a bundle.

Each function returns a list of human-readable problems (empty = passed), so the same code
backs Dagster's blocking asset checks and the plain unit tests.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from .conform import strictly_increasing
from .errors import SourceFormatError
from .tables import TABLES

HCPCS_RE = r"^[0-9A-Z]{4}[0-9A-Z]$"
# FY2026 added category QA0 (genetic disorders), the first with a letter in position 2.
ICD10CM_CODE_RE = r"^[A-Z]([0-9][0-9A-Z]|A[0-9])(\.[0-9A-Z]{1,4})?$"
# the indexes also name code prefixes, written with a trailing dash (C34.9-, V86.3-)
ICD10CM_INDEX_CODE_RE = r"^[A-Z][0-9A-Z]{2}(\.[0-9A-Z]{0,4})?-?$"
MAX_SHOWN = 5


def check_schema(table: pa.Table, name: str) -> list[str]:
    spec = TABLES[name]
    problems = []
    have = {f.name: f.type for f in table.schema}
    for f in spec.schema:
        if f.name not in have:
            problems.append(f"{name}: missing column {f.name!r}")
        elif have[f.name] != f.type:
            problems.append(f"{name}.{f.name}: type {have[f.name]}, expected {f.type}")
    return problems


def check_pattern(table: pa.Table, name: str, column: str, pattern: str,
                  where: pa.Array | None = None) -> list[str]:
    col = table.column(column)
    if where is not None:
        col = pc.filter(col, where)
    ok = pc.match_substring_regex(col, pattern)
    bad = pc.filter(col, pc.invert(pc.fill_null(ok, False)))
    if len(bad) == 0:
        return []
    shown = ", ".join(repr(v) for v in bad[:MAX_SHOWN].to_pylist())
    return [f"{name}.{column}: {len(bad)} values do not match /{pattern}/, e.g. {shown}"]


def check_unique(table: pa.Table, name: str) -> list[str]:
    key = list(TABLES[name].key)
    if strictly_increasing(table, key):
        # conform() leaves every table in key order, so one pass over neighbouring rows
        # proves uniqueness; the hash grouping (1 GB+ for a 10M-row NCCI quarter) is only
        # needed to name the duplicates of a table that is not strictly increasing
        return []
    counts = table.group_by(key, use_threads=False).aggregate([([], "count_all")])
    dup = counts.filter(pc.greater(counts.column("count_all"), 1))
    if dup.num_rows == 0:
        return []
    shown = dup.slice(0, MAX_SHOWN).select(key).to_pylist()
    return [f"{name}: {dup.num_rows} duplicate keys {tuple(key)}, e.g. {shown}"]


def check_rows(table: pa.Table, name: str) -> list[str]:
    spec = TABLES[name]
    if spec.min_rows <= table.num_rows <= spec.max_rows:
        return []
    return [f"{name}: {table.num_rows:,} rows, expected {spec.min_rows:,}..{spec.max_rows:,}"]


FORMAT_RULES: dict[str, list[tuple[str, str]]] = {
    "hcpcs_rvu": [("hcpcs", HCPCS_RE)],
    "fee_schedule": [("hcpcs", HCPCS_RE), ("mac", r"^\d{5}$"), ("locality", r"^\d{2}$")],
    "gpci": [("mac", r"^\d{5}$"), ("locality", r"^\d{2}$")],
    "locality_county": [("mac", r"^\d{5}$"), ("locality", r"^\d{2}$")],
    "anes_cf": [("mac", r"^\d{5}$"), ("locality", r"^\d{2}$")],
    "opps_cap": [("hcpcs", HCPCS_RE), ("mac", r"^\d{5}$"), ("locality", r"^\d{2}$")],
    "ncci_ptp": [("column_1", HCPCS_RE), ("column_2", HCPCS_RE),
                 ("modifier_indicator", r"^[019]$")],
    "mue": [("hcpcs", HCPCS_RE), ("mai", r"^[123]$")],
    "hcpcs_level2": [],
    "opps_rate": [("hcpcs", HCPCS_RE), ("status_indicator", r"^[A-Z][0-9]?$"),
                  ("apc", r"^[0-9]{4}$")],
    "asc_rate": [("hcpcs", HCPCS_RE), ("payment_indicator", r"^[A-Z][0-9]$")],
    "carc": [("code", r"^([0-9]{1,3}|[A-Z][0-9]{1,2})$")],
    "rarc": [("code", r"^(M|MA|N)[0-9]{1,4}$")],
    "icd10cm_eindex": [("code", ICD10CM_INDEX_CODE_RE)],
    "icd10cm_neoplasm": [(c, ICD10CM_INDEX_CODE_RE) for c in (
        "malignant_primary", "malignant_secondary", "ca_in_situ", "benign",
        "uncertain_behavior", "unspecified_behavior")],
    "icd10cm_drug": [(c, r"^T[0-9]{2}\.[0-9A-Z]{2,3}$") for c in (
        "poisoning_accidental", "poisoning_intentional_self_harm", "poisoning_assault",
        "poisoning_undetermined", "adverse_effect", "underdosing")],
}


def check_formats(table: pa.Table, name: str) -> list[str]:
    problems = []
    for column, pattern in FORMAT_RULES.get(name, []):
        col = table.column(column)  # a nullable column's empty cells are not format errors
        where = pc.is_valid(col) if col.null_count else None
        problems += check_pattern(table, name, column, pattern, where=where)
    if name == "icd10cm":
        problems += check_pattern(table, name, "code", ICD10CM_CODE_RE,
                                  where=table.column("billable"))
    if name == "hcpcs_level2":
        is_code = pc.equal(table.column("kind"), "code")
        problems += check_pattern(table, name, "code", r"^[A-Z][0-9]{4}$", where=is_code)
        problems += check_pattern(table, name, "code", r"^[0-9A-Z]{2}$", where=pc.invert(is_code))
    return problems


def table_problems(table: pa.Table, name: str, *, row_ranges: bool = True) -> dict[str, list[str]]:
    """Every check of one table, each evaluated on its own, by check name.

    The schema is not a check (conform() already cast the table to it, so it could not
    fail); a table that still does not match is a programming error and raised as such.
    Without ``row_ranges`` (fixture builds) a table must still have rows.
    """
    schema = check_schema(table, name)
    if schema:
        raise SourceFormatError(name, "table does not have its declared schema: "
                                + "; ".join(schema))
    return {
        "formats": check_formats(table, name),
        "unique_key": check_unique(table, name),
        "row_count": check_rows(table, name) if row_ranges else (
            [] if table.num_rows else [f"{name}: 0 rows"]),
    }


def spot_check_rows(table: pa.Table, name: str, known: dict[str, dict[str, object]], *,
                    complete: bool) -> list[str]:
    """Compare a few rows with values read by hand from the raw release file.

    ``known`` maps a key (the table's single-column key) to the expected column values. A
    known code absent from the table is a problem only for a ``complete`` release (fixture
    builds hold a handful of rows); a present code with another value always is.
    """
    key = TABLES[name].key[0]
    rows = {r[key]: r for r in table.filter(pc.is_in(
        table.column(key), pa.array(sorted(known), type=pa.string()))).to_pylist()}
    problems = []
    for code in sorted(known):
        row = rows.get(code)
        if row is None:
            if complete:
                problems.append(f"{name}: {code} missing")
            continue
        for column, want in known[code].items():
            if row[column] != want:
                problems.append(f"{name}: {code} {column} is {row[column]!r}, the release file "
                                f"says {want!r}")
    return problems


def conversion_factor_check(table: pa.Table, name: str, rate: str, weight: str,
                            expected: object | None, *, min_share: float = 0.95
                            ) -> tuple[str, list[str]]:
    """Payment rate / weight must be one conversion factor on (nearly) every weighted row.

    A shifted column or a mis-scaled decimal breaks the ratio long before a spot check
    notices. Returns (note, problems); the factor is the most common ratio rounded to 3
    places, and ``expected`` (when known for the release) must equal it.
    """
    from collections import Counter
    from decimal import Decimal

    pairs = [(r, w) for r, w in zip(table.column(rate).to_pylist(),
                                    table.column(weight).to_pylist(), strict=True)
             if r is not None and w]
    if not pairs:
        return f"{name}: no weighted rows", ([f"{name}: no row has both {rate} and {weight}"]
                                            if table.num_rows > 50 else [])
    ratios = [(r / w).quantize(Decimal("0.001")) for r, w in pairs]
    cf, _ = Counter(ratios).most_common(1)[0]
    near = sum(1 for x in ratios if abs(x - cf) <= Decimal("0.005"))
    note = (f"{rate} / {weight} is within 0.005 of {cf} (the conversion factor) on "
            f"{near:,} of {len(ratios):,} weighted rows")
    problems = []
    if near < min_share * len(ratios):
        problems.append(f"{name}: only {near:,} of {len(ratios):,} weighted rows give the "
                        f"conversion factor {cf} (columns shifted or mis-scaled?)")
    if expected is not None and len(ratios) >= 50 and cf != expected:
        problems.append(f"{name}: conversion factor {cf}, the release's published factor is "
                        f"{expected}")
    return note, problems
