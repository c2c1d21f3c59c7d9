"""MCP (JSON-RPC 2.0, streamable HTTP) at ``/mcp``: one tool per action, explicit sessions.

Why MCP at all: agent frameworks that speak MCP can play Clarus with no adapter. Every task's
actions become tools whose ``inputSchema`` is the action's published JSON Schema, so what an
MCP client sees is exactly what ``/step`` validates.

Sessions are explicit. ``initialize`` opens an MCP session (``Mcp-Session-Id``); the session
owns exactly one episode, started by the ``reset`` tool. Action tools called before ``reset``
are tool errors (``isError``), never guesses.

The model drives the tools, so the tools cannot choose or repeat a scenario: ``reset`` takes
no seed and works once per MCP session (an agent that could reset to the seed it just saw
graded would solve any seed by trial and error). The *harness* picks the scenario when it
opens the session, with the headers ``X-Clarus-Task``, ``X-Clarus-Seed`` and
``X-Clarus-Split`` on ``initialize`` (the official SDK client takes them as ``headers=``);
without a seed the server draws one from the split. Episodes themselves live in the app's
``SessionManager`` (``app.state.sessions``), so MCP episodes share the server's capacity
limit, idle expiry and per-episode lock with HTTP ones, and ``GET /state?episode_id=`` works
for them too. The MCP sessions around them are a second, lightweight store (a dict each) with
the same capacity and idle TTL, so clients that never send ``DELETE`` cannot grow it forever.

Responses are plain ``application/json`` (allowed by the streamable HTTP spec: the server has
nothing to stream). ``GET /mcp`` (a server-to-client SSE stream) is refused with 405, which
clients treat as "no stream offered". Errors are JSON-RPC error objects: malformed JSON -32700
and malformed envelopes -32600 with HTTP 400; unknown methods -32601 and bad parameters
-32602 with HTTP 200; a failure inside a handler is -32603, never an HTTP 500.

``handle_jsonrpc(payload, ctx)`` is the transport-free core, shared with the WebSocket route.
``ctx`` is a plain dict holding one connection's episode state:

- ``ctx["sessions"]`` (optional): a ``SessionManager``; when present the episode is kept there
  under ``ctx["episode_id"]`` (chosen on the first ``reset``).
- otherwise the env is held in ``ctx["env"]`` (a caller may put its own env there, so MCP tool
  calls act on the same episode as its other messages); ``close_context(ctx)`` releases it.
"""

from __future__ import annotations

import json
import os
import threading
import time
import uuid
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..actions import ACTIONS, CODING_ACTIONS, ActionSpec
from ..schemas import load
from ..tasks import TASKS
from .sessions import SessionError

router = APIRouter()

# Handshake-era revisions this server speaks; the newest is its counter-offer when a client
# proposes one it does not know (the client then decides whether to continue).
PROTOCOL_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25")
LATEST_PROTOCOL_VERSION = PROTOCOL_VERSIONS[-1]

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS, INTERNAL_ERROR = (
    -32700, -32600, -32601, -32602, -32603)
SESSION_NOT_FOUND = -32001  # server-defined range: the Mcp-Session-Id is unknown or expired
SERVER_BUSY = -32000

SESSION_HEADER = "mcp-session-id"
VERSION_HEADER = "mcp-protocol-version"
SPLITS = ("train", "dev", "test")
CODING_TASK = "medical_coding"

INSTRUCTIONS = (
    "Clarus: healthcare billing dispute and medical coding arenas. Call the `reset` tool "
    "first (once per session; task_name one of " + ", ".join(TASKS) + ", unless the harness "
    "chose the task); then play the episode with that task's "
    "action tools (tools tagged [billing] for the three billing tasks, [medical_coding] for "
    "medical_coding). Each call returns {observation, reward, done, info}. Billing episodes "
    "are graded at close_case, coding episodes after the third submit_codes; `state` shows "
    "progress and `grade` the final grade."
)


