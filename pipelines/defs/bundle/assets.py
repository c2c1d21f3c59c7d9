"""Publish the reference bundle: every checked table + manifest.json, atomically.

The manifest is assembled from what the tables carry -- each table records the sha256 and
origin of the exact input files it was built from -- never from what the raw assets hold
at publish time, so a partial selection (``--select pfs_raw,reference_bundle``) cannot
record a file the published tables were not built from. Before reading anything, the
asset asks the instance for the latest evaluation of every blocking check of every table
for this release and refuses unless each one passed (or reported a declared absence).
"""


from pathlib import Path
from typing import Any

from dagster import (
    AssetCheckKey,
    AssetCheckSeverity,
    AssetExecutionContext,
    AssetIn,
    AssetKey,
    Failure,
    MetadataValue,
    asset,
)
from dagster._core.event_api import PartitionKeyFilter
from dagster._core.storage.asset_check_execution_record import AssetCheckExecutionRecordStatus

from ...lib.bundle import FORMAT_CHANGES, PublishError, write_bundle
from ...resources import BundleStore
from ...sources import ABSENT_TABLES, release_gaps, release_inputs
from ..common import CHECKS_OF, CODE_VERSION, PARTITIONS, Normalized

BUILDER_VERSION = "1"
TABLE_ASSETS = ("hcpcs_rvu", "gpci", "locality_county", "anes_cf", "opps_cap", "fee_schedule",
                "ncci_ptp", "mue", "hcpcs_level2", "icd10cm", "icd10cm_eindex",
                "icd10cm_neoplasm", "icd10cm_drug", "carc", "carc_group", "rarc",
                "plan_templates", "opps_rate", "asc_rate")
SOURCE_OF = {"hcpcs_rvu": "pfs", "gpci": "pfs", "locality_county": "pfs", "anes_cf": "pfs",
             "opps_cap": "pfs", "fee_schedule": "pfs", "ncci_ptp": "ncci_ptp", "mue": "ncci_mue",
             "hcpcs_level2": "hcpcs", "icd10cm": "icd10cm", "icd10cm_eindex": "icd10cm",
             "icd10cm_neoplasm": "icd10cm", "icd10cm_drug": "icd10cm", "carc": "carc_rarc",
             "carc_group": "carc_rarc", "rarc": "carc_rarc", "plan_templates": "plan_templates",
             "opps_rate": "opps", "asc_rate": "asc"}


def build_manifest(release: str, tables: dict[str, Normalized]) -> dict[str, Any]:
    """Provenance for every input and output (no times or hosts: rebuilds are byte-equal).

    Every input record comes from the tables' own provenance; two tables built from
    different versions of one input (a partial rebuild) are refused, since no single
    manifest could describe both.
    """
    rows_read: dict[str, int] = {}
    used_by: dict[str, list[str]] = {}
    seen: dict[str, tuple[str, dict[str, Any]]] = {}
    for name, t in tables.items():
        for key, n in t.inputs.items():
            rows_read[key] = max(rows_read.get(key, 0), n)
            used_by.setdefault(key, []).append(name)
        for key, rec in t.provenance.items():
            if key in seen and seen[key][1]["sha256"] != rec["sha256"]:
                other, prev = seen[key]
                raise Failure(description=(
                    f"{release}: {other} was built from {key} sha256 {prev['sha256'][:16]} but "
                    f"{name} from sha256 {rec['sha256'][:16]}; materialize every table of the "
                    "release together before publishing"))
            seen.setdefault(key, (name, rec))
    specs = {s.key: s for s in release_inputs(release)}
    inputs = []
    for key in sorted(seen, key=lambda k: (specs[k].source, k)):
        rec, spec = seen[key][1], specs[key]
        inputs.append({
            "key": key, "source": spec.source, "release": rec["release"], "url": rec["url"],
            "file": rec["file"], "origin": rec["origin"], "sha256": rec["sha256"],
            "bytes": rec["bytes"], "rows": rows_read.get(key), "excerpt": rec["excerpt"],
            "derived": rec["derived"], "missing_columns": list(spec.missing_columns),
            "used_for": used_by.get(key, []), "note": rec["note"],
        })
    outputs = {}
    for name, t in tables.items():
        if t.table is None:
            continue
        keys = t.built_from
        releases = sorted({seen[k][1]["release"] for k in keys if k in seen} - {""})
        outputs[name] = {"source": SOURCE_OF[name], "built_from": keys, "releases": releases,
                         "cross_checked_with": sorted(set(t.inputs) - set(keys)),
                         "notes": t.notes}
    absent = sorted(n for n, t in tables.items() if t.table is None)
    built = {n: (None if t.table is None else t.built_from) for n, t in tables.items()}
    return {
        "builder": {"name": "clarus-pipelines", "version": BUILDER_VERSION},
        "format_changes": FORMAT_CHANGES,
        "gaps": release_gaps(release, built) + [
            f"table {n} not built: {'; '.join(tables[n].notes)}" for n in absent],
        "inputs": inputs,
        "outputs": outputs,
    }


