"""Where every input of a reference release comes from: official URLs, mirror paths, formats.

A *reference release* (the bundle id, named for its fee-schedule release, e.g. ``2026C``) pins
one release of every source. Sources do not move in lockstep — the complete NCCI table we
hold is 2024 Q3, ICD-10-CM is the April 2026 update — so each input states its own release
and the manifest records it. A quarterly refresh is a new entry here plus one partition
materialization.

URLs are the official ones. Where CMS renames zips between releases, ``page`` + ``link``
say how to find the current one on the stable release page.
"""

from __future__ import annotations

from dataclasses import dataclass

CMS = "https://www.cms.gov"
PFS_PAGE = CMS + "/medicare/payment/fee-schedules/physician/pfs-relative-value-files/"
NCCI = CMS + "/medicare/coding-billing/national-correct-coding-initiative-ncci-edits/"
PTP_PAGE = NCCI + "medicare-ncci-procedure-procedure-ptp-edits"
MUE_PAGE = NCCI + "medicare-ncci-medically-unlikely-edits"
HCPCS_PAGE = CMS + "/medicare/coding-billing/healthcare-common-procedure-system/quarterly-update"
ICD_PAGE = CMS + "/medicare/coding-billing/icd-10-codes"
PAYMENT_PAGE = CMS + "/medicare/payment/fee-schedules/physician/national-payment-amount-file"
OPPS_RULE_PAGE = (CMS + "/medicare/payment/prospective-payment-systems/hospital-outpatient/"
                  "regulations-notices/cms-1809-fc")
ASC_PAGE = (CMS + "/medicare/payment/prospective-payment-systems/ambulatory-surgical-center-asc/"
            "asc-payment-rates-addenda")


@dataclass(frozen=True)
class InputSpec:
    """One file a reference release reads."""

    key: str  # unique within the release, e.g. "pprrvu", "ptp_f1"
    source: str  # the asset group that owns it
    release: str  # the source's own release id
    fmt: str  # parser to use (see pipelines/defs/parsers.py)
    url: str  # official URL of the file or of the zip holding it
    member: str | None = None  # regex (case-insensitive) of the zip member
    page: str | None = None  # release page to scrape for the current link
    link: str | None = None  # regex of that link
    mirror: tuple[str, ...] = ()  # candidate paths under the mirror directory
    mirror_excerpt: bool = False  # the mirror copy is only an excerpt of the release
    derived: bool = False  # the mirror copy is a derived export, not CMS's own layout
    mirror_only: bool = False  # there is nothing to download (derived copies)
    optional: bool = False  # the build goes on without it, and the manifest says so
    missing_columns: tuple[str, ...] = ()
    note: str = ""
    # sha256 of the mirror copy, for mirror files whose base name is not unique (pins.json is
    # keyed by base name; the ASC mirror renamed every quarter to AA.csv). Checked by the asset.
    mirror_sha256: str | None = None


def _pfs(release: str, zip_url: str, page: str, key: str, fmt: str, member: str,
         mirror: str, **kw: object) -> InputSpec:
    return InputSpec(
        key=key, source="pfs", release=release, fmt=fmt, url=zip_url, member=member,
        page=page, link=rf"/files/zip/{release.lower()}[^/\"']*\.zip$", mirror=(mirror,), **kw,
    )


def _ptp_parts(release: str, quarter: str, version: str, mirror_f1: str) -> list[InputSpec]:
    parts = []
    for n in (1, 2, 3, 4):
        stem = f"medicare-ncci-{quarter.lower()}-practitioner-ptp-edits-ccipra-{version}-f{n}"
        parts.append(InputSpec(
            key=f"ptp_f{n}", source="ncci_ptp", release=quarter, fmt="ptp_official",
            url=f"{CMS}/files/zip/{stem}.zip", member=rf"ccipra-v\d+r\d+-f{n}\.txt",
            page=PTP_PAGE,
            link=rf"/files/zip/medicare-ncci-{quarter.lower()}-practitioner-ptp-edits-ccipra-v\d+r\d+-f{n}\.zip$",
            mirror=(mirror_f1,) if n == 1 else (), mirror_excerpt=True,
            optional=True,
            note="official layout; the mirror holds only an excerpt of part 1",
        ))
    return parts


# OPPS Addendum B: the newest release offline is the CY2025 final rule (CMS-1809-FC,
# November 2024). The addenda zip is linked from the rule page; its exact name was not seen.
OPPS_CY2025 = InputSpec(
    key="opps_addendum_b", source="opps", release="CY2025-final", fmt="opps_addendum_b",
    url=OPPS_RULE_PAGE, member=r"2025 NFRM Addendum B\.\d{8}\.txt", page=OPPS_RULE_PAGE,
    link=r"/files/zip/[^/\"']*(nfrm|1809)[^/\"']*addend[^/\"']*\.zip$",
    mirror=("opps/2025_nfrm_addenda.11142024/2025 NFRM Addendum B.11122024.txt",),
    note="CY2025 OPPS final rule (CMS-1809-FC) Addendum B, tab-delimited; the mirror copy "
         "comes from a third-party repository whose folder is named like the rule's addenda "
         "zip (2025_nfrm_addenda.11142024) and was not compared with CMS's zip, whose exact "
         "URL was not seen: url is the rule page that links it",
)

