"""The serving hot path's shortcuts must answer exactly as the slow paths they replace.

``fastjson`` (orjson with stdlib fallbacks) against the stdlib ``json`` calls it stands in for,
and the WebSocket fast message checks against the pydantic models they skip: same values,
same exceptions, same error messages, over hand-picked edge cases and generated inputs.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from clarus_env.server import fastjson
from clarus_env.server.app import StepRequest, step_body
from clarus_env.server.sessions import SessionError, encode_action
from clarus_env.server.ws import ResetMessage, StepMessage, reset_options, step_action

EDGE_TEXTS = [
    '{"a":1,"a":2}', "1e400", "-1e400", "123456789012345678901234567890",
    '{"seed": 18446744073709551616}', '{"seed": -9223372036854775809}', "-0", "-0.0",
    "[1.0, 1e-7, 1e16, 0.1]", '"\\ud800"', '{"x": "\\udfff\\ud800"}', "NaN", "[Infinity]",
    "[" * 300 + "]" * 300, "[" * 5000 + "]" * 5000, "", " ", "{", '{"a":}', "[1,]", "tru",
    '"\\u00e9\\u4e2d"', '{"k": "caf\u00e9 \u4e2d \U0001f600"}', "0123", "1.", ".5",
    '{"a": 1} x', "\ufeff{}", '{"type": "step", "data": {"action_type": "fetch_eob"}}',
    # 19+ digit runs: exact under 2**64 (orjson's int), a float beside one, a run in a string
    "[18446744073709551615]", '{"a": 12345678901234567890, "b": 1.5}',
    '{"a": 123456789012345678901, "b": [1]}', '{"s": "1234567890123456789012", "f": 0.5}',
    '[1234567890123456789.5]', '{"n": -92233720368547758090, "m": {"k": [2.0]}}',
]


def outcome(fn: Any, *args: Any) -> tuple[str, Any]:
    try:
        value = fn(*args)
    except Exception as exc:  # the exception's type and text are the behaviour compared
        return "raised", (type(exc).__name__, str(exc))
    return "value", value


def same_json(a: Any, b: Any) -> bool:
    """Equal as JSON values, NaN equal to NaN and 1 distinct from 1.0 and True (iterative:
    the nesting tests go deeper than the recursion limit allows)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, float) and isinstance(y, float):
            if not ((math.isnan(x) and math.isnan(y)) or x == y):
                return False
        elif type(x) is not type(y):
            return False
        elif isinstance(x, dict):
            if x.keys() != y.keys():
                return False
            stack.extend((x[k], y[k]) for k in x)
        elif isinstance(x, list):
            if len(x) != len(y):
                return False
            stack.extend(zip(x, y, strict=True))
        elif x != y:
            return False
    return True


@pytest.mark.parametrize("text", EDGE_TEXTS)
def test_loads_is_json_loads_on_edge_cases(text: str) -> None:
    fast, slow = outcome(fastjson.loads, text), outcome(json.loads, text)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "raised":
        assert fast == slow
    else:
        assert same_json(fast[1], slow[1]), (fast, slow)
    for raw in (text.encode("utf-8", "surrogatepass"),):
        if "\\ud800" in text or "\udfff" in text:
            continue
        assert same_json(outcome(fastjson.loads, raw)[1], outcome(json.loads, raw)[1])


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(), lambda inner: st.lists(inner, max_size=4)
    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20)


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_loads_round_trips_like_json_loads(value: Any) -> None:
    for text in (json.dumps(value), json.dumps(value, ensure_ascii=False)):
        assert same_json(fastjson.loads(text), json.loads(text))


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_reply_and_body_encode_the_same_values(value: Any) -> None:
    message = {"type": "observation", "data": value}
    assert same_json(json.loads(fastjson.dumps_reply(message)), message)
    assert same_json(json.loads(fastjson.dumps_body(message)), message)


def test_non_finite_floats_go_out_as_null() -> None:
    """The one deliberate difference: the stdlib wrote ``NaN``/``Infinity``, which strict JSON
    readers (JavaScript, orjson, OpenEnv's own) refuse, or failed the HTTP response."""
    for value in (float("nan"), float("inf"), float("-inf")):
        assert json.loads(fastjson.dumps_reply({"x": value})) == {"x": None}
        assert json.loads(fastjson.dumps_body({"x": value})) == {"x": None}


