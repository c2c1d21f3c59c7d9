"""The /web page in real Chromium: a person plays the oracle's path of every task by clicking
the generated forms and sees the grade; replays a stored episode step by step. The oracle's
actions come from the task (the test may read the scenario; the page never does)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from clarus_env import make
from clarus_env.evaluation import dump, evaluate, regrade
from clarus_env.splits import seeds
from clarus_env.tasks import TASKS, get_task

from .serverutil import running_server
from .webutil import Page, browser_fixture, page_fixture  # noqa: F401  (fixtures)


@pytest.fixture(scope="module")
def base_url() -> Iterator[str]:
    with running_server(warm=False) as url:
        yield url


def oracle_actions(task: str, seed: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The oracle's actions and the grade they earn, played in-process (the reference the
    browser's grade must equal)."""
    env = make(task, split="dev")
    try:
        env.reset(seed=seed)
        plan = list(get_task(task).oracle(env.scenario))
        grade = None
        played = []
        for action in [*plan, {"action_type": "close_case", "parameters": {}}]:
            res = env.step(action)
            played.append(action)
            if res.done:
                grade = res.info["grade"]
                break
        assert grade is not None, f"{task} seed {seed}: the oracle's path never ended"
        return played, grade
    finally:
        env.close()


def play_seed(task: str) -> int:
    """The first dev seed; for adversarial_fabrication the first whose oracle answers the
    counter-arguments (the page's counter-argument panel is part of the path)."""
    if task != "adversarial_fabrication":
        return seeds("dev", task)[0]
    for seed in seeds("dev", task):
        actions, _ = oracle_actions(task, seed)
        if any(a["action_type"] == "reject_counter_argument" for a in actions):
            return seed
    raise AssertionError("no dev scenario with counter-arguments")


def fill_and_send(p: Any, action: dict[str, Any], coding: bool) -> None:
    name = action["action_type"]
    params = dict(action.get("parameters", {}))
    if name == "reject_counter_argument":  # answered from the counter's own button
        counter = params.pop("counter_id")
        p.click(f"#counters [data-counter='{counter}'] button.answer")
        assert p.input_value("#form-reject_counter_argument [name='counter_id']") == counter
    elif not coding:
        p.click(f"#action-picker [data-action='{name}']")
    form = p.locator(f"#form-{name}")
    for key, value in params.items():
        field = form.locator(f"[name='{key}']")
        tag = field.evaluate("e => e.tagName")
        if tag == "SELECT":
            field.select_option(str(value))
        elif isinstance(value, bool):
            field.set_checked(value)
        elif isinstance(value, list):
            field.fill(", ".join(value))
        else:
            field.fill(str(value))
    rows = p.locator("#action-log tbody tr").count()
    form.locator("button.send").click()
    # a first coding search builds the code-search index in the server (seconds)
    p.wait_for_function(f"document.querySelectorAll('#action-log tbody tr').length > {rows}",
                        timeout=90_000)


