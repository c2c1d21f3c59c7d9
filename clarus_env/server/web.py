"""The ``/web`` page (play and replay) on the same app as the wire API.

The page is plain HTML/JS/CSS from ``clarus_env/web/`` (no build step, nothing fetched from
another host), so a Space or a laptop without network serves it as is. Playing goes through
the public ``/reset`` and ``/step`` routes like any client: the page never gets more than an
agent gets, which is what keeps the answer key out of the browser. The routes here only add
what a person needs next to that: the action forms' schemas per task, the seeds of a split,
and a replay of a stored trajectory (observations are not stored in results files, so they
are rebuilt by stepping the deterministic env through the stored actions).
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path
from typing import Any

from fastapi import APIRouter, FastAPI
from fastapi.responses import FileResponse, JSONResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..actions import ACTIONS, CODING_ACTIONS
from ..env import make
from ..schemas import load
from ..splits import seeds
from ..tasks import TASKS, get_task

WEB_DIR = Path(__file__).resolve().parents[1] / "web"
CODING_TASK = "medical_coding"
SPLITS = ("train", "dev", "test")
MAX_REPLAY_ACTIONS = 200

router = APIRouter()


def _error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"code": code, "message": message})


def action_schemas(task: str) -> list[dict[str, Any]]:
    """The task's actions as their files in ``schemas/actions/`` (the same files a client
    validates against), in the runtime's order so the page lists them as the docs do."""
    specs = CODING_ACTIONS if task == CODING_TASK else ACTIONS
    return [{"name": name, "schema": load(f"actions/{name}.schema.json")} for name in specs]


@functools.cache
def catalog() -> dict[str, Any]:
    tasks = []
    for name in TASKS:
        t = get_task(name)
        tasks.append({"name": name, "checks": t.n_checks, "api_call_budget": t.api_call_budget,
                      "kind": "coding" if name == CODING_TASK else "billing",
                      "actions": action_schemas(name),
                      "splits": {s: {"first": seeds(s, name).start,
                                     "count": len(seeds(s, name))} for s in SPLITS}})
    return {"tasks": tasks, "splits": list(SPLITS), "version": __version__}


# Replays step one env per (task, split); an env is not safe to share between threads.
_ENVS: dict[tuple[str, str], tuple[threading.Lock, Any]] = {}
_ENVS_LOCK = threading.Lock()


def _env(task: str, split: str) -> tuple[threading.Lock, Any]:
    with _ENVS_LOCK:
        if (task, split) not in _ENVS:
            _ENVS[(task, split)] = (threading.Lock(), make(task, split=split))
        return _ENVS[(task, split)]


def _observation(obs: Any) -> dict[str, Any]:
    return obs.model_dump() if hasattr(obs, "model_dump") else dict(obs)


def replay(task: str, split: str, seed: int, actions: list[Any]) -> dict[str, Any]:
    """Step the env through ``actions`` and return what an agent saw after each one, the
    grade, and for every failed check the step it points at (``check_links``)."""
    lock, env = _env(task, split)
    with lock:
        first = env.reset(seed=seed)
        steps = []
        grade = None
        for i, action in enumerate(actions):
            res = env.step(action)
            steps.append({"step": i + 1, "action": action, "reward": res.reward,
                          "done": res.done, "observation": _observation(res.observation)})
            if res.done:
                grade = res.info.get("grade")
                break
        ignored = len(actions) - len(steps)
    return {"task": task, "split": split, "seed": seed, "initial": _observation(first),
            "steps": steps, "grade": grade, "ignored_actions": ignored,
            "links": check_links(task, [s["action"] for s in steps], grade)}


# Each billing check id (tasks/<task>/checks.py) -> the actions whose step it grades. "last" picks
# the last such step (for a "before" check the late or early one is the one to look at).
_FETCH = "fetch_"
_CHECK_ACTIONS: dict[str, tuple[tuple[str, ...], str]] = {
    "authenticated_before_phi": (("authenticate_patient",), "first"),
    "authenticated": (("authenticate_patient",), "first"),
    "authenticated_first": (("authenticate_patient",), "first"),
    "eob_fetched": (("fetch_eob",), "first"),
    "ledger_fetched": (("fetch_payment_ledger",), "first"),
    "statement_fetched": (("fetch_payment_ledger",), "first"),
    "plan_fetched": (("fetch_plan_document",), "first"),
    "claim_record_fetched": (("fetch_claim_record",), "first"),
    "provider_record_fetched": (("fetch_provider_record",), "first"),
    "processor_log_fetched": (("fetch_payment_processor_log",), "first"),
    "facility_record_fetched": (("fetch_facility_record",), "first"),
    "code_looked_up": (("lookup_procedure_code",), "first"),
    "ncci_rule_checked": (("check_regulatory_rule",), "first"),
    "nsa_rules_checked": (("check_regulatory_rule",), "first"),
    "deadline_checked": (("check_deadline",), "first"),
    "nsa_deadline_checked": (("check_deadline",), "first"),
    "deadline_before_submit": (("submit_resolution",), "first"),
    "deadline_before_submission": (("submit_resolution",), "first"),
    "diagnosis_written": (("write_diagnosis",), "first"),
    "draft_written": (("draft_resolution",), "first"),
    "submitted": (("submit_resolution",), "first"),
    "patient_told": (("send_patient_communication",), "last"),
    "provider_notified": (("notify_provider",), "last"),
    "audit_written": (("write_audit_entry",), "last"),
    "audit_entry": (("write_audit_entry",), "last"),
    "case_closed": (("close_case",), "last"),
    "diagnosis_cites_two": (("write_diagnosis",), "first"),
    "diagnosis_cites_processor_log": (("write_diagnosis",), "first"),
    "cites_provider_record": (("write_diagnosis",), "first"),
    "cites_ncci_lookup": (("write_diagnosis",), "first"),
    "trap_premature_legitimate_denial": (("write_diagnosis",), "first"),
    "responsible_party": (("write_diagnosis",), "first"),
    "responsible_party_and_finding": (("write_diagnosis",), "first"),
    "amount_exact": (("write_diagnosis", "draft_resolution"), "first"),
    "resolution_type": (("draft_resolution",), "first"),
    "appeal_reason": (("draft_resolution",), "first"),
    "reference_amount": (("draft_resolution",), "first"),
    "dispute_held": (("reject_counter_argument", "notify_provider"), "last"),
}
_PHI = ("fetch_claim_record", "fetch_eob", "fetch_provider_record", "fetch_payment_ledger",
        "fetch_plan_document", "fetch_payment_processor_log", "send_patient_communication")