OPPS_CY2025_A = InputSpec(
    key="opps_addendum_a", source="opps", release="CY2025-final", fmt="opps_addendum_a",
    url=OPPS_RULE_PAGE, member=r"2025 NFRM Addendum A\.\d{8}\.txt", page=OPPS_RULE_PAGE,
    link=OPPS_CY2025.link,
    mirror=("opps/2025_nfrm_addenda.11142024/2025 NFRM Addendum A.11122024.txt",),
    optional=True,
    note="Addendum A (payment by APC) of the same rule: titles the APCs and cross-checks every "
         "Addendum B rate; same provenance as Addendum B",
)


def _asc(release: str, month: str, mirror: str, sha256: str, note: str) -> InputSpec:
    year = release[:4]
    return InputSpec(
        key="asc_addendum_aa", source="asc", release=release, fmt="asc_addendum_aa",
        url=f"{CMS}/files/zip/{month}-{year}-asc-addenda.zip",
        member=rf"{month} {year} ASC Addenda - Addendum AA[.\d]*\.csv", page=ASC_PAGE,
        link=rf"/files/zip/{month}-{year}-asc-addenda[^/\"']*\.zip$",
        mirror=(mirror,), mirror_sha256=sha256,
        note="ASC Addendum AA, 508 CSV; the mirror copy was renamed AA.csv by the third-party "
             "repository it came from (original member name not recorded)" + note,
    )


ASC_2026_04 = _asc(
    "2026-04", "april", "asc/2026/20260401/AA.csv",
    "a93f291a6010a42da26638d3f5cad73e20516edacd477d056c7889a9a18a3b5a",
    "; in this copy three 0xFF bytes of the copyright line were re-encoded as U+FFFD, so it is "
    "not byte-identical to CMS's (data rows unaffected)",
)
ASC_2025_01 = _asc(
    "2025-01", "january", "asc/2025/20250101/AA.csv",
    "e3c5d75f9eb523f4fb9dff70c7a3209124fcbc9252643e2a7413a2a81363df99", "",
)

CDC_ICD_FY2025 = ("https://ftp.cdc.gov/pub/Health_Statistics/NCHS/Publications/ICD10CM/2025/"
                  "icd10cm-table-index-2025.zip")
RVU26C_ZIP = CMS + "/files/zip/rvu26c-updated-06-30-2026.zip"
RVU25D_ZIP = CMS + "/files/zip/rvu25d.zip"

_RVU25D = [
    _pfs("RVU25D", RVU25D_ZIP, PFS_PAGE + "rvu25d", "locco", "locco", r"25LOCCO\.csv",
         "mpfs-rvu/rvu25d/25LOCCO.csv"),
    _pfs("RVU25D", RVU25D_ZIP, PFS_PAGE + "rvu25d", "anes", "anes", r"ANES2025\.csv",
         "mpfs-rvu/rvu25d/ANES2025.csv"),
]

