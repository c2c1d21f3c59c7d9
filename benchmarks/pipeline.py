"""Pipeline speed figures: full build, NCCI parse rate, bundle open, package import.

Prints figures with a baseline measured in the same process (ratios, not absolute
targets, are what survive a change of machine). Run: ``make bench`` or
``.venv/bin/python benchmarks/pipeline.py [--skip-build]``.
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def best_of(fn, n: int = 3) -> float:  # noqa: ANN001
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times)


def bench_build(mirror: Path) -> None:
    from dagster import DagsterInstance, materialize

    from pipelines.definitions import make_definitions
    from pipelines.resources import BundleStore, CmsSource

    with tempfile.TemporaryDirectory() as tmp:
        defs = make_definitions(CmsSource(mirror_dir=str(mirror)), BundleStore(root=tmp))
        assets = list(defs.assets or [])
        t = time.perf_counter()
        with DagsterInstance.ephemeral() as instance:
            res = materialize(assets, partition_key="2026C", instance=instance,
                              resources=defs.resources)
        took = time.perf_counter() - t
        assert res.success
        size = sum(p.stat().st_size for p in (Path(tmp) / "2026C").iterdir())
    print(f"full reference build 2026C from the mirror (Dagster in-process): {took:.1f} s, "
          f"bundle {size / 1e6:.1f} MB")


def bench_ncci(rows: int) -> None:
    from pipelines.lib.ncci import generate_ptp_official, parse_ptp_official

    data = generate_ptp_official(rows, seed=7)
    t_parse = best_of(lambda: parse_ptp_official(data, "generated.txt"), 3)

    def baseline() -> None:  # stdlib csv split of the same bytes, no typing or validation
        for _ in csv.reader(io.StringIO(data.decode("latin-1")), delimiter="\t"):
            pass

    t_base = best_of(baseline, 1)
    print(f"NCCI PtP official-layout parse, {rows:,} generated rows ({len(data) / 1e6:.0f} MB): "
          f"{t_parse:.2f} s = {rows / t_parse / 1e6:.2f} M rows/s "
          f"(stdlib csv split alone: {rows / t_base / 1e6:.2f} M rows/s; "
          f"ratio {t_base / t_parse:.1f}x faster)")


def bench_open() -> None:
    from clarus_env.reference import ReferenceBundle, default_bundle_dir

    path = default_bundle_dir()
    opens = []
    for _ in range(20):
        t = time.perf_counter()
        ReferenceBundle(path)
        opens.append(time.perf_counter() - t)
    ref = ReferenceBundle(path)
    t = time.perf_counter()
    ref.ncci_edit("96372", "99211")
    first_ncci = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(1000):
        ref.ncci_edit("96372", "99211")
    ncci_us = (time.perf_counter() - t) * 1e3
    t = time.perf_counter()
    ref.fee("99213", "04412", "18")
    first_fee = time.perf_counter() - t
    t = time.perf_counter()
    for _ in range(1000):
        ref.fee("99213", "04412", "18")
    fee_us = (time.perf_counter() - t) * 1e3
    print(f"bundle open ({path.name}): median {statistics.median(opens) * 1e3:.2f} ms; "
          f"first NCCI lookup {first_ncci * 1e3:.0f} ms then {ncci_us:.0f} µs/lookup; "
          f"first fee lookup {first_fee * 1e3:.0f} ms then {fee_us:.0f} µs/lookup")


def bench_import() -> None:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}

    def run(code: str) -> float:
        times = []
        for _ in range(7):
            t = time.perf_counter()
            subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=REPO)
            times.append(time.perf_counter() - t)
        return statistics.median(times)

    base = run("pass")
    ours = run("import clarus_env")
    arrow = run("import pyarrow")
    print(f"import clarus_env: {(ours - base) * 1e3:.0f} ms over a bare interpreter "
          f"({base * 1e3:.0f} ms); import pyarrow alone costs {(arrow - base) * 1e3:.0f} ms")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--skip-build", action="store_true")
    p.add_argument("--ncci-rows", type=int, default=2_000_000)
    p.add_argument("--mirror", default=os.environ.get(
        "CLARUS_CMS_MIRROR", str(REPO.parent / "shared" / "cms-data" / "raw")))
    args = p.parse_args()
    if not args.skip_build:
        bench_build(Path(args.mirror))
    bench_ncci(args.ncci_rows)
    bench_open()
    bench_import()


if __name__ == "__main__":
    main()
