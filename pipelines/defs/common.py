"""What every source's assets share: the release partitions, the raw-fetch asset factory,
and the normalized-table asset factory with its blocking pre-publish checks.

Checks gate by construction: ``emit`` evaluates every check on the parsed table, reports
each one, and only then yields the output -- a table that fails a check is never stored,
so nothing downstream can read it (``reference_bundle`` additionally refuses a table whose
latest check evaluation is not a pass, for runs that select it alone).
"""


import warnings
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
from dagster import (
    AssetCheckResult,
    AssetCheckSeverity,
    AssetCheckSpec,
    AssetExecutionContext,
    AssetIn,
    Failure,
    MetadataValue,
    Output,
    StaticPartitionsDefinition,
    asset,
)
from dagster._utils.warnings import PreviewWarning

from ..lib.checks import table_problems
from ..lib.errors import SourceError
from ..lib.fetch import Fetched
from ..lib.tables import TABLES
from ..resources import BundleStore, CmsSource
from ..sources import ABSENT_TABLES, RELEASES, release_inputs

PARTITIONS = StaticPartitionsDefinition(sorted(RELEASES))
# ``schema`` is not a check: conform() casts every table to its declared schema, so it could
# never fail; it is asserted as a parse error instead.
TABLE_CHECKS = ("formats", "unique_key", "row_count")
# Bump when an asset's code changes what it produces, so Dagster knows which stored
# partitions are stale (unchanged code + unchanged inputs are skipped).
CODE_VERSION = "2"


@dataclass
class Normalized:
    """A parsed table plus what the manifest must say about how it was made."""

    table: pa.Table | None
    inputs: dict[str, int] = field(default_factory=dict)  # input key -> rows read from it
    notes: list[str] = field(default_factory=list)
    sources: list[str] | None = None  # inputs the rows come from (default: all of ``inputs``)
    # input key -> {release, url, file, origin, sha256, bytes, excerpt, derived, note} of the
    # exact file this table was built from (filled by ``emit`` from the step's own inputs)
    provenance: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def built_from(self) -> list[str]:
        return sorted(self.inputs if self.sources is None else self.sources)


def fail(exc: Exception) -> Failure:
    """A Dagster failure whose message is the parser's own (file, row, column), no traceback."""
    return Failure(description=str(exc))


def describe(f: Fetched) -> dict[str, Any]:
    """What the manifest records about one input file (everything but its bytes)."""
    return {"release": f.release, "url": f.url, "file": f.file, "origin": f.origin,
            "sha256": f.sha256, "bytes": f.size, "excerpt": f.excerpt, "derived": f.derived,
            "note": f.note}


def raw_asset(source: str, group: str) -> Any:
    """The asset that fetches every input of ``source`` for a reference release."""

    @asset(
        name=f"{source}_raw", group_name=group, partitions_def=PARTITIONS,
        code_version=CODE_VERSION,
        description=f"Release files for {source}, downloaded or read from the mirror.",
    )
    def _raw(context: AssetExecutionContext, cms: CmsSource) -> dict[str, Fetched]:
        try:
            fetcher = cms.fetcher()
        except SourceError as exc:
            raise fail(exc) from None
        out: dict[str, Fetched] = {}
        for spec in release_inputs(context.partition_key, source):
            try:
                got = fetcher.obtain(spec)
            except SourceError as exc:
                raise fail(exc) from None
            if got is None:
                context.log.info(f"{spec.key}: not available here (optional), skipped")
                continue
            out[spec.key] = got
            context.log.info(f"{spec.key}: {got.file} from {got.origin}, {got.size:,} bytes, "
                             f"sha256 {got.sha256[:12]}")
        context.add_output_metadata({
            "files": MetadataValue.md("\n".join(
                f"- `{k}`: {f.file} ({f.origin}, {f.size:,} B, sha256 `{f.sha256[:16]}`"
                f"{', excerpt' if f.excerpt else ''}{', derived' if f.derived else ''})"
                for k, f in out.items())),
            "sha256": MetadataValue.json({k: f.sha256 for k, f in out.items()}),
        })
        return out

    return _raw


# table -> its blocking checks, filled as the asset modules declare them; the bundle asks
# the instance for the latest evaluation of each before it publishes.
CHECKS_OF: dict[str, tuple[str, ...]] = {}


def table_check_specs(name: str, extra: tuple[str, ...] = ()) -> list[AssetCheckSpec]:
    """Blocking, partitioned check specs: each evaluation is recorded for its release, which
    is what lets ``reference_bundle`` ask for the latest one of that release (Dagster marks
    partitioned check specs as preview; its warning is silenced here, not globally)."""
    CHECKS_OF[name] = (*TABLE_CHECKS, *extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PreviewWarning)
        return [AssetCheckSpec(c, asset=name, blocking=True, partitions_def=PARTITIONS)
                for c in CHECKS_OF[name]]