_COMMON = [
    *_ptp_parts("2026Q3", "2026Q3", "v322r0", "ncci-ptp/ccipra-v322r0-f1.excerpt.txt"),
    InputSpec(
        key="ptp_complete", source="ncci_ptp", release="2024Q3", fmt="ptp_derived",
        url=PTP_PAGE, mirror=("ncci-ptp/ccipra-2024q3.practitioner.northstar-derived.tsv.gz",),
        derived=True, mirror_only=True, optional=True,
        missing_columns=("effective_date", "prior_1996"),
        note="complete 2024 Q3 practitioner table (all four parts) exported from the official "
             "ccipra xlsx files by a third party; the Effective Date column and the pre-1996 "
             "flag were dropped in that export",
    ),
    InputSpec(
        key="mue_official", source="ncci_mue", release="2026Q3", fmt="mue_official",
        url=CMS + "/files/zip/medicare-ncci-2026-q3-practitioner-services-mue-table.zip",
        member=r"MCR_MUE_PractitionerServices_Eff_[0-9-]+\.csv", page=MUE_PAGE,
        link=r"/files/zip/medicare-ncci-2026-q3-practitioner-services-mue-table\.zip$",
        mirror=("ncci-mue/MCR_MUE_PractitionerServices_Eff_07-01-2026.excerpt.csv",),
        mirror_excerpt=True, optional=True,
        note="official layout; the mirror holds only an excerpt (0001U-0041U)",
    ),
    InputSpec(
        key="mue_complete", source="ncci_mue", release="2024Q3", fmt="mue_derived",
        url=MUE_PAGE,
        mirror=("ncci-mue/MCR_MUE_PractitionerServices_Eff_07-01-2024.northstar-derived.tsv",),
        derived=True, mirror_only=True, optional=True,
        note="complete 2024 Q3 practitioner MUE table exported from the official xlsx by a third "
             "party (MAI kept as its leading digit)",
    ),
    InputSpec(
        key="hcpcs", source="hcpcs", release="2026-01", fmt="hcpcs_txt",
        url=CMS + "/files/zip/january-2026-alpha-numeric-hcpcs-file.zip",
        member=r"HCPC\d{4}_[A-Z]{3}_ANWEB_\d+\.txt", page=HCPCS_PAGE,
        link=r"/files/zip/january-2026-alpha-numeric-hcpcs-file\.zip$",
        mirror=("hcpcs/hcpc2026-jan/january-2026-alpha-numeric-hcpcs-file.zip",),
    ),
    InputSpec(
        key="icd10cm_tabular", source="icd10cm", release="FY2026-04", fmt="icd10cm_xml",
        url=CMS + "/files/zip/april-1-2026-code-tables-tabular-and-index.zip",
        member=r"icd10cm?[-_]tabular.*\.xml", page=ICD_PAGE,
        link=r"/files/zip/april-1-2026-code-tables-tabular-and-index[^/\"']*\.zip$",
        mirror=("icd10cm/icd10c-tabular-April-1-2026.xml",),
        note="mirror copy taken from a PyPI package's data folder; not compared byte for byte "
             "with CDC's icd10cm-tabular-April-1-2026.xml",
    ),
    InputSpec(
        key="icd10cm_order", source="icd10cm", release="FY2026-04", fmt="icd10cm_order",
        url=CMS + "/files/zip/april-1-2026-code-descriptions-tabular-order.zip",
        member=r"icd10cm[-_]order[-_]\d{4}\.txt", page=ICD_PAGE,
        link=r"/files/zip/april-1-2026-code-descriptions-tabular-order[^/\"']*\.zip$",
        mirror=("icd10cm/icd10cm_order_2026.excerpt.txt",), mirror_excerpt=True, optional=True,
        note="used only to cross-check the tabular XML",
    ),
    *(InputSpec(
        key=key, source="icd10cm", release="FY2025", fmt=fmt, url=CDC_ICD_FY2025,
        member=rf"icd-10-cm-{stem}-2025\.xml",
        mirror=(f"icd10cm/icd-10-cm-{stem}-2025.xml",),
        note=f"CDC FY2025 {what} (icd10cm-table-index-2025.zip); the mirror copy was taken from a "
             "third-party repository's copy of that zip (SOURCES.md section 9b) and checked "
             "against the FY2026 tabular: every code resolves. No FY2026 copy is available "
             "offline and the Index to Diseases is not staged at all",
    ) for key, fmt, stem, what in (
        ("icd10cm_eindex", "icd10cm_index_xml", "eindex", "External Cause of Injuries Index"),
        ("icd10cm_neoplasm", "icd10cm_table_xml", "neoplasm", "Neoplasm Table"),
        ("icd10cm_drug", "icd10cm_table_xml", "drug", "Table of Drugs and Chemicals"),
    )),
    InputSpec(
        key="carc", source="carc_rarc", release="2026-05-31", fmt="carc_html",
        url="https://x12.org/codes/claim-adjustment-reason-codes",
        mirror=("carc-rarc/carc_codes_full.html",),
        note="saved x12.org page, scraped 2026-05-31",
    ),
    InputSpec(
        key="rarc", source="carc_rarc", release="2026-05-31", fmt="rarc",
        url="https://x12.org/codes/remittance-advice-remark-codes",
        mirror=("carc-rarc/rarc_codes.csv",), derived=True,
        note="mirror copy is a CSV scraped from the x12.org page on 2026-05-31",
    ),
]

