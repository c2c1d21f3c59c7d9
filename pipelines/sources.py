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
    ],
}

# What a reference release says about inputs it could not have (the manifest repeats it).
GAPS: dict[str, list[str]] = {
    "2026C": [
        "26LOCCO, ANES2026 and the 2026 OPPSCAP are not in the mirror: locality_county and "
        "anes_cf come from RVU25D (localities unchanged since 2024); no OPPS imaging cap is "
        "applied to 2026 fees",
        "no complete 2025/2026 NCCI PtP or MUE table is available offline: ncci_ptp and mue "
        "are the complete 2024 Q3 tables; the 2026 Q3 official files are read and cross-checked",
    ],
    "2025D": [
        "no complete 2025 NCCI PtP or MUE table is available offline: 2024 Q3 is used",
    ],
}


def release_inputs(release: str, source: str | None = None) -> list[InputSpec]:
    if release not in RELEASES:
        raise KeyError(f"unknown reference release {release!r}; known: {', '.join(RELEASES)}")
    return [s for s in RELEASES[release] if source is None or s.source == source]