# -- tools ------------------------------------------------------------------------------------
def _session_tools() -> list[dict[str, Any]]:
    return [
        {"name": "reset",
         "description": "Start this MCP session's episode (once per session). Must be called "
                        "before any action tool. The scenario is chosen by the harness (or "
                        "drawn at random from the split), never by the caller.",
         "inputSchema": {
             "type": "object",
             "properties": {
                 "task_name": {"type": "string", "enum": list(TASKS),
                               "description": "The task to play (required unless the harness "
                                              "chose it for this session)."},
                 "split": {"type": "string", "enum": list(SPLITS),
                           "description": "Seed split to draw from (default train; ignored "
                                          "when the harness chose the scenario)."}},
             "additionalProperties": False}},
        {"name": "state",
         "description": "Episode bookkeeping: episode_id, task, seed, step_count, done, score.",
         "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False}},
        {"name": "grade",
         "description": "The episode's grade (score and per-check results) once it has ended.",
         "inputSchema": {"type": "object", "properties": {}, "additionalProperties": False}},
    ]


def _action_tool(spec: ActionSpec, tag: str) -> dict[str, Any]:
    return {"name": spec.name, "description": f"[{tag}] {spec.description}",
            "inputSchema": load(f"actions/{spec.name}.schema.json")}


def tool_list() -> list[dict[str, Any]]:
    """Session tools, then the 19 billing actions, then the 4 coding actions."""
    tools = _session_tools()
    tools += [_action_tool(s, "billing") for s in ACTIONS.values()]
    tools += [_action_tool(s, "medical_coding") for s in CODING_ACTIONS.values()]
    return tools


class ToolError(Exception):
    """A tool call that cannot run; reported as ``isError`` so the model can read and recover."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code, self.message = code, message


def _json_safe(payload: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    text = json.dumps(payload, default=str)
    return text, json.loads(text)


def _tool_result(payload: dict[str, Any], is_error: bool = False) -> dict[str, Any]:
    text, structured = _json_safe(payload)
    return {"content": [{"type": "text", "text": text}], "structuredContent": structured,
            "isError": is_error}


def _tool_error(code: str, message: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": message}],
            "structuredContent": {"error": {"code": code, "message": message}},
            "isError": True}


# -- episodes -------------------------------------------------------------------------------
HARNESS_HEADERS = {"task_name": "x-clarus-task", "seed": "x-clarus-seed",
                   "split": "x-clarus-split"}


def harness_choice(headers: Any) -> dict[str, Any]:
    """The scenario a harness chose for an MCP session, from ``initialize``'s headers.

    Raises ToolError naming the header when a value is malformed."""
    out: dict[str, Any] = {}
    task = headers.get(HARNESS_HEADERS["task_name"])
    if task is not None:
        if task not in TASKS:
            raise ToolError("unknown_task", f"header X-Clarus-Task must be one of "
                                            f"{', '.join(TASKS)}; got {task!r}")
        out["task_name"] = task
    seed = headers.get(HARNESS_HEADERS["seed"])
    if seed is not None:
        if not seed.isdigit() or int(seed) > 2**63 - 1:
            raise ToolError("invalid_seed", "header X-Clarus-Seed must be a non-negative "
                                            f"64-bit integer; got {seed[:40]!r}")
        out["seed"] = int(seed)
    split = headers.get(HARNESS_HEADERS["split"])
    if split is not None:
        if split not in SPLITS:
            raise ToolError("invalid_split", "header X-Clarus-Split must be train, dev or "
                                             f"test; got {split[:40]!r}")
        out["split"] = split
    return out


def _check_reset_args(ctx: dict[str, Any], args: dict[str, Any]
                      ) -> tuple[str, int | None, str | None]:
    if "seed" in args:
        raise ToolError("invalid_arguments", "reset: the seed is not the caller's to choose; "
                        "the harness sets it with the X-Clarus-Seed header on initialize")
    unknown = sorted(str(k) for k in args if k not in ("task_name", "split"))
    if unknown:
        raise ToolError("invalid_arguments", f"reset: unknown argument(s) {', '.join(unknown)}; "
                                             "allowed: task_name, split")
    chosen = ctx.get("harness") or {}
    task = args.get("task_name", chosen.get("task_name"))
    if not isinstance(task, str) or task not in TASKS:
        raise ToolError("unknown_task", f"reset.task_name must be one of {', '.join(TASKS)}; "
                                        f"got {task!r}")
    if "task_name" in chosen and task != chosen["task_name"]:
        raise ToolError("unknown_task", f"reset.task_name: the harness chose "
                                        f"{chosen['task_name']!r} for this session")
    split = args.get("split")
    if split is not None and split not in SPLITS:
        raise ToolError("invalid_split", f"reset.split must be train, dev or test; got {split!r}")
    if "seed" in chosen or "split" in chosen:
        split = chosen.get("split")
    return task, chosen.get("seed"), split


def _reset(ctx: dict[str, Any], args: dict[str, Any]) -> dict[str, Any]:
    if ctx.get("reset_done") or (ctx.get("env") is not None
                                 and getattr(ctx["env"], "scenario", None) is not None):
        raise ToolError("episode_exists", "this session already has its episode: one episode "
                        "per MCP session (the harness opens a new session for the next one)")
    task, seed, split = _check_reset_args(ctx, args)
    sessions = ctx.get("sessions")
    ctx.pop("grade", None)
    if sessions is not None:
        key = ctx.setdefault("episode_id", "mcp-" + uuid.uuid4().hex)
        try:
            session, obs = sessions.reset(task, seed, split, key)
        except SessionError as exc:
            raise ToolError(exc.code, exc.message) from None
        episode_id = session.episode_id
    else:
        lock = ctx.setdefault("lock", threading.Lock())
        with lock:
            env = ctx.get("env")
            if env is None or getattr(env, "task_name", None) != task:
                from ..env import make

                if env is not None:
                    env.close()
                env = ctx["env"] = make(task, split=split or "train")
            elif split is not None:
                env.split = split
            obs = env.reset(seed=seed)
            episode_id = env.episode_id
    ctx["reset_done"] = True
    return {"episode_id": episode_id, "observation": obs.model_dump(), "reward": 0.0,
            "done": False, "info": {}}


def _episode(ctx: dict[str, Any]) -> tuple[Any, Any]:
    """(env, lock) of the context's episode, or a ToolError saying to call reset."""
    sessions = ctx.get("sessions")
    if sessions is not None:
        key = ctx.get("episode_id")
        if key is None:
            raise ToolError("no_episode", "no episode in this MCP session yet: call the `reset` "
                                          "tool with a task_name first")
        try:
            session = sessions.get(key)
        except SessionError:
            raise ToolError("episode_expired", "this session's episode has expired or was "
                                               "closed: open a new MCP session for another "
                                               "episode"
                            ) from None
        ctx["session"] = session
        return session.env, session.lock
    env = ctx.get("env")
    if env is None or getattr(env, "scenario", None) is None:
        raise ToolError("no_episode", "no episode in this session yet: call the `reset` tool "
                                      "with a task_name first")
    return env, ctx.setdefault("lock", threading.Lock())


def _step(ctx: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    env, lock = _episode(ctx)
    task = env.task_name
    allowed = CODING_ACTIONS if task == CODING_TASK else ACTIONS
    if name not in allowed:
        kind = "medical_coding" if name in CODING_ACTIONS else "billing"
        raise ToolError("wrong_task", f"{name} is a {kind} action; this episode is {task!r}, "
                                      f"whose actions are: {', '.join(allowed)}")
    with lock:
        session = ctx.get("session")
        if session is not None and session.closed:  # evicted between lookup and use
            raise ToolError("episode_expired", "this session's episode has expired or was "
                                               "closed: open a new MCP session for another "
                                               "episode")
        res = env.step({"action_type": name, "parameters": args})
    if "grade" in res.info:
        ctx["grade"] = res.info["grade"]
    return {"observation": res.observation.model_dump(), "reward": res.reward,
            "done": res.done, "info": res.info}


def _call_tool(ctx: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    try:
        if name == "reset":
            return _tool_result(_reset(ctx, args))
        if name in ("state", "grade") and args:
            raise ToolError("invalid_arguments", f"{name} takes no arguments")
        if name == "state":
            env, _ = _episode(ctx)
            return _tool_result(env.state)
        if name == "grade":
            env, _ = _episode(ctx)
            st = env.state
            if not st["done"]:
                return _tool_result({"done": False, "score": None, "grade": None,
                                     "message": "not graded yet: the episode ends at close_case "
                                                "(billing) or the last submit_codes (coding)"})
            return _tool_result({"done": True, "score": st["score"], "grade": ctx.get("grade")})
        out = _step(ctx, name, args)
        return _tool_result(out, is_error=bool(out["observation"].get("last_action_error")))
    except ToolError as exc:
        return _tool_error(exc.code, exc.message)


# -- JSON-RPC core ------------------------------------------------------------------------
def _error(req_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


def _result(req_id: Any, result: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def _initialize(ctx: dict[str, Any], params: dict[str, Any]) -> dict[str, Any]:
    asked = params.get("protocolVersion")
    version = asked if asked in PROTOCOL_VERSIONS else LATEST_PROTOCOL_VERSION
    ctx["protocol_version"] = version
    ctx["client_info"] = params.get("clientInfo")
    return {"protocolVersion": version,
            "capabilities": {"tools": {"listChanged": False}},
            "serverInfo": {"name": "clarus", "title": "Clarus", "version": __version__},
            "instructions": INSTRUCTIONS}


def handle_jsonrpc(payload: Any, ctx: dict[str, Any]) -> dict[str, Any] | None:
    """Answer one JSON-RPC message; None for notifications and client responses.

    Transport-free on purpose: the HTTP route and the WebSocket route both call it, so every
    transport gets the same tools, errors and session rules.
    """
    if not isinstance(payload, dict):
        kind = "batches are not supported" if isinstance(payload, list) else "not an object"
        return _error(None, INVALID_REQUEST, f"invalid JSON-RPC message: {kind}")
    req_id = payload.get("id")
    id_ok = isinstance(req_id, str | int) and not isinstance(req_id, bool)
    if payload.get("jsonrpc") != "2.0":
        return _error(req_id if id_ok else None, INVALID_REQUEST, 'jsonrpc must be "2.0"')
    method = payload.get("method")
    if method is None and ("result" in payload or "error" in payload):
        return None  # a response to a server request; this server never sends any
    if not isinstance(method, str):
        return _error(req_id if id_ok else None, INVALID_REQUEST, "method must be a string")
    if "id" not in payload:
        if method == "notifications/initialized":
            ctx["initialized"] = True
        return None  # other notifications (cancelled, progress...) need no action
    if not id_ok:
        return _error(None, INVALID_REQUEST, "id must be a string or an integer")
    params = payload.get("params")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        return _error(req_id, INVALID_PARAMS, "params must be an object")
    try:
        if method == "initialize":
            return _result(req_id, _initialize(ctx, params))
        if method == "ping":
            return _result(req_id, {})
        if method == "tools/list":
            return _result(req_id, {"tools": tool_list()})
        if method == "tools/call":
            name, args = params.get("name"), params.get("arguments")
            if args is None:
                args = {}
            if not isinstance(name, str):
                return _error(req_id, INVALID_PARAMS, "tools/call: params.name must be a string")
            if not isinstance(args, dict):
                return _error(req_id, INVALID_PARAMS,
                              "tools/call: params.arguments must be an object")
            if name not in _TOOL_NAMES:
                return _error(req_id, INVALID_PARAMS, f"unknown tool {name!r}; see tools/list")
            return _result(req_id, _call_tool(ctx, name, args))
        return _error(req_id, METHOD_NOT_FOUND, f"method {method!r} not found; this server "
                      "implements initialize, ping, tools/list and tools/call")
    except Exception as exc:  # a bug must not take the connection down: report it, keep going
        return _error(req_id, INTERNAL_ERROR, f"internal error: {type(exc).__name__}: {exc}")


_TOOL_NAMES = frozenset(t["name"] for t in _session_tools()) | set(ACTIONS) | set(CODING_ACTIONS)


def close_context(ctx: dict[str, Any]) -> None:
    """Release the context's episode (call when its connection or session ends)."""
    sessions, key = ctx.get("sessions"), ctx.pop("episode_id", None)
    if sessions is not None and key is not None:
        sessions.close(key)
    env = ctx.pop("env", None)
    if env is not None:
        env.close()


# -- MCP sessions -----------------------------------------------------------------------------
class McpSessions:
    """Mcp-Session-Id -> context dict, bounded and idle-expiring (like the episodes they own)."""

    def __init__(self, capacity: int, idle_ttl_s: float) -> None:
        self.capacity, self.idle_ttl_s = capacity, idle_ttl_s
        self._items: dict[str, tuple[dict[str, Any], float]] = {}
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._items)

    def _expire(self, now: float) -> list[dict[str, Any]]:
        stale = [k for k, (_, t) in self._items.items() if now - t > self.idle_ttl_s]
        return [self._items.pop(k)[0] for k in stale]

    def add(self, ctx: dict[str, Any]) -> str | None:
        """A new session id for ``ctx``, or None when the store is full."""
        now = time.monotonic()
        with self._lock:
            expired = self._expire(now)
            sid = None
            if len(self._items) < self.capacity:
                sid = uuid.uuid4().hex
                self._items[sid] = (ctx, now)
        for old in expired:
            close_context(old)
        return sid

    def get(self, sid: str) -> dict[str, Any] | None:
        now = time.monotonic()
        with self._lock:
            expired = self._expire(now)
            item = self._items.get(sid)
            if item is not None:
                self._items[sid] = (item[0], now)
        for old in expired:
            close_context(old)
        return item[0] if item is not None else None

    def close(self, sid: str) -> bool:
        with self._lock:
            item = self._items.pop(sid, None)
        if item is not None:
            close_context(item[0])
        return item is not None


_store_lock = threading.Lock()


def _store(request: Request) -> McpSessions:
    """The app's MCP session store, created on first use with the episode store's limits."""
    state = request.app.state
    with _store_lock:
        store = getattr(state, "mcp_sessions", None)
        if store is None:
            episodes = state.sessions
            store = state.mcp_sessions = McpSessions(episodes.capacity, episodes.idle_ttl_s)
    return store


# -- HTTP transport ---------------------------------------------------------------------------
def _rpc_response(body: dict[str, Any], status: int = 200,
                  headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse(status_code=status, content=body, headers=headers)


def _origin_allowed(request: Request) -> bool:
    """Refuse cross-site browser requests (DNS rebinding), as the MCP transport spec asks.

    Non-browser clients send no Origin. Allowed: same host as the request, loopback, or an
    origin listed in CLARUS_MCP_ALLOWED_ORIGINS (comma-separated; "*" allows any).
    """
    origin = request.headers.get("origin")
    if not origin:
        return True
    allowed = [o.strip() for o in os.environ.get("CLARUS_MCP_ALLOWED_ORIGINS", "").split(",")
               if o.strip()]
    if "*" in allowed or origin in allowed:
        return True
    host = urlsplit(origin).hostname or ""
    own = (request.headers.get("host") or "").rsplit(":", 1)[0].strip("[]")
    return host in ("localhost", "127.0.0.1", "::1") or (bool(own) and host == own)


def _accepts_json(request: Request) -> bool:
    accept = request.headers.get("accept")
    if not accept:
        return True
    types = {part.split(";")[0].strip().lower() for part in accept.split(",")}
    return bool(types & {"application/json", "application/*", "*/*"})


@router.post("/mcp")
async def mcp_post(request: Request) -> Response:
    if not _origin_allowed(request):
        return _rpc_response(_error(None, INVALID_REQUEST, "origin not allowed"), 403)
    if not _accepts_json(request):
        return _rpc_response(_error(None, INVALID_REQUEST, "Accept must allow application/json "
                                                           "(this server answers in JSON)"), 406)
    try:
        payload = json.loads(await request.body())
    except (ValueError, UnicodeDecodeError):
        return _rpc_response(_error(None, PARSE_ERROR, "parse error: body is not valid JSON"),
                             400)
    version = request.headers.get(VERSION_HEADER)
    if version is not None and version not in PROTOCOL_VERSIONS:
        return _rpc_response(_error(None, INVALID_REQUEST, f"unsupported MCP-Protocol-Version "
                                    f"{version!r}; supported: {', '.join(PROTOCOL_VERSIONS)}"),
                             400)
    store = _store(request)
    method = payload.get("method") if isinstance(payload, dict) else None
    sid = request.headers.get(SESSION_HEADER)
    headers: dict[str, str] = {}
    if method == "initialize" and isinstance(payload, dict) and "id" in payload:
        ctx: dict[str, Any] = {"sessions": request.app.state.sessions}
        try:
            ctx["harness"] = harness_choice(request.headers)
        except ToolError as exc:
            return _rpc_response(_error(payload.get("id"), INVALID_PARAMS, exc.message), 200)
        reply = await run_in_threadpool(handle_jsonrpc, payload, ctx)
        if reply is not None and "result" in reply:
            new_sid = store.add(ctx)
            if new_sid is None:
                return _rpc_response(_error(payload.get("id"), SERVER_BUSY, f"the server holds "
                                     f"its maximum of {store.capacity} MCP sessions; retry "
                                     "later"), 503)
            headers["Mcp-Session-Id"] = new_sid
    else:
        if sid is not None:
            found = store.get(sid)
            if found is None:
                return _rpc_response(_error(None, SESSION_NOT_FOUND, "unknown or expired "
                                            "Mcp-Session-Id: send initialize to start a new "
                                            "session"), 404)
            ctx = found
        elif method == "tools/call":
            return _rpc_response(_error(None, INVALID_REQUEST, "missing Mcp-Session-Id header: "
                                        "send initialize first and echo the session id"), 400)
        else:
            ctx = {}  # stateless methods (ping, tools/list) need no session
        reply = await run_in_threadpool(handle_jsonrpc, payload, ctx)
    if reply is None:
        return Response(status_code=202)
    code = reply.get("error", {}).get("code")
    status = 400 if code in (PARSE_ERROR, INVALID_REQUEST) else 200
    return _rpc_response(reply, status, headers)


@router.get("/mcp")
async def mcp_get() -> Response:
    """No server-initiated messages exist, so there is no SSE stream to open."""
    return _rpc_response(_error(None, INVALID_REQUEST, "this server offers no SSE stream; "
                                "POST JSON-RPC messages to /mcp"), 405,
                         {"Allow": "POST, DELETE"})


@router.delete("/mcp")
async def mcp_delete(request: Request) -> Response:
    """End an MCP session and its episode."""
    sid = request.headers.get(SESSION_HEADER)
    if not sid:
        return _rpc_response(_error(None, INVALID_REQUEST, "missing Mcp-Session-Id header"), 400)
    closed = await run_in_threadpool(_store(request).close, sid)
    if not closed:
        return _rpc_response(_error(None, SESSION_NOT_FOUND, "unknown or expired "
                                    "Mcp-Session-Id"), 404)
    return Response(status_code=204)
