"""Read-only access to a reference bundle (``bundles/reference/<release>/``).

Opening a bundle reads only ``manifest.json``; a table is memory-mapped the first time a
lookup needs it, and the lookup indexes are built from sorted key runs rather than from
Python dicts over millions of rows, so opening stays in the milliseconds and the first NCCI
lookup costs one pass over a single column.
"""

from __future__ import annotations

import json
import os
from bisect import bisect_left
from decimal import Decimal
from pathlib import Path
from typing import Any

REPO_BUNDLES = Path(__file__).resolve().parents[1] / "bundles" / "reference"
FORMAT = "clarus-reference-bundle"
_CENT = Decimal("0.01")


class BundleError(Exception):
    """A bundle is missing, incomplete or of an unknown format."""


def default_bundle_dir() -> Path:
    """``$CLARUS_REFERENCE_BUNDLE`` or the newest release committed under ``bundles/reference``."""
    env = os.environ.get("CLARUS_REFERENCE_BUNDLE")
    if env:
        return Path(env)
    releases = sorted(p for p in REPO_BUNDLES.glob("*") if (p / "manifest.json").is_file())
    if not releases:
        raise BundleError(f"no reference bundle under {REPO_BUNDLES}; build one with the pipeline")
    return releases[-1]


_OPEN: dict[Path, ReferenceBundle] = {}


def open_reference(path: str | Path | None = None) -> ReferenceBundle:
    """The bundle at ``path`` (default: newest committed), shared per process.

    Bundles are read-only, so one instance per path lets every env and compile in a process
    reuse the same memory-mapped tables and lookup indexes.
    """
    resolved = (Path(path) if path else default_bundle_dir()).resolve()
    if resolved not in _OPEN:
        _OPEN[resolved] = ReferenceBundle(resolved)
    return _OPEN[resolved]


def normalize_icd10cm(code: str) -> str:
    """Accept 'E119', 'e11.9' or 'E11.9' and return the dotted form the bundle stores."""
    c = code.strip().upper().replace(".", "")
    return c if len(c) <= 3 else f"{c[:3]}.{c[3:]}"


