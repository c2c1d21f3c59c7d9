"""``python -m pipelines.refresh --partition 2026C``: the quarterly refresh from a shell.

The ``dagster asset materialize`` command is superseded by ``dg launch`` (it warns on every
run), and ``dg`` is a separate package; this runs the same asset graph with
``dagster.execute_job`` against the instance in ``$DAGSTER_HOME``, so runs, check
evaluations and the check gate's history are the same ones ``dagster dev`` shows. It prints
each failed step's own message (file, row, column) and exits non-zero, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys

from dagster import AssetSelection, DagsterInstance, execute_job, reconstructable

from .sources import RELEASES


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m pipelines.refresh", description=__doc__)
    ap.add_argument("--partition", required=True, choices=sorted(RELEASES),
                    help="reference release to build")
    ap.add_argument("--select", default="*",
                    help="Dagster asset selection (default: the whole graph)")
    args = ap.parse_args(argv)
    missing = [v for v in ("CLARUS_BUNDLE_ROOT", "CLARUS_CMS_MIRROR") if v not in os.environ]
    if missing:
        print(f"set {' and '.join(missing)} first: CLARUS_BUNDLE_ROOT is where releases are "
              "published, CLARUS_CMS_MIRROR a mirror directory (empty: download from cms.gov)",
              file=sys.stderr)
        return 2
    if not os.environ.get("DAGSTER_HOME"):
        print("set DAGSTER_HOME (the instance that keeps runs and check evaluations)",
              file=sys.stderr)
        return 2
    from .definitions import defs, refresh_job

    selection = None
    if args.select != "*":
        # comma-separated clauses (``pfs_raw,reference_bundle``), each in Dagster's syntax
        picked = AssetSelection.assets()
        for clause in filter(None, (c.strip() for c in args.select.split(","))):
            try:
                picked = picked | AssetSelection.from_string(clause)
            except Exception as exc:  # noqa: BLE001 (dagster raises several kinds)
                print(f"--select: cannot read {clause!r} ({exc})", file=sys.stderr)
                return 2
        selection = sorted(picked.resolve(defs.resolve_asset_graph()))
    with DagsterInstance.get() as instance:
        # execute_job, not materialize: it keeps no step outputs in memory (see refresh_job)
        result = execute_job(reconstructable(refresh_job), instance, raise_on_error=False,
                             tags={"dagster/partition": args.partition},
                             asset_selection=selection)
    failed = [(ev.step_key, ev.event_specific_data.error.message)
              for ev in result.all_events if ev.event_type_value == "STEP_FAILURE"]
    for step, message in failed:
        print(f"{step}: {message.strip()}", file=sys.stderr)
    if not result.success:
        print(f"refresh of {args.partition} failed; the published release is unchanged",
              file=sys.stderr)
        return 1
    for ev in result.get_asset_materialization_events():
        if ev.asset_key.to_user_string() == "reference_bundle":
            meta = ev.materialization.metadata
            print(f"published {meta['path'].value} -> {meta['release_dir'].value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