def _params(action: Any) -> dict[str, Any]:
    p = action.get("parameters") if isinstance(action, dict) else None
    return p if isinstance(p, dict) else {}


def _computed_link(cid: str, actions: list[Any], names: list[Any]) -> dict[str, Any] | None:
    """Checks whose step is found from the trajectory rather than by action name."""
    if cid == "no_compliance_violation":  # the first PHI read or disclosure before authenticating
        for i, name in enumerate(names):
            if name == "authenticate_patient":
                break
            if name in _PHI:
                return {"step": i + 1, "action": name}
        return {"step": None, "action": "authenticate_patient"}
    if cid == "no_excess_duplicates":  # one duplicate fetch is allowed: the second one
        seen: set[str] = set()
        repeats = []
        for i, (name, a) in enumerate(zip(names, actions, strict=True)):
            if isinstance(name, str) and name.startswith(_FETCH):
                key = repr((name, sorted(_params(a).items())))
                if key in seen:
                    repeats.append(i)
                seen.add(key)
        i = (repeats[1:] or repeats or [None])[0]
        return {"step": None if i is None else i + 1, "action": "fetch_*" if i is None
                else names[i]}
    if cid.startswith("counter_"):  # counter_<topic>_rejected / counter_<topic>_cites_refuter
        topic = cid.split("_")[1]
        steps = [i for i, n in enumerate(names) if n == "reject_counter_argument"]
        mine = [i for i in steps
                if topic in str(_params(actions[i]).get("counter_id", "")).lower()]
        pick = (mine or steps or [None])[0]
        return {"step": None if pick is None else pick + 1, "action": "reject_counter_argument"}
    return None


def check_links(task: str, actions: list[Any], grade: dict[str, Any] | None
                ) -> dict[str, dict[str, Any]]:
    """For each failed check: the step whose action it grades, or the action no step took
    (``step: None``).

    Coding checks are ``case_<n>_<difficulty>``: the n-th ``submit_codes``. Billing checks
    map through ``_CHECK_ACTIONS`` or, for the ones about the whole trajectory (a PHI read
    before authenticating, a duplicate fetch, a counter-argument), are found in it. A check
    id this table does not know gets no link rather than a guessed one.
    """
    if not grade:
        return {}
    names = [a.get("action_type") if isinstance(a, dict) else None for a in actions]
    links: dict[str, dict[str, Any]] = {}
    for check in grade.get("checks", []):
        if check.get("passed"):
            continue
        cid = str(check.get("id", ""))
        parts = cid.split("_")
        if task == CODING_TASK and parts[0] == "case" and len(parts) > 1 and parts[1].isdigit():
            subs = [i for i, a in enumerate(names) if a == "submit_codes"]
            n = int(parts[1])
            links[cid] = ({"step": subs[n - 1] + 1, "action": "submit_codes"}
                          if 0 < n <= len(subs) else {"step": None, "action": "submit_codes"})
            continue
        computed = _computed_link(cid, actions, names)
        if computed is not None:
            links[cid] = computed
            continue
        if cid in _CHECK_ACTIONS:
            wanted, which = _CHECK_ACTIONS[cid]
            hits = [i for i, a in enumerate(names) if a in wanted]
            if hits:
                i = hits[-1] if which == "last" else hits[0]
                links[cid] = {"step": i + 1, "action": names[i]}
            else:
                links[cid] = {"step": None, "action": wanted[0]}
    return links


class ReplayRequest(BaseModel):
    model_config = ConfigDict(extra="ignore")
    task: str = Field(max_length=64)
    split: str = Field(default="dev", max_length=16)
    seed: int = Field(strict=True)
    actions: list[Any] = Field(max_length=MAX_REPLAY_ACTIONS)


@router.get("/web", include_in_schema=False)
@router.get("/web/", include_in_schema=False)
def page() -> FileResponse:
    return FileResponse(WEB_DIR / "index.html", media_type="text/html")


@router.get("/web/api/catalog")
def web_catalog() -> dict[str, Any]:
    """Tasks, their action schemas and seed ranges: what the page builds its forms from."""
    return catalog()


@router.post("/web/api/replay")
async def web_replay(body: ReplayRequest) -> Any:
    if body.task not in TASKS:
        return _error(404, "unknown_task", f"unknown task {body.task[:64]!r}; one of "
                      f"{', '.join(TASKS)}")
    if body.split not in SPLITS:
        return _error(400, "invalid_split", f"split must be train, dev or test; got "
                      f"{body.split[:16]!r}")
    return await run_in_threadpool(replay, body.task, body.split, body.seed, body.actions)


def mount_web(app: FastAPI) -> None:
    """Add the page, its API and its static files to ``app`` (one call in ``create_app``)."""
    app.include_router(router)
    app.mount("/web/static", StaticFiles(directory=WEB_DIR), name="web-static")
