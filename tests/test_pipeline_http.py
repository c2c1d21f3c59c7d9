"""The whole Dagster graph, materialized in-process, downloading zipped fixtures in the
official layouts from a local HTTP server (release pages scraped, zips opened in memory)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from dagster import DagsterInstance, materialize

from clarus_env.reference import ReferenceBundle
from pipelines.definitions import make_definitions
from pipelines.resources import BundleStore, CmsSource

from .httpserver import Routes, serve

FIX = Path(__file__).resolve().parent / "fixtures"
PFS = "/medicare/payment/fee-schedules/physician/pfs-relative-value-files/"
NCCI = "/medicare/coding-billing/national-correct-coding-initiative-ncci-edits/"
OPPS_RULE = ("/medicare/payment/prospective-payment-systems/hospital-outpatient/"
             "regulations-notices/cms-1809-fc")
ASC_ADDENDA = ("/medicare/payment/prospective-payment-systems/ambulatory-surgical-center-asc/"
               "asc-payment-rates-addenda")


def zipped(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


def page(*hrefs: str) -> bytes:
    links = "".join(f'<li><a href="{h}">{h.rsplit("/", 1)[-1]}</a></li>' for h in hrefs)
    return f"<html><body><ul>{links}</ul></body></html>".encode()


def ptp_parts() -> list[bytes]:
    """Split the official-layout fixture into four parts, each with the 6 header lines."""
    lines = (FIX / "ncci" / "ptp_official.txt").read_bytes().split(b"\r\n")
    header, rows = lines[:6], [r for r in lines[6:] if r]
    return [b"\r\n".join(header + rows[i::4]) + b"\r\n" for i in range(4)]


def cms_site(gpci: bytes | None = None) -> Routes:
    r = Routes()
    rvu26c = "/files/zip/rvu26c-updated-06-30-2026.zip"
    r.ok(PFS + "rvu26c", page(rvu26c, "/files/zip/rvu26b.zip"))
    r.ok(rvu26c, zipped({
        "PPRRVU2026_Jul_nonQPP.csv": (FIX / "pfs" / "PPRRVU2026_fixture_nonQPP.csv").read_bytes(),
        "GPCI2026.csv": gpci or (FIX / "pfs" / "GPCI_fixture.csv").read_bytes(),
        "RVU26C.pdf": b"%PDF-1.4 documentation",
    }))
    r.ok(PFS + "rvu25d", page("/files/zip/rvu25d.zip"))
    r.ok("/files/zip/rvu25d.zip", zipped({
        "25LOCCO.csv": (FIX / "pfs" / "LOCCO_fixture.csv").read_bytes(),
        "anes2025.CSV": (FIX / "pfs" / "ANES_fixture.csv").read_bytes(),
    }))
    ptp = [f"/files/zip/medicare-ncci-2026q3-practitioner-ptp-edits-ccipra-v322r0-f{n}.zip"
           for n in (1, 2, 3, 4)]
    r.ok(NCCI + "medicare-ncci-procedure-procedure-ptp-edits", page(*ptp))
    for n, (url, data) in enumerate(zip(ptp, ptp_parts(), strict=True), start=1):
        r.ok(url, zipped({f"ccipra-v322r0-f{n}.TXT": data, "readme.txt": b"x"}))
    mue = "/files/zip/medicare-ncci-2026-q3-practitioner-services-mue-table.zip"
    r.ok(NCCI + "medicare-ncci-medically-unlikely-edits", page(mue))
    r.ok(mue, zipped({"MCR_MUE_PractitionerServices_Eff_07-01-2026.csv":
                      (FIX / "ncci" / "mue_official.csv").read_bytes()}))
    hcpcs = "/files/zip/january-2026-alpha-numeric-hcpcs-file.zip"
    r.ok("/medicare/coding-billing/healthcare-common-procedure-system/quarterly-update",
         page(hcpcs))
    r.ok(hcpcs, zipped({"HCPC2026_JAN_ANWEB_01122026.txt":
                        (FIX / "hcpcs" / "hcpcs.txt").read_bytes()}))
    tab = "/files/zip/april-1-2026-code-tables-tabular-and-index.zip"
    order = "/files/zip/april-1-2026-code-descriptions-tabular-order.zip"
    r.ok("/medicare/coding-billing/icd-10-codes", page(tab, order))
    r.ok(tab, zipped({"Table and Index/icd10cm-tabular-April-1-2026.xml":
                      (FIX / "icd10cm" / "tabular_small.xml").read_bytes()}))
    r.ok(order, zipped({"icd10cm_order_2026.txt":
                        (FIX / "icd10cm" / "order_small.txt").read_bytes()}))
    r.ok("/pub/Health_Statistics/NCHS/Publications/ICD10CM/2025/icd10cm-table-index-2025.zip",
         zipped({f"icd10cm-table-index-2025/icd-10-cm-{s}-2025.xml":
                 (FIX / "icd10cm" / f"{s}_small.xml").read_bytes()
                 for s in ("eindex", "neoplasm", "drug")}))
    r.ok("/codes/claim-adjustment-reason-codes", (FIX / "carc" / "carc_small.html").read_bytes())
    r.ok("/codes/remittance-advice-remark-codes", (FIX / "carc" / "rarc_small.html").read_bytes())
    opps_zip = "/files/zip/2025-nfrm-opps-addenda.zip"
    r.ok(OPPS_RULE, page(opps_zip, "/files/zip/cms-1809-fc-public-comments.zip"))
    r.ok(opps_zip, zipped({
        "2025 NFRM Addendum A.11122024.txt": (FIX / "opps" / "addendum_a.txt").read_bytes(),
        "2025 NFRM Addendum B.11122024.txt": (FIX / "opps" / "addendum_b.txt").read_bytes(),
    }))
    asc_zip = "/files/zip/april-2026-asc-addenda.zip"
    r.ok(ASC_ADDENDA, page(asc_zip, "/files/zip/january-2026-asc-addenda.zip"))
    r.ok(asc_zip, zipped({
        "508 Version of April 2026 ASC Addenda/April 2026 ASC Addenda - Addendum AA.03.23.26.csv":
            (FIX / "asc" / "addendum_aa.csv").read_bytes(),
        "508 Version of April 2026 ASC Addenda/April 2026 ASC Addenda - Addendum BB.03.23.26.csv":
            b"not read",
    }))
    return r


def build(base: str, root: Path) -> object:
    defs = make_definitions(
        CmsSource(base_url=base, pins_file="", retries=1, backoff_s=0.01, timeout_s=10,
                  mirror_dir=""),
        BundleStore(root=str(root), enforce_row_ranges=False),
    )
    with DagsterInstance.ephemeral() as instance:
        return materialize(list(defs.assets), partition_key="2026C", instance=instance,
                           resources=defs.resources, raise_on_error=False)


def failures(result: object) -> list[str]:
    return [ev.event_specific_data.error.message for ev in result.all_events  # type: ignore[attr-defined]
            if ev.event_type_value == "STEP_FAILURE"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Routes]:
    root = tmp_path_factory.mktemp("bundles")
    routes = cms_site()
    with serve(routes) as base:
        result = build(base, root)
    assert result.success, failures(result)  # type: ignore[attr-defined]
    return root / "2026C", routes


def test_whole_graph_downloads_and_publishes(built: tuple[Path, Routes]) -> None:
    path, routes = built
    m = json.loads((path / "manifest.json").read_text())
    assert m["release"] == "2026C"
    by_key = {i["key"]: i for i in m["inputs"]}
    assert set(by_key) == {"pprrvu", "gpci", "locco", "anes", "ptp_f1", "ptp_f2", "ptp_f3",
                           "ptp_f4", "mue_official", "hcpcs", "icd10cm_tabular",
                           "icd10cm_order", "icd10cm_eindex", "icd10cm_neoplasm",
                           "icd10cm_drug", "carc", "rarc", "opps_addendum_b",
                           "opps_addendum_a", "asc_addendum_aa"}
    for i in m["inputs"]:
        assert i["origin"] == "download" and not i["excerpt"] and len(i["sha256"]) == 64
    assert by_key["pprrvu"]["url"] == "https://www.cms.gov/files/zip/rvu26c-updated-06-30-2026.zip"
    assert by_key["pprrvu"]["file"] == \
        "rvu26c-updated-06-30-2026.zip!PPRRVU2026_Jul_nonQPP.csv"
    assert by_key["anes"]["file"] == "rvu25d.zip!anes2025.CSV"  # case-insensitive member
    assert m["outputs"]["ncci_ptp"]["built_from"] == ["ptp_f1", "ptp_f2", "ptp_f3", "ptp_f4"]
    assert "opps_cap" not in m["outputs"]
    assert by_key["opps_addendum_b"]["file"] == \
        "2025-nfrm-opps-addenda.zip!2025 NFRM Addendum B.11122024.txt"
    assert by_key["asc_addendum_aa"]["url"] == \
        "https://www.cms.gov/files/zip/april-2026-asc-addenda.zip"
    assert m["outputs"]["opps_rate"]["rows"] == 11 and m["outputs"]["asc_rate"]["rows"] == 6
    # inputs sharing a release page and zip fetch them once
    assert routes.hits[PFS + "rvu26c"] == 1
    assert routes.hits["/files/zip/rvu25d.zip"] == 1


def test_published_bundle_answers_lookups(built: tuple[Path, Routes]) -> None:
    path, _ = built
    ref = ReferenceBundle(path)
    assert str(ref.fee("99213", "04412", "18")) == "96.33"
    assert str(ref.fee("99213", "04412", "18", facility=True)) == "58.85"
    assert ref.ncci_edit("96372", "99211")["modifier_indicator"] == "0"
    assert ref.ncci_edit("20610", "99213")["modifier_indicator"] == "1"
    assert ref.mue("99396")["mue_units"] == 0
    assert ref.icd10cm("A00.0")["billable"] is True
    assert ref.carc("45") is not None and ref.rarc("N19") is not None
    assert len(ref.plans()) == 10
    assert str(ref.opps("C9999")["payment_rate"]) == "1001.125"
    assert ref.opps("20610")["apc_title"] == "Level 2 Nerve Injections"
    assert ref.asc("0100T")["payment_rate"] == 2000


GPCI = (FIX / "pfs" / "GPCI_fixture.csv").read_bytes()
RVU26C = "/files/zip/rvu26c-updated-06-30-2026.zip"


def _rvu26c_zip(gpci: bytes | None) -> bytes:
    members = {"PPRRVU2026_Jul_nonQPP.csv":
               (FIX / "pfs" / "PPRRVU2026_fixture_nonQPP.csv").read_bytes()}
    if gpci is not None:
        members["GPCI2026.csv"] = gpci
    return zipped(members)


def _shift_header(data: bytes) -> bytes:
    """Move the header row below the first locality row."""
    lines = data.split(b"\r\n")
    lines[2], lines[3] = lines[3], lines[2]
    return b"\r\n".join(lines)


BAD_INPUTS = {
    # case: (change to the site, words the failure message must contain)
    "non-numeric GPCI": (lambda r: r.ok(RVU26C, _rvu26c_zip(
        GPCI.replace(b"1.008,0.993", b"1.008,x.993"))), ["GPCI2026.csv", "row 7", "x.993"]),
    "header shifted a line": (lambda r: r.ok(RVU26C, _rvu26c_zip(_shift_header(GPCI))),
                              ["GPCI2026.csv", "row 3", "header shifted"]),
    "renamed column": (lambda r: r.ok(RVU26C, _rvu26c_zip(
        GPCI.replace(b"2026 PE GPCI", b"2026 PRACTICE GPCI"))), ["GPCI2026.csv", "PE GPCI"]),
    "empty file": (lambda r: r.ok(RVU26C, _rvu26c_zip(b"")), ["GPCI2026.csv", "empty"]),
    "member missing": (lambda r: r.ok(RVU26C, _rvu26c_zip(None)),
                       ["rvu26c-updated-06-30-2026.zip", "GPCI2026", "PPRRVU2026_Jul_nonQPP.csv"]),
    "truncated zip": (lambda r: r.ok(RVU26C, _rvu26c_zip(GPCI)[:200]),
                      ["rvu26c-updated-06-30-2026.zip", "truncated or corrupt"]),
    "HTTP 404": (lambda r: r.set(RVU26C, (404, b"gone")), ["HTTP 404", RVU26C]),
    "HTTP 500 after retries": (lambda r: r.set(RVU26C, (500, b"x")), ["2 attempts", RVU26C]),
}


@pytest.mark.parametrize("case", sorted(BAD_INPUTS))
def test_bad_input_fails_the_run_and_keeps_the_published_bundle(
        built: tuple[Path, Routes], case: str) -> None:
    path, _ = built
    root = path.parent
    before = {p.name: p.read_bytes() for p in path.iterdir()}
    change, words = BAD_INPUTS[case]
    routes = cms_site()
    change(routes)
    with serve(routes) as base:
        result = build(base, root)
    assert not result.success  # type: ignore[attr-defined]
    msgs = "\n".join(failures(result))
    for w in words:
        assert w in msgs, (w, msgs)
    assert "Traceback" not in msgs
    assert {p.name: p.read_bytes() for p in path.iterdir()} == before
    assert sorted(p.name for p in root.iterdir()) == [".releases", "2026C"]
    assert [p.name for p in (root / ".releases").iterdir() if p.name.startswith(".tmp")] == []


def test_pin_mismatch_fails_and_names_the_file(tmp_path: Path) -> None:
    pins = tmp_path / "pins.json"
    pins.write_text(json.dumps({"RVU26C": {"GPCI2026.csv": "0" * 64}}))
    with serve(cms_site()) as base:
        defs = make_definitions(
            CmsSource(base_url=base, pins_file=str(pins), mirror_dir="", retries=0),
            BundleStore(root=str(tmp_path / "out"), enforce_row_ranges=False))
        with DagsterInstance.ephemeral() as instance:
            result = materialize(list(defs.assets), partition_key="2026C", instance=instance,
                                 resources=defs.resources, raise_on_error=False)
    assert not result.success
    msgs = "\n".join(failures(result))
    assert "GPCI2026.csv" in msgs and "does not match the pinned " + "0" * 64 in msgs
    assert not (tmp_path / "out" / "2026C").exists()


def test_server_errors_fail_the_run_clearly(tmp_path: Path) -> None:
    routes = cms_site()
    routes.set("/files/zip/rvu25d.zip", (503, b"maintenance"))
    with serve(routes) as base:
        result = build(base, tmp_path)
    assert not result.success  # type: ignore[attr-defined]
    msgs = "\n".join(failures(result))
    assert "/files/zip/rvu25d.zip" in msgs and "2 attempts" in msgs, msgs
    assert routes.hits["/files/zip/rvu25d.zip"] == 2
    assert not (tmp_path / "2026C").exists()