def test_replies_never_fail_on_values_json_could_not_carry() -> None:
    import datetime
    import decimal

    odd = {"when": datetime.date(2026, 1, 2), "amount": decimal.Decimal("1.10"),
           "big": 2**70, "surrogate": "\ud800", 3: "int key"}
    text = fastjson.dumps_reply({"type": "error", "data": odd})
    text.encode("utf-8")  # sendable as a text frame
    data = json.loads(text)["data"]
    assert data == {"when": "2026-01-02", "amount": "1.10", "big": 2**70,
                    "surrogate": "\ud800", "3": "int key"}


def nested(depth: int) -> list[Any]:
    out: list[Any] = []
    for _ in range(depth):
        out = [out]
    return out


@pytest.mark.parametrize("action", [
    {"action_type": "fetch_eob", "parameters": {}},
    {"action_type": "write_diagnosis", "parameters": {"amount": 12.5, "note": "caf\u00e9",
                                                      "ids": ["a", "b"], "none": None}},
    {"a": 2**70}, {"a": -(2**64)}, {"a": 1e-7}, {"a": "nullable"},
    {"a": float("nan")}, {"a": float("inf")}, {"a": "\ud800"},
    {"deep": nested(400)}, {"deeper": nested(990)}, {"deepest": nested(5000)},
    {1: "int key"}, {"obj": object()},
])
def test_encode_action_refuses_and_accepts_as_before(action: dict[str, Any]) -> None:
    def stdlib(value: Any) -> str:  # encode_action before fastjson
        try:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"),
                              allow_nan=False)
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise SessionError("invalid_action", "action: strings must be valid Unicode (no "
                               "lone surrogates)", 422) from None
        except RecursionError:
            raise SessionError("invalid_action", "action: nested too deeply", 422) from None
        except (TypeError, ValueError) as exc:
            raise SessionError("invalid_action", f"action: not JSON ({exc})", 422) from None
        return text

    fast, slow = outcome(encode_action, action), outcome(stdlib, action)
    assert fast[0] == slow[0], (fast, slow)
    if fast[0] == "raised":
        assert fast == slow
    else:  # the log is replayed through json.loads: the same action comes back
        assert same_json(json.loads(fast[1]), json.loads(slow[1]))


# -- the WebSocket fast checks against the models they skip -----------------------------------
def model_reset(message: dict[str, Any]) -> tuple[Any, ...]:
    d = ResetMessage.model_validate(message).data
    return d.task_name, d.seed, d.split, d.episode_id


def errors_of(fn: Any, message: Any) -> Any:
    try:
        return "ok", fn(message)
    except ValidationError as exc:
        return "invalid", exc.errors(include_url=False, include_context=False)


RESET_EDGES: list[dict[str, Any]] = [
    {"type": "reset"}, {"type": "reset", "data": {}}, {"type": "reset", "data": None},
    {"type": "reset", "data": []}, {"type": "reset", "extra": 1},
    {"type": "reset", "data": {"task_name": "medical_coding", "seed": 7, "split": "dev",
                               "episode_id": "e" * 128}},
    {"type": "reset", "data": {"episode_id": "e" * 129}},
    {"type": "reset", "data": {"episode_id": ""}},
    {"type": "reset", "data": {"seed": True}}, {"type": "reset", "data": {"seed": 1.0}},
    {"type": "reset", "data": {"seed": -1}}, {"type": "reset", "data": {"seed": 2**63}},
    {"type": "reset", "data": {"seed": 2**63 - 1}}, {"type": "reset", "data": {"seed": "3"}},
    {"type": "reset", "data": {"task_name": "nope"}},
    {"type": "reset", "data": {"task_name": None}},
    {"type": "reset", "data": {"split": "validation"}}, {"type": "reset", "data": {"split": 1}},
    {"type": "reset", "data": {"split": None, "seed": None, "episode_id": None}},
    {"type": "reset", "data": {"surprise": 1}},
]


@pytest.mark.parametrize("message", RESET_EDGES)
def test_reset_fast_check_answers_like_the_model(message: dict[str, Any]) -> None:
    assert errors_of(reset_options, message) == errors_of(model_reset, message)


RESET_DATA = st.dictionaries(
    st.sampled_from(["task_name", "seed", "split", "episode_id", "other"]),
    st.none() | st.booleans() | st.integers(-2, 2**64) | st.floats(allow_nan=False)
    | st.sampled_from(["deductive_liability", "medical_coding", "train", "dev", "x", "",
                       "e" * 128, "e" * 129]) | st.lists(st.integers(), max_size=2),
    max_size=5)


