"""PFS relative value files (PPRRVU, GPCI, LOCCO, ANES, OPPSCAP) → typed tables."""


from collections.abc import Callable

import polars as pl

from ...lib import pfs
from ...lib.conform import conform
from ...lib.fetch import Fetched
from ..common import Normalized, raw_asset, table_asset

pfs_raw = raw_asset("pfs", "pfs")


def _one(raw: dict[str, Fetched], key: str, table: str,
         parse: Callable[[bytes, str], pl.DataFrame]) -> Normalized:
    f = raw[key]
    t = conform(parse(f.data, f.file), table, f.file)
    return Normalized(t, {key: t.num_rows})


def build_hcpcs_rvu(raw: dict[str, Fetched]) -> Normalized:
    f = raw["pprrvu"]
    parse = pfs.parse_pprrvu_txt if f.file.lower().endswith(".txt") else pfs.parse_pprrvu
    return _one(raw, "pprrvu", "hcpcs_rvu", parse)


def build_gpci(raw: dict[str, Fetched]) -> Normalized:
    f = raw["gpci"]
    parse = pfs.parse_gpci_txt if f.file.lower().endswith(".txt") else pfs.parse_gpci
    return _one(raw, "gpci", "gpci", parse)


def build_locality_county(raw: dict[str, Fetched]) -> Normalized:
    return _one(raw, "locco", "locality_county", pfs.parse_locco)


def build_anes_cf(raw: dict[str, Fetched]) -> Normalized:
    result = _one(raw, "anes", "anes_cf", pfs.parse_anes)
    national = pfs.anes_national_cf(raw["anes"].data, raw["anes"].file)
    result.notes.append(f"national anesthesia conversion factor {national}")
    return result


def build_opps_cap(raw: dict[str, Fetched]) -> Normalized:
    if "oppscap" not in raw:
        return Normalized(None, notes=["no OPPSCAP file for this release"])
    return _one(raw, "oppscap", "opps_cap", pfs.parse_oppscap)


hcpcs_rvu = table_asset("hcpcs_rvu", "pfs", "pfs_raw", build_hcpcs_rvu)
gpci = table_asset("gpci", "pfs", "pfs_raw", build_gpci)
locality_county = table_asset("locality_county", "pfs", "pfs_raw", build_locality_county)
anes_cf = table_asset("anes_cf", "pfs", "pfs_raw", build_anes_cf)
opps_cap = table_asset("opps_cap", "pfs", "pfs_raw", build_opps_cap)
