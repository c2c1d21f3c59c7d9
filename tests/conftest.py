"""Shared test fixtures.

``mirror`` is the offline copy of real CMS release files in ``../shared/cms-data/raw``; tests
that need it skip with a clear reason when it is absent (a fork without ``shared/``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"


def mirror_dir() -> Path:
    env = os.environ.get("CLARUS_CMS_MIRROR")
    return Path(env) if env else REPO.parent / "shared" / "cms-data" / "raw"


@pytest.fixture(scope="session")
def mirror() -> Path:
    path = mirror_dir()
    if not path.is_dir():
        pytest.skip(f"CMS mirror not found at {path} (set CLARUS_CMS_MIRROR to run this test)")
    return path


@pytest.fixture(scope="session")
def fixtures() -> Path:
    return FIXTURES
