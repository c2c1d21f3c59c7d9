"""Pipeline speed figures: full build, NCCI at scale, NCCI parse rate, bundle open, import.

``--scale 1,4`` runs the whole asset graph (the Dagster path a refresh takes) on the mirror
with NCCI PtP replaced by a generated official-layout quarter of N x 2,546,017 rows (the
real 2024 Q3 table's size) in four parts, each build in a child process so its peak RSS is
its own; it prints time, peak RSS, the size of the intermediates and of the bundle.

Prints figures with a baseline measured in the same process (ratios, not absolute
targets, are what survive a change of machine). Run: ``make bench`` or
``.venv/bin/python benchmarks/pipeline.py [--skip-build]``.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
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
        defs = make_definitions(CmsSource(mirror_dir=str(mirror)),
                                BundleStore(root=str(Path(tmp) / "out")))
        assets = list(defs.assets or [])
        t = time.perf_counter()
        with DagsterInstance.ephemeral() as instance:
            res = materialize(assets, partition_key="2026C", instance=instance,
                              resources=defs.resources)
        took = time.perf_counter() - t
        assert res.success
        size = sum(p.stat().st_size for p in (Path(tmp) / "out" / "2026C").iterdir())
    print(f"full reference build 2026C from the mirror (Dagster in-process): {took:.1f} s, "
          f"bundle {size / 1e6:.1f} MB")


REAL_PTP_ROWS = 2_546_017


def _scaled_mirror(mirror: Path, tmp: Path, rows: int) -> Path:
    """A mirror dir: links to the real mirror, plus four generated official PtP parts."""
    from pipelines.lib.ncci import generate_ptp_official

    out = tmp / "mirror"
    out.mkdir()
    for entry in mirror.iterdir():
        (out / entry.name).symlink_to(entry)
    data = generate_ptp_official(rows, seed=7)
    lines = data.split(b"\r\n")
    header, body = lines[:6], [r for r in lines[6:] if r]
    gen = out / "generated"
    gen.mkdir()
    per = -(-len(body) // 4)
    for n in range(4):
        part = body[n * per:(n + 1) * per]
        (gen / f"ccipra-bench-f{n + 1}.txt").write_bytes(b"\r\n".join(header + part) + b"\r\n")
    return out


class _Sampler:
    """RSS and CPU time of this process every 20 ms, so each step's peak can be told apart
    (``ru_maxrss`` only gives the peak of the whole run)."""

    def __init__(self) -> None:
        import threading

        import psutil

        self.proc = psutil.Process()
        self.samples: list[tuple[float, int, float]] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            cpu = self.proc.cpu_times()
            self.samples.append((time.time(), self.proc.memory_info().rss,
                                 cpu.user + cpu.system))
            self.stop.wait(0.02)

    def close(self) -> None:
        self.stop.set()
        self.thread.join()

    def window(self, t0: float, t1: float) -> tuple[float, float, float]:
        """(RSS GB at t0, peak RSS GB within [t0, t1], CPU seconds spent in it)."""
        inside = [s for s in self.samples if t0 <= s[0] <= t1] or \
            [min(self.samples, key=lambda s: abs(s[0] - t0))]
        before = [s for s in self.samples if s[0] <= t0] or inside[:1]
        return (before[-1][1] / 1e9, max(s[1] for s in inside) / 1e9,
                inside[-1][2] - before[-1][2])


def _step_profile(instance, run_id: str, sampler: _Sampler) -> list[dict]:  # noqa: ANN001
    """Per step: wall and CPU seconds, RSS at start and peak, and the time spent loading
    inputs and storing the output (from the run's own event log timestamps)."""
    steps: dict[str, dict[str, float]] = {}
    for entry in instance.all_logs(run_id):
        ev = entry.dagster_event
        if ev is None or not ev.step_key:
            continue
        st = steps.setdefault(ev.step_key, {})
        kind = ev.event_type_value
        if kind == "STEP_START":
            st["start"] = entry.timestamp
        elif kind == "LOADED_INPUT":
            st["loaded"] = entry.timestamp
        elif kind == "STEP_OUTPUT":
            st.setdefault("output", entry.timestamp)
        elif kind in ("STEP_SUCCESS", "STEP_FAILURE"):
            st["end"] = entry.timestamp
    out = []
    for key, st in steps.items():
        if "start" not in st or "end" not in st:
            continue
        rss0, peak, cpu = sampler.window(st["start"], st["end"])
        out.append({"step": key, "start": st["start"], "seconds": st["end"] - st["start"],
                    "cpu_s": cpu, "rss_start_gb": rss0, "peak_gb": peak,
                    "load_s": st.get("loaded", st["start"]) - st["start"],
                    "store_s": st["end"] - st.get("output", st["end"])})
    return sorted(out, key=lambda r: r["start"])


def build_child(mirror: str, work: str, scale: int, profile: bool = False,
                zstd_level: int | None = None) -> None:
    """One whole-graph build (run in a child process by ``bench_scale``)."""
    import resource
    from dataclasses import replace

    from dagster import DagsterInstance, materialize

    from pipelines import sources
    from pipelines.definitions import make_definitions
    from pipelines.resources import BundleStore, CmsSource
    from pipelines.storage import ArrowIOManager

    tmp = Path(work)
    src = Path(mirror)
    sampler = _Sampler() if profile else None
    t_gen = time.perf_counter()
    if scale > 1:
        src = _scaled_mirror(src, tmp, scale * REAL_PTP_ROWS)
        sources.RELEASES["2026C"] = [
            replace(s, mirror=(f"generated/ccipra-bench-f{s.key[-1]}.txt",),
                    mirror_excerpt=False, optional=False)
            if s.key.startswith("ptp_f") else s for s in sources.RELEASES["2026C"]]
    t_gen = time.perf_counter() - t_gen
    store = BundleStore(root=str(tmp / "out")) if zstd_level is None else \
        BundleStore(root=str(tmp / "out"), zstd_level=zstd_level)
    defs = make_definitions(CmsSource(mirror_dir=str(src)), store,
                            ArrowIOManager(base_dir=str(tmp / "io")))
    t = time.perf_counter()
    cpu0 = resource.getrusage(resource.RUSAGE_SELF)
    with DagsterInstance.ephemeral() as instance:
        res = materialize(list(defs.assets), partition_key="2026C", instance=instance,
                          resources=defs.resources, raise_on_error=False)
        took = time.perf_counter() - t
        cpu1 = resource.getrusage(resource.RUSAGE_SELF)
        steps = _step_profile(instance, res.run_id, sampler) if sampler else []
    if sampler:
        sampler.close()
    if not res.success:
        errs = [ev.event_specific_data.error.message for ev in res.all_events
                if ev.event_type_value == "STEP_FAILURE"]
        raise SystemExit("build failed: " + " | ".join(errs))
    size = sum(p.stat().st_size for p in (tmp / "out" / "2026C").iterdir())
    inter = sum(p.stat().st_size for p in (tmp / "io").rglob("*") if p.is_file())
    rows = json.loads((tmp / "out" / "2026C" / "manifest.json").read_text())[
        "outputs"]["ncci_ptp"]["rows"]
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # KiB -> GB
    cpu = (cpu1.ru_utime + cpu1.ru_stime) - (cpu0.ru_utime + cpu0.ru_stime)
    for s in steps:
        print(f"  {s['step']:<32} {s['seconds']:6.1f} s wall {s['cpu_s']:6.1f} s cpu  "
              f"load {s['load_s']:5.1f} s store {s['store_s']:5.1f} s  "
              f"RSS {s['rss_start_gb']:.2f} -> peak {s['peak_gb']:.2f} GB", file=sys.stderr)
    print(json.dumps({"scale": scale, "ncci_rows": rows, "seconds": round(took, 1),
                      "cpu_seconds": round(cpu, 1), "generate_seconds": round(t_gen, 1),
                      "peak_rss_gb": round(peak, 2), "bundle_mb": round(size / 1e6, 1),
                      "intermediates_mb": round(inter / 1e6, 1),
                      "load_avg": round(os.getloadavg()[0], 2)}))


def bench_scale(mirror: Path, scales: list[int], profile: bool = False,
                zstd_level: int | None = None) -> None:
    for scale in scales:
        extra = (["--profile"] if profile else []) + \
            ([] if zstd_level is None else ["--bundle-zstd", str(zstd_level)])
        with tempfile.TemporaryDirectory() as tmp:
            out = subprocess.run(
                [sys.executable, __file__, "--build-child", str(scale), "--mirror", str(mirror),
                 "--work", tmp, *extra], cwd=REPO, capture_output=True, text=True)
        if out.returncode:
            print(f"{scale}x build failed: {out.stdout[-2000:]}{out.stderr[-2000:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"whole graph, 2026C, NCCI {scale}x ({r['ncci_rows']:,} PtP rows): "
              f"{r['seconds']:.1f} s ({r['cpu_seconds']:.1f} s CPU), peak RSS "
              f"{r['peak_rss_gb']:.2f} GB, bundle {r['bundle_mb']:.1f} MB, intermediates "
              f"{r['intermediates_mb']:.1f} MB (load average {r['load_avg']}; generating the "
              f"quarter took {r['generate_seconds']:.1f} s more)")
        if profile:
            print("\n".join(line for line in out.stderr.splitlines() if line.startswith("  ")))


def bench_payment() -> None:
    """The payment-file check on the committed 1.1M-row fee table vs the old per-row dicts."""
    from clarus_env.reference import default_bundle_dir, open_reference
    from pipelines.lib.fee_checks import payment_mismatches

    fees = open_reference(default_bundle_dir()).table("fee_schedule")
    step = fees.num_rows // 1526
    payment = fees.take(list(range(0, fees.num_rows, step))[:1526]).select(
        ["hcpcs", "modifier", "mac", "locality", "nonfac_amount", "fac_amount"])

    def baseline() -> None:  # the former implementation: every fee row as a Python dict
        index = {(r["hcpcs"], r["modifier"], r["mac"], r["locality"]): r
                 for r in fees.to_pylist()}
        for p in payment.to_pylist():
            got = index[(p["hcpcs"], p["modifier"], p["mac"], p["locality"])]
            assert got["nonfac_amount"] == p["nonfac_amount"]

    t_new = best_of(lambda: payment_mismatches(fees, payment), 3)
    t_old = best_of(baseline, 1)
    print(f"payment-file check, {payment.num_rows:,} records against {fees.num_rows:,} fee rows: "
          f"{t_new:.2f} s (Arrow join) vs {t_old:.2f} s (per-row dicts), {t_old / t_new:.0f}x")


def bench_zstd(levels: list[int]) -> None:
    """Bundle write time and size per zstd level, on the committed tables (real data)."""
    import pyarrow as pa
    import pyarrow.ipc as ipc

    from clarus_env.reference import default_bundle_dir, open_reference
    from pipelines.lib.bundle import BATCH_ROWS

    ref = open_reference(default_bundle_dir())
    tables = {n: ref.table(n) for n in ref.table_names}
    rows = []
    for level in levels:
        opts = ipc.IpcWriteOptions(compression=pa.Codec("zstd", compression_level=level))
        size, took = 0, 0.0
        for t in tables.values():
            t0 = time.perf_counter()
            sink = pa.BufferOutputStream()
            with ipc.new_file(sink, t.schema, options=opts) as w:
                for b in t.to_batches(max_chunksize=BATCH_ROWS):
                    w.write_batch(b)
            size += len(sink.getvalue())
            took += time.perf_counter() - t0
        rows.append((level, took, size))
    base = rows[0]
    for level, took, size in rows:
        print(f"zstd level {level:2d}: write {took:5.1f} s ({took / base[1]:.1f}x level "
              f"{base[0]}), bundle {size / 1e6:.1f} MB ({size / base[2]:.2f}x)")


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
    p.add_argument("--scale", default="", help="comma-separated NCCI scales, e.g. 1,4")
    p.add_argument("--only-scale", action="store_true", help="run only the --scale builds")
    p.add_argument("--zstd", default="", help="comma-separated zstd levels to compare")
    p.add_argument("--profile", action="store_true",
                   help="with --scale: time, CPU and peak RSS of every step")
    p.add_argument("--bundle-zstd", type=int, default=None,
                   help="with --scale: the bundle's zstd level (default: BundleStore's)")
    p.add_argument("--build-child", type=int, help=argparse.SUPPRESS)
    p.add_argument("--work", help=argparse.SUPPRESS)
    p.add_argument("--ncci-rows", type=int, default=2_000_000)
    p.add_argument("--mirror", default=os.environ.get(
        "CLARUS_CMS_MIRROR", str(REPO.parent / "shared" / "cms-data" / "raw")))
    args = p.parse_args()
    if args.build_child:
        build_child(args.mirror, args.work, args.build_child, args.profile, args.bundle_zstd)
        return
    if args.zstd:
        bench_zstd([int(x) for x in args.zstd.split(",")])
        return
    if args.scale:
        bench_scale(Path(args.mirror), [int(x) for x in args.scale.split(",")], args.profile,
                    args.bundle_zstd)
        if args.only_scale:
            return
    if not args.skip_build:
        bench_build(Path(args.mirror))
    bench_payment()
    bench_ncci(args.ncci_rows)
    bench_open()
    bench_import()


if __name__ == "__main__":
    main()
