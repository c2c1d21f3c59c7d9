"""What every source's assets share: the release partitions, the raw-fetch asset factory,
and the normalized-table asset factory with its blocking pre-publish checks."""


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

from ..lib.checks import table_problems
from ..lib.errors import SourceError
from ..lib.fetch import Fetched
from ..lib.tables import TABLES
from ..resources import BundleStore, CmsSource
from ..sources import RELEASES, release_inputs

PARTITIONS = StaticPartitionsDefinition(sorted(RELEASES))
TABLE_CHECKS = ("schema", "formats", "unique_key", "row_count")


@dataclass
class Normalized:
    """A parsed table plus what the manifest must say about how it was made."""

    table: pa.Table | None
    inputs: dict[str, int] = field(default_factory=dict)  # input key -> rows read from it
    notes: list[str] = field(default_factory=list)
    sources: list[str] | None = None  # inputs the rows come from (default: all of ``inputs``)

    @property
    def built_from(self) -> list[str]:
        return sorted(self.inputs if self.sources is None else self.sources)


def fail(exc: Exception) -> Failure:
    """A Dagster failure whose message is the parser's own (file, row, column), no traceback."""
    return Failure(description=str(exc))


def raw_asset(source: str, group: str) -> Any:
    """The asset that fetches every input of ``source`` for a reference release."""

    @asset(
        name=f"{source}_raw", group_name=group, partitions_def=PARTITIONS,
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
        })
        return out

    return _raw


def table_check_specs(name: str, extra: tuple[str, ...] = ()) -> list[AssetCheckSpec]:
    return [AssetCheckSpec(c, asset=name, blocking=True) for c in (*TABLE_CHECKS, *extra)]


def emit(context: AssetExecutionContext, name: str, result: Normalized, store: BundleStore,
         extra: dict[str, list[str]] | None = None) -> Iterator[Any]:
    """Yield the output and every blocking check result for one normalized table."""
    meta: dict[str, Any] = {"inputs": MetadataValue.json(result.inputs)}
    if result.table is not None:
        meta["rows"] = result.table.num_rows
    if result.notes:
        meta["notes"] = MetadataValue.md("\n".join(f"- {n}" for n in result.notes))
    yield Output(result, metadata=meta)
    if result.table is None:
        problems: dict[str, list[str]] = {c: [] for c in TABLE_CHECKS}
    else:
        problems = table_problems(result.table, name, row_ranges=store.enforce_row_ranges)
        for c in TABLE_CHECKS:
            problems.setdefault(c, [])
    problems.update(extra or {})
    for check, found in problems.items():
        yield AssetCheckResult(
            asset_key=name, check_name=check, passed=not found,
            severity=AssetCheckSeverity.ERROR,
            metadata={"problems": MetadataValue.md("\n".join(f"- {p}" for p in found) or "none")},
        )


def table_asset(name: str, group: str, raw: str,
                build: Callable[[dict[str, Fetched]], Normalized]) -> Any:
    """A normalized table built from one source's raw files, checked before it can publish."""

    @asset(
        name=name, group_name=group, partitions_def=PARTITIONS,
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
