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
limit, idle expiry and store with HTTP and WebSocket ones, and ``GET /state?episode_id=``
works for them too. The MCP sessions around them are kept in the same store (so any worker
serves any session), bounded by the same capacity and idle TTL; ``DELETE /mcp`` ends the
session and frees its episode.

Responses are plain ``application/json`` (allowed by the streamable HTTP spec: the server has
nothing to stream). ``GET /mcp`` (a server-to-client SSE stream) is refused with 405, which
clients treat as "no stream offered". Errors are JSON-RPC error objects: a body that is not
JSON is -32700 with HTTP 400; malformed envelopes (-32600), unknown methods (-32601) and bad
parameters (-32602) come with HTTP 200 (OpenEnv's validator posts ``{}`` and expects a 200
JSON-RPC reply); a failure inside a handler is -32603, never an HTTP 500.

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
import uuid
from typing import Any
from urllib.parse import urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from .. import __version__
from ..actions import ACTIONS, CODING_ACTIONS, ActionSpec
from ..schemas import load
from ..tasks import TASKS, get_task
from ..tasks.base import vocabulary_text
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


# the vocabulary field of each billing action that takes one: the tool list is the same for
# every session, so each task's names and meanings are listed (the model knows its task from
# the reset tool's observation)
_VOCABULARY_FIELDS = {"write_diagnosis": "finding", "draft_resolution": "appeal_reason"}


def _vocabulary_note(action: str) -> str:
    field = _VOCABULARY_FIELDS.get(action)
    if field is None:
        return ""
    parts = []
    for name in TASKS:
        task = get_task(name)
        vocab = task.vocabulary()[field] if hasattr(task, "vocabulary") else {}
        if vocab:
            parts.append(f"{name}: {vocabulary_text(vocab)}")
    return f" {field} by task - " + " | ".join(parts) + "." if parts else ""


