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
_OPTIONS = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=19))


def table_bytes(table: pa.Table) -> bytes:
    """The exact bytes of ``table`` as a bundle file (zstd-compressed Arrow IPC)."""
    sink = pa.BufferOutputStream()
    with ipc.new_file(sink, table.schema, options=_OPTIONS) as writer:
        for batch in table.to_batches(max_chunksize=BATCH_ROWS):
            writer.write_batch(batch)
    return sink.getvalue().to_pybytes()


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    return (json.dumps(manifest, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()


def write_bundle(
    root: Path, release: str, tables: dict[str, pa.Table], manifest: dict[str, Any]
) -> Path:
    """Publish ``root/release`` with ``tables`` and ``manifest`` (outputs are filled in here).

    Everything is written to a temporary sibling directory first and swapped in with renames,
    so a failure at any point leaves the previously published bundle exactly as it was.
    """
    root.mkdir(parents=True, exist_ok=True)
    final = root / release
    tmp = root / f".{release}.tmp-{uuid.uuid4().hex[:8]}"
    old = root / f".{release}.old-{uuid.uuid4().hex[:8]}"
    tmp.mkdir()
    try:
        outputs: dict[str, Any] = {}
        for name in sorted(tables):
            data = table_bytes(tables[name])
            (tmp / f"{name}.arrow").write_bytes(data)
            outputs[name] = {
                "file": f"{name}.arrow",
                "rows": tables[name].num_rows,
                "sha256": hashlib.sha256(data).hexdigest(),
                "bytes": len(data),
            }
        full = {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "release": release,
            **manifest,
            "outputs": {k: {**manifest.get("outputs", {}).get(k, {}), **v}
                        for k, v in outputs.items()},
        }
        (tmp / "manifest.json").write_bytes(manifest_bytes(full))
        for f in tmp.iterdir():
            with open(f, "rb") as fh:
                os.fsync(fh.fileno())
        if final.exists():
            final.rename(old)
        tmp.rename(final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.exists() and not final.exists():
            old.rename(final)
        raise
    shutil.rmtree(old, ignore_errors=True)
    return final
