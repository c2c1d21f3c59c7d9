"""Episodes held by the server: many at once, isolated, bounded, and expiring when idle.

Each session owns its own env (and so its own episode database); a per-session lock makes
concurrent requests for the same episode run one at a time while different episodes proceed
in parallel.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..env import make
from ..tasks import TASKS

DEFAULT_SESSION = "default"  # placeholder key: never stored, so lookups fail cleanly


class SessionError(Exception):
    """A request the session manager refuses; ``code`` is the stable error code clients see."""

    def __init__(self, code: str, message: str, status: int) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


@dataclass
class Session:
    episode_id: str
    task: str
    env: Any
    lock: threading.Lock = field(default_factory=threading.Lock)
    last_used: float = field(default_factory=time.monotonic)


class SessionManager:
    def __init__(self, capacity: int = 256, idle_ttl_s: float = 1800.0) -> None:
        self.capacity = capacity
        self.idle_ttl_s = idle_ttl_s
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._default: str | None = None  # the latest episode started without an id

    def __len__(self) -> int:
        return len(self._sessions)

    def _expire(self, now: float) -> None:
        stale = [k for k, s in self._sessions.items() if now - s.last_used > self.idle_ttl_s]
        for k in stale:
            self._sessions.pop(k).env.close()

    def reset(self, task: str, seed: int | None, split: str | None,
              episode_id: str | None) -> tuple[Session, Any]:
        if task not in TASKS:
            raise SessionError("unknown_task", f"unknown task_name {task!r}; tasks: "
                               f"{', '.join(TASKS)}", 400)
        if split is not None and split not in ("train", "dev", "test"):
            raise SessionError("invalid_split", f"split must be train, dev or test; got "
                               f"{split!r}", 400)
        if seed is not None and (seed < 0 or seed > 2**63 - 1):
            raise SessionError("invalid_seed", "seed must be a non-negative 64-bit integer", 400)
        now = time.monotonic()
        key = episode_id or uuid.uuid4().hex
        with self._lock:
            self._expire(now)
            existing = self._sessions.get(key)
            if existing is None and len(self._sessions) >= self.capacity:
                raise SessionError("capacity_exceeded", f"the server holds its maximum of "
                                   f"{self.capacity} episodes; retry later or close one", 503)
            if existing is not None and existing.task == task:
                session = existing
            else:
                if existing is not None:
                    existing.env.close()
                env = make(task, split=split or "train")
                session = Session(episode_id=key, task=task, env=env)
                self._sessions[key] = session
            if episode_id is None:
                self._default = key
        with session.lock:
            session.last_used = time.monotonic()
            if split is not None:
                session.env.split = split
            obs = session.env.reset(seed=seed)
            session.env.episode_id = key  # one id for the session, its state and its info
        return session, obs

    def get(self, episode_id: str | None) -> Session:
        key = episode_id or self._default or DEFAULT_SESSION
        with self._lock:
            self._expire(time.monotonic())
            session = self._sessions.get(key)
        if session is None:
            if episode_id is None:
                raise SessionError("no_episode", "no episode yet: POST /reset first", 404)
            raise SessionError("unknown_episode", f"no episode {episode_id!r} (unknown or "
                               "expired); POST /reset to start one", 404)
        session.last_used = time.monotonic()
        return session

    def close(self, episode_id: str) -> bool:
        with self._lock:
            session = self._sessions.pop(episode_id, None)
        if session is not None:
            session.env.close()
        return session is not None
