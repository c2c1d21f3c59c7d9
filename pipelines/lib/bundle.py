"""Writing a reference bundle: Arrow IPC files + ``manifest.json``, atomically.

Determinism is a product feature (benchmark readers must be able to rebuild and compare),
so nothing here records a time, a host or a random name inside the bundle, tables are
written in key order with a fixed batch size, and JSON is written with sorted keys.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc

FORMAT = "clarus-reference-bundle"
FORMAT_VERSION = 2
# Why each format version differs from the one before; the manifest repeats it, so a reader
# holding an older bundle knows what it lacks.
FORMAT_CHANGES = {
    "2": "the coding arena's search and get_icd10 need what a coder reads beyond titles "
         "(issue 9): icd10cm gains the tabular's inclusion_terms, use_additional_code, "
         "code_first, code_also, notes and seventh_characters (printed at each node, as "
         "includes/excludes already were); new tables icd10cm_eindex, icd10cm_neoplasm and "
         "icd10cm_drug hold CDC's FY2025 External Cause Index, Neoplasm Table and Table of "
         "Drugs and Chemicals. Every other table is unchanged.",
}
BATCH_ROWS = 65_536
# zstd level, chosen by measurement (benchmarks/pipeline.py --zstd 1,3,9,15,19 on the 2026C
# tables): levels 1-15 all give ~48-51 MB, level 19 gives 24.8 MB (0.49x) -- the only level
# that pays, and the bundle is committed and shipped, while its cost is paid once per
# refresh (decompression speed does not depend on the level). Builds that only need a
# bundle fast (scale benchmarks, CI fixtures) may pass a lower level; bytes then differ.
ZSTD_LEVEL = 19
# ... but level 19 is slow: ~4-8 MB/s of Arrow data, and levels 1-17 all give about the same
# size (real 2026C ncci_ptp, 199 MB uncompressed: 30.4 MB at level 1 in 0.1 s, 29.1 MB at 17,
# 12.4 MB at 19 in ~25-45 s; benchmarks/pipeline.py --zstd). A 10M-row NCCI quarter (715 MB)
# would spend 100+ s in level 19 alone, beyond the refresh's 60 s budget, so a table larger
# than LARGE_TABLE_BYTES is written at LARGE_TABLE_LEVEL (the fastest level, and no larger
# than 3-17 on this data), and the manifest says so for that table. Today's tables are all
# below the limit, so the committed bundle keeps level 19 throughout.
LARGE_TABLE_BYTES = 256 << 20
LARGE_TABLE_LEVEL = 1


def level_for(table: pa.Table, level: int = ZSTD_LEVEL) -> int:
    """The zstd level ``table`` is written at when ``level`` is asked for."""
    return min(level, LARGE_TABLE_LEVEL) if table.nbytes > LARGE_TABLE_BYTES else level


def batches(table: pa.Table) -> Iterator[pa.RecordBatch]:
    """``table`` as record batches of exactly ``BATCH_ROWS`` rows (the last one shorter),
    so the batch boundaries depend on the row count alone, never on how the columns are
    chunked (tables from ``conform`` have one chunk per column: these are plain slices)."""
    for start in range(0, table.num_rows, BATCH_ROWS):
        piece = table.slice(start, BATCH_ROWS)
        if any(c.num_chunks != 1 for c in piece.columns):
            piece = piece.combine_chunks()  # only a batch that straddles chunks is copied
        yield from piece.to_batches()


def write_table(sink: Any, table: pa.Table, level: int = ZSTD_LEVEL) -> None:
    """Write ``table`` to ``sink`` as a bundle file (zstd-compressed Arrow IPC), batch by
    batch: only one compressed batch is held at a time, never the whole file."""
    options = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=level))
    with ipc.new_file(sink, table.schema, options=options) as writer:
        for batch in batches(table):
            writer.write_batch(batch)


def table_bytes(table: pa.Table, level: int = ZSTD_LEVEL) -> bytes:
    """The exact bytes of ``table`` as a bundle file (zstd-compressed Arrow IPC)."""
    sink = pa.BufferOutputStream()
    write_table(sink, table, level)
    return sink.getvalue().to_pybytes()


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


RELEASES_DIR = ".releases"


class PublishError(Exception):
    """A bundle cannot be published where it was asked to go."""


def write_bundle(
    root: Path, release: str, tables: dict[str, pa.Table], manifest: dict[str, Any],
    level: int = ZSTD_LEVEL,
) -> Path:
    """Publish ``tables`` + ``manifest`` as release ``release`` under ``root``; return
    ``root/release`` (outputs are filled in here).

    Releases are immutable and content-addressed: the files go to
    ``root/.releases/<release>-<sha256 of manifest.json>/`` (written under a temporary name,
    fsynced, then renamed), and ``root/<release>`` is a symlink flipped to it with one
    ``rename`` -- there is never a moment without a ``<release>``, a crash leaves the old one,
    and a reader that resolved the link keeps reading one release whole. Publishing the same
    content again only re-points the link. A plain directory at ``root/<release>`` (a
    committed bundle in a checkout) is refused rather than rewritten in place.
    """
    root.mkdir(parents=True, exist_ok=True)
    pointer = root / release
    if pointer.exists() and not pointer.is_symlink():
        raise PublishError(
            f"{pointer} is a plain directory (a committed bundle?), not a published release "
            "pointer; publish into another root (CLARUS_BUNDLE_ROOT) and copy from there")
    store = root / RELEASES_DIR
    store.mkdir(exist_ok=True)
    tmp = store / f".tmp-{release}-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        outputs: dict[str, Any] = {}
        for name in sorted(tables):
            path = tmp / f"{name}.arrow"
            used = level_for(tables[name], level)
            data = table_bytes(tables[name], used)
            path.write_bytes(data)
            outputs[name] = {
                "file": f"{name}.arrow",
                "rows": tables[name].num_rows,
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
            }
            del data
            if used != level:
                outputs[name]["compression"] = (
                    f"zstd level {used}, not {level}: {tables[name].nbytes / 1e6:,.0f} MB of "
                    f"Arrow data is over the {LARGE_TABLE_BYTES >> 20} MiB that level {level} "
                    "compresses within the refresh's time budget; levels 1-17 give about the "
                    "same size, so the fastest is used (pipelines/lib/bundle.py)")
        full = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "release": release,
            **manifest,
            "outputs": {k: {**manifest.get("outputs", {}).get(k, {}), **v}
                        for k, v in outputs.items()},
        }
        body = manifest_bytes(full)
        (tmp / "manifest.json").write_bytes(body)
        for f in tmp.iterdir():
            _fsync(f)
        final = store / f"{release}-{hashlib.sha256(body).hexdigest()[:16]}"
        if final.is_dir():
            shutil.rmtree(tmp)  # the same content is already published: keep it as it is
        else:
            tmp.rename(final)
            _fsync(store)
        link = root / f".{release}.link-{uuid.uuid4().hex[:8]}"
        os.symlink(f"{RELEASES_DIR}/{final.name}", link)
        try:
            os.replace(link, pointer)
        except BaseException:
            link.unlink(missing_ok=True)
            raise
        _fsync(root)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return pointer


def _fsync(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
