"""HCPCS Level II quarterly file (fixed-width TXT, or the xlsx of the same release)."""


from ...lib import hcpcs
from ...lib.conform import conform
from ...lib.fetch import Fetched
from ..common import Normalized, raw_asset, table_asset

hcpcs_raw = raw_asset("hcpcs", "hcpcs")


def build_hcpcs_level2(raw: dict[str, Fetched]) -> Normalized:
    f = raw["hcpcs"]
    parse = hcpcs.parse_hcpcs_xlsx if f.file.lower().endswith(".xlsx") else hcpcs.parse_hcpcs_txt
    t = conform(parse(f.data, f.file), "hcpcs_level2", f.file)
    return Normalized(t, {"hcpcs": t.num_rows})


hcpcs_level2 = table_asset("hcpcs_level2", "hcpcs", "hcpcs_raw", build_hcpcs_level2)
