"""The reference bundle's tables: names, Arrow schemas, sort keys and primary keys.

This module is the contract between parsers (which return polars frames), the bundle writer
(which casts to these schemas, so a type drift fails loudly) and ``clarus_env``'s loader.
Money and relative values are decimals, not floats: a fee must reproduce CMS to the cent.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

RVU = pa.decimal128(9, 2)
GPCI = pa.decimal128(6, 3)
CF = pa.decimal128(9, 4)
MONEY = pa.decimal128(12, 2)
RATE3 = pa.decimal128(12, 3)  # OPPS drug/biological rates carry a third decimal ($139.931)
WEIGHT = pa.decimal128(9, 4)
PCT = pa.decimal128(6, 3)


@dataclass(frozen=True)
class TableSpec:
    name: str
    schema: pa.Schema
    key: tuple[str, ...]  # unique key, also the sort order of the written file
    min_rows: int  # row-count sanity range for a complete release
    max_rows: int
    description: str


def _s(*fields: tuple[str, pa.DataType, bool]) -> pa.Schema:
    return pa.schema([pa.field(n, t, nullable=nullable) for n, t, nullable in fields])


S, N = False, True  # not nullable / nullable

TABLES: dict[str, TableSpec] = {}


def _add(spec: TableSpec) -> None:
    TABLES[spec.name] = spec


_add(TableSpec(
    "hcpcs_rvu",
    _s(
        ("hcpcs", pa.string(), S), ("modifier", pa.string(), S), ("description", pa.string(), S),
        ("status", pa.string(), S), ("work_rvu", RVU, S), ("nonfac_pe_rvu", RVU, S),
        ("nonfac_na", pa.bool_(), S), ("fac_pe_rvu", RVU, S), ("fac_na", pa.bool_(), S),
        ("mp_rvu", RVU, S), ("nonfac_total_rvu", RVU, S), ("fac_total_rvu", RVU, S),
        ("pctc", pa.string(), S), ("global_days", pa.string(), S),
        ("mult_proc", pa.string(), S), ("bilat_surg", pa.string(), S),
        ("asst_surg", pa.string(), S), ("co_surg", pa.string(), S), ("team_surg", pa.string(), S),
        ("pricing_ind", pa.string(), N), ("endo_base", pa.string(), N),
        ("conversion_factor", CF, S), ("phys_supervision", pa.string(), N),
        ("diag_imaging_family", pa.string(), N),
        ("opps_nonfac_pe_rvu", RVU, N), ("opps_fac_pe_rvu", RVU, N), ("opps_mp_rvu", RVU, N),
    ),
    ("hcpcs", "modifier"), 15_000, 25_000,
    "PPRRVU: RVUs and payment policy indicators per HCPCS × modifier ('' = global).",
))
_add(TableSpec(
    "gpci",
    _s(
        ("mac", pa.string(), S), ("state", pa.string(), S), ("locality", pa.string(), S),
        ("locality_name", pa.string(), S), ("work_gpci", GPCI, S), ("pe_gpci", GPCI, S),
        ("mp_gpci", GPCI, S),
    ),
    ("mac", "locality"), 100, 120,
    "Addendum E GPCIs per Medicare locality (MAC 5 digits, locality 2 digits).",
))
_add(TableSpec(
    "locality_county",
    _s(
        ("mac", pa.string(), S), ("locality", pa.string(), S), ("state", pa.string(), S),
        ("fee_schedule_area", pa.string(), S), ("counties", pa.string(), S),
    ),
    ("mac", "locality", "counties"), 100, 130,
    "LOCCO crosswalk: which counties each locality covers.",
))
_add(TableSpec(
    "anes_cf",
    _s(
        ("mac", pa.string(), S), ("locality", pa.string(), S), ("locality_name", pa.string(), S),
        ("anes_cf", MONEY, S),
    ),
    ("mac", "locality"), 100, 120,
    "Locality-adjusted anesthesia conversion factors.",
))
_add(TableSpec(
    "opps_cap",
    _s(
        ("hcpcs", pa.string(), S), ("modifier", pa.string(), S), ("status", pa.string(), S),
        ("mac", pa.string(), S), ("locality", pa.string(), S),
        ("fac_price", MONEY, S), ("nonfac_price", MONEY, S),
    ),
    ("hcpcs", "modifier", "mac", "locality"), 1_000, 40_000,
    "OPPS-capped imaging payment amounts (DRA 2005 §5102(b)).",
))
_add(TableSpec(
    "fee_schedule",
    _s(
        ("hcpcs", pa.string(), S), ("modifier", pa.string(), S),
        ("mac", pa.string(), S), ("locality", pa.string(), S),
        ("nonfac_amount", MONEY, N), ("fac_amount", MONEY, N), ("opps_capped", pa.bool_(), S),
    ),
    ("hcpcs", "modifier", "mac", "locality"), 500_000, 2_500_000,
    "MPFS amount per HCPCS × modifier × locality (status A/R/T). An NA setting is still "
    "priced, as in CMS's payment file; hcpcs_rvu's nonfac_na/fac_na flag it.",
))
_add(TableSpec(
    "ncci_ptp",
    _s(
        ("column_1", pa.string(), S), ("column_2", pa.string(), S),
        ("effective_date", pa.date32(), N), ("deletion_date", pa.date32(), N),
        ("prior_1996", pa.bool_(), N), ("modifier_indicator", pa.string(), S),
        ("rationale", pa.string(), S),
    ),
    # upper bound: a sanity range, not a forecast (4x today's 2.5M rows must still publish)
    ("column_1", "column_2", "effective_date", "deletion_date", "rationale"), 1_000_000, 15_000_000,
    "NCCI practitioner PtP edits; deletion_date null = active ('*').",
))
_add(TableSpec(
    "mue",
    _s(
        ("hcpcs", pa.string(), S), ("mue_units", pa.int32(), S), ("mai", pa.string(), S),
        ("rationale", pa.string(), S),
    ),
    ("hcpcs",), 10_000, 30_000,
    "Practitioner MUE values; MAI 1 = line edit, 2 = DOS policy edit, 3 = DOS clinical edit.",
))
_add(TableSpec(
    "hcpcs_level2",
    _s(
        ("code", pa.string(), S), ("kind", pa.string(), S), ("long_description", pa.string(), S),
        ("short_description", pa.string(), S), ("pricing_ind", pa.string(), N),
        ("coverage_code", pa.string(), N), ("betos", pa.string(), N),
        ("type_of_service", pa.string(), N), ("add_date", pa.date32(), N),
        ("action_effective_date", pa.date32(), N), ("termination_date", pa.date32(), N),
        ("action_code", pa.string(), N),
    ),
    ("code", "kind"), 5_000, 15_000,
    "HCPCS Level II codes (kind 'code') and modifiers (kind 'modifier').",
))
_add(TableSpec(
    "icd10cm",
    _s(
        ("code", pa.string(), S), ("kind", pa.string(), S), ("description", pa.string(), S),
        ("parent", pa.string(), N), ("chapter", pa.string(), S), ("block", pa.string(), N),
        ("category", pa.string(), N), ("billable", pa.bool_(), S), ("depth", pa.int8(), S),
        ("includes", pa.string(), N), ("excludes1", pa.string(), N), ("excludes2", pa.string(), N),
        ("inclusion_terms", pa.string(), N), ("use_additional_code", pa.string(), N),
        ("code_first", pa.string(), N), ("code_also", pa.string(), N), ("notes", pa.string(), N),
        ("seventh_characters", pa.string(), N),
    ),
    ("code",), 90_000, 110_000,
    "ICD-10-CM tabular list as a tree: chapter > block > category > subcategory > code.",
))
_INDEX_COMMON = (
    ("seq", pa.int32(), S), ("letter", pa.string(), S), ("level", pa.int8(), S),
    ("title", pa.string(), S), ("nemod", pa.string(), N), ("path", pa.string(), S),
    ("see", pa.string(), N), ("see_also", pa.string(), N),
)
_add(TableSpec(
    "icd10cm_eindex",
    _s(*_INDEX_COMMON, ("code", pa.string(), N), ("see_category", pa.string(), N)),
    ("seq",), 6_000, 12_000,
    "ICD-10-CM External Cause of Injuries Index: one row per main term or subterm, in index "
    "order, with its path, code (a trailing '-' = prefix) and cross-references.",
))
_add(TableSpec(
    "icd10cm_neoplasm",
    _s(*_INDEX_COMMON, *((c, pa.string(), N) for c in (
        "malignant_primary", "malignant_secondary", "ca_in_situ", "benign",
        "uncertain_behavior", "unspecified_behavior"))),
    ("seq",), 1_500, 3_000,
    "ICD-10-CM Neoplasm Table: one row per site, a code per behaviour column.",
))
_add(TableSpec(
    "icd10cm_drug",
    _s(*_INDEX_COMMON, *((c, pa.string(), N) for c in (
        "poisoning_accidental", "poisoning_intentional_self_harm", "poisoning_assault",
        "poisoning_undetermined", "adverse_effect", "underdosing"))),
    ("seq",), 6_000, 10_000,
    "ICD-10-CM Table of Drugs and Chemicals: one row per substance, a code (5-6 characters, "
    "7th to be added) per intent column.",
))
_add(TableSpec(
    "carc",
    _s(
        ("code", pa.string(), S), ("description", pa.string(), S),
        ("start_date", pa.date32(), N), ("stop_date", pa.date32(), N),
        ("last_modified", pa.date32(), N), ("notes", pa.string(), N),
    ),
    ("code",), 300, 600,
    "X12 Claim Adjustment Reason Codes.",
))
_add(TableSpec(
    "carc_group",
    _s(("code", pa.string(), S), ("name", pa.string(), S), ("description", pa.string(), S)),
    ("code",), 4, 10,
    "X12 claim adjustment group codes (CO, OA, PI, PR, CR).",
))
_add(TableSpec(
    "rarc",
    _s(
        ("code", pa.string(), S), ("description", pa.string(), S),
        ("start_date", pa.date32(), N), ("stop_date", pa.date32(), N),
        ("last_modified", pa.date32(), N), ("notes", pa.string(), N),
    ),
    ("code",), 900, 2_000,
    "X12 Remittance Advice Remark Codes.",
))
_add(TableSpec(
    "plan_templates",
    _s(
        ("plan_id", pa.string(), S), ("market", pa.string(), S), ("metal_level", pa.string(), S),
        ("coverage", pa.string(), S), ("deductible", MONEY, S), ("coinsurance_pct", pa.int8(), S),
        ("copay_primary_care", MONEY, S), ("copay_specialist", MONEY, S),
        ("copay_urgent_care", MONEY, S), ("copay_emergency", MONEY, S),
        ("copays_count_toward_deductible", pa.bool_(), S), ("oop_max", MONEY, S),
        ("actuarial_value_pct", pa.int8(), S), ("source", pa.string(), S),
    ),
    ("plan_id",), 4, 50,
    "Cost-sharing templates for ACA 2026 metal levels (documented facts with their source).",
))
_add(TableSpec(
    "opps_rate",
    _s(
        ("hcpcs", pa.string(), S), ("description", pa.string(), S),
        ("comment_indicator", pa.string(), N), ("status_indicator", pa.string(), S),
        ("apc", pa.string(), N), ("apc_title", pa.string(), N),
        ("relative_weight", WEIGHT, N), ("payment_rate", RATE3, N),
        ("national_copay", MONEY, N), ("minimum_copay", MONEY, N),
        ("ira_coinsurance_pct", PCT, N), ("adjusted_copay", MONEY, N),
        ("pass_through_expires", pa.bool_(), S), ("note", pa.string(), N),
    ),
    ("hcpcs",), 15_000, 25_000,
    "OPPS Addendum B: hospital outpatient (HOPD) status indicator, APC (titled from Addendum "
    "A) and national unadjusted payment rate per HCPCS code (rate null = not separately paid "
    "under OPPS).",
))
_add(TableSpec(
    "asc_rate",
    _s(
        ("hcpcs", pa.string(), S), ("description", pa.string(), S),
        ("comment_flag", pa.string(), N), ("multiple_procedure_discount", pa.bool_(), S),
        ("payment_indicator", pa.string(), S), ("payment_weight", WEIGHT, N),
        ("payment_rate", MONEY, N),
    ),
    ("hcpcs",), 3_500, 7_000,
    "ASC Addendum AA: ambulatory surgical center payment indicator and national unadjusted "
    "payment rate per covered surgical procedure (rate null = packaged, N1).",
))
