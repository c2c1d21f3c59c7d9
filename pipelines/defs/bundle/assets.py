"""Publish the reference bundle: every checked table + manifest.json, atomically."""


from pathlib import Path
from typing import Any

from dagster import AssetExecutionContext, AssetIn, MetadataValue, asset

from ...lib.bundle import FORMAT_CHANGES, write_bundle
from ...lib.fetch import Fetched
from ...resources import BundleStore
from ...sources import GAPS
from ..common import PARTITIONS, Normalized

BUILDER_VERSION = "1"
TABLE_ASSETS = ("hcpcs_rvu", "gpci", "locality_county", "anes_cf", "opps_cap", "fee_schedule",
                "ncci_ptp", "mue", "hcpcs_level2", "icd10cm", "icd10cm_eindex",
                "icd10cm_neoplasm", "icd10cm_drug", "carc", "carc_group", "rarc",
                "plan_templates", "opps_rate", "asc_rate")
RAW_ASSETS = ("pfs_raw", "ncci_ptp_raw", "ncci_mue_raw", "hcpcs_raw", "icd10cm_raw",
              "carc_rarc_raw", "opps_raw", "asc_raw")
SOURCE_OF = {"hcpcs_rvu": "pfs", "gpci": "pfs", "locality_county": "pfs", "anes_cf": "pfs",
             "opps_cap": "pfs", "fee_schedule": "pfs", "ncci_ptp": "ncci_ptp", "mue": "ncci_mue",
             "hcpcs_level2": "hcpcs", "icd10cm": "icd10cm", "icd10cm_eindex": "icd10cm",
             "icd10cm_neoplasm": "icd10cm", "icd10cm_drug": "icd10cm", "carc": "carc_rarc",
             "carc_group": "carc_rarc", "rarc": "carc_rarc", "plan_templates": "plan_templates",
             "opps_rate": "opps", "asc_rate": "asc"}


def build_manifest(release: str, tables: dict[str, Normalized],
                   raws: dict[str, dict[str, Fetched]]) -> dict[str, Any]:
    """Provenance for every input and output (no times or hosts: rebuilds are byte-equal)."""
    rows_read: dict[str, int] = {}
    used_by: dict[str, list[str]] = {}
    for name, t in tables.items():
        for key, n in t.inputs.items():
            rows_read[key] = max(rows_read.get(key, 0), n)
            used_by.setdefault(key, []).append(name)
    from ...sources import release_inputs

    specs = {s.key: s for s in release_inputs(release)}
    inputs = []
    for source in sorted(raws):
        for key, f in sorted(raws[source].items()):
            spec = specs[key]
            inputs.append({
                "key": key, "source": spec.source, "release": f.release, "url": f.url,
                "file": f.file, "origin": f.origin, "sha256": f.sha256, "bytes": f.size,
                "rows": rows_read.get(key), "excerpt": f.excerpt, "derived": f.derived,
                "missing_columns": list(spec.missing_columns), "used_for": used_by.get(key, []),
                "note": f.note,
            })
    outputs = {}
    for name, t in tables.items():
        if t.table is None:
            continue
        keys = t.built_from
        releases = sorted({raws_release(raws, k) for k in keys} - {""})
        outputs[name] = {"source": SOURCE_OF[name], "built_from": keys, "releases": releases,
                         "cross_checked_with": sorted(set(t.inputs) - set(keys)),
                         "notes": t.notes}
    absent = sorted(n for n, t in tables.items() if t.table is None)
    return {
        "builder": {"name": "clarus-pipelines", "version": BUILDER_VERSION},
        "format_changes": FORMAT_CHANGES,
        "gaps": GAPS.get(release, []) + [f"table {n} not built: {'; '.join(tables[n].notes)}"
                                          for n in absent],
        "inputs": inputs,
        "outputs": outputs,
    }


def raws_release(raws: dict[str, dict[str, Fetched]], key: str) -> str:
    for files in raws.values():
        if key in files:
            return files[key].release
    return ""


@asset(
    name="reference_bundle", group_name="bundle", partitions_def=PARTITIONS,
    ins={n: AssetIn(n) for n in (*TABLE_ASSETS, *RAW_ASSETS)},
    description="bundles/reference/<release>/: Arrow IPC tables + manifest.json.",
)
def reference_bundle(context: AssetExecutionContext, store: BundleStore,
                     **upstream: Any) -> dict[str, Any]:
    release = context.partition_key
    tables = {n: upstream[n] for n in TABLE_ASSETS}
    raws = {n.removesuffix("_raw"): upstream[n] for n in RAW_ASSETS}
    manifest = build_manifest(release, tables, raws)
    path = write_bundle(Path(store.root), release,
                        {n: t.table for n, t in tables.items() if t.table is not None}, manifest)
    context.add_output_metadata({
        "path": str(path),
        "tables": MetadataValue.md("\n".join(
            f"- `{n}`: {t.table.num_rows:,} rows" for n, t in tables.items()
            if t.table is not None)),
        "bytes": sum(p.stat().st_size for p in path.iterdir()),
    })
    return {"path": str(path), "release": release}