def check_gate(context: AssetExecutionContext, release: str) -> list[str]:
    """Why the tables may not be published: any blocking check whose latest evaluation for
    this release is missing, still running, failed, or an absence the release does not
    declare. Empty when every check passed."""
    unknown = [t for t in TABLE_ASSETS if t not in CHECKS_OF]
    if unknown:
        return [f"{t}: its checks are not declared (asset module not loaded)" for t in unknown]
    keys = [AssetCheckKey(AssetKey(t), c) for t in TABLE_ASSETS for c in CHECKS_OF[t]]
    latest = context.instance.event_log_storage.get_latest_asset_check_execution_by_key(
        keys, partition_filter=PartitionKeyFilter(key=release))
    declared = ABSENT_TABLES.get(release, {})
    problems = []
    for key in sorted(keys, key=lambda k: (k.asset_key.to_user_string(), k.name)):
        where = f"{key.asset_key.to_user_string()}.{key.name}"
        rec = latest.get(key)
        if rec is None:
            problems.append(f"{where}: never evaluated for {release}")
            continue
        if rec.status == AssetCheckExecutionRecordStatus.SUCCEEDED:
            continue
        event = rec.event.dagster_event if rec.event else None
        evaluation = event.event_specific_data if event else None
        if (rec.status == AssetCheckExecutionRecordStatus.FAILED and evaluation is not None
                and getattr(evaluation, "severity", None) == AssetCheckSeverity.WARN
                and key.asset_key.to_user_string() in declared):
            continue  # reported absent, and the release says so
        problems.append(f"{where}: latest evaluation {rec.status.value.lower()} "
                        f"(run {rec.run_id[:8]})")
    return problems


@asset(
    name="reference_bundle", group_name="bundle", partitions_def=PARTITIONS,
    code_version=CODE_VERSION, ins={n: AssetIn(n) for n in TABLE_ASSETS},
    description="<CLARUS_BUNDLE_ROOT>/<release>: Arrow IPC tables + manifest.json, published "
                "as an immutable content-addressed directory behind an atomically flipped link.",
)
def reference_bundle(context: AssetExecutionContext, store: BundleStore,
                     **upstream: Any) -> dict[str, Any]:
    release = context.partition_key
    refused = check_gate(context, release)
    if refused:
        raise Failure(description=(
            f"reference_bundle {release} not published: these tables' blocking checks have not "
            "passed -- " + "; ".join(refused)))
    tables = {n: upstream[n] for n in TABLE_ASSETS}
    manifest = build_manifest(release, tables)
    try:
        path = write_bundle(Path(store.root), release,
                            {n: t.table for n, t in tables.items() if t.table is not None},
                            manifest, store.zstd_level)
    except PublishError as exc:
        raise Failure(description=str(exc)) from None
    target = path.resolve()
    context.add_output_metadata({
        "path": str(path),
        "release_dir": str(target),
        "tables": MetadataValue.md("\n".join(
            f"- `{n}`: {t.table.num_rows:,} rows" for n, t in tables.items()
            if t.table is not None)),
        "bytes": sum(p.stat().st_size for p in target.iterdir()),
    })
    return {"path": str(path), "release": release, "release_dir": target.name}

