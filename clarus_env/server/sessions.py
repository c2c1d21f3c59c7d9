"""Episodes held by the server: many at once, isolated, bounded, and expiring when idle.

Each session owns its own env (and so its own episode database); a per-session lock makes
concurrent requests for the same episode run one at a time while different episodes proceed
in parallel.

Requests without an ``episode_id`` address the latest episode started without one: that is
the seed's single-session client (``reset()`` then ``step()``, never naming an episode). Such a
client leaves one finished or abandoned episode behind per reset, so when the server is full
it makes room by evicting, least recently used first, finished episodes and then episodes
nobody can address any more (started without an id, superseded as the default, and never
named by id since); only if neither exists is the reset refused with ``capacity_exceeded``.
"""

from __future__ import annotations

import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from ..env import make
from ..tasks import TASKS


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
    anonymous: bool = False  # started without an episode_id
    named: bool = False  # addressed by its episode_id at least once
    closed: bool = False  # set (under ``lock``) once the env is released

    def check_open(self) -> None:
        """Call with ``lock`` held: a session evicted or expired between lookup and use must
        answer like an unknown episode, not step a released env."""
        if self.closed:
            raise SessionError("unknown_episode", f"episode {self.episode_id!r} expired or was "
                               "closed; POST /reset to start one", 404)

    @property
    def finished(self) -> bool:
        return bool(getattr(self.env, "_done", False))


def _short(value: str, limit: int = 64) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


class SessionManager:
    def __init__(self, capacity: int = 256, idle_ttl_s: float = 1800.0) -> None:
        self.capacity = capacity
        self.idle_ttl_s = idle_ttl_s
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._default: str | None = None  # the latest episode started without an id

    def __len__(self) -> int:
        return len(self._sessions)

    # -- internals (``_lock`` held) --------------------------------------------------------
    def _pop_stale(self, now: float) -> list[Session]:
        stale = [k for k, s in self._sessions.items() if now - s.last_used > self.idle_ttl_s]
        return [self._pop(k) for k in stale]

    def _pop(self, key: str) -> Session:
        if key == self._default:
            self._default = None
        return self._sessions.pop(key)

    def _evictable(self, new_default: bool) -> Session | None:
        """The least recently used finished episode, else unreachable anonymous episode (the
        current default counts as one when the reset at hand is about to replace it)."""
        for ok in (lambda s: s.finished,
                   lambda s: s.anonymous and not s.named
                   and (new_default or s.episode_id != self._default)):
            candidates = [s for s in self._sessions.values() if ok(s)]
            if candidates:
                return min(candidates, key=lambda s: s.last_used)
        return None

    @staticmethod
    def _release(sessions: list[Session]) -> None:
        """Close envs outside the manager lock, each under its own session lock, so a request
        in the middle of a step finishes before its env goes away."""
        for s in sessions:
            with s.lock:
                s.closed = True
                s.env.close()

    # -- API -------------------------------------------------------------------------------
    def reset(self, task: str, seed: int | None, split: str | None,
              episode_id: str | None) -> tuple[Session, Any]:
        if task not in TASKS:
            raise SessionError("unknown_task", f"unknown task_name {_short(task)}; tasks: "
                               f"{', '.join(TASKS)}", 400)
        if split is not None and split not in ("train", "dev", "test"):
            raise SessionError("invalid_split", f"split must be train, dev or test; got "
                               f"{_short(split)}", 400)
        if seed is not None and (seed < 0 or seed > 2**63 - 1):
            raise SessionError("invalid_seed", "seed must be a non-negative 64-bit integer", 400)
        key = episode_id or uuid.uuid4().hex
        released: list[Session] = []
        try:
            with self._lock:
                released += self._pop_stale(time.monotonic())
                existing = self._sessions.get(key)
                if existing is not None and existing.task == task:
                    session = existing
                else:
                    if existing is not None:  # same id, other task: a fresh env
                        released.append(self._pop(key))
                    elif len(self._sessions) >= self.capacity:
                        victim = self._evictable(new_default=episode_id is None)
                        if victim is None:
                            raise SessionError(
                                "capacity_exceeded", f"the server holds its maximum of "
                                f"{self.capacity} live episodes; retry later or finish one", 503)
                        released.append(self._pop(victim.episode_id))
                    session = Session(episode_id=key, task=task,
                                      env=make(task, split=split or "train"),
                                      anonymous=episode_id is None)
                    self._sessions[key] = session
                if episode_id is None:
                    self._default = key
                else:
                    session.named = True
                session.last_used = time.monotonic()
        finally:
            self._release(released)
        with session.lock:
            session.check_open()
            session.last_used = time.monotonic()
            if split is not None:
                session.env.split = split
            obs = session.env.reset(seed=seed)
            session.env.episode_id = key  # one id for the session, its state and its info
        return session, obs

    def get(self, episode_id: str | None) -> Session:
        """The live session for ``episode_id`` (or the default one); refreshes its idle clock."""
        key = episode_id or self._default
        with self._lock:
            released = self._pop_stale(time.monotonic())
            session = self._sessions.get(key) if key is not None else None
            if session is not None:
                session.last_used = time.monotonic()
                if episode_id is not None:
                    session.named = True
        self._release(released)
        if session is None:
            if episode_id is None:
                raise SessionError("no_episode", "no episode yet: POST /reset first", 404)
            raise SessionError("unknown_episode", f"no episode {_short(episode_id)} (unknown "
                               "or expired); POST /reset to start one", 404)
        return session

    def close(self, episode_id: str) -> bool:
        with self._lock:
            session = self._pop(episode_id) if episode_id in self._sessions else None
        if session is not None:
            self._release([session])
        return session is not None
