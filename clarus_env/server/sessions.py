"""Episodes held by the server: one policy for HTTP, WebSocket and MCP, on a pluggable store.

An episode is fully determined by (task, split, seed, the actions so far), so the *store*
keeps only that record, and any worker can rebuild the live env by replaying the action log
(``reset(seed)`` then ``step`` each logged action; episodes are deterministic). Two stores:

- ``InProcessStore`` (default): a dict in this process. One worker only.
- ``RedisStore`` (``CLARUS_SESSION_STORE=redis://host:port/db``): shared by every worker and
  replica, so ``clarus serve --workers N`` or N replicas behind a balancer serve one pool.

Each worker caches live envs (``Live``). Every accepted action is appended to the store
*before* the answer goes out, with an optimistic version check (the reset's random generation
plus the log length): if another worker advanced or reset the episode meanwhile, the append
is refused, this worker rebuilds from the log and applies the action again, so two workers
never interleave steps of one episode and a killed worker loses nothing it answered.

Capacity, idle TTL and eviction live in the store, so they hold across workers: at most
``capacity`` live episodes, at most ``per_client`` of them per client address, episodes idle
for ``idle_ttl_s`` expire, and when the pool is full a new reset evicts the least recently
used *finished* episode (then, in-process only, an unreachable id-less one) or is refused.

Requests without an ``episode_id`` address the latest episode started without one (the seed's
single-session client). That only means something inside one process, so with a shared store
or more than one worker such requests are refused (``episode_id_required``) instead of
silently mixing clients up.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from ..env import make
from ..splits import seeds
from ..tasks import TASKS
from . import fastjson

CODING_TASK = "medical_coding"
TRIM_EVERY_S = 1.0  # how often the worker's env cache looks for idle entries


class SessionError(Exception):
    """A request the session manager refuses; ``code`` is the stable error code clients see."""

    def __init__(self, code: str, message: str, status: int) -> None:
        super().__init__(message)
        self.code, self.message, self.status = code, message, status


class WouldBlock(Exception):  # noqa: N818 - a signal, not an error
    """Raised by ``nowait`` calls that would wait on a lock or do slow work: the caller (on
    the event loop) retries the call in the threadpool."""


def _short(value: str, limit: int = 64) -> str:
    return repr(value if len(value) <= limit else value[:limit] + "…")


def _unknown(episode_id: str) -> SessionError:
    return SessionError("unknown_episode", f"no episode {_short(episode_id)} (unknown, expired "
                        "or closed); POST /reset to start one", 404)


def encode_action(action: Any) -> str:
    """The action as it goes into the log; refuses what could not be replayed byte for byte.

    Done before the env sees the action, so a refused action changes nothing (all or
    nothing): lone surrogates (valid JSON escapes, not UTF-8) and nesting too deep to encode.
    """
    try:
        text = fastjson.dumps_compact_strict(action)
    except UnicodeEncodeError:
        raise SessionError("invalid_action", "action: strings must be valid Unicode (no lone "
                           "surrogates)", 422) from None
    except RecursionError:
        raise SessionError("invalid_action", "action: nested too deeply", 422) from None
    except (TypeError, ValueError) as exc:
        raise SessionError("invalid_action", f"action: not JSON ({exc})", 422) from None
    return text


# -- stores -----------------------------------------------------------------------------------
OK, GONE, CONFLICT = 1, 0, -1


@dataclass
class _Record:
    meta: dict[str, Any]
    log: list[str] = field(default_factory=list)
    used: float = field(default_factory=time.time)
    done: bool = False
    orphan: bool = False  # id-less and superseded as the default: nobody can address it


class InProcessStore:
    """Episode records in this process's memory (one worker)."""

    shared = False

    def __init__(self, capacity: int, per_client: int, idle_ttl_s: float) -> None:
        self.capacity, self.per_client, self.idle_ttl_s = capacity, per_client, idle_ttl_s
        self._recs: dict[str, _Record] = {}
        self._aux: dict[str, tuple[dict[str, Any], float]] = {}
        self._lock = threading.Lock()
        self._next_purge = 0.0

    def __len__(self) -> int:
        with self._lock:
            self._purge(time.time())
            return len(self._recs)

    def _alive(self, rec: _Record | None, now: float) -> bool:
        return rec is not None and now - rec.used <= self.idle_ttl_s

    def _purge(self, now: float) -> list[str]:
        stale = [k for k, r in self._recs.items() if now - r.used > self.idle_ttl_s]
        for k in stale:
            del self._recs[k]
        return stale

    def create(self, key: str, meta: dict[str, Any]) -> list[str]:
        """Register (or restart) episode ``key``; returns the ids it evicted or expired.

        Expired records are swept at most every ``TRIM_EVERY_S``, and at once whenever a
        limit could be reached (every lookup already treats them as gone): a sweep and the
        per-client count walk every record, ~25 µs per reset at 256 live episodes.
        """
        now = time.time()
        with self._lock:
            near_limit = len(self._recs) >= min(self.capacity, self.per_client or self.capacity)
            gone: list[str] = []
            if near_limit or now >= self._next_purge:
                gone = self._purge(now)
                self._next_purge = now + TRIM_EVERY_S
            if key not in self._recs:
                if len(self._recs) >= self.capacity:
                    victim = self._victim()
                    if victim is None:
                        raise SessionError(
                            "capacity_exceeded", f"the server holds its maximum of "
                            f"{self.capacity} live episodes; retry later or close one", 503)
                    del self._recs[victim]
                    gone.append(victim)
                client = meta.get("client", "")
                if self.per_client and client and len(self._recs) >= self.per_client:
                    mine = [(r.used, k) for k, r in self._recs.items()
                            if r.meta.get("client") == client]
                    if len(mine) >= self.per_client:
                        done = [(u, k) for u, k in mine if self._recs[k].done]
                        if not done:
                            raise SessionError(
                                "client_capacity_exceeded", f"this client already holds "
                                f"{self.per_client} live episodes (the per-client limit); "
                                "close one (DELETE /episodes/{id}) or finish it", 429)
                        victim = min(done)[1]
                        del self._recs[victim]
                        gone.append(victim)
            self._recs[key] = _Record(meta=meta, used=now)
        return gone

    def _victim(self) -> str | None:
        for ok in (lambda r: r.done, lambda r: r.orphan):
            cands = [(r.used, k) for k, r in self._recs.items() if ok(r)]
            if cands:
                return min(cands)[1]
        return None

    def orphan(self, key: str, value: bool) -> None:
        if getattr(self._recs.get(key), "orphan", value) == value:
            return  # nothing to change (the common case: every step un-orphans): no lock
        with self._lock:
            rec = self._recs.get(key)
            if rec is not None:
                rec.orphan = value

    def load(self, key: str) -> tuple[dict[str, Any], list[str]] | None:
        now = time.time()
        with self._lock:
            rec = self._recs.get(key)
            if not self._alive(rec, now):
                return None
            rec.used = now  # type: ignore[union-attr]
            return dict(rec.meta), list(rec.log)  # type: ignore[union-attr]

    def version(self, key: str) -> tuple[str, int] | None:
        now = time.time()
        with self._lock:
            rec = self._recs.get(key)
            if not self._alive(rec, now):
                return None
            rec.used = now  # type: ignore[union-attr]
            return rec.meta["gen"], len(rec.log)  # type: ignore[union-attr]

    def append(self, key: str, gen: str, n: int, action: str, done: bool) -> int:
        now = time.time()
        with self._lock:
            rec = self._recs.get(key)
            if not self._alive(rec, now):
                return GONE
            if rec.meta["gen"] != gen or len(rec.log) != n:  # type: ignore[union-attr]
                return CONFLICT
            rec.log.append(action)  # type: ignore[union-attr]
            rec.used, rec.done = now, done  # type: ignore[union-attr]
            return OK

    def delete(self, key: str) -> bool:
        with self._lock:
            return self._recs.pop(key, None) is not None

    def expired(self) -> list[str]:
        with self._lock:
            return self._purge(time.time())

    # MCP sessions: small JSON dicts, bounded like episodes
    def aux_create(self, key: str, value: dict[str, Any]) -> bool:
        now = time.time()
        with self._lock:
            for k in [k for k, (_, t) in self._aux.items() if now - t > self.idle_ttl_s]:
                del self._aux[k]
            if len(self._aux) >= self.capacity:
                return False
            self._aux[key] = (value, now)
            return True

    def aux_get(self, key: str) -> dict[str, Any] | None:
        now = time.time()
        with self._lock:
            item = self._aux.get(key)
            if item is None or now - item[1] > self.idle_ttl_s:
                self._aux.pop(key, None)
                return None
            self._aux[key] = (item[0], now)
            return json.loads(json.dumps(item[0]))

    def aux_put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            if key in self._aux:
                self._aux[key] = (value, time.time())

    def aux_delete(self, key: str) -> bool:
        with self._lock:
            return self._aux.pop(key, None) is not None

    def aux_count(self) -> int:
        return len(self._aux)


