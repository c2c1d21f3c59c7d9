"""The report in real Chromium, offline: every chart is an inlined SVG with drawn marks, the
page asks the network for nothing and logs no error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from clarus_env.evaluation import dump, evaluate
from clarus_env.report import write_report

from .webutil import Page, browser_fixture, page_fixture  # noqa: F401  (fixtures)

pytest.importorskip("matplotlib", reason="clarus report needs the .[report] extra")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("report-browser")
    paths = []
    for agent in ("oracle", "random"):
        res = evaluate(agent, ["deductive_liability", "medical_coding"], "dev", trials=2,
                       limit=2, progress=False)
        dump(res, str(d / f"{agent}.json"))
        paths.append(str(d / f"{agent}.json"))
    return Path(write_report(paths, str(d / "report.html")))


def test_every_chart_renders_offline(report: Path, page: Page) -> None:
    p = page.page
    requested: list[str] = []

    def only_the_file(route: Any) -> None:
        url = route.request.url
        if url.startswith(("file://", "data:")):
            route.continue_()
        else:
            requested.append(url)
            route.abort()

    p.route("**/*", only_the_file)
    p.goto(report.as_uri())
    charts = p.locator("figure.chart")
    assert charts.count() == 6  # outcome, pass^k, scores, 2 heatmaps, coding
    for i in range(charts.count()):
        chart = charts.nth(i)
        name = chart.get_attribute("id")
        svg = chart.locator("svg")
        assert svg.count() == 1, f"{name}: no inline svg"
        box = svg.bounding_box()
        assert box and box["width"] > 200 and box["height"] > 100, f"{name}: {box}"
        # marks: bars/boxes/lines/mesh cells are <path>s inside the axes' patch/line groups
        marks = svg.locator("g[id*='patch_'] path, g[id*='line2d_'] path, "
                            "g[id*='QuadMesh'] path, g[id*='PolyCollection'] path").count()
        assert marks >= 4, f"{name}: only {marks} marks drawn"
        page.shot(f"report-{name}", f"#{name}")
    assert p.locator("table#summary tbody tr").count() == 4
    assert not requested, f"the report asked the network for {requested}"
    page.shot("report")
    assert not page.errors, page.errors
