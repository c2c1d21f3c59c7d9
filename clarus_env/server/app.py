"""The FastAPI app: ``uvicorn clarus_env.server.app:app`` or ``clarus serve``.

Every error is JSON ``{"code", "message"}`` with a 4xx status; bodies are size-limited; each
episode lives in its own session (see ``sessions.py``). The answer key never leaves the
process: observations, state and grades are all the server returns.
"""

from __future__ import annotations

import os
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.middleware.base import BaseHTTPMiddleware

from .. import __version__
from ..schemas import load
from ..tasks import TASKS, get_task
from .sessions import SessionError, SessionManager

MAX_BODY_BYTES = int(os.environ.get("CLARUS_MAX_BODY_BYTES", 256 * 1024))
CAPACITY = int(os.environ.get("CLARUS_MAX_SESSIONS", 256))
IDLE_TTL_S = float(os.environ.get("CLARUS_SESSION_TTL_S", 1800))


def error(status: int, code: str, message: str) -> JSONResponse:
    return JSONResponse(status_code=status, content={"code": code, "message": message})


class BodyLimit(BaseHTTPMiddleware):
    """Refuse bodies over the limit before anything parses them."""

    async def dispatch(self, request: Request, call_next: Any) -> Any:
        if request.method in ("POST", "PUT", "PATCH"):
            length = request.headers.get("content-length")
            if length is not None and (not length.isdigit() or int(length) > MAX_BODY_BYTES):
                return error(413, "body_too_large",
                             f"request body over the {MAX_BODY_BYTES:,}-byte limit")
            body = b""
            async for chunk in request.stream():
                body += chunk
                if len(body) > MAX_BODY_BYTES:
                    return error(413, "body_too_large",
                                 f"request body over the {MAX_BODY_BYTES:,}-byte limit")
            request._body = body  # replayed to the route handler
        return await call_next(request)


class ResetRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    task_name: str = Field(default="deductive_liability", max_length=64)
    seed: int | None = None
    split: str | None = Field(default=None, max_length=16)
    episode_id: str | None = Field(default=None, min_length=1, max_length=128)


class StepRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")
    action: Any = None
    episode_id: str | None = Field(default=None, min_length=1, max_length=128)


def observation_dict(obs: Any) -> dict[str, Any]:
    return obs.model_dump()


def task_metadata() -> list[dict[str, Any]]:
    out = []
    for name in TASKS:
        t = get_task(name)
        out.append({"name": name, "difficulty": t.difficulty, "checks": t.n_checks,
                    "api_call_budget": t.api_call_budget,
                    "kind": getattr(t, "kind", "billing"),
                    "description": getattr(t, "description", "")})
    return out


STATE_SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema", "title": "Episode state",
    "type": "object", "required": ["episode_id", "task", "seed", "step_count", "done", "score"],
    "properties": {"episode_id": {"type": ["string", "null"]}, "task": {"type": "string"},
                   "seed": {"type": ["integer", "null"]},
                   "step_count": {"type": "integer", "minimum": 0},
                   "done": {"type": "boolean"}, "score": {"type": ["number", "null"]}},
}


def create_app(capacity: int = CAPACITY, idle_ttl_s: float = IDLE_TTL_S) -> FastAPI:
    app = FastAPI(title="Clarus", version=__version__,
                  description="Agent arenas for US healthcare billing on real CMS data.")
    sessions = SessionManager(capacity=capacity, idle_ttl_s=idle_ttl_s)
    app.state.sessions = sessions
    app.add_middleware(BodyLimit)

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
        codes = {404: "not_found", 405: "method_not_allowed"}
        return error(exc.status_code, codes.get(exc.status_code, "http_error"),
                     str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        return error(500, "internal_error", f"{type(exc).__name__}: {exc}")

    @app.get("/health")
    def health() -> dict[str, Any]:
        return {"status": "healthy", "version": __version__, "sessions": len(sessions)}

    @app.get("/metadata")
    def metadata() -> dict[str, Any]:
        return {"name": "clarus", "version": __version__,
                "description": "Healthcare billing dispute and medical coding arenas graded "
                               "by deterministic checks over real CMS data.",
                "tasks": task_metadata()}

    @app.get("/schema")
    def schema() -> dict[str, Any]:
        return {"action": load("action.schema.json"),
                "observation": load("observation.schema.json"),
                "state": STATE_SCHEMA,
                "medical_coding": {"action": load("coding_action.schema.json"),
                                   "observation": load("coding_observation.schema.json")}}

    @app.post("/reset")
    def reset(body: ResetRequest | None = None) -> dict[str, Any]:
        body = body or ResetRequest()
        session, obs = sessions.reset(body.task_name, body.seed, body.split, body.episode_id)
        return {"episode_id": session.episode_id, "observation": observation_dict(obs),
                "reward": 0.0, "done": False, "info": {}}

    @app.post("/step")
    def step(body: StepRequest) -> dict[str, Any]:
        session = sessions.get(body.episode_id)
        with session.lock:
            res = session.env.step(body.action)
        return {"episode_id": session.episode_id, "observation": observation_dict(res.observation),
                "reward": res.reward, "done": res.done, "info": res.info}

    @app.get("/state")
    def state(episode_id: str | None = None) -> dict[str, Any]:
        session = sessions.get(episode_id)
        return session.env.state

    app.state.max_body_bytes = MAX_BODY_BYTES
    from . import mcp, ws

    app.include_router(ws.router)
    app.include_router(mcp.router)
    return app


app = create_app()