@settings(max_examples=500, deadline=None)
@given(RESET_DATA, st.booleans(), st.booleans())
def test_reset_fast_check_answers_like_the_model_on_generated_messages(
        data: dict[str, Any], with_data: bool, extra: bool) -> None:
    message: dict[str, Any] = {"type": "reset"}
    if with_data:
        message["data"] = data
    if extra:
        message["id"] = 1
    assert errors_of(reset_options, message) == errors_of(model_reset, message)


@pytest.mark.parametrize("message", [
    {"type": "step", "data": {"action_type": "fetch_eob", "parameters": {}}},
    {"type": "step", "data": {}}, {"type": "step"}, {"type": "step", "data": None},
    {"type": "step", "data": []}, {"type": "step", "data": "x"},
    {"type": "step", "data": {}, "extra": 1}, {"type": "step", "extra": 1, "x": 2},
])
def test_step_fast_check_answers_like_the_model(message: dict[str, Any]) -> None:
    assert errors_of(step_action, message) == errors_of(
        lambda m: StepMessage.model_validate(m).data, message)


# -- the HTTP /step fast check against the model it skips --------------------------------------
def model_step(raw: bytes) -> Any:
    try:
        body = StepRequest.model_validate_json(raw)
    except ValidationError:
        return "invalid"
    return body.action, body.episode_id


STEP_EDGES: list[bytes] = [
    b'{"episode_id": "e1", "action": {"action_type": "fetch_eob", "parameters": {}}}',
    b'{"action": {"action_type": "x"}}', b'{"episode_id": "e1"}', b"{}", b"[]", b"", b"null",
    b'{"episode_id": "", "action": 1}', b'{"episode_id": "' + b"e" * 128 + b'"}',
    b'{"episode_id": "' + b"e" * 129 + b'"}', b'{"episode_id": 7}', b'{"episode_id": null}',
    b'{"action": 1, "extra": 2}', b'{"action": 123456789012345678901234567890}',
    b'{"action": 18446744073709551615}', b'{"action": 1.5}', b'{"action": NaN}',
    b'{"action": Infinity}', b'{"action": 1e400}', b'{"action": "\\ud800"}',
    b'{"action": "caf\xc3\xa9"}', b'{"action": "\xff"}', b'\xef\xbb\xbf{"action": 1}',
    b'{"action": 1, "action": 2}', b'{"episode_id": "a", "episode_id": "b"}',
    b'{"action": ' + b"[" * 64 + b"]" * 64 + b"}", b'{"action": ' + b"[" * 65 + b"]" * 65 + b"}",
    b'{"action": ' + b"[" * 300 + b"]" * 300 + b"}", b'{"action": {"a": [true, false, null]}}',
    b'{"action": "x"} trailing', b'  {"action": 0}  ',
]


@pytest.mark.parametrize("raw", STEP_EDGES)
def test_http_step_fast_check_answers_like_the_model(raw: bytes) -> None:
    fast = step_body(raw)
    if fast is not None:  # None hands the body to the model, whatever it then says
        assert model_step(raw) != "invalid"
        assert same_json(list(fast), list(model_step(raw)))


def test_http_step_fast_check_leaves_what_it_cannot_judge_to_the_model() -> None:
    for raw in (b'{"action": 123456789012345678901234567890}', b'{"action": 1.5}',
                b'{"action": ' + b"[" * 65 + b"]" * 65 + b"}", b'{"action": 1, "extra": 2}',
                b'{"episode_id": ""}', b'{"action": "\\ud800"}', b"[]", b"",
                b'{"action": NaN}', b'\xef\xbb\xbf{"action": 1}'):
        assert step_body(raw) is None, raw
    assert step_body(b'{"action": ' + b"[" * 64 + b"]" * 64 + b"}") is not None


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(["action", "episode_id", "other"]),
                       JSON_VALUES, max_size=3))
def test_http_step_fast_check_agrees_with_the_model_on_generated_bodies(body: dict[str, Any]
                                                                   ) -> None:
    for raw in (json.dumps(body).encode(), json.dumps(body, ensure_ascii=False).encode(
            "utf-8", "surrogatepass")):
        fast = step_body(raw)
        if fast is not None:
            assert same_json(list(fast), list(model_step(raw)))


def test_http_step_fast_check_takes_the_bodies_clients_send() -> None:
    from clarus_env.scenario_store import load_scenario
    from clarus_env.splits import seeds
    from clarus_env.tasks import get_task

    for task in ("deductive_liability", "medical_coding"):
        seed = seeds("train", task)[0]
        for action in get_task(task).oracle(load_scenario(task, seed)):
            raw = json.dumps({"episode_id": "ep-1", "action": action}).encode()
            assert step_body(raw) == (action, "ep-1")
