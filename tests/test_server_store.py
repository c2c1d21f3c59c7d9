"""The in-process store sweeps expired episodes lazily (at most once a second) but never lets
an expired one hold a place a new episode needs, nor answer for itself."""

from __future__ import annotations

import time

import pytest

from clarus_env.server import sessions
from clarus_env.server.sessions import InProcessStore, SessionError


def meta(client: str = "127.0.0.1") -> dict[str, object]:
    return {"task": "deductive_liability", "split": "train", "seed": 1, "gen": "g",
            "client": client}


def test_expired_episodes_free_their_places_at_once_when_the_pool_is_full() -> None:
    store = InProcessStore(capacity=2, per_client=2, idle_ttl_s=0.05)
    store.create("a", meta())
    store.create("b", meta())
    time.sleep(0.1)
    gone = store.create("c", meta())  # full: swept now, not within the second
    assert sorted(gone) == ["a", "b"]
    assert store.load("a") is None and store.load("c") is not None


def test_expired_episodes_free_the_per_client_limit_at_once() -> None:
    store = InProcessStore(capacity=10, per_client=2, idle_ttl_s=0.05)
    store.create("a", meta())
    store.create("b", meta())
    time.sleep(0.1)
    store.create("c", meta())
    store.create("d", meta())  # the client's expired a and b do not count against it
    with pytest.raises(SessionError) as refused:
        store.create("e", meta())
    assert refused.value.code == "client_capacity_exceeded"
    store.create("e", meta("10.0.0.1"))  # another client is not limited by this one


def test_below_the_limits_an_expired_episode_is_gone_before_it_is_swept(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sessions, "TRIM_EVERY_S", 60.0)
    store = InProcessStore(capacity=10, per_client=10, idle_ttl_s=0.05)
    store.create("a", meta())  # the first create sweeps; the next sweep is a minute away
    store.create("b", meta())
    time.sleep(0.1)
    assert store.create("c", meta()) == []  # not swept yet
    assert store.load("a") is None and store.version("a") is None
    assert store.append("a", "g", 0, "{}", False) == 0  # GONE
    assert len(store) == 1  # counting sweeps
