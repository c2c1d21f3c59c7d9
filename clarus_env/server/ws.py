"""OpenEnv's WebSocket protocol at ``/ws``: one connection holds one episode.

OpenEnv clients (``GenericEnvClient`` and the typed clients built on ``EnvClient``) speak only
this protocol, so it follows OpenEnv's message shapes and error codes exactly; the payloads
are ours (the reset options, the action envelope, the observation and state dicts).

Client → server, one JSON object per text frame::

    {"type": "reset", "data": {"task_name"?, "seed"?, "split"?, "episode_id"?}}
    {"type": "step",  "data": {"action_type": ..., "parameters": {...}}}
    {"type": "state"}
    {"type": "mcp",   "data": <JSON-RPC 2.0 request>}
    {"type": "attach", "data": {"episode_id"}}  (continue an episode, e.g. after a worker died)
    {"type": "close"}                      (no reply; the server closes the socket)

OpenEnv's ``MCPToolClient`` sends its tool calls as step payloads, ``{"type": "list_tools"}``
and ``{"type": "call_tool", "tool_name", "arguments"}``; those are answered with the
observation shapes it parses (``tools`` / ``tool_name`` + ``result``).

Server → client::

    {"type": "observation", "data": {"episode_id", "observation", "reward", "done", "info"}}
    {"type": "state",       "data": <env.state>}
    {"type": "mcp",         "data": <JSON-RPC 2.0 response>}
    {"type": "error",       "data": {"message", "code", ...}}

``observation``/``reward``/``done`` sit at the top of ``data`` because that is where
``EnvClient._parse_result`` looks; ``episode_id`` and ``info`` (``info["grade"]`` when the
episode ends) mirror the HTTP ``/step`` body. ``GenericEnvClient`` drops ``info``, so the
``state`` reply carries ``grade`` once the episode is done. A bad message never ends the
connection: it gets an ``error`` reply naming what was wrong, the episode carries on, and a
refused step changes nothing. Only an over-capacity server, an idle connection or an internal
fault closes the socket (after an ``error`` saying why). The episode lives in the app's
``SessionManager`` (one capacity policy with HTTP and MCP) and ends when the socket closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, Literal

from fastapi import APIRouter, WebSocket
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from starlette.concurrency import run_in_threadpool
from starlette.websockets import WebSocketDisconnect, WebSocketState

from ..tasks import TASKS
from . import fastjson
from .sessions import SessionError, WouldBlock

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


async def _on_loop_or_thread(fn: Any, *args: Any) -> Any:
    """As ``app._on_loop_or_thread``: fast work on the loop, the rest in the threadpool."""
    *head, last = args
    if isinstance(last, bool):  # state's with_grade
        kwargs: dict[str, Any] = {"with_grade": last}
        args = tuple(head)
    else:
        kwargs = {}
    try:
        return fn(*args, nowait=True, **kwargs)
    except WouldBlock:
        return await run_in_threadpool(lambda: fn(*args, nowait=False, **kwargs))


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


class AttachData(_Message):
    episode_id: str = Field(min_length=1, max_length=128)


class ToolCall(BaseModel):
    type: Literal["call_tool"]
    tool_name: str = Field(max_length=128)
    arguments: dict[str, Any] | None = None


class AttachMessage(_Message):
    type: Literal["attach"]
    data: AttachData


# -- the fast path for the messages of every step -------------------------------------------
# Building a pydantic model per message cost more than the JSON decoding; these plain checks
# accept a subset of what the models accept (the well-formed messages clients send) and hand
# everything else to the models, so every refusal keeps the models' exact error message.
_RESET_FIELDS = frozenset(ResetData.model_fields)
_SPLITS = frozenset(("train", "dev", "test"))
_MAX_SEED = 2**63 - 1


def reset_options(message: dict[str, Any]) -> tuple[str, int | None, str | None, str | None]:
    """(task_name, seed, split, episode_id) of a ``reset`` message, as ``ResetMessage`` would
    validate them (its ``ValidationError`` for anything it refuses)."""
    data = message.get("data", {})
    if (len(message) == 1 or (len(message) == 2 and "data" in message)) \
            and type(data) is dict and data.keys() <= _RESET_FIELDS:
        task = data.get("task_name", "deductive_liability")
        seed = data.get("seed")
        split = data.get("split")
        episode_id = data.get("episode_id")
        if type(task) is str and task in TASKS \
                and (seed is None or (type(seed) is int and 0 <= seed <= _MAX_SEED)) \
                and (split is None or (type(split) is str and split in _SPLITS)) \
                and (episode_id is None or (type(episode_id) is str
                                            and 0 < len(episode_id) <= 128)):
            return task, seed, split, episode_id
    d = ResetMessage.model_validate(message).data
    return d.task_name, d.seed, d.split, d.episode_id


def step_action(message: dict[str, Any]) -> dict[str, Any]:
    """The action of a ``step`` message, as ``StepMessage`` would validate it."""
    data = message.get("data")
    if len(message) == 2 and type(data) is dict:
        return data
    return StepMessage.model_validate(message).data


# -- replies ---------------------------------------------------------------------------------
def _dumps(message: dict[str, Any]) -> str:
    # orjson (see fastjson): a stray non-JSON value (a date, a Decimal) goes out as its str,
    # a lone surrogate echoed back goes out ASCII-escaped, never an exception
    return fastjson.dumps_reply(message)


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


def _validation_message(kind: str, exc: ValidationError) -> str:
    """``Invalid reset message: data.seed: Input should be a valid integer`` (first problem
    named, with where it is), not a bare "Invalid message"."""
    errors = exc.errors(include_url=False, include_context=False, include_input=False)
    parts = []
    for err in errors[:3]:
        where = ".".join(str(p) for p in err.get("loc", ())) or "message"
        parts.append(f"{where}: {err.get('msg', 'invalid value')}")
    return f"Invalid {kind} message: " + "; ".join(parts)


def _session_error(exc: SessionError) -> str:
    code = CAPACITY_REACHED if exc.status in (429, 503) else (
        VALIDATION_ERROR if exc.status in (400, 422) else EXECUTION_ERROR)
    return error_reply(code, exc.message, reason=exc.code)


# -- one connection's episode ----------------------------------------------------------------
class Connection:
    """The episode behind one socket; messages are handled strictly one at a time.

    The episode lives in the app's ``SessionManager`` (so it counts against the one capacity
    limit and can be resumed on another worker with ``attach``); ``ctx`` is the context dict
    ``mcp.handle_jsonrpc`` works on, naming the same episode, so MCP tool calls sent over this
    socket (``{"type": "mcp"}``, or OpenEnv ``MCPToolClient``'s ``call_tool``/``list_tools``
    step payloads) play the very same episode as ``reset``/``step``/``state`` messages.
    """

    def __init__(self, sessions: Any, client: str = "") -> None:
        self.sessions = sessions
        self.client = client
        self.ctx: dict[str, Any] = {"sessions": sessions, "client": client}
        self._by_type = self._handlers()  # built once, not per message

    @property
    def episode_id(self) -> str | None:
        return self.ctx.get("episode_id")

    async def close(self) -> None:
        """Free this connection's episode (the socket ended or it was replaced)."""
        key = self.ctx.pop("episode_id", None)
        self.ctx.pop("reset_done", None)
        if key is not None:
            await _on_loop_or_thread(self.sessions.close, key)

    async def handle(self, raw: str) -> str | object | None:
        """The reply to one frame (``CLOSE`` to end the connection, None for no reply)."""
        try:
            message = fastjson.loads(raw)
        except (ValueError, RecursionError) as exc:
            return error_reply(INVALID_JSON, f"Invalid JSON: {_short(str(exc), 200)}")
        if not isinstance(message, dict):
            return error_reply(VALIDATION_ERROR, "Invalid message: expected a JSON object "
                                                 'with a "type" field')
        kind = message.get("type", "")
        handler = self._by_type.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return error_reply(UNKNOWN_TYPE, f"Unknown message type: {_short(kind)}; "
                               f"expected one of {', '.join(self._by_type)}")
        try:
            return await handler(message)
        except ValidationError as exc:
            errors = exc.errors(include_url=False, include_context=False, include_input=False)
            return error_reply(VALIDATION_ERROR, _validation_message(kind, exc),
                               errors=json.loads(json.dumps(errors, default=str)))
        except SessionError as exc:
            return _session_error(exc)
        except Exception as exc:  # the env failed on this message; the episode stays usable
            return error_reply(EXECUTION_ERROR, f"{type(exc).__name__}: {_short(str(exc), 500)}")

    def _handlers(self) -> dict[str, Callable[[dict[str, Any]], Awaitable[Any]]]:
        return {"reset": self._reset, "step": self._step, "state": self._state,
                "close": self._close, "mcp": self._mcp, "attach": self._attach}

    async def _reset(self, message: dict[str, Any]) -> str:
        task, seed, split, episode_id = reset_options(message)
        key = episode_id or "ws-" + uuid.uuid4().hex  # each reset: a new episode
        if self.episode_id is not None and key != self.episode_id:
            await self.close()
        try:
            key, obs = await _on_loop_or_thread(self.sessions.reset, task, seed, split, key,
                                                self.client)
        except BaseException:
            self.ctx.pop("episode_id", None)
            raise
        self.ctx["episode_id"], self.ctx["reset_done"] = key, True
        return _dumps({"type": "observation",
                       "data": {"episode_id": key, "observation": obs,
                                "reward": 0.0, "done": False, "info": {}}})

    async def _step(self, message: dict[str, Any]) -> str:
        action = step_action(message)
        if action.get("type") in ("list_tools", "call_tool") and "action_type" not in action:
            return await self._tool_step(action)
        out = await _on_loop_or_thread(self.sessions.step, self._require_episode(), action)
        return _dumps({"type": "observation", "data": out})

    async def _tool_step(self, payload: dict[str, Any]) -> str:
        """OpenEnv ``MCPToolClient`` over the socket: ``{"type": "list_tools"}`` and
        ``{"type": "call_tool", "tool_name", "arguments"}`` step payloads, answered with the
        observation shapes its ``_parse_result`` reads (``tools`` / ``tool_name``)."""
        from . import mcp

        if payload["type"] == "list_tools":
            return _dumps({"type": "observation", "data": {
                "observation": {"tools": mcp.tool_list(), "metadata": {}},
                "reward": None, "done": False}})
        ToolCall.model_validate(payload)
        name, args = payload["tool_name"], payload.get("arguments") or {}
        if name not in mcp.tool_names():
            return _dumps({"type": "observation", "data": {
                "observation": {"tool_name": name, "result": None, "metadata": {},
                                "error": {"error_type": "tool_not_found",
                                          "message": f"unknown tool {_short(name)}; see "
                                                     "list_tools"}},
                "reward": None, "done": False}})
        result = await run_in_threadpool(mcp.call_tool, self.ctx, name, args)
        body = result.get("structuredContent") or {}
        return _dumps({"type": "observation", "data": {
            "observation": {"tool_name": name, "result": body, "error": None,
                            "metadata": {"is_error": bool(result.get("isError"))}},
            "reward": body.get("reward"), "done": bool(body.get("done", False))}})

    async def _state(self, message: dict[str, Any]) -> str:
        if len(message) != 1:
            StateMessage.model_validate(message)
        # with the grade: OpenEnv's GenericEnvClient drops `info`, so state() is where its
        # users read the final grade
        out = await _on_loop_or_thread(self.sessions.state, self._require_episode(), True)
        return _dumps({"type": "state", "data": out})

    async def _attach(self, message: dict[str, Any]) -> str:
        """Continue an episode this socket did not start (e.g. after its worker died)."""
        key = AttachMessage.model_validate(message).data.episode_id
        out = await _on_loop_or_thread(self.sessions.state, key)
        if self.episode_id is not None and self.episode_id != key:
            await self.close()
        self.ctx["episode_id"], self.ctx["reset_done"] = key, True
        return _dumps({"type": "state", "data": out})

    async def _close(self, message: dict[str, Any]) -> object:
        CloseMessage.model_validate(message)
        return CLOSE

    async def _mcp(self, message: dict[str, Any]) -> str | None:
        request = McpMessage.model_validate(message).data
        from . import mcp

        response = await run_in_threadpool(mcp.handle_jsonrpc, request, self.ctx)
        if response is None:  # a JSON-RPC notification: nothing to answer
            return None
        return _dumps({"type": "mcp", "data": response})

    def _require_episode(self) -> str:
        key = self.episode_id
        if key is None:
            raise SessionError("no_episode", 'no episode on this connection: send '
                               '{"type": "reset"} (or {"type": "attach"}) first', 404)
        return key


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
    # a character is at most 4 UTF-8 bytes: only long frames need encoding to be measured
    return len(raw) * 4 > MAX_MESSAGE_BYTES and (
        len(raw) > MAX_MESSAGE_BYTES or len(raw.encode("utf-8")) > MAX_MESSAGE_BYTES)


