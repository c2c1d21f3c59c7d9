"""MCP (JSON-RPC 2.0, streamable HTTP) at ``/mcp``: one tool per action, explicit sessions."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