_CREATE = """
-- KEYS: live zset, done zset, meta hash, log list
-- ARGV: key, meta json, client, now, ttl, capacity, per_client, prefix
local live, done, prefix = KEYS[1], KEYS[2], ARGV[8]
local now, ttl = tonumber(ARGV[4]), tonumber(ARGV[5])
local function drop(id)
  local c = redis.call('HGET', prefix .. id .. ':m', 'client')
  redis.call('DEL', prefix .. id .. ':m', prefix .. id .. ':log')
  redis.call('ZREM', live, id)
  redis.call('ZREM', done, id)
  if c and c ~= '' then redis.call('ZREM', prefix .. 'client:' .. c, id) end
end
local gone = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', live, '-inf', now - ttl)) do
  drop(id); table.insert(gone, id)
end
local client = ARGV[3]
local ckey = prefix .. 'client:' .. client
if client ~= '' then redis.call('ZREMRANGEBYSCORE', ckey, '-inf', now - ttl) end
if not redis.call('ZSCORE', live, ARGV[1]) then
  if redis.call('ZCARD', live) >= tonumber(ARGV[6]) then
    local oldest = redis.call('ZRANGE', done, 0, 0)
    if #oldest == 0 then return {-1} end
    drop(oldest[1]); table.insert(gone, oldest[1])
  end
  local per = tonumber(ARGV[7])
  if per > 0 and client ~= '' and redis.call('ZCARD', ckey) >= per then
    local victim = nil
    for _, id in ipairs(redis.call('ZRANGE', ckey, 0, -1)) do
      if redis.call('ZSCORE', done, id) then victim = id; break end
    end
    if not victim then return {-2} end
    drop(victim); table.insert(gone, victim)
  end
else
  redis.call('ZREM', done, ARGV[1])
end
redis.call('DEL', KEYS[3], KEYS[4])
redis.call('HSET', KEYS[3], 'meta', ARGV[2], 'client', client, 'n', 0)
redis.call('EXPIRE', KEYS[3], math.ceil(ttl))
redis.call('ZADD', live, now, ARGV[1])
if client ~= '' then redis.call('ZADD', ckey, now, ARGV[1]) end
table.insert(gone, 1, 1)
return gone
"""