@pytest.mark.parametrize("task", TASKS)
def test_play_oracle_path_by_clicking(base_url: str, page: Page, task: str) -> None:
    seed = play_seed(task)
    actions, expected_grade = oracle_actions(task, seed)
    p = page.page
    p.goto(f"{base_url}/web")
    p.wait_for_selector("body[data-ready='1']")
    p.select_option("#task", task)
    p.select_option("#split", "dev")
    p.fill("#seed", str(seed))
    p.click("#start")
    p.wait_for_selector("#episode:not([hidden])")
    assert p.text_content("#play-status").endswith(f"seed {seed}")
    coding = task == "medical_coding"
    for i, action in enumerate(actions):
        if action["action_type"] == "reject_counter_argument" and \
                not p.locator("#counters:not([hidden])").count():
            raise AssertionError("the filing's counter-arguments are not on the page")
        fill_and_send(p, action, coding)
        if action["action_type"] == "submit_resolution" and p.locator(".counter").count():
            page.shot(f"web-counters-{task}", "#counters")
        assert not p.locator("#action-error").count(), \
            f"{task} step {i + 1} {action['action_type']}: {p.text_content('#action-error')}"
        if not coding and i == 5:
            page.shot(f"web-casefile-{task}", "#casefile")
            page.shot(f"web-artifacts-{task}", "#documents")
    p.wait_for_selector("#grade:not([hidden])")
    rows = p.locator("#grade table.checks tbody tr")
    assert rows.count() == expected_grade["total"]
    shown = {r.get_attribute("data-check"): "ok" in (r.get_attribute("class") or "")
             for r in rows.all()}
    assert shown == {c["id"]: c["passed"] for c in expected_grade["checks"]}
    assert f"Score {expected_grade['score']:.3f}" in p.text_content("#grade")
    # every check's one-line reason is on the page
    for c in expected_grade["checks"]:
        assert c["detail"] in p.text_content(f"#grade tr[data-check='{c['id']}']")
    if coding:
        assert p.text_content("#note") == "All cases coded."
    else:
        docs = p.locator("#doc-list article.doc")
        assert docs.count() >= 3
    page.shot(f"web-grade-{task}", "#grade")
    page.shot(f"web-play-{task}")
    # the played episode saved as a results file regrades to the same grade
    with p.expect_download() as download:
        p.click("#save-episode")
    saved = json.loads(Path(download.value.path()).read_text())
    assert saved["format"] == "clarus-eval-results" and saved["split"] == "dev"
    assert [a["action_type"] for a in saved["episodes"][0]["actions"]] == \
        [a["action_type"] for a in actions]
    assert saved["episodes"][0]["grade"] == expected_grade
    assert regrade(saved) == []
    assert not page.errors, page.errors


def test_eob_renders_claim_lines_with_carc_rarc(base_url: str, page: Page) -> None:
    """An abductive EOB: the denied line's CARC group/code and its RARC with descriptions."""
    task = "abductive_conflict"
    seed = seeds("dev", task)[0]
    actions, _ = oracle_actions(task, seed)
    p = page.page
    p.goto(f"{base_url}/web")
    p.wait_for_selector("body[data-ready='1']")
    p.select_option("#task", task)
    p.fill("#seed", str(seed))
    p.click("#start")
    p.wait_for_selector("#episode:not([hidden])")
    for action in actions:
        fill_and_send(p, action, False)
        if action["action_type"] == "fetch_eob":
            break
    eob = p.locator("article.doc-eob")
    text = eob.text_content()
    env = make(task, split="dev")
    env.reset(seed=seed)
    for a in actions:
        res = env.step(a)
        if a["action_type"] == "fetch_eob":
            data = res.observation.last_action_result["data"]
            break
    env.close()
    assert any(line["rarcs"] for line in data["lines"]), "the denied line carries a RARC"
    for line in data["lines"]:
        for adj in line["adjustments"]:
            assert f"{adj['group']}-{adj['carc']}" in text and adj["description"] in text
        for rarc in line["rarcs"]:
            assert rarc["code"] in text and rarc["description"] in text
    assert eob.locator("table.grid tbody tr").count() >= len(data["lines"])
    page.shot("web-eob", "article.doc-eob")
    assert not page.errors, page.errors


@pytest.fixture(scope="module")
def results_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    results = evaluate("random", ["deductive_liability", "abductive_conflict"], "dev", limit=2,
                       progress=False)
    path = tmp_path_factory.mktemp("replay") / "random.json"
    dump(results, str(path))
    return path


