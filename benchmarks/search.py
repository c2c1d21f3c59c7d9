"""Coder's search speed: the one-off index build per process, then per-query latency of
``search_icd10``, ``search_cpt`` and ``get_icd10`` over the test query sets, each read against
a same-process baseline (one point lookup in the bundle, ``ReferenceBundle.icd10cm``).

Run: ``.venv/bin/python benchmarks/search.py [--repeat N]`` (one core; report ``uptime``'s
load with the figures).  The server calls these on its event loop, so the figures that matter
are p50/p95 per query (the answer cache cleared before each, and again with it, as agents
repeat queries) and the first-query cost a process pays once (``warm()`` moves it to start-up).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _queries() -> tuple[list[str], list[str]]:
    spec = importlib.util.spec_from_file_location(
        "search_queries", REPO / "tests" / "test_medical_coding_search.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return [q for q, _ in mod.ICD_QUERIES], [q for q, _ in mod.CPT_QUERIES]


def _timed(fn, args_list: list[tuple], repeat: int, before=None) -> list[float]:  # noqa: ANN001
    out = []
    for _ in range(repeat):
        for args in args_list:
            if before is not None:
                before()
            t = time.perf_counter()
            fn(*args)
            out.append(time.perf_counter() - t)
    return out


def _row(name: str, samples: list[float], base_us: float) -> str:
    s = sorted(samples)
    p50 = statistics.median(s) * 1e6
    p95 = s[int(0.95 * (len(s) - 1))] * 1e6
    return (f"{name:<14} n={len(s):>5}  p50 {p50:8.1f} µs  p95 {p95:8.1f} µs  "
            f"max {s[-1] * 1e6:8.1f} µs  p50/baseline {p50 / base_us:6.1f}x")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=20)
    args = ap.parse_args(argv)

    from clarus_env.reference import open_reference
    from clarus_env.tasks.medical_coding import search

    print(f"load average {os.getloadavg()[0]:.2f} (figures are unreliable above 1.5)")
    t = time.perf_counter()
    ref = open_reference()
    ref.icd10cm("J02.0")  # opens the icd10cm table: the baseline's own warm-up
    opened = time.perf_counter() - t
    icd_q, cpt_q = _queries()
    t = time.perf_counter()
    search._index(ref, "icd")
    icd_build = time.perf_counter() - t
    t = time.perf_counter()
    search._index(ref, "cpt")
    cpt_build = time.perf_counter() - t
    print(f"bundle open + icd10cm table: {opened * 1e3:.0f} ms")
    print(f"index build, once per process: ICD-10-CM {icd_build * 1e3:.0f} ms "
          f"({len(search._index(ref, 'icd').docs):,} nodes), CPT/HCPCS {cpt_build * 1e3:.0f} ms "
          f"({len(search._index(ref, 'cpt').docs):,} codes)")

    codes = [h["code"] for q in icd_q for h in search.search_icd10(ref, q, 1)]
    base = _timed(lambda c: ref._unique("icd10cm", "code", c), [(c,) for c in codes],
                  args.repeat)
    base_us = statistics.median(base) * 1e6
    print(f"baseline: ReferenceBundle icd10cm point lookup p50 {base_us:.1f} µs")
    icd, cpt = search._index(ref, "icd"), search._index(ref, "cpt")

    def forget() -> None:  # time the search itself, not the per-process answer cache
        icd.answers.clear()
        cpt.answers.clear()

    print(_row("search_icd10", _timed(search.search_icd10, [(ref, q, 10) for q in icd_q],
                                      args.repeat, forget), base_us))
    print(_row("search_cpt", _timed(search.search_cpt, [(ref, q, 10) for q in cpt_q],
                                    args.repeat, forget), base_us))
    print(_row("icd repeated", _timed(search.search_icd10, [(ref, q, 10) for q in icd_q],
                                      args.repeat), base_us) + "  (answer remembered)")
    print(_row("cpt repeated", _timed(search.search_cpt, [(ref, q, 10) for q in cpt_q],
                                      args.repeat), base_us) + "  (answer remembered)")
    print(_row("get_icd10", _timed(search.get_icd10, [(ref, c) for c in codes], args.repeat),
               base_us))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