RELEASES: dict[str, list[InputSpec]] = {
    "2026C": [
        _pfs("RVU26C", RVU26C_ZIP, PFS_PAGE + "rvu26c", "pprrvu", "pprrvu_csv",
             r"PPRRVU\d{4}_[A-Za-z]+_nonQPP\.csv", "mpfs-rvu/rvu26c/PPRRVU2026_Jul_nonQPP.csv"),
        _pfs("RVU26C", RVU26C_ZIP, PFS_PAGE + "rvu26c", "gpci", "gpci", r"GPCI2026\.csv",
             "mpfs-rvu/rvu26c/GPCI2026.csv"),
        *_RVU25D,
        *_COMMON,
        OPPS_CY2025,
        OPPS_CY2025_A,
        ASC_2026_04,
    ],
    "2025D": [
        _pfs("RVU25D", RVU25D_ZIP, PFS_PAGE + "rvu25d", "pprrvu", "pprrvu_csv",
             r"PPRRVU\d{4}_[A-Za-z]+\.csv", "mpfs-rvu/rvu25d/PPRRVU2025_Oct.csv"),
        _pfs("RVU25D", RVU25D_ZIP, PFS_PAGE + "rvu25d", "gpci", "gpci", r"GPCI2025\.csv",
             "mpfs-rvu/rvu25d/GPCI2025.csv"),
        _pfs("RVU25D", RVU25D_ZIP, PFS_PAGE + "rvu25d", "oppscap", "oppscap",
             r"OPPSCAP_[A-Za-z]+\.csv", "mpfs-rvu/rvu25d/OPPSCAP_Oct.csv"),
        InputSpec(
            key="payment", source="pfs", release="PFREV25D", fmt="payment",
            url=CMS + "/files/zip/pfrev25d.zip", member=r"PF(ALL|REV)\w*\.txt",
            page=PAYMENT_PAGE, link=r"/files/zip/pfrev25d[^/\"']*\.zip$",
            mirror=("mpfs-payment/pfrev25d/PFREV4.txt",), optional=True,
            note="official payment amounts; the fee schedule must reproduce them to the cent",
        ),
        *_RVU25D,
        *_COMMON,
        OPPS_CY2025,
        OPPS_CY2025_A,
        ASC_2025_01,
    ],
}

@dataclass(frozen=True)
class Gap:
    """A shortfall a release's manifest states -- only when the build really has it.

    ``when`` lists (table, input key) pairs: the gap applies when any of those tables was
    built from that input (key ``""``: when the table is absent). A download build that got
    the official 2026 Q3 NCCI parts instead of the 2024 Q3 export therefore does not claim
    the 2024 Q3 gap.
    """

    text: str
    when: tuple[tuple[str, str], ...]


_NCCI_2024Q3 = (("ncci_ptp", "ptp_complete"), ("mue", "mue_complete"))
GAPS: dict[str, list[Gap]] = {
    "2026C": [
        Gap("26LOCCO, ANES2026 and the 2026 OPPSCAP are not in the mirror: locality_county and "
            "anes_cf come from RVU25D (localities unchanged since 2024); no OPPS imaging cap is "
            "applied to 2026 fees",
            (("locality_county", "locco"), ("anes_cf", "anes"), ("opps_cap", ""))),
        Gap("no complete 2025/2026 NCCI PtP or MUE table is available offline: ncci_ptp and mue "
            "are the complete 2024 Q3 tables; the 2026 Q3 official files are read and "
            "cross-checked", _NCCI_2024Q3),
        Gap("no CY2026 OPPS Addendum B is in the mirror: opps_rate holds the CY2025 final-rule "
            "rates (conversion factor $89.169); asc_rate is the April 2026 ASC Addendum AA",
            (("opps_rate", "opps_addendum_b"),)),
    ],
    "2025D": [
        Gap("no complete 2025 NCCI PtP or MUE table is available offline: 2024 Q3 is used",
            _NCCI_2024Q3),
        Gap("no 2025 HCPCS Level II file or FY2025 ICD-10-CM tabular is in the mirror: "
            "hcpcs_level2 is the January 2026 file and icd10cm the April 2026 (FY2026) tabular",
            (("hcpcs_level2", "hcpcs"), ("icd10cm", "icd10cm_tabular"))),
        Gap("opps_rate is the CY2025 final-rule Addendum B, not a 2025 quarterly web update; "
            "asc_rate is the January 2025 ASC Addendum AA (no October 2025 file in the mirror)",
            (("opps_rate", "opps_addendum_b"),)),
    ],
}


def release_gaps(release: str, built_from: dict[str, list[str] | None]) -> list[str]:
    """The gap texts that hold for this build; ``built_from`` is table -> input keys, None
    for a table that was not built."""
    out = []
    for gap in GAPS.get(release, []):
        if any((built_from.get(t) is None and t in built_from) if key == "" else
               key in (built_from.get(t) or []) for t, key in gap.when):
            out.append(gap.text)
    return out


# Tables a release does not have, and why: reported absent (not failed) by their checks.
ABSENT_TABLES: dict[str, dict[str, str]] = {
    "2026C": {"opps_cap": "no 2026 OPPSCAP file; no OPPS imaging cap is applied to 2026 fees"},
}


def release_inputs(release: str, source: str | None = None) -> list[InputSpec]:
    if release not in RELEASES:
        raise KeyError(f"unknown reference release {release!r}; known: {', '.join(RELEASES)}")
    return [s for s in RELEASES[release] if source is None or s.source == source]