def test_replay_stored_episode(base_url: str, page: Page, results_file: Path) -> None:
    results = json.loads(results_file.read_text())
    p = page.page
    p.goto(f"{base_url}/web")
    p.wait_for_selector("body[data-ready='1']")
    p.click("#tab-replay")
    p.set_input_files("#results-file", str(results_file))
    p.wait_for_selector("#episode-list tbody tr")
    assert p.locator("#episode-list tbody tr").count() == len(results["episodes"])
    episode = results["episodes"][0]
    p.locator("#episode-list .open-episode").first.click()
    p.wait_for_selector("#timeline-card:not([hidden])")
    steps = p.locator("#timeline .step")
    n = len(episode["actions"])
    assert steps.count() == n + 1  # the start plus one entry per stored action
    # every step shows its action and the observation after it
    steps.nth(1).click()
    detail = p.text_content("#step-detail")
    assert f"Step 1: {episode['actions'][0]['action_type']}" in detail
    assert "Observation after it" in detail
    assert f"reward {episode['rewards'][0]:.3f}" in detail
    grade = p.locator("#replay-grade")
    assert f"Score {episode['grade']['score']:.3f}" in grade.text_content()
    # a failed check links to a step; clicking it opens that step
    assert grade.locator("button.steplink").count() >= 1  # a random agent fails checks
    link = grade.locator("button.steplink").last
    target = link.get_attribute("data-step")
    link.click()
    assert p.locator(f"#timeline .step.active[data-step='{target}']").count() == 1
    assert f"Step {target}:" in p.text_content("#step-detail")
    assert "differs" not in grade.text_content()
    page.shot("web-replay")
    assert not page.errors, page.errors


def test_replay_rejects_a_file_that_is_not_results(base_url: str, page: Page,
                                                    tmp_path: Path) -> None:
    bad = tmp_path / "notes.json"
    bad.write_text(json.dumps({"hello": 1}))
    p = page.page
    p.goto(f"{base_url}/web")
    p.wait_for_selector("body[data-ready='1']")
    p.click("#tab-replay")
    p.set_input_files("#results-file", str(bad))
    p.wait_for_selector("#replay-status.error")
    assert "not a clarus results file" in p.text_content("#replay-status")
    assert not page.errors, page.errors


def test_coding_lookup_tools_fill_the_code_form(base_url: str, page: Page) -> None:
    """search_icd10 / search_cpt results are tables of real codes; clicking one puts it in the
    code-entry form; get_icd10 shows the code's node."""
    p = page.page
    p.goto(f"{base_url}/web")
    p.wait_for_selector("body[data-ready='1']")
    p.select_option("#task", "medical_coding")
    p.fill("#seed", str(seeds("dev", "medical_coding")[0]))
    p.click("#start")
    p.wait_for_selector("#coding:not([hidden])")
    assert p.text_content("#note").strip()
    fill_and_send(p, {"action_type": "search_icd10", "parameters": {"query": "sarcoidosis"}},
                  coding=True)
    buttons = p.locator("#last-result button.use-code")
    assert buttons.count() >= 3
    first, second = buttons.nth(0).text_content(), buttons.nth(1).text_content()
    buttons.nth(0).click()
    buttons.nth(1).click()
    assert p.input_value("#form-submit_codes [name='primary_icd10']") == first
    assert p.input_value("#form-submit_codes [name='secondary_icd10s']") == second
    page.shot("web-coding-lookup")
    fill_and_send(p, {"action_type": "search_cpt", "parameters": {"query": "office visit"}},
                  coding=True)
    p.locator("#last-result button.use-code").first.click()
    assert p.input_value("#form-submit_codes [name='cpt_codes']").strip()
    fill_and_send(p, {"action_type": "get_icd10", "parameters": {"code": first}}, coding=True)
    assert first in p.text_content("#last-result")
    assert not page.errors, page.errors


def test_random_seed_draws_a_seed_of_the_split(base_url: str, page: Page) -> None:
    p = page.page
    p.goto(f"{base_url}/web")
    p.wait_for_selector("body[data-ready='1']")
    p.select_option("#task", "abductive_conflict")
    p.select_option("#split", "test")
    p.check("#random-seed")
    p.click("#start")
    p.wait_for_selector("#episode:not([hidden])")
    seed = int(p.input_value("#seed"))
    assert seed in seeds("test", "abductive_conflict")
    assert p.text_content("#play-status").endswith(f"seed {seed}")
    assert p.text_content("#complaint").strip()
    # an invalid action shows the env's reason, costs a step, and the page carries on
    fill_and_send(p, {"action_type": "fetch_eob", "parameters": {"claim_id": "CLM-0"}}, False)
    assert "fetch_eob" in p.text_content("#action-error")
    assert not page.errors, page.errors