_APPEND = """
-- KEYS: meta hash, log list, live zset, done zset ; ARGV: key, gen, n, action, done, now, ttl
local m = redis.call('HMGET', KEYS[1], 'meta', 'n')
if not m[1] then return 0 end
if cjson.decode(m[1])['gen'] ~= ARGV[2] or tonumber(m[2]) ~= tonumber(ARGV[3]) then
  return -1
end
redis.call('RPUSH', KEYS[2], ARGV[4])
redis.call('HSET', KEYS[1], 'n', tonumber(ARGV[3]) + 1)
local ttl = math.ceil(tonumber(ARGV[7]))
redis.call('EXPIRE', KEYS[1], ttl)
redis.call('EXPIRE', KEYS[2], ttl)
redis.call('ZADD', KEYS[3], ARGV[6], ARGV[1])
if ARGV[5] == '1' then redis.call('ZADD', KEYS[4], ARGV[6], ARGV[1]) end
return 1
"""

_AUX_CREATE = """
-- KEYS: aux zset, value key ; ARGV: key, value, now, ttl, capacity
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[4]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[5]) then return 0 end
redis.call('SET', KEYS[2], ARGV[2], 'EX', math.ceil(tonumber(ARGV[4])))
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[1])
return 1
"""


class RedisStore:
    """Episode records in Redis, shared by every worker and replica.

    Layout (``prefix`` defaults to ``clarus:``): ``<id>:m`` a hash (meta JSON, client, log
    length), ``<id>:log`` the action list, ``live``/``done`` sorted sets by last use (capacity,
    TTL, eviction), ``client:<addr>`` per-client sorted sets, ``mcp:<sid>`` MCP sessions. Every
    multi-key change is one Lua script, so concurrent workers see it whole.
    """

    shared = True

    def __init__(self, url: str, capacity: int, per_client: int, idle_ttl_s: float,
                 prefix: str = "clarus:") -> None:
        import redis

        self.capacity, self.per_client, self.idle_ttl_s = capacity, per_client, idle_ttl_s
        self.prefix = prefix
        self.url = url
        self._r = redis.Redis.from_url(url, socket_timeout=5, socket_connect_timeout=5,
                                       health_check_interval=30)
        self._create = self._r.register_script(_CREATE)
        self._append = self._r.register_script(_APPEND)
        self._aux_create = self._r.register_script(_AUX_CREATE)

    def _k(self, key: str, part: str) -> str:
        return f"{self.prefix}{key}:{part}"

    def __len__(self) -> int:
        return int(self._call(self._r.zcard, self.prefix + "live"))

    def _call(self, fn: Any, *args: Any, **kwargs: Any) -> Any:
        import redis

        try:
            return fn(*args, **kwargs)
        except redis.RedisError as exc:
            raise SessionError("store_unavailable", f"the session store is unavailable "
                               f"({type(exc).__name__}); retry shortly", 503) from None

    def create(self, key: str, meta: dict[str, Any]) -> list[str]:
        out = self._call(self._create, keys=[self.prefix + "live", self.prefix + "done",
                                             self._k(key, "m"), self._k(key, "log")],
                         args=[key, json.dumps(meta), meta.get("client", ""), time.time(),
                               self.idle_ttl_s, self.capacity, self.per_client, self.prefix])
        if out[0] == -2:
            raise SessionError("client_capacity_exceeded", f"this client already holds "
                               f"{self.per_client} live episodes (the per-client limit); close "
                               "one (DELETE /episodes/{id}) or finish it", 429)
        if out[0] == -1:
            raise SessionError("capacity_exceeded", f"the server holds its maximum of "
                               f"{self.capacity} live episodes; retry later or close one", 503)
        return [x.decode() for x in out[1:]]

    def orphan(self, key: str, value: bool) -> None:  # id-less episodes never reach Redis
        return None

    def load(self, key: str) -> tuple[dict[str, Any], list[str]] | None:
        pipe = self._r.pipeline(transaction=True)
        pipe.hget(self._k(key, "m"), "meta")
        pipe.lrange(self._k(key, "log"), 0, -1)
        meta, log = self._call(pipe.execute)
        if meta is None:
            return None
        self._call(self._r.zadd, self.prefix + "live", {key: time.time()}, xx=True)
        return json.loads(meta), [x.decode() for x in log]

    def version(self, key: str) -> tuple[str, int] | None:
        meta, n = self._call(self._r.hmget, self._k(key, "m"), "meta", "n")
        if meta is None:
            return None
        return json.loads(meta)["gen"], int(n)

    def append(self, key: str, gen: str, n: int, action: str, done: bool) -> int:
        return int(self._call(self._append, keys=[self._k(key, "m"), self._k(key, "log"),
                                                  self.prefix + "live", self.prefix + "done"],
                              args=[key, gen, n, action, "1" if done else "0", time.time(),
                                    self.idle_ttl_s]))

    def delete(self, key: str) -> bool:
        client = self._call(self._r.hget, self._k(key, "m"), "client")
        pipe = self._r.pipeline(transaction=True)
        pipe.delete(self._k(key, "m"), self._k(key, "log"))
        pipe.zrem(self.prefix + "live", key)
        pipe.zrem(self.prefix + "done", key)
        if client:
            pipe.zrem(self.prefix + "client:" + client.decode(), key)
        return bool(self._call(pipe.execute)[0])

    def expired(self) -> list[str]:
        return []  # purged by the next create; keys expire by themselves

    def aux_create(self, key: str, value: dict[str, Any]) -> bool:
        return bool(self._call(self._aux_create, keys=[self.prefix + "mcp",
                                                       self.prefix + "mcp:" + key],
                               args=[key, json.dumps(value), time.time(), self.idle_ttl_s,
                                     self.capacity]))

    def aux_get(self, key: str) -> dict[str, Any] | None:
        raw = self._call(self._r.getex, self.prefix + "mcp:" + key,
                         ex=max(1, int(self.idle_ttl_s)))
        if raw is None:
            return None
        self._call(self._r.zadd, self.prefix + "mcp", {key: time.time()}, xx=True)
        return json.loads(raw)

    def aux_put(self, key: str, value: dict[str, Any]) -> None:
        self._call(self._r.set, self.prefix + "mcp:" + key, json.dumps(value),
                   ex=max(1, int(self.idle_ttl_s)), xx=True)

    def aux_delete(self, key: str) -> bool:
        self._call(self._r.zrem, self.prefix + "mcp", key)
        return bool(self._call(self._r.delete, self.prefix + "mcp:" + key))

    def aux_count(self) -> int:
        return int(self._call(self._r.zcard, self.prefix + "mcp"))


