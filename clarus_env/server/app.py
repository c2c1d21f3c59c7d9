"""The FastAPI app: ``uvicorn clarus_env.server.app:app`` or ``clarus serve``.

Every HTTP error of /reset, /step, /state, /close and /episodes is JSON ``{"code", "message"}``
with a 4xx status (503 for capacity or an unreachable store); bodies are size- and
time-limited; episodes live in the session store (see ``sessions.py``), shared with the
WebSocket and MCP routes. The answer key never leaves the process: observations, state and
grades are all the server returns.

Requests that omit ``episode_id`` use the default session, the latest episode started by a
``/reset`` without one; that keeps the seed's single-session client (``reset`` then ``step``,
never naming an episode) working on one worker with the in-process store, and is refused
(``episode_id_required``) otherwise. Concurrent clients send the ``episode_id`` that
``/reset`` returns with every ``/step`` and ``/state``, and end it with
``DELETE /episodes/{id}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import gc
import logging
import os
from typing import Any

import orjson
from fastapi import FastAPI, Path, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from .. import __version__
from ..actions import ACTIONS, CODING_ACTIONS
from ..env import make
from ..schemas import load
from ..tasks import TASKS, get_task
from ..wire_schemas import DRAFT, action_envelope
from . import fastjson
from .sessions import SessionError, SessionManager, WouldBlock, open_store

MAX_BODY_BYTES = int(os.environ.get("CLARUS_MAX_BODY_BYTES", 256 * 1024))
CAPACITY = int(os.environ.get("CLARUS_MAX_SESSIONS", 256))
IDLE_TTL_S = float(os.environ.get("CLARUS_SESSION_TTL_S", 1800))
BODY_TIMEOUT_S = float(os.environ.get("CLARUS_BODY_TIMEOUT_S", 30))
log = logging.getLogger("clarus.server")


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"code": code, "message": message})


class BodyLimit:
    """Refuse bodies over the limit before anything parses them.

    Plain ASGI (not ``BaseHTTPMiddleware``, which costs a task and a stream per request):
    a too-large Content-Length is refused from the header; otherwise the body is read up to
    the limit and replayed to the app.
    """

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES,
                 timeout_s: float = BODY_TIMEOUT_S) -> None:
        self.app, self.max_bytes, self.timeout_s = app, max_bytes, timeout_s

    async def _refuse(self, send: Send) -> None:
        response = error(413, "body_too_large",
                         f"request body over the {self.max_bytes:,}-byte limit")
        await response({"type": "http"}, _no_receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in ("POST", "PUT", "PATCH"):
            await self.app(scope, receive, send)
            return
        for name, value in scope["headers"]:
            if name == b"content-length" and (not value.isdigit()
                                              or int(value) > self.max_bytes):
                await self._refuse(send)
                return
        chunks: list[bytes] = []
        size = 0
        while True:
            try:
                async with asyncio.timeout(self.timeout_s):  # no task per chunk
                    message = await receive()
            except TimeoutError:
                response = error(408, "body_timeout", f"request body not received within "
                                 f"{self.timeout_s:g} s")
                await response({"type": "http"}, _no_receive, send)
                return
            if message["type"] != "http.request":  # the client went away
                return
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                await self._refuse(send)
                return
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        body = b"".join(chunks)
        replayed = False

        async def replay() -> Message:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _no_receive() -> Message:
    return {"type": "http.disconnect"}


def json_response(content: dict[str, Any]) -> Response:
    """Serialize once with orjson (FastAPI would first walk the dict through
    ``jsonable_encoder`` and a response model, which costs more than the env's step)."""
    body = fastjson.dumps_body(content)
    return Response(body, media_type="application/json")


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_name: str = Field(default="deductive_liability", max_length=64)
    seed: int | None = Field(default=None, strict=True)  # `true` is not a seed
    split: str | None = Field(default=None, max_length=16)
    episode_id: str | None = Field(default=None, min_length=1, max_length=128)


def _encodable(value: Any) -> Any:
    """Refuse strings that cannot be UTF-8 (lone surrogates such as ``"\\ud800"`` are valid
    JSON escapes): the env stores action text in SQLite, which would fail mid-step. Walks
    iteratively so a deeply nested action cannot exhaust the stack."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            try:
                node.encode("utf-8")
            except UnicodeEncodeError:
                raise ValueError("strings must be valid Unicode (no lone surrogates)") from None
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return value


class StepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Any = None
    episode_id: str | None = Field(default=None, min_length=1, max_length=128)

    @field_validator("action")
    @classmethod
    def _action_is_unicode(cls, value: Any) -> Any:
        return _encodable(value)


_STEP_FIELDS = frozenset(StepRequest.model_fields)
_FAST_DEPTH = 64  # pydantic's JSON parser refuses nesting past ~200 levels: deeper goes to it


def step_body(raw: bytes) -> tuple[Any, str | None] | None:
    """(action, episode_id) of a well-formed ``/step`` body, as ``StepRequest`` would give
    them, without building the model (~7 µs a step); None for anything it might judge
    differently, which the model then decides, with its exact errors.

    orjson refuses what the model refuses for Unicode (lone surrogate escapes, invalid
    UTF-8), so the surrogate walk is not needed; it reads integers beyond 64 bits as floats,
    so an action holding any float goes to the model, as does one nested past 64 levels.
    """
    try:
        body = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(body) is not dict or not body.keys() <= _STEP_FIELDS:
        return None
    episode_id = body.get("episode_id")
    if episode_id is not None and not (type(episode_id) is str and 0 < len(episode_id) <= 128):
        return None
    action = body.get("action")
    stack = [(action, 1)]
    while stack:
        item, depth = stack.pop()
        kind = type(item)
        if kind is dict or kind is list:
            if depth > _FAST_DEPTH:
                return None
            stack.extend((v, depth + 1) for v in (item.values() if kind is dict else item))
        elif kind is float:
            return None
    return action, episode_id


class CloseRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    episode_id: str = Field(min_length=1, max_length=128)


def bundled(name: str) -> dict[str, Any]:
    """``schemas/<name>`` with every file ``$ref`` inlined under ``$defs``.

    The files in ``schemas/`` reference each other by relative path (resolved against their
    ``$id``), which a client holding only the /schema response cannot follow; bundling makes
    each returned schema self-contained and usable by any JSON Schema validator as is.
    """
    return bundle_doc(load(name))


def bundle_doc(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` (a schema whose file ``$ref``s are relative to ``schemas/``) made
    self-contained, as ``bundled`` does for a file."""
    root = copy.deepcopy(doc)
    defs: dict[str, Any] = root.setdefault("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.endswith(".json") and not ref.startswith("#"):
                key = ref.rsplit("/", 1)[-1].removesuffix(".schema.json").removesuffix(".json")
                if key not in defs:
                    sub = copy.deepcopy(load(ref))
                    sub.pop("$schema", None)
                    sub.pop("$id", None)
                    defs[key] = None  # reserve: guards against reference cycles
                    defs[key] = walk(sub)
                node = {**node, "$ref": f"#/$defs/{key}"}
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    out = walk(root)
    out["$defs"] = defs
    if not defs:
        out.pop("$defs")
    return out


def _any_task_observation() -> dict[str, Any]:
    """Either observation: each kind requires fields the other forbids, so exactly one fits."""
    kinds = []
    for name in ("observation.schema.json", "coding_observation.schema.json"):
        one = copy.deepcopy(load(name))
        one.pop("$schema", None)
        one.pop("$id", None)
        kinds.append(one)
    return {"$schema": DRAFT, "title": "Observation (any task)",
            "description": "What /reset and /step return for any task: the billing-arena "
                           "observation or the medical-coding one. Per task: "
                           "tasks.<task_name>.observation.",
            "oneOf": kinds}


@functools.cache
def wire_schemas() -> dict[str, Any]:
    """The /schema document.

    ``action``/``observation`` accept every task's traffic (one action envelope over all the
    actions, each action's parameters checked by its own schema); ``tasks.<name>`` gives each
    task's own, stricter pair. ``medical_coding`` (the coding pair) and ``state`` stay where
    earlier clients read them, and every billing action or observation the former billing-only
    top level accepted is still accepted.
    """
    billing = {"action": bundled("action.schema.json"),
               "observation": bundled("observation.schema.json")}
    coding = {"action": bundled("coding_action.schema.json"),
              "observation": bundled("coding_observation.schema.json")}
    every = action_envelope({**ACTIONS, **CODING_ACTIONS}, "action.schema.json",
                            "Action (any task)")
    every.pop("$id")  # no such file: the document stands alone
    every["description"] = ("Every action is {action_type, parameters}, for any task; which "
                            "action types a task accepts: tasks.<task_name>.action.")
    tasks = {}
    for name in TASKS:
        kind = getattr(get_task(name), "kind", "billing")
        tasks[name] = {"kind": kind, **(coding if kind == "coding" else billing)}
    return {"action": bundle_doc(every), "observation": _any_task_observation(),
            "state": STATE_SCHEMA, "medical_coding": coding, "tasks": tasks}


@functools.cache
def _schema_body() -> bytes:
    """/schema's body, encoded once (70 KB that never changes within a process)."""
    return fastjson.dumps_body(wire_schemas())


def observation_dict(obs: Any) -> dict[str, Any]:
    return obs.model_dump()


def task_metadata() -> list[dict[str, Any]]:
    out = []
    for name in TASKS:
        t = get_task(name)
        row = {"name": name, "difficulty": t.difficulty, "checks": t.n_checks,
               "api_call_budget": t.api_call_budget,
               "kind": getattr(t, "kind", "billing"),
               "description": getattr(t, "description", "")}
        if hasattr(t, "vocabulary"):  # billing tasks: write_diagnosis.finding and the
            vocab = t.vocabulary()    # filing reasons, each with what it means
            row["findings"], row["appeal_reasons"] = vocab["finding"], vocab["appeal_reason"]
        out.append(row)
    return out


STATE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Episode state",
    "type": "object", "required": ["episode_id", "task", "seed", "step_count", "done", "score"],
    "properties": {"episode_id": {"type": ["string", "null"]}, "task": {"type": "string"},
                   "seed": {"type": ["integer", "null"]},
                   "step_count": {"type": "integer", "minimum": 0},
                   "done": {"type": "boolean"}, "score": {"type": ["number", "null"]},
                   "grade": {"type": "object", "description": "WebSocket state only: the "
                             "full grade, once the episode is done"}},
}


async def _on_loop_or_thread(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run ``fn(..., nowait=True)`` on the event loop (a billing step or warm reset is tens of
    µs, less than a thread hop); if it would wait on a lock or do slow work (a coding search,
    a first env build, a replay), run it again in the threadpool instead."""
    try:
        return fn(*args, nowait=True, **kwargs)
    except WouldBlock:
        return await run_in_threadpool(functools.partial(fn, *args, nowait=False, **kwargs))


def _client(request: Request) -> str:
    return request.client.host if request.client else ""


def _warm(gc_tuning: bool = False, sessions: SessionManager | None = None,
          prewarm: int = 0) -> None:
    """Open the reference bundle and build the coding search indexes before the first
    request (the first reset of a process otherwise takes ~0.5 s); then, with ``prewarm``,
    fill the env pool (``SessionManager.prewarm``)."""
    from ..splits import seeds

    try:
        _warm_tasks(seeds)
        if sessions is not None and prewarm > 0:
            sessions.prewarm(prewarm)
    except Exception:  # a broken task shows up in its own requests; never block startup
        log.exception("warming the envs failed")
    if gc_tuning:
        tune_gc()  # after the pool is built: its envs are frozen with the rest


# Envs built per task at a worker's start (``clarus serve``): a first wave of N concurrent
# resets then takes pooled envs on the event loop instead of N env builds (1-5 ms each) queued
# in the threadpool. ~75 KB per billing env.
PREWARM_ENVS = int(os.environ.get("CLARUS_PREWARM_ENVS", 64))


# Young-generation collections cost ~10 µs per WS message at the default threshold of 700
# container allocations (most of a step's objects die by refcount before a collection would
# see them, so collecting less often does less work in total), and a full collection walks
# the ~830,000 objects of the warm bundle and search indexes (0.3-0.7 s with the event loop
# stopped). Measured: GC CPU per WS message ~11 µs -> ~2 µs at 64 concurrent sessions.
GC_GEN0_THRESHOLD = int(os.environ.get("CLARUS_GC_GEN0_THRESHOLD", 10_000))


def tune_gc() -> None:
    """Once warm: freeze what exists (the bundle, indexes, code never become garbage, so
    full collections stop re-walking them) and collect the young generation less often.
    A threshold someone already changed from Python's default is left alone."""
    gc.freeze()
    threshold = gc.get_threshold()
    if threshold[0] == 700 and GC_GEN0_THRESHOLD > 0:
        gc.set_threshold(GC_GEN0_THRESHOLD, *threshold[1:])


def _warm_tasks(seeds: Any) -> None:
    for task in ("deductive_liability", "medical_coding"):
        env = make(task, split="train")
        try:
            env.reset(seed=seeds("train", task)[0])
            if task == "medical_coding":
                env.step({"action_type": "search_icd10", "parameters": {"query": "fever"}})
                env.step({"action_type": "search_cpt", "parameters": {"query": "office"}})
        finally:
            env.close()


def create_app(capacity: int = CAPACITY, idle_ttl_s: float = IDLE_TTL_S,
               per_client: int | None = None, store: Any = None,
               workers: int | None = None, warm: bool = True,
               body_timeout_s: float | None = None, gc_tuning: bool = False,
               prewarm: int = 0) -> FastAPI:
    """The app; ``store``/``workers`` default to ``CLARUS_SESSION_STORE``/``CLARUS_WORKERS``
    (what ``clarus serve`` sets), ``per_client`` to ``CLARUS_MAX_SESSIONS_PER_CLIENT`` or half
    the capacity. ``gc_tuning`` (``tune_gc`` once warm) changes the whole process's
    collector, so only the app that owns its process (the module's ``app``) asks for it;
    likewise ``prewarm`` (envs built per task during the warm-up)."""
    if per_client is None:
        per_client = int(os.environ.get("CLARUS_MAX_SESSIONS_PER_CLIENT", max(1, capacity // 2)))
    if store is None or isinstance(store, str):
        store = open_store(store or os.environ.get("CLARUS_SESSION_STORE"), capacity,
                           per_client, idle_ttl_s)
    if workers is None:
        workers = int(os.environ.get("CLARUS_WORKERS", "1"))

    @contextlib.asynccontextmanager
    async def lifespan(app: FastAPI) -> Any:
        # in the background: the server answers at once, the first reset finds a warm bundle
        if warm:
            app.state.warming = asyncio.get_running_loop().run_in_executor(
                None, _warm, gc_tuning, sessions, prewarm)
        yield

    app = FastAPI(title="Clarus", version=__version__, lifespan=lifespan,
                  description="Agent arenas for US healthcare billing on real CMS data.")
    sessions = SessionManager(capacity=capacity, idle_ttl_s=idle_ttl_s, per_client=per_client,
                              store=store, workers=workers)
    app.state.sessions = sessions
    app.add_middleware(BodyLimit, timeout_s=float(
        os.environ.get("CLARUS_BODY_TIMEOUT_S", BODY_TIMEOUT_S)) if body_timeout_s is None
        else body_timeout_s)

    @app.exception_handler(SessionError)
    async def _session_error(request: Request, exc: SessionError) -> JSONResponse:
        return error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        first = exc.errors()[0] if exc.errors() else {}
        where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
        kind = first.get("type", "")
        if kind == "json_invalid":
            return error(400, "invalid_json", "request body is not valid JSON")
        return error(422, "invalid_request", f"{where}: {first.get('msg', 'invalid value')}")

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        if exc.status_code == 400:  # FastAPI's own body-parsing failure (e.g. nesting depth)
            return error(400, "invalid_json", "request body could not be parsed as JSON")
        codes = {404: "not_found", 405: "method_not_allowed"}
        return error(exc.status_code, codes.get(exc.status_code, "http_error"),
                     str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        # A bug, not a client error: logged here, and only its type goes out (its text could
        # carry episode internals).
        log.exception("unhandled error on %s %s", request.method, request.url.path)
        return error(500, "internal_error", f"internal error ({type(exc).__name__})")

    @app.get("/health")
    def health() -> dict[str, Any]:
        warming = getattr(app.state, "warming", None)
        return {"status": "healthy", "version": __version__, "sessions": len(sessions),
                "warm": warming is None or warming.done()}

    @app.get("/metadata")
    def metadata() -> dict[str, Any]:
        return {"name": "clarus", "version": __version__,
                "description": "Healthcare billing dispute and medical coding arenas graded "
                               "by deterministic checks over real CMS data.",
                "tasks": task_metadata()}

    @app.get("/schema")
    def schema() -> Response:
        return Response(_schema_body(), media_type="application/json")

    async def _parse(request: Request, model: type[BaseModel], optional: bool,
                     strict_type: bool = True) -> Any:
        raw = await request.body()
        kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
        if strict_type and raw.strip() and kind and kind != "application/json" \
                and not kind.endswith("+json"):
            raise SessionError("unsupported_media_type", f"send the body as application/json "
                               f"(got content-type {kind[:60]!r})", 415)
        if optional and not raw.strip():
            return model()
        try:
            return model.model_validate_json(raw)
        except ValidationError as exc:
            raise RequestValidationError(exc.errors(include_url=False)) from None

    @app.post("/reset", openapi_extra={"requestBody": {"required": False, "content": {
        "application/json": {"schema": ResetRequest.model_json_schema()}}}})
    async def reset(request: Request) -> Response:
        body = await _parse(request, ResetRequest, optional=True)
        key, obs = await _on_loop_or_thread(sessions.reset, body.task_name, body.seed,
                                            body.split, body.episode_id, _client(request))
        return json_response({"episode_id": key, "observation": obs, "reward": 0.0,
                              "done": False, "info": {}})

    @app.post("/step", openapi_extra={"requestBody": {"required": True, "content": {
        "application/json": {"schema": StepRequest.model_json_schema()}}}})
    async def step(request: Request) -> Response:
        # Plain checks on orjson's value for well-formed bodies (step_body), else parsed by
        # pydantic-core straight from bytes, with the same error shapes as other routes.
        fast = step_body(await request.body())
        if fast is None:
            body = await _parse(request, StepRequest, optional=False, strict_type=False)
            fast = body.action, body.episode_id
        action, episode_id = fast
        return json_response(await _on_loop_or_thread(sessions.step, episode_id, action))

    @app.get("/state")
    async def state(episode_id: str | None = Query(default=None, min_length=1, max_length=128),
                    include: str | None = Query(default=None, pattern="^grade$")
                    ) -> Response:
        """``include=grade`` adds the full grade once the episode is done (a client whose
        last /step answer was lost, e.g. to a worker dying, reads it here)."""
        return json_response(await _on_loop_or_thread(sessions.state, episode_id,
                                                      with_grade=include == "grade"))

    async def _close(episode_id: str) -> Response:
        if not await _on_loop_or_thread(sessions.close, episode_id):
            raise SessionError("unknown_episode", f"no episode {episode_id[:64]!r} (unknown, "
                               "expired or already closed)", 404)
        return Response(status_code=204)

    @app.delete("/episodes/{episode_id}", status_code=204)
    async def delete_episode(episode_id: str = Path(min_length=1, max_length=128)) -> Response:
        """End an episode now and free its place (``ClarusClient.close()`` calls this)."""
        return await _close(episode_id)

    @app.post("/close", status_code=204)
    async def close(request: Request) -> Response:
        """Same as ``DELETE /episodes/{id}``, for clients that only POST."""
        body = await _parse(request, CloseRequest, optional=False)
        return await _close(body.episode_id)

    app.state.max_body_bytes = MAX_BODY_BYTES
    from . import mcp, ws

    app.include_router(ws.router)
    app.include_router(mcp.router)
    from .web import mount_web  # the /web page (play, replay) and its static files

    mount_web(app)
    return app


# what `clarus serve` runs: a server process of its own
app = create_app(gc_tuning=True, prewarm=PREWARM_ENVS)
