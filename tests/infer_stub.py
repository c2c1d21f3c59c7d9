"""A scripted OpenAI-compatible chat endpoint for the concurrency tests, run by uvicorn in its
own process (so its event loop does not share a core's time with the client under test).

Each reply is a function of the conversation alone — the case id in the first observation and
how many replies came before — so any number of concurrent episodes gets the same replies as a
serial run. Every request sleeps ``CLARUS_STUB_DELAY_S`` (default 50 ms), like a model's
latency. Model ``limited`` answers the first request of each case with 429 and
``Retry-After: 1``; ``GET /log`` lists (case, time, status) per request and ``GET /peak`` the
most requests it held at once.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

DELAY_S = float(os.environ.get("CLARUS_STUB_DELAY_S", "0.05"))
LOG: list[tuple[str, float, int]] = []
SEEN: set[str] = set()
IN_FLIGHT = {"now": 0, "peak": 0}


def script(case_id: str) -> list[tuple[str, dict[str, Any]]]:
    return [("authenticate_patient", {"patient_id": case_id}),
            ("fetch_payment_ledger", {"patient_id": case_id}),
            ("write_audit_entry", {"summary": f"ledger of {case_id} read"}),
            ("close_case", {})]


async def completions(request: Request) -> JSONResponse:
    body = await request.json()
    messages = body["messages"]
    first = messages[1]["content"]
    case_id = json.loads(first[first.index("{"):])["case_id"]
    IN_FLIGHT["now"] += 1
    IN_FLIGHT["peak"] = max(IN_FLIGHT["peak"], IN_FLIGHT["now"])
    try:
        await asyncio.sleep(DELAY_S)
    finally:
        IN_FLIGHT["now"] -= 1
    if body["model"] == "limited" and case_id not in SEEN:
        SEEN.add(case_id)
        LOG.append((case_id, time.monotonic(), 429))
        return JSONResponse({"error": {"message": "slow down", "type": "rate_limit"}},
                            status_code=429, headers={"Retry-After": "1"})
    LOG.append((case_id, time.monotonic(), 200))
    n = sum(m["role"] == "assistant" for m in messages)
    prompt = len(await request.body()) // 4  # the body as sent: no re-encoding per request
    steps = script(case_id)
    name, args = steps[min(n, len(steps) - 1)]
    call = {"id": f"call_{n}", "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}
    return JSONResponse({
        "id": f"chatcmpl-{case_id}-{n}", "object": "chat.completion", "created": 0,
        "model": body["model"],
        "choices": [{"index": 0, "finish_reason": "tool_calls",
                     "message": {"role": "assistant", "content": None, "tool_calls": [call]}}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": 12,
                  "total_tokens": prompt + 12}})


async def log(request: Request) -> JSONResponse:
    return JSONResponse(LOG)


async def peak(request: Request) -> JSONResponse:
    """The most requests in flight at once since the last call (which resets it)."""
    out, IN_FLIGHT["peak"] = IN_FLIGHT["peak"], IN_FLIGHT["now"]
    return JSONResponse(out)


app = Starlette(routes=[Route("/v1/chat/completions", completions, methods=["POST"]),
                        Route("/log", log), Route("/peak", peak)])