def open_store(url: str | None, capacity: int, per_client: int, idle_ttl_s: float
               ) -> InProcessStore | RedisStore:
    """The store named by ``url`` (``CLARUS_SESSION_STORE``): unset or ``memory`` means in
    process, ``redis://`` / ``rediss://`` / ``unix://`` a Redis server."""
    if not url or url == "memory":
        return InProcessStore(capacity, per_client, idle_ttl_s)
    if url.startswith(("redis://", "rediss://", "unix://")):
        return RedisStore(url, capacity, per_client, idle_ttl_s)
    raise ValueError(f"CLARUS_SESSION_STORE must be 'memory' or a redis:// URL; got {url!r}")


# -- live envs, cached per worker -------------------------------------------------------------
@dataclass(eq=False)
class Live:
    key: str
    env: Any = None
    task: str = ""
    split: str = ""
    gen: str = ""
    n: int = 0
    grade: dict[str, Any] | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)
    used: float = field(default_factory=time.monotonic)

    def release(self, pool: EnvPool | None = None) -> None:
        """Call with ``lock`` held: hand the env to ``pool`` for another episode, or close it."""
        if self.env is not None:
            if pool is None or not pool.put(self.task, self.split, self.env):
                self.env.close()
            self.env = None


class EnvPool:
    """Envs of ended episodes (and pre-built ones), kept for the next reset of the same task
    and split.

    Building an env costs a thread hop and 1-5 ms (its episode database, the task's tables);
    ``env.reset`` on a pooled one is tens of µs and can run on the event loop. Bounded per
    (task, split); what does not fit is closed.
    """

    def __init__(self, per_kind: int = 64) -> None:
        self.per_kind = per_kind
        self._envs: dict[tuple[str, str], list[Any]] = {}
        self._lock = threading.Lock()

    def size(self, task: str, split: str) -> int:
        with self._lock:
            return len(self._envs.get((task, split), ()))

    def put(self, task: str, split: str, env: Any) -> bool:
        with self._lock:
            envs = self._envs.setdefault((task, split), [])
            if len(envs) >= self.per_kind:
                return False
            envs.append(env)
            return True

    def take(self, task: str, split: str) -> Any:
        with self._lock:
            envs = self._envs.get((task, split))
            return envs.pop() if envs else None


