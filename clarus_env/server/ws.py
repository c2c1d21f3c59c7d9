"""OpenEnv's WebSocket protocol at ``/ws``: one connection holds one episode.

OpenEnv clients (``GenericEnvClient`` and the typed clients built on ``EnvClient``) speak only
this protocol, so it follows OpenEnv's message shapes and error codes exactly; the payloads
are ours (the reset options, the action envelope, the observation and state dicts).

Client → server, one JSON object per text frame::

    {"type": "reset", "data": {"task_name"?, "seed"?, "split"?, "episode_id"?}}
    {"type": "step",  "data": {"action_type": ..., "parameters": {...}}}
    {"type": "state"}
    {"type": "mcp",   "data": <JSON-RPC 2.0 request>}
    {"type": "close"}                      (no reply; the server closes the socket)

Server → client::

    {"type": "observation", "data": {"episode_id", "observation", "reward", "done", "info"}}
    {"type": "state",       "data": <env.state>}
    {"type": "mcp",         "data": <JSON-RPC 2.0 response>}
    {"type": "error",       "data": {"message", "code", ...}}

``observation``/``reward``/``done`` sit at the top of ``data`` because that is where
``EnvClient._parse_result`` looks; ``episode_id`` and ``info`` (``info["grade"]`` when the
episode ends) mirror the HTTP ``/step`` body. A bad message never ends the connection: it gets
an ``error`` reply and the episode carries on. Only an over-capacity server, an idle
connection or an internal fault closes the socket (after an ``error`` saying why).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import json
import os
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from fastapi import APIRouter, WebSocket
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocketDisconnect, WebSocketState

from ..env import make
from ..tasks import TASKS

router = APIRouter()

# Larger frames are refused with an error reply (uvicorn's own ws_max_size, 16 MiB by default,
# still closes the socket on anything beyond that before we ever see it).
MAX_MESSAGE_BYTES = int(os.environ.get("CLARUS_MAX_WS_MESSAGE_BYTES", 256 * 1024))

# OpenEnv's WSErrorCode values (openenv.core.env_server.types); clients branch on these strings.
INVALID_JSON = "INVALID_JSON"
UNKNOWN_TYPE = "UNKNOWN_TYPE"
VALIDATION_ERROR = "VALIDATION_ERROR"
EXECUTION_ERROR = "EXECUTION_ERROR"
CAPACITY_REACHED = "CAPACITY_REACHED"
SESSION_ERROR = "SESSION_ERROR"

# JSON-RPC 2.0 error codes OpenEnv uses for MCP over the socket.
RPC_INVALID_REQUEST = -32600
RPC_INTERNAL_ERROR = -32603

CLOSE = object()  # handler result meaning "end the connection, no reply"


# -- incoming messages (unknown fields are refused, as OpenEnv's BaseMessage does) ---------
class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ResetData(_Message):
    task_name: str = Field(default="deductive_liability", max_length=64)
    seed: int | None = Field(default=None, ge=0, le=2**63 - 1, strict=True)
    split: Literal["train", "dev", "test"] | None = None
    episode_id: str | None = Field(default=None, min_length=1, max_length=128)

    @field_validator("task_name")
    @classmethod
    def _known_task(cls, value: str) -> str:
        if value not in TASKS:
            raise ValueError(f"unknown task_name {value!r}; tasks: {', '.join(TASKS)}")
        return value


class ResetMessage(_Message):
    type: Literal["reset"]
    data: ResetData = Field(default_factory=ResetData)


class StepMessage(_Message):
    type: Literal["step"]
    data: dict[str, Any]  # the action; the env itself judges it (a penalised step if invalid)


class StateMessage(_Message):
    type: Literal["state"]


class CloseMessage(_Message):
    type: Literal["close"]


class McpMessage(_Message):
    type: Literal["mcp"]
    data: dict[str, Any]


# -- replies ---------------------------------------------------------------------------------
def _dumps(message: dict[str, Any]) -> str:
    # default=str: a stray non-JSON value (a date, a Decimal) must not kill the reply
    return json.dumps(message, ensure_ascii=False, default=str)


def error_reply(code: str, message: str, **extra: Any) -> str:
    return _dumps({"type": "error", "data": {"message": message, "code": code, **extra}})


def _rpc_error(request: dict[str, Any], code: int, message: str) -> str:
    rid = request.get("id")
    rid = rid if isinstance(rid, str | int) and not isinstance(rid, bool) else None
    return _dumps({"type": "mcp", "data": {"jsonrpc": "2.0", "id": rid,
                                           "error": {"code": code, "message": message,
                                                     "data": None}}})


def _short(value: Any, limit: int = 64) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[:limit] + "…"


# -- one connection's episode ----------------------------------------------------------------
class Connection:
    """The episode behind one socket; messages are handled strictly one at a time.

    The episode lives in ``ctx["env"]``, the context dict ``mcp.handle_jsonrpc`` works on, so
    MCP tool calls sent over this socket (``{"type": "mcp"}``) play the very same episode as
    ``reset``/``step``/``state`` messages, whichever of the two started it.
    """

    def __init__(self) -> None:
        self.ctx: dict[str, Any] = {}

    @property
    def env(self) -> Any:
        return self.ctx.get("env")

    def close(self) -> None:
        env = self.ctx.pop("env", None)
        if env is not None:
            env.close()

    async def handle(self, raw: str) -> str | object | None:
        """The reply to one frame (``CLOSE`` to end the connection, None for no reply)."""
        try:
            message = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            return error_reply(INVALID_JSON, f"Invalid JSON: {_short(str(exc), 200)}")
        if not isinstance(message, dict):
            return error_reply(VALIDATION_ERROR, "Invalid message: expected a JSON object "
                                                 'with a "type" field')
        kind = message.get("type", "")
        handler = self._handlers().get(kind) if isinstance(kind, str) else None
        if handler is None:
            return error_reply(UNKNOWN_TYPE, f"Unknown message type: {_short(kind)}")
        try:
            return await handler(message)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            return error_reply(VALIDATION_ERROR, "Invalid message",
                               errors=json.loads(json.dumps(errors, default=str)))
        except Exception as exc:  # the env failed on this message; the episode stays usable
            return error_reply(EXECUTION_ERROR, f"{type(exc).__name__}: {_short(str(exc), 500)}")

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[Any]]]:
        return {"reset": self._reset, "step": self._step, "state": self._state,
                "close": self._close, "mcp": self._mcp}

    async def _reset(self, message: dict[str, Any]) -> str:
        data = ResetMessage.model_validate(message).data
        split = data.split or "train"
        env = self.env
        if (env is None or getattr(env, "task_name", None) != data.task_name
                or getattr(env, "split", None) != split):
            env = await run_in_threadpool(make, data.task_name, split=split)
            self.close()
            self.ctx["env"] = env
        try:
            # a first reset opens the reference bundle (tens of ms): keep it off the loop
            obs = await run_in_threadpool(env.reset, seed=data.seed)
        except BaseException:
            self.close()  # never leave a half-reset episode that later steps could play on
            raise
        if data.episode_id is not None:
            env.episode_id = data.episode_id  # one id for the episode, its state and info
        return _dumps({"type": "observation",
                       "data": {"episode_id": env.episode_id, "observation": obs.model_dump(),
                                "reward": 0.0, "done": False, "info": {}}})

    async def _step(self, message: dict[str, Any]) -> str:
        action = StepMessage.model_validate(message).data
        env = self._require_env()
        # A billing step takes ~20 µs: run it on the loop (a thread hop costs more than the
        # step). A medical_coding submission grades against the code tree (~ms): off the loop.
        if getattr(env, "task_name", "") == "medical_coding":
            result = await run_in_threadpool(env.step, action)
        else:
            result = env.step(action)
        return _dumps({"type": "observation",
                       "data": {"episode_id": getattr(env, "episode_id", None),
                                "observation": result.observation.model_dump(),
                                "reward": result.reward, "done": result.done,
                                "info": result.info}})

    async def _state(self, message: dict[str, Any]) -> str:
        StateMessage.model_validate(message)
        return _dumps({"type": "state", "data": dict(self._require_env().state)})

    async def _close(self, message: dict[str, Any]) -> object:
        CloseMessage.model_validate(message)
        return CLOSE

    async def _mcp(self, message: dict[str, Any]) -> str | None:
        request = McpMessage.model_validate(message).data
        from . import mcp

        handler = getattr(mcp, "handle_jsonrpc", None)
        if handler is None:
            if request.get("jsonrpc") != "2.0" or not isinstance(request.get("method"), str):
                return _rpc_error(request, RPC_INVALID_REQUEST,
                                  'Invalid request: expected {"jsonrpc": "2.0", "method": ...}')
            return _rpc_error(request, RPC_INTERNAL_ERROR, "Environment does not support MCP")
        if inspect.iscoroutinefunction(handler):
            response = await handler(request, self.ctx)
        else:  # its reset/step tools run the env, which may take tens of ms
            response = await run_in_threadpool(handler, request, self.ctx)
        if response is None:  # a JSON-RPC notification: nothing to answer
            return None
        return _dumps({"type": "mcp", "data": response})

    def _require_env(self) -> Any:
        env = self.env
        if env is None or getattr(env, "scenario", None) is None:
            raise RuntimeError('no episode on this connection: send {"type": "reset"} first')
        return env


# -- the endpoint --------------------------------------------------------------------------
async def _receive_text(websocket: WebSocket) -> str | None:
    """The next frame as text (binary frames are decoded as UTF-8); None once disconnected."""
    frame = await websocket.receive()
    if frame["type"] == "websocket.disconnect":
        return None
    text = frame.get("text")
    if text is not None:
        return text
    data = frame.get("bytes") or b""
    return data.decode("utf-8", errors="replace")


def _too_large(raw: str) -> bool:
    return len(raw) > MAX_MESSAGE_BYTES or len(raw.encode("utf-8")) > MAX_MESSAGE_BYTES


@router.websocket("/ws")
async def ws_episode(websocket: WebSocket) -> None:
    state = websocket.app.state
    sessions = getattr(state, "sessions", None)
    capacity = int(getattr(sessions, "capacity", 256))
    idle_s = float(getattr(sessions, "idle_ttl_s", 1800.0))
    await websocket.accept()
    active = getattr(state, "ws_connections", 0)
    if active >= capacity:
        await websocket.send_text(error_reply(
            CAPACITY_REACHED, f"the server holds its maximum of {capacity} WebSocket episodes; "
                              "retry later", active_sessions=active, max_sessions=capacity))
        await websocket.close(code=1013)  # try again later
        return
    state.ws_connections = active + 1
    connection = Connection()
    try:
        while True:
            try:
                raw = await asyncio.wait_for(_receive_text(websocket), timeout=idle_s)
            except TimeoutError:
                await websocket.send_text(error_reply(
                    SESSION_ERROR, f"no message for {idle_s:g} s: closing the episode"))
                break
            if raw is None:
                break
            if _too_large(raw):
                reply: Any = error_reply(VALIDATION_ERROR, f"message over the "
                                         f"{MAX_MESSAGE_BYTES:,}-byte limit")
            else:
                reply = await connection.handle(raw)
            if reply is CLOSE:
                break
            if reply is not None:
                await websocket.send_text(reply)
    except WebSocketDisconnect:
        pass
    except Exception as exc:  # a bug of ours: tell the client, then end only this connection
        with contextlib.suppress(Exception):
            await websocket.send_text(error_reply(SESSION_ERROR, f"{type(exc).__name__}: {exc}"))
    finally:
        state.ws_connections = getattr(state, "ws_connections", 1) - 1
        connection.close()
        if websocket.client_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await websocket.close(code=1000)