class ReferenceBundle:
    """Lookups over one reference bundle: RVUs, fees, NCCI edits, MUEs, ICD-10-CM, CARC/RARC,
    OPPS and ASC facility rates."""

    def __init__(self, path: Path) -> None:
        # A published release is a link (``<root>/<release>``) flipped atomically to an
        # immutable directory; resolving it once pins this reader to one release, so tables
        # opened lazily later never mix with a release published in between.
        self.path = Path(path).resolve()
        manifest = self.path / "manifest.json"
        if not manifest.is_file():
            raise BundleError(f"{self.path} is not a reference bundle (no manifest.json)")
        self.manifest: dict[str, Any] = json.loads(manifest.read_text())
        if self.manifest.get("format") != FORMAT:
            raise BundleError(f"{manifest}: unknown bundle format {self.manifest.get('format')!r}")
        self.release: str = self.manifest["release"]
        self._tables: dict[str, Any] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}  # point lookups the compiler repeats
        self._runs: dict[tuple[str, str], dict[str, tuple[int, int]]] = {}
        self._cols: dict[tuple[str, str], list[Any]] = {}

    def __repr__(self) -> str:
        return f"ReferenceBundle({str(self.path)!r}, release={self.release!r})"

    @property
    def table_names(self) -> list[str]:
        return sorted(self.manifest["outputs"])

    def table(self, name: str) -> Any:
        """The whole table as a ``pyarrow.Table`` (memory-mapped file)."""
        if name not in self._tables:
            if name not in self.manifest["outputs"]:
                raise KeyError(f"bundle {self.release} has no table {name!r}; "
                               f"it has {', '.join(self.table_names)}")
            import pyarrow as pa
            import pyarrow.ipc as ipc

            source = pa.memory_map(str(self.path / self.manifest["outputs"][name]["file"]))
            self._tables[name] = ipc.open_file(source).read_all()
        return self._tables[name]

    # -- indexes -------------------------------------------------------------------------
    def _column(self, table: str, column: str) -> list[Any]:
        key = (table, column)
        if key not in self._cols:
            self._cols[key] = self.table(table).column(column).to_pylist()
        return self._cols[key]

    def _runs_of(self, table: str, column: str) -> dict[str, tuple[int, int]]:
        """{value: (start, stop)} for a column the table is sorted by."""
        key = (table, column)
        if key not in self._runs:
            import pyarrow.compute as pc

            ree = pc.run_end_encode(self.table(table).column(column).combine_chunks())
            values = ree.values.to_pylist()
            ends = ree.run_ends.to_pylist()
            starts = [0, *ends[:-1]]
            self._runs[key] = {v: (s, e) for v, s, e in zip(values, starts, ends, strict=True)}
        return self._runs[key]

    def _rows(self, table: str, column: str, value: str) -> list[dict[str, Any]]:
        start, stop = self._runs_of(table, column).get(value, (0, 0))
        if start == stop:
            return []
        return self.table(table).slice(start, stop - start).to_pylist()

    def _unique(self, table: str, column: str, value: str) -> dict[str, Any] | None:
        values = self._column(table, column)
        i = bisect_left(values, value)
        if i < len(values) and values[i] == value:
            return self.table(table).slice(i, 1).to_pylist()[0]
        return None

    # -- lookups -------------------------------------------------------------------------
    def _memoized(self, key: tuple[Any, ...], compute: Any) -> Any:
        """Cache a point lookup; callers get their own copy of a row, never the cached one."""
        if key not in self._memo:
            self._memo[key] = compute()
        row = self._memo[key]
        return dict(row) if isinstance(row, dict) else row

    def rvu(self, hcpcs: str, modifier: str = "") -> dict[str, Any] | None:
        """PPRRVU row (RVUs, status, indicators, description) for a code and modifier."""
        code, mod = hcpcs.strip().upper(), modifier.strip().upper()

        def compute() -> dict[str, Any] | None:
            rows = self._rows("hcpcs_rvu", "hcpcs", code)
            return next((r for r in rows if r["modifier"] == mod), None)

        return self._memoized(("rvu", code, mod), compute)

    def describe(self, code: str) -> str | None:
        """Short description of a CPT/HCPCS code (PPRRVU first, then HCPCS Level II)."""
        row = self.rvu(code)
        if row:
            return row["description"]
        rows = self._rows("hcpcs_level2", "code", code.strip().upper())
        return rows[0]["short_description"] if rows else None

    def hcpcs_level2(self, code: str) -> dict[str, Any] | None:
        rows = self._rows("hcpcs_level2", "code", code.strip().upper())
        return next((r for r in rows if r["kind"] == "code"), rows[0] if rows else None)

    def locality(self, mac: str, locality: str) -> dict[str, Any] | None:
        """GPCI row for a Medicare locality (MAC 5 digits, locality 2 digits)."""
        rows = self._rows("gpci", "mac", mac.zfill(5))
        return next((r for r in rows if r["locality"] == locality.zfill(2)), None)

    def localities(self) -> list[dict[str, Any]]:
        return self.table("gpci").to_pylist()

    def fee(self, hcpcs: str, mac: str, locality: str, *, modifier: str = "",
            facility: bool = False) -> Decimal | None:
        """MPFS amount for a code at a locality; None if not priced there (or NA setting)."""
        row = self.fee_row(hcpcs, mac, locality, modifier=modifier)
        if row is None:
            return None
        return row["fac_amount" if facility else "nonfac_amount"]

    def fee_row(self, hcpcs: str, mac: str, locality: str, *,
                modifier: str = "") -> dict[str, Any] | None:
        key = ("fee", hcpcs.strip().upper(), modifier.strip().upper(), mac.zfill(5),
               locality.zfill(2))
        return self._memoized(key, lambda: self._fee_row(hcpcs, mac, locality, modifier))

    def _fee_row(self, hcpcs: str, mac: str, locality: str, modifier: str
                 ) -> dict[str, Any] | None:
        start, stop = self._runs_of("fee_schedule", "hcpcs").get(hcpcs.strip().upper(), (0, 0))
        if start == stop:
            return None
        part = self.table("fee_schedule").slice(start, stop - start)
        want = (modifier.strip().upper(), mac.zfill(5), locality.zfill(2))
        keys = list(zip(part.column("modifier").to_pylist(), part.column("mac").to_pylist(),
                        part.column("locality").to_pylist(), strict=True))
        i = bisect_left(keys, want)
        if i < len(keys) and keys[i] == want:
            return part.slice(i, 1).to_pylist()[0]
        return None

    def ncci_edits(self, column_1: str, column_2: str | None = None, *,
                   active_only: bool = True) -> list[dict[str, Any]]:
        """PtP edits with ``column_1`` (optionally only against ``column_2``)."""
        rows = self._rows("ncci_ptp", "column_1", column_1.strip().upper())
        if column_2 is not None:
            rows = [r for r in rows if r["column_2"] == column_2.strip().upper()]
        if active_only:
            rows = [r for r in rows if r["deletion_date"] is None]
        return rows

    def ncci_edit(self, column_1: str, column_2: str) -> dict[str, Any] | None:
        """The active edit for a pair, or None when the pair may be billed together."""
        rows = self.ncci_edits(column_1, column_2)
        return rows[-1] if rows else None

    def mue(self, hcpcs: str) -> dict[str, Any] | None:
        return self._unique("mue", "hcpcs", hcpcs.strip().upper())

    def icd10cm(self, code: str) -> dict[str, Any] | None:
        """ICD-10-CM node (code, kind, description, parent, chapter, block, billable, notes)."""
        return self._unique("icd10cm", "code", normalize_icd10cm(code))

    def icd10cm_ancestors(self, code: str) -> list[dict[str, Any]]:
        """The node and its ancestors up to the chapter, nearest first."""
        out = []
        node = self.icd10cm(code)
        while node is not None:
            out.append(node)
            parent = node["parent"]
            node = self._unique("icd10cm", "code", parent) if parent else None
        return out

    def carc(self, code: str) -> dict[str, Any] | None:
        return self._unique("carc", "code", code.strip().upper())

    def rarc(self, code: str) -> dict[str, Any] | None:
        return self._unique("rarc", "code", code.strip().upper())

    def opps(self, hcpcs: str) -> dict[str, Any] | None:
        """OPPS Addendum B row (hospital outpatient) for a code, or None when it is not listed.

        Keys: ``hcpcs, description, status_indicator, apc, apc_title, relative_weight,
        payment_rate``
        (national unadjusted, ``Decimal``; None when not separately paid under OPPS, e.g. status
        indicator B, N or C), ``national_copay, minimum_copay, adjusted_copay,
        ira_coinsurance_pct, comment_indicator, pass_through_expires, note`` and ``release``
        (the Addendum B release the bundle holds, e.g. ``CY2025-final``).
        """
        code = hcpcs.strip().upper()
        return self._memoized(("opps", code), lambda: self._rate_row("opps_rate", code))

    def asc(self, hcpcs: str) -> dict[str, Any] | None:
        """ASC Addendum AA row (ambulatory surgical center) for a code, or None when the code
        is not an ASC covered surgical procedure.

        Keys: ``hcpcs, description, payment_indicator, payment_weight, payment_rate`` (national
        unadjusted, ``Decimal``; None for packaged N1 codes), ``multiple_procedure_discount``
        (bool), ``comment_flag`` (``*`` temporary office-based, ``**`` preventive) and
        ``release`` (the quarter, e.g. ``2026-04``).
        """
        code = hcpcs.strip().upper()
        return self._memoized(("asc", code), lambda: self._rate_row("asc_rate", code))

    def _rate_row(self, table: str, code: str) -> dict[str, Any] | None:
        row = self._unique(table, "hcpcs", code)
        if row is None:
            return None
        rate = row["payment_rate"]
        if rate is not None and rate == rate.quantize(_CENT):
            row["payment_rate"] = rate.quantize(_CENT)  # $5,834.36, not 5834.360
        row["release"] = ", ".join(self.manifest["outputs"][table].get("releases", []))
        return row

    def plan(self, plan_id: str) -> dict[str, Any] | None:
        return self._unique("plan_templates", "plan_id", plan_id)

    def plans(self) -> list[dict[str, Any]]:
        return self.table("plan_templates").to_pylist()
