"""The code location loads the way `dagster dev -w workspace.yaml` loads it, and the graph
has one group per source with every normalized table behind blocking checks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pipelines.definitions import defs
from pipelines.lib.tables import TABLES

REPO = Path(__file__).resolve().parents[1]


def test_workspace_validates(tmp_path: Path) -> None:
    dagster = Path(sys.executable).with_name("dagster")
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    (tmp_path / "dagster.yaml").write_text("")
    out = subprocess.run([str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "Validation successful" in out.stdout + out.stderr


def test_graph_shape() -> None:
    graph = defs.resolve_asset_graph()
    keys = {k.to_user_string() for k in graph.get_all_asset_keys()}
    assert set(TABLES) - {"opps_cap"} <= keys and "opps_cap" in keys
    assert "reference_bundle" in keys
    groups = {graph.get(k).group_name for k in graph.get_all_asset_keys()}
    assert groups == {"pfs", "mpfs", "ncci_ptp", "ncci_mue", "hcpcs", "icd10cm", "carc_rarc",
                      "plan_templates", "opps", "asc", "bundle"}
    checks = {(c.asset_key.to_user_string(), c.name) for c in graph.asset_check_keys}
    for table in TABLES:
        assert (table, "unique_key") in checks and (table, "row_count") in checks
    assert ("fee_schedule", "payment_file") in checks
    assert ("opps_rate", "spot_check") in checks and ("asc_rate", "quarter") in checks
    parents = {k.to_user_string() for k in graph.get(
        next(k for k in graph.get_all_asset_keys() if k.to_user_string() == "reference_bundle")
    ).parent_keys}
    assert set(TABLES) <= parents


def test_clarus_env_does_not_import_heavy_packages() -> None:
    code = ("import sys, clarus_env; r = clarus_env.open_reference(); r.fee('99213','04412','18');"
            "bad = [m for m in ('dagster', 'polars', 'pipelines') if m in sys.modules];"
            "print(bad); sys.exit(1 if bad else 0)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr


def test_definitions_load_with_explicit_config_and_no_pickles() -> None:
    """Every asset has a code_version (so unchanged inputs are skipped), intermediates go
    through the Arrow IO manager, runs are in-process, and the mirror and publish target
    come from EnvVar -- nothing defaults to where the package is installed."""
    from dagster import EnvVar

    from pipelines.storage import ArrowIOManager

    graph = defs.resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        if node.is_materializable:
            assert node.code_version, key
    assert isinstance(defs.resources["io_manager"], ArrowIOManager)
    assert defs.resources["cms"].mirror_dir == EnvVar("CLARUS_CMS_MIRROR")
    assert defs.resources["store"].root == EnvVar("CLARUS_BUNDLE_ROOT")
    assert defs.resolve_job_def("__ASSET_JOB").executor_def.name == "in_process"


def test_refresh_cli_requires_explicit_targets(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items()
           if k not in ("CLARUS_BUNDLE_ROOT", "CLARUS_CMS_MIRROR")}
    out = subprocess.run([sys.executable, "-m", "pipelines.refresh", "--partition", "2026C"],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "CLARUS_BUNDLE_ROOT" in out.stderr and "Traceback" not in out.stderr
