"""The IO manager: intermediates as Arrow IPC files + JSON, never pickles.

Pickles of a dataclass tie every stored partition to today's class layout (a refactor made
old partitions unreadable) and cost 307 MB a partition; Arrow files are typed, readable by
any tool, and memory-mapped on load. Layout under ``base_dir``::

    <asset>/<partition>/table.arrow + meta.json   a normalized table (``Normalized``)
    <asset>/<partition>/meta.json (absent: true)  a table the release does not have
    <asset>/<partition>/<key>.bin.zst + meta.json a raw asset: the files as fetched (zstd)
    <asset>/<partition>/value.json                anything else (the bundle's summary)

``meta.json`` is written last and records the sha256 of every file beside it, so a torn
write (a crash between files) is refused on load instead of being read half old, half new.

Loads also note what they handed to the running step (``loaded_for_step``): a table's
provenance is taken from the very raw files and upstream tables its step read, not from
whatever the raw asset holds when the bundle is published.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.ipc as ipc
from dagster import ConfigurableIOManager, InputContext, OutputContext
from pydantic import Field

from .defs.common import Normalized, describe
from .lib.errors import SourceError
from .lib.fetch import Fetched

_IPC = ipc.IpcWriteOptions(compression="lz4")
_ZSTD = pa.Codec("zstd", compression_level=1)
# (asset, partition) -> provenance ({input key: record}) of the value most recently loaded in
# this process. A step's inputs are
# loaded in the process that runs the step, just before it runs (in-process executor:
# sequentially; multiprocess: one process per step), so a step finds its own inputs here.
_LOADED: dict[tuple[str, str], Any] = {}


def loaded_for_step(asset: str, partition: str) -> dict[str, dict[str, Any]] | None:
    """Provenance of the value of ``asset`` the IO manager last handed to a step here."""
    return _LOADED.get((asset, partition))


def _sha(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _write(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    tmp.write_bytes(data)
    os.replace(tmp, path)


class ArrowIOManager(ConfigurableIOManager):
    """Stores each asset partition as Arrow IPC and JSON under ``base_dir``."""

    base_dir: str | None = Field(
        default=None,
        description="Where intermediates live; default <instance storage>/clarus.",
    )

    def _dir(self, context: InputContext | OutputContext) -> Path:
        base = Path(self.base_dir) if self.base_dir else \
            Path(context.step_context.instance.storage_directory()) / "clarus"
        part = context.asset_partition_key if context.has_asset_partitions else "__all__"
        return base.joinpath(*context.asset_key.path, part)

    def handle_output(self, context: OutputContext, obj: Any) -> None:
        d = self._dir(context)
        d.mkdir(parents=True, exist_ok=True)
        files: dict[str, str] = {}
        if isinstance(obj, Normalized):
            meta: dict[str, Any] = {"kind": "table", "inputs": obj.inputs, "notes": obj.notes,
                                    "sources": obj.sources, "provenance": obj.provenance,
                                    "absent": obj.table is None}
            if obj.table is not None:
                # streamed to disk: a 10M-row table is never also held as one bytes object
                tmp = d / f".table.arrow.tmp-{os.getpid()}"
                with pa.OSFile(str(tmp), "wb") as sink, \
                        ipc.new_file(sink, obj.table.schema, options=_IPC) as w:
                    w.write_table(obj.table)
                os.replace(tmp, d / "table.arrow")
                files["table.arrow"] = _sha(d / "table.arrow")
        elif isinstance(obj, dict) and context.asset_key.path[-1].endswith("_raw"):
            records = {}
            for key, f in obj.items():
                # zstd level 1: release files are text, ~5x smaller for ~1 s per GB
                packed = _ZSTD.compress(f.data, asbytes=True)
                _write(d / f"{key}.bin.zst", packed)
                files[f"{key}.bin.zst"] = hashlib.sha256(packed).hexdigest()
                records[key] = {k: getattr(f, k) for k in (
                    "key", "url", "file", "origin", "excerpt", "derived", "release", "note")}
                records[key].update(size=f.size, sha256=f.sha256)
            meta = {"kind": "raw", "files": records}
        else:
            meta = {"kind": "json", "value": obj}
        meta["sha256"] = files
        _write(d / "meta.json", json.dumps(meta, sort_keys=True, indent=1).encode())

    def load_input(self, context: InputContext) -> Any:
        d = self._dir(context)
        asset = context.asset_key.to_user_string()
        try:
            meta = json.loads((d / "meta.json").read_text())
        except FileNotFoundError:
            raise SourceError(f"{asset} has nothing stored under {d}; materialize it "
                              "first") from None
        for name, want in meta["sha256"].items():
            if _sha(d / name) != want:
                raise SourceError(f"{d / name} does not match its meta.json (a write was "
                                  "interrupted); materialize the asset again")
        value: Any
        if meta["kind"] == "table":
            table = None
            if not meta["absent"]:
                table = ipc.open_file(pa.memory_map(str(d / "table.arrow"))).read_all()
            value = Normalized(table, meta["inputs"], meta["notes"], meta["sources"],
                               meta["provenance"])
        elif meta["kind"] == "raw":
            value = {}
            for key, rec in meta["files"].items():
                rec = dict(rec)
                size, sha = rec.pop("size"), rec.pop("sha256")
                data = _ZSTD.decompress((d / f"{key}.bin.zst").read_bytes(), size, asbytes=True)
                value[key] = Fetched(data=data, **rec)
                if value[key].sha256 != sha:
                    raise SourceError(f"{d / key}.bin.zst does not unpack to the file it stored")
        else:
            value = meta["value"]
        if context.has_asset_partitions:  # provenance only: the data itself is not kept
            _LOADED[(asset, context.asset_partition_key)] = (
                dict(value.provenance) if isinstance(value, Normalized) else
                {k: describe(f) for k, f in value.items()} if meta["kind"] == "raw" else None)
        return value