def _action_tool(spec: ActionSpec, tag: str) -> dict[str, Any]:
    note = _vocabulary_note(spec.name) if tag == "billing" else ""
    return {"name": spec.name, "description": f"[{tag}] {spec.description}{note}",
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
            episode_id, first = sessions.reset(task, seed, split, key, ctx.get("client", ""))
        except SessionError as exc:
            ctx.pop("episode_id", None)
            raise ToolError(exc.code, exc.message) from None
        ctx["reset_done"] = True
        return {"episode_id": episode_id, "observation": first, "reward": 0.0,
                "done": False, "info": {}}
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


def _episode_key(ctx: dict[str, Any]) -> str:
    key = ctx.get("episode_id")
    if key is None:
        raise ToolError("no_episode", "no episode in this MCP session yet: call the `reset` "
                                      "tool with a task_name first")
    return key


def _expired(exc: SessionError) -> ToolError:
    if exc.status == 404:
        return ToolError("episode_expired", "this session's episode has expired or was "
                                            "closed: open a new MCP session for another episode")
    return ToolError(exc.code, exc.message)


def _local_env(ctx: dict[str, Any]) -> tuple[Any, Any]:
    """(env, lock) of a context that holds its own env (``handle_jsonrpc`` without a server)."""
    env = ctx.get("env")
    if env is None or getattr(env, "scenario", None) is None:
        raise ToolError("no_episode", "no episode in this session yet: call the `reset` tool "
                                      "with a task_name first")
    return env, ctx.setdefault("lock", threading.Lock())


def _state(ctx: dict[str, Any]) -> dict[str, Any]:
    sessions = ctx.get("sessions")
    if sessions is not None:
        try:
            return sessions.state(_episode_key(ctx), with_grade=True)
        except SessionError as exc:
            raise _expired(exc) from None
    env, lock = _local_env(ctx)
    with lock:
        out = dict(env.state)
    if out.get("done") and ctx.get("grade") is not None:
        out["grade"] = ctx["grade"]
    return out


def _task(ctx: dict[str, Any]) -> str:
    sessions = ctx.get("sessions")
    if sessions is None:
        return _local_env(ctx)[0].task_name
    return _state(ctx)["task"]


def _step(ctx: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    task = _task(ctx)
    allowed = CODING_ACTIONS if task == CODING_TASK else ACTIONS
    if name not in allowed:
        kind = "medical_coding" if name in CODING_ACTIONS else "billing"
        raise ToolError("wrong_task", f"{name} is a {kind} action; this episode is {task!r}, "
                                      f"whose actions are: {', '.join(allowed)}")
    action = {"action_type": name, "parameters": args}
    sessions = ctx.get("sessions")
    if sessions is not None:
        try:
            out = sessions.step(_episode_key(ctx), action)
        except SessionError as exc:
            raise _expired(exc) from None
        return {k: out[k] for k in ("observation", "reward", "done", "info")}
    env, lock = _local_env(ctx)
    with lock:
        res = env.step(action)
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
            return _tool_result({k: v for k, v in _state(ctx).items() if k != "grade"})
        if name == "grade":
            st = _state(ctx)
            if not st["done"]:
                return _tool_result({"done": False, "score": None, "grade": None,
                                     "message": "not graded yet: the episode ends at close_case "
                                                "(billing) or the last submit_codes (coding)"})
            return _tool_result({"done": True, "score": st["score"], "grade": st.get("grade")})
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


def tool_names() -> frozenset[str]:
    return frozenset(_TOOL_NAMES)


def call_tool(ctx: dict[str, Any], name: str, args: dict[str, Any]) -> dict[str, Any]:
    """One tool call on ``ctx``'s episode (the MCP tool result dict); for transports that
    carry tool calls outside JSON-RPC (OpenEnv ``MCPToolClient`` over the WebSocket)."""
    return _call_tool(ctx, name, args)


def close_context(ctx: dict[str, Any]) -> None:
    """Release the context's episode (call when its connection or session ends)."""
    sessions, key = ctx.get("sessions"), ctx.pop("episode_id", None)
    if sessions is not None and key is not None:
        sessions.close(key)
    env = ctx.pop("env", None)
    if env is not None:
        env.close()


# -- MCP sessions -----------------------------------------------------------------------------
_PERSISTED = ("protocol_version", "client_info", "initialized", "harness", "episode_id",
              "reset_done")


class McpSessions:
    """Mcp-Session-Id -> context, kept in the episode store (so any worker can serve any MCP
    session), bounded by the same capacity and idle TTL as the episodes they own."""

    def __init__(self, episodes: Any) -> None:
        self.episodes = episodes
        self.store = episodes.store
        self.capacity = episodes.capacity

    def __len__(self) -> int:
        return self.store.aux_count()

    @staticmethod
    def _saved(ctx: dict[str, Any]) -> dict[str, Any]:
        return {k: ctx[k] for k in _PERSISTED if k in ctx}

    def add(self, ctx: dict[str, Any]) -> str | None:
        """A new session id for ``ctx``, or None when the store is full."""
        sid = uuid.uuid4().hex
        return sid if self.store.aux_create(sid, self._saved(ctx)) else None

    def get(self, sid: str, client: str = "") -> dict[str, Any] | None:
        saved = self.store.aux_get(sid)
        if saved is None:
            return None
        return {**saved, "sessions": self.episodes, "client": client}

    def save(self, sid: str, before: dict[str, Any], ctx: dict[str, Any]) -> None:
        after = self._saved(ctx)
        if after != before:
            self.store.aux_put(sid, after)

    def close(self, sid: str) -> bool:
        saved = self.store.aux_get(sid)
        if saved is None:
            return False
        self.store.aux_delete(sid)
        if saved.get("episode_id"):
            self.episodes.close(saved["episode_id"])
        return True


def _store(request: Request) -> McpSessions:
    state = request.app.state
    store = getattr(state, "mcp_sessions", None)
    if store is None:
        store = state.mcp_sessions = McpSessions(state.sessions)
    return store


# -- HTTP transport ---------------------------------------------------------------------------
def _rpc_response(body: dict[str, Any], status: int = 200,
                  headers: dict[str, str] | None = None) -> Response:
    # ASCII-escaped: an echoed id or name holding a lone surrogate stays valid JSON
    return Response(json.dumps(body, default=str).encode(), status_code=status,
                    headers=headers, media_type="application/json")


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
    except (ValueError, UnicodeDecodeError, RecursionError):
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
    client = request.client.host if request.client else ""
    if method == "initialize" and isinstance(payload, dict) and "id" in payload:
        ctx: dict[str, Any] = {"sessions": request.app.state.sessions, "client": client}
        try:
            ctx["harness"] = harness_choice(request.headers)
        except ToolError as exc:
            return _rpc_response(_error(payload.get("id"), INVALID_PARAMS, exc.message), 200)
        reply = await run_in_threadpool(handle_jsonrpc, payload, ctx)
        if reply is not None and "result" in reply:
            new_sid = await run_in_threadpool(store.add, ctx)
            if new_sid is None:
                return _rpc_response(_error(payload.get("id"), SERVER_BUSY, f"the server holds "
                                     f"its maximum of {store.capacity} MCP sessions; retry "
                                     "later"), 503)
            headers["Mcp-Session-Id"] = new_sid
    else:
        if sid is not None:
            found = await run_in_threadpool(store.get, sid, client)
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
        before = McpSessions._saved(ctx)
        reply = await run_in_threadpool(handle_jsonrpc, payload, ctx)
        if sid is not None:
            await run_in_threadpool(store.save, sid, before, ctx)
    if reply is None:
        return Response(status_code=202)
    # JSON-RPC errors travel in a 200 (OpenEnv's validator posts `{}` and wants 200 +
    # jsonrpc); only a body that is not JSON at all, or a transport rule, is an HTTP error
    status = 200
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