def step_provenance(context: AssetExecutionContext, keys: list[str]) -> dict[str, dict]:
    """Provenance of ``keys`` from the inputs this step loaded (raw files, upstream tables)."""
    from ..storage import loaded_for_step

    found: dict[str, dict[str, Any]] = {}
    partition = context.partition_key
    # upstream tables first: a table built from another table (fee_schedule from hcpcs_rvu)
    # takes that table's record of an input, not the raw asset's current file
    for upstream in sorted(context.assets_def.dependency_keys,
                           key=lambda k: (k.path[-1].endswith("_raw"), k.path[-1])):
        for k, rec in (loaded_for_step(upstream.to_user_string(), partition) or {}).items():
            found.setdefault(k, rec)
    missing = [k for k in keys if k not in found]
    if missing:
        raise Failure(description=(
            f"cannot tell which files inputs {', '.join(missing)} were: the step's inputs "
            "were not loaded by pipelines.storage.ArrowIOManager"))
    return {k: found[k] for k in sorted(keys)}


def emit(context: AssetExecutionContext, name: str, result: Normalized, store: BundleStore,
         extra: dict[str, list[str]] | None = None) -> Iterator[Any]:
    """Evaluate and report every check of one table, then yield it only if they all pass.

    Each check reports its own finding. A table the release does not have is reported
    absent (a warning, not a pass) when the release declares it absent in ``ABSENT_TABLES``
    and fails every check otherwise. On any failure the step fails before its output is
    stored, so no later step or run can read the failed table.
    """
    release = context.partition_key
    checks = [s.name for s in context.assets_def.check_specs if s.asset_key.path[-1] == name]
    declared = ABSENT_TABLES.get(release, {}).get(name)
    results: dict[str, tuple[bool, AssetCheckSeverity, str, list[str]]] = {}
    if result.table is None:
        why = "; ".join(result.notes) or "not built"
        for c in checks:
            if declared:
                results[c] = (False, AssetCheckSeverity.WARN,
                              f"absent: release {release} declares it absent ({declared})", [])
            else:
                results[c] = (False, AssetCheckSeverity.ERROR, "table not built",
                              [f"{name} was not built ({why}) and release {release} does not "
                               "declare it absent"])
    else:
        problems = table_problems(result.table, name, row_ranges=store.enforce_row_ranges)
        problems.update(extra or {})
        for c in checks:
            found = problems.get(c)
            if found is None:
                found = [f"check {c} was not evaluated for {name}"]
            results[c] = (not found, AssetCheckSeverity.ERROR,
                          "passed" if not found else f"{len(found)} problem(s)", found)
    for c, (passed, severity, desc, found) in results.items():
        yield AssetCheckResult(
            asset_key=name, check_name=c, passed=passed, severity=severity, description=desc,
            metadata={"status": "absent" if (result.table is None and declared) else
                      ("passed" if passed else "failed"),
                      "problems": MetadataValue.md("\n".join(f"- {p}" for p in found) or "none")},
        )
    failed = {c: r[3] for c, r in results.items() if r[1] == AssetCheckSeverity.ERROR
              and not r[0]}
    if failed:
        raise Failure(description=f"{name} ({release}) failed blocking checks, not stored: "
                      + "; ".join(f"{c}: {' | '.join(p)}" for c, p in failed.items()))
    if result.table is not None:
        result.provenance = step_provenance(context, sorted({*result.inputs, *result.built_from}))
    meta: dict[str, Any] = {"inputs": MetadataValue.json(result.inputs),
                            "sha256": MetadataValue.json({k: v["sha256"] for k, v in
                                                          result.provenance.items()})}
    if result.table is not None:
        meta["rows"] = result.table.num_rows
    else:
        meta["absent"] = declared or ""
    if result.notes:
        meta["notes"] = MetadataValue.md("\n".join(f"- {n}" for n in result.notes))
    yield Output(result, metadata=meta)


def table_asset(name: str, group: str, raw: str,
                build: Callable[[dict[str, Fetched]], Normalized]) -> Any:
    """A normalized table built from one source's raw files, checked before it can publish."""

    @asset(
        name=name, group_name=group, partitions_def=PARTITIONS, code_version=CODE_VERSION,
        ins={"raw": AssetIn(raw)}, check_specs=table_check_specs(name),
        description=TABLES[name].description,
    )
    def _table(context: AssetExecutionContext, store: BundleStore,
               raw: dict[str, Fetched]) -> Iterator[Any]:
        try:
            result = build(raw)
        except SourceError as exc:
            raise fail(exc) from None
        yield from emit(context, name, result, store)

    return _table