class IdleWatch:
    """Cancels the connection's task once it has waited ``idle_s`` for one message.

    One timer per connection, re-armed only when it fires (``asyncio.timeout`` around each
    receive would build and cancel a timer per message); time spent handling a message does
    not count as idle, as with a timeout around the receive alone.
    """

    def __init__(self, idle_s: float) -> None:
        self.idle_s = idle_s
        self.loop = asyncio.get_running_loop()
        self.task = asyncio.current_task()
        self.waiting_since: float | None = None
        self.expired = False
        self._timer = self.loop.call_later(idle_s, self._check)

    def _check(self) -> None:
        since = self.waiting_since
        now = self.loop.time()
        if since is not None and now - since >= self.idle_s and self.task is not None:
            self.expired = True
            self.task.cancel()
            return
        self._timer = self.loop.call_at((since if since is not None else now) + self.idle_s,
                                        self._check)

    def stop(self) -> None:
        self._timer.cancel()


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
    connection = Connection(sessions, websocket.client.host if websocket.client else "")
    watch = IdleWatch(idle_s)
    try:
        while True:
            watch.waiting_since = watch.loop.time()
            try:
                raw = await _receive_text(websocket)
            except asyncio.CancelledError:
                if not watch.expired:
                    raise  # the server is shutting down
                asyncio.current_task().uncancel()  # type: ignore[union-attr]
                await websocket.send_text(error_reply(
                    SESSION_ERROR, f"no message for {idle_s:g} s: closing the episode"))
                break
            watch.waiting_since = None
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
        watch.stop()
        state.ws_connections = getattr(state, "ws_connections", 1) - 1
        with contextlib.suppress(Exception):
            await connection.close()
        if websocket.client_state == WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await websocket.close(code=1000)
