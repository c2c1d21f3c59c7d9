"""OpenEnv WebSocket protocol at ``/ws`` (one episode per connection)."""

from __future__ import annotations

from fastapi import APIRouter

router = APIRouter()
