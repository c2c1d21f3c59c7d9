"""Play Clarus episodes over HTTP (``ClarusClient``) or in this process (``InProcessClient``).

Both speak the same plain-dict protocol, so agents, the LLM baseline and the TRL adapter are
written once and run against a local env or a remote server alike::

    with ClarusClient("http://127.0.0.1:7860") as env:
        obs = env.reset(task_name="deductive_liability", seed=1001)
        result = env.step({"action_type": "authenticate_patient",
                           "parameters": {"patient_id": obs["case_id"]}})
        print(result["reward"])  # 0.05

Each client owns its episode: it names the episode itself on the first ``reset`` and sends that
id on every later call, so two clients (or two threads with their own clients) never act on
one another's episode, and an id-less ``curl`` session on the same server is never hijacked.
"""

from __future__ import annotations

import contextlib
import uuid
from typing import Any

import httpx

__all__ = ["ClarusClient", "ClarusConnectionError", "ClarusError", "ClarusHTTPError",
           "ClarusProtocolError", "InProcessClient"]


class ClarusError(Exception):
    """Base class of every error the clients raise."""


class ClarusHTTPError(ClarusError):
    """The server refused a request; ``code`` is its stable error code (e.g. ``unknown_task``,
    ``unknown_episode``, ``capacity_exceeded``), ``status`` the HTTP status."""

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{code} ({status}): {message}")
        self.status, self.code, self.message = status, code, message


class ClarusConnectionError(ClarusError):
    """The server could not be reached, or did not answer in time."""


class ClarusProtocolError(ClarusError):
    """The server answered with something that is not the Clarus wire format."""


def _step_dict(body: dict[str, Any]) -> dict[str, Any]:
    return {"observation": body["observation"], "reward": body["reward"],
            "done": body["done"], "info": body.get("info", {})}


class ClarusClient:
    """Synchronous client for a Clarus server; one keep-alive connection pool per client.

    ``episode_id`` attaches to an episode another process started (its id is in every
    response's ``info``); by default the client starts its own on ``reset``.
    """

    def __init__(self, base_url: str, *, timeout: float = 30.0, episode_id: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        self.base_url = base_url.rstrip("/")
        self.episode_id = episode_id
        self._http = httpx.Client(base_url=self.base_url, timeout=timeout,
                                  headers=headers or {})

    # -- context manager --------------------------------------------------------------------
    def __enter__(self) -> ClarusClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """End this client's episode on the server (freeing its place at once instead of after
        the idle TTL), then the connection pool. Best effort: a server that is gone or already
        forgot the episode is not an error here."""
        if self.episode_id is not None and not self._http.is_closed:
            with contextlib.suppress(httpx.HTTPError):
                self._http.delete(f"/episodes/{self.episode_id}", timeout=5.0)
        self._http.close()

    # -- the episode protocol ---------------------------------------------------------------
    def reset(self, task_name: str = "deductive_liability", seed: int | None = None,
              split: str | None = None) -> dict[str, Any]:
        """Start an episode and return its first observation (a dict).

        Reuses this client's episode id, so repeated resets recycle one server session
        instead of leaking a new one per episode.
        """
        if self.episode_id is None:
            self.episode_id = uuid.uuid4().hex
        payload: dict[str, Any] = {"task_name": task_name, "episode_id": self.episode_id}
        if seed is not None:
            payload["seed"] = seed
        if split is not None:
            payload["split"] = split
        body = self._request("POST", "/reset", json=payload)
        self.episode_id = body.get("episode_id", self.episode_id)
        return body["observation"]

    def step(self, action: Any) -> dict[str, Any]:
        """Take one action; returns ``{observation, reward, done, info}``."""
        if self.episode_id is None:
            raise ClarusError("no episode: call reset() first")
        body = self._request("POST", "/step", json={"episode_id": self.episode_id,
                                                    "action": action})
        return _step_dict(body)

    def state(self) -> dict[str, Any]:
        """Episode bookkeeping: episode_id, task, seed, step_count, done, score."""
        if self.episode_id is None:
            raise ClarusError("no episode: call reset() first")
        return self._request("GET", "/state", params={"episode_id": self.episode_id})

    # -- server information -----------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        return self._request("GET", "/health")

    def metadata(self) -> dict[str, Any]:
        return self._request("GET", "/metadata")

    def schema(self) -> dict[str, Any]:
        return self._request("GET", "/schema")

    # -- plumbing ---------------------------------------------------------------------------
    def _request(self, method: str, path: str, **kwargs: Any) -> dict[str, Any]:
        try:
            resp = self._http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise ClarusConnectionError(f"{method} {self.base_url}{path} timed out: "
                                        f"{type(exc).__name__}") from exc
        except httpx.TransportError as exc:
            raise ClarusConnectionError(f"cannot reach {self.base_url} ({method} {path}): "
                                        f"{exc or type(exc).__name__}") from exc
        try:
            body = resp.json()
        except ValueError:
            body = None
        if resp.status_code >= 400:
            if isinstance(body, dict) and isinstance(body.get("code"), str):
                raise ClarusHTTPError(resp.status_code, body["code"],
                                      str(body.get("message", "")))
            raise ClarusHTTPError(resp.status_code, "http_error",
                                  resp.text[:200] or resp.reason_phrase)
        if not isinstance(body, dict):
            raise ClarusProtocolError(f"{method} {path}: expected a JSON object, got "
                                      f"{resp.text[:120]!r}")
        return body


class InProcessClient:
    """``ClarusClient``'s protocol over ``clarus_env.make``: same dicts, no server.

    The harness-side ``scenario`` (with its answer key) stays reachable here for result files
    that record expected codes, exactly as ``clarus eval`` does; it is never in an observation.
    """

    def __init__(self, *, bundle_dir: str | None = None) -> None:
        self._bundle_dir = bundle_dir
        self._env: Any = None
        self._key: tuple[str, str] | None = None

    def __enter__(self) -> InProcessClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def scenario(self) -> dict[str, Any] | None:
        return None if self._env is None else self._env.scenario

    @property
    def episode_id(self) -> str | None:
        return None if self._env is None else getattr(self._env, "episode_id", None)

    def reset(self, task_name: str = "deductive_liability", seed: int | None = None,
              split: str | None = None) -> dict[str, Any]:
        from .env import make

        key = (task_name, split or "train")
        if self._env is None or self._key != key:
            self.close()
            self._env = make(task_name, split=key[1], bundle_dir=self._bundle_dir)
            self._key = key
        return self._env.reset(seed=seed).model_dump()

    def step(self, action: Any) -> dict[str, Any]:
        if self._env is None:
            raise ClarusError("no episode: call reset() first")
        res = self._env.step(action)
        return {"observation": res.observation.model_dump(), "reward": res.reward,
                "done": res.done, "info": res.info}

    def state(self) -> dict[str, Any]:
        if self._env is None:
            raise ClarusError("no episode: call reset() first")
        return dict(self._env.state)

    def close(self) -> None:
        if self._env is not None:
            self._env.close()
            self._env = None
            self._key = None