class SessionManager:
    """The one episode policy every transport uses (see the module docstring)."""

    def __init__(self, capacity: int = 256, idle_ttl_s: float = 1800.0,
                 per_client: int | None = None, store: Any = None, workers: int = 1,
                 pool_per_kind: int = 64) -> None:
        self.capacity = capacity
        self.idle_ttl_s = idle_ttl_s
        self.per_client = capacity if per_client is None else per_client
        self.store = store if store is not None else InProcessStore(
            capacity, self.per_client, idle_ttl_s)
        self.allow_default = not self.store.shared and workers <= 1
        self._live: OrderedDict[str, Live] = OrderedDict()
        self._lock = threading.Lock()
        self._default: str | None = None
        self._rng = random.Random()
        self.pool = EnvPool(min(pool_per_kind, capacity))
        self._next_trim = 0.0

    def prewarm(self, count: int, split: str = "train") -> int:
        """Build up to ``count`` envs of every task into the pool (each reset once: a fresh
        env's first reset is several times its next), so a burst of first resets (64 rollout
        workers connecting at once) runs on the event loop instead of queueing env builds in
        the threadpool. Meant for a worker's background warm-up; returns how many it built."""
        built = 0
        for task in TASKS:
            task_seeds = seeds(split, task)
            want = min(count, self.pool.per_kind)
            while self.pool.size(task, split) < want:
                env = make(task, split=split)
                env.reset(seed=task_seeds[built % len(task_seeds)])
                if not self.pool.put(task, split, env):  # filled meanwhile by ended episodes
                    env.close()
                    break
                built += 1
        return built

    def __len__(self) -> int:
        return len(self.store)

    # -- the local cache ---------------------------------------------------------------------
    def _entry(self, key: str, create: bool) -> Live | None:
        """The cached ``Live`` for ``key`` (made empty when ``create``); trims the cache.

        Over capacity it trims at once; idle entries are looked for at most every
        ``TRIM_EVERY_S`` (the store's own TTL decides what clients see; this only frees
        the envs of this worker's cache), which keeps the per-step cost to a lookup.
        """
        drop: list[Live] = []
        now = time.monotonic()
        with self._lock:
            live = self._live.get(key)
            if live is None and create:
                live = self._live[key] = Live(key)
            if live is not None:
                live.used = now
                self._live.move_to_end(key)
            if len(self._live) > self.capacity or now >= self._next_trim:
                self._next_trim = now + TRIM_EVERY_S
                while len(self._live) > self.capacity:
                    drop.append(self._live.popitem(last=False)[1])
                while self._live:  # least recently used first: stop at the first fresh one
                    oldest = next(iter(self._live.values()))
                    if now - oldest.used <= self.idle_ttl_s:
                        break
                    drop.append(self._live.popitem(last=False)[1])
        if drop:
            self._close(drop)
        return live

    def _forget(self, keys: list[str]) -> None:
        with self._lock:
            gone = [self._live.pop(k) for k in keys if k in self._live]
            if self._default in keys:
                self._default = None
        self._close(gone)

    def _close(self, lives: list[Live]) -> None:
        for live in lives:
            if live.lock.acquire(timeout=30):
                try:
                    live.release(self.pool)
                finally:
                    live.lock.release()

    def _acquire(self, live: Live, nowait: bool) -> None:
        if not live.lock.acquire(blocking=not nowait):
            raise WouldBlock

    def _rebuild(self, live: Live) -> None:
        """Load ``live.key`` from the store and replay its log (``live.lock`` held)."""
        rec = self.store.load(live.key)
        if rec is None:
            live.release()
            with self._lock:
                if self._live.get(live.key) is live:
                    del self._live[live.key]
            raise _unknown(live.key)
        meta, log = rec
        env = live.env
        if env is None or live.task != meta["task"] or live.split != meta["split"]:
            live.release()
            env = make(meta["task"], split=meta["split"])
        env.reset(seed=meta["seed"])
        env.episode_id = live.key
        grade = None
        for action in log:
            res = env.step(json.loads(action))
            grade = res.info.get("grade", grade)
        live.env, live.task, live.split = env, meta["task"], meta["split"]
        live.gen, live.n, live.grade = meta["gen"], len(log), grade

    def _key(self, episode_id: str | None) -> str:
        if episode_id is not None:
            return episode_id
        if not self.allow_default:
            raise SessionError("episode_id_required", "this server runs several workers or a "
                               "shared session store: send the episode_id that /reset "
                               "returned (id-less requests would mix clients up)", 400)
        key = self._default
        if key is None:
            raise SessionError("no_episode", "no episode yet: POST /reset first", 404)
        return key

    def _fresh(self, live: Live, nowait: bool, check: bool = True) -> None:
        """Make ``live`` current (``live.lock`` held): rebuild if absent or stale. A step
        passes ``check=False``: its append is the version check."""
        if live.env is None:
            if nowait:
                raise WouldBlock
            self._rebuild(live)
        elif check:
            version = self.store.version(live.key)
            if version is None:
                live.release()
                raise _unknown(live.key)
            if version != (live.gen, live.n):
                if nowait:
                    raise WouldBlock
                self._rebuild(live)

    # -- API ---------------------------------------------------------------------------------
    def reset(self, task: str, seed: int | None, split: str | None, episode_id: str | None,
              client: str = "", nowait: bool = False) -> tuple[str, dict[str, Any]]:
        """Start (or restart) an episode; returns its id and first observation."""
        if not isinstance(task, str) or task not in TASKS:
            raise SessionError("unknown_task", f"unknown task_name {_short(str(task))}; tasks: "
                               f"{', '.join(TASKS)}", 400)
        if split is not None and split not in ("train", "dev", "test"):
            raise SessionError("invalid_split", f"split must be train, dev or test; got "
                               f"{_short(str(split))}", 400)
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int)
                                 or seed < 0 or seed > 2**63 - 1):
            raise SessionError("invalid_seed", "seed must be a non-negative 64-bit integer", 400)
        if episode_id is None and not self.allow_default:
            self._key(None)  # raises episode_id_required
        split = split or "train"
        if seed is None:
            seed = self._rng.choice(seeds(split, task))
        key = episode_id or uuid.uuid4().hex
        if episode_id is None and self._default is not None:
            self.store.orphan(self._default, True)  # about to be superseded: evictable
        live = self._entry(key, create=True)
        assert live is not None
        self._acquire(live, nowait)
        try:
            if live.env is None or live.task != task or live.split != split:
                pooled = self.pool.take(task, split)
                if pooled is not None:
                    live.release(self.pool)
                    live.env, live.task, live.split = pooled, task, split
                elif nowait:
                    raise WouldBlock  # building an env: off the loop
            gen = uuid.uuid4().hex[:16]
            gone = self.store.create(key, {"task": task, "split": split, "seed": seed,
                                           "gen": gen, "client": client})
            try:
                env = live.env
                if env is None or live.task != task or live.split != split:
                    live.release(self.pool)
                    env = make(task, split=split)
                    live.env, live.task, live.split = env, task, split
                obs = env.reset(seed=seed)
                env.episode_id = key
            except BaseException:
                live.release()
                self.store.delete(key)
                raise
            live.gen, live.n, live.grade = gen, 0, None
        except SessionError:
            if live.env is None:  # never started here: drop the empty cache entry
                with self._lock:
                    if self._live.get(key) is live:
                        del self._live[key]
            raise
        finally:
            live.lock.release()
        self._forget([k for k in gone if k != key])
        if episode_id is None:
            with self._lock:
                self._default = key
        return key, obs.model_dump()

    def step(self, episode_id: str | None, action: Any, nowait: bool = False
             ) -> dict[str, Any]:
        """Apply one action; the answer is only built once the store holds it."""
        key = self._key(episode_id)
        text = encode_action(action)
        live = self._entry(key, create=not nowait)
        if live is None:
            raise WouldBlock
        if episode_id is not None:
            self.store.orphan(key, False)
        self._acquire(live, nowait)
        try:
            self._fresh(live, nowait, check=False)
            if nowait and live.task == CODING_TASK:
                raise WouldBlock  # searches and grading take ms: off the loop
            for _ in range(5):
                was_done = live.env.state["done"]
                res = live.env.step(action)
                if was_done:  # refused by the env: nothing changed, nothing to log
                    if self.store.version(key) is None:
                        live.release()
                        raise _unknown(key)
                    break
                verdict = self.store.append(key, live.gen, live.n, text, res.done)
                if verdict == OK:
                    live.n += 1
                    break
                if verdict == GONE:
                    live.release()
                    raise _unknown(key)
                self._rebuild(live)  # another worker moved the episode on: replay, retry
            else:
                raise SessionError("episode_busy", "the episode kept changing under this "
                                   "request (another client is stepping it); retry", 409)
            if "grade" in res.info:
                live.grade = res.info["grade"]
            return {"episode_id": key, "observation": res.observation.model_dump(),
                    "reward": res.reward, "done": res.done, "info": res.info}
        finally:
            live.lock.release()

    def state(self, episode_id: str | None, nowait: bool = False, with_grade: bool = False
              ) -> dict[str, Any]:
        """The episode's bookkeeping (plus, ``with_grade``, its full ``grade`` once done)."""
        key = self._key(episode_id)
        live = self._entry(key, create=not nowait)
        if live is None:
            raise WouldBlock
        self._acquire(live, nowait)
        try:
            self._fresh(live, nowait)
            out = dict(live.env.state)
            out["episode_id"] = key
            if with_grade and out.get("done") and live.grade is not None:
                out["grade"] = live.grade
            return out
        finally:
            live.lock.release()

    def close(self, episode_id: str, nowait: bool = False) -> bool:
        """End an episode on every worker: its record goes, its env returns to the pool."""
        with self._lock:
            live = self._live.get(episode_id)
        if live is not None:
            self._acquire(live, nowait)  # a step in progress finishes first
        try:
            found = self.store.delete(episode_id)
            with self._lock:
                if self._live.get(episode_id) is live:
                    self._live.pop(episode_id, None)
                if self._default == episode_id:
                    self._default = None
            if live is not None:
                live.release(self.pool)
        finally:
            if live is not None:
                live.lock.release()
        return found

    def task_of(self, episode_id: str) -> str | None:
        live = self._entry(episode_id, create=False)
        return live.task if live is not None and live.env is not None else None


def from_environment(capacity: int, idle_ttl_s: float) -> SessionManager:
    """The manager ``clarus serve`` configures through environment variables."""
    per_client = int(os.environ.get("CLARUS_MAX_SESSIONS_PER_CLIENT", max(1, capacity // 2)))
    workers = int(os.environ.get("CLARUS_WORKERS", "1"))
    store = open_store(os.environ.get("CLARUS_SESSION_STORE"), capacity, per_client,
                       idle_ttl_s)
    return SessionManager(capacity, idle_ttl_s, per_client, store, workers)
