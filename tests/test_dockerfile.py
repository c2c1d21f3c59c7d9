"""The Space's Dockerfile, tested without a container engine (none on these machines): parsed
by dockerfile-parse, every file it copies exists and is not excluded by .dockerignore, it runs
as a non-root user from the pinned lock, and its CMD — run here on a free 127.0.0.1 port —
serves /health (through its own HEALTHCHECK command) and the /web page."""

from __future__ import annotations

import fnmatch
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from .serverutil import free_port

REPO = Path(__file__).resolve().parents[1]
dockerfile_parse = pytest.importorskip("dockerfile_parse", reason="dev extra")


@pytest.fixture(scope="module")
def instructions() -> list[tuple[str, str]]:
    parser = dockerfile_parse.DockerfileParser(path=str(REPO / "Dockerfile"))
    return [(s["instruction"], s["value"]) for s in parser.structure
            if s["instruction"] != "COMMENT"]


def one(instructions: list[tuple[str, str]], name: str) -> str:
    values = [v for i, v in instructions if i == name]
    assert len(values) == 1, f"expected one {name}, found {len(values)}"
    return values[0]


def ignored(path: str) -> bool:
    patterns = [p.strip() for p in (REPO / ".dockerignore").read_text().splitlines()
                if p.strip() and not p.startswith("#")]
    return any(fnmatch.fnmatch(path, p) or path.split("/")[0] == p for p in patterns)


def test_every_copy_source_exists_and_is_sent_to_the_build(
        instructions: list[tuple[str, str]]) -> None:
    copies = [v for i, v in instructions if i == "COPY"]
    assert copies
    sources = []
    for value in copies:
        args = [a for a in shlex.split(value) if not a.startswith("--")]
        assert len(args) >= 2, f"COPY {value}: needs a source and a destination"
        sources += args[:-1]
    for src in sources:
        assert (REPO / src).exists(), f"COPY source {src} does not exist"
        assert not ignored(src), f"COPY source {src} is excluded by .dockerignore"
    # what the package reads at run time from beside itself
    for needed in ("clarus_env", "schemas", "bundles", "requirements/lock.txt", "pyproject.toml"):
        assert needed in sources, f"the image lacks {needed}"


def test_runs_pinned_and_unprivileged(instructions: list[tuple[str, str]]) -> None:
    base = one(instructions, "FROM")
    assert base.count(":") == 1 and base.split(":")[1][0].isdigit(), \
        f"FROM {base}: pin the base image's version"
    installs = [v for i, v in instructions if i == "RUN" and "pip install" in v]
    assert installs and all("-c requirements/lock.txt" in v for v in installs)
    user = one(instructions, "USER")
    assert user not in ("root", "0")
    cmd = json.loads(one(instructions, "CMD"))
    port = cmd[cmd.index("--port") + 1]
    assert one(instructions, "EXPOSE") == port
    assert f"127.0.0.1:{port}/health" in one(instructions, "HEALTHCHECK")


def test_cmd_starts_the_app(instructions: list[tuple[str, str]], tmp_path: Path) -> None:
    cmd = json.loads(one(instructions, "CMD"))
    port = str(free_port())
    exposed = cmd[cmd.index("--port") + 1]
    cmd[cmd.index("--host") + 1] = "127.0.0.1"
    cmd[cmd.index("--port") + 1] = port
    cmd[0] = str(Path(sys.executable).with_name(cmd[0]))  # the image's PATH has it; here, .venv
    log = (tmp_path / "serve.log").open("w")
    proc = subprocess.Popen(cmd, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
                            env={**os.environ, "CLARUS_SESSION_STORE": ""})
    try:
        deadline = time.monotonic() + 60
        while True:
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-2000:]
            try:
                r = httpx.get(f"http://127.0.0.1:{port}/health", timeout=2)
                if r.status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert time.monotonic() < deadline, "the CMD did not serve /health within 60 s"
            time.sleep(0.2)
        assert r.json()["status"] == "healthy"
        health = json.loads(one(instructions, "HEALTHCHECK").split("CMD", 1)[1])
        health = [h.replace(f":{exposed}/", f":{port}/") for h in health]
        health[0] = sys.executable
        assert subprocess.run(health, timeout=30).returncode == 0
        page = httpx.get(f"http://127.0.0.1:{port}/web", timeout=10)
        assert page.status_code == 200 and "<title>Clarus" in page.text
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def test_readme_front_matter_matches_the_image(instructions: list[tuple[str, str]]) -> None:
    """The Spaces platform reads README.md's front matter: a docker Space on the port the
    image serves, opening on the /web page."""
    yaml = pytest.importorskip("yaml")
    text = (REPO / "README.md").read_text()
    if not text.startswith("---\n"):
        pytest.skip("README.md has no Spaces front matter yet")
    meta = yaml.safe_load(text.split("---\n", 2)[1])
    cmd = json.loads(one(instructions, "CMD"))
    assert meta["sdk"] == "docker"
    assert str(meta["app_port"]) == cmd[cmd.index("--port") + 1]
    assert meta["base_path"] == "/web"
    assert len(meta.get("short_description", "")) <= 60
