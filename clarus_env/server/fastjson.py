"""JSON on the serving hot path: orjson where it gives the stdlib's answer, the stdlib where not.

Encoding a 2-3 KB observation with ``json.dumps`` costs ~27 µs, more than half of a billing
step's own work; orjson does it in ~2 µs. But the two libraries disagree at the edges, and the
wire contract (error messages, what is accepted) was written against the stdlib, so every
function here takes orjson's fast path only where it provably means the same thing and falls
back to the stdlib otherwise:

- decoding: orjson refuses ``NaN``/``Infinity``, lone-surrogate escapes and ``1e400``, which
  ``json.loads`` accepts, so a refusal is retried with ``json.loads`` (which then raises or
  answers exactly as before); orjson silently turns integers beyond 64 bits into floats, so
  a result holding a float, from a text with a 19-digit run, is re-read by ``json.loads``.
- encoding: orjson refuses lone surrogates, integers beyond 64 bits, non-string keys and
  nesting past 255 levels; those go to the stdlib. orjson writes ``NaN`` as ``null`` where the
  stdlib writes ``NaN`` (or refuses it), so output containing ``null`` is redone by the stdlib
  when the caller needs NaN refused. Float spelling may differ (``1e-7`` for ``1e-07``): the
  same number, which every JSON reader parses identically.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

_LONG_INT = re.compile(r"\d{19}")
_LONG_INT_BYTES = re.compile(rb"\d{19}")
# datetimes and dataclasses go through ``default`` (their ``str``), as with the stdlib
_OPTS = orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_DATACLASS


def _has_float(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is dict:
            stack.extend(item.values())
        elif kind is list:
            stack.extend(item)
        elif kind is float:
            return True
    return False


def loads(raw: str | bytes) -> Any:
    """``json.loads(raw)``, the same value or the same exception, mostly at orjson's speed.

    orjson first: an integer beyond 64 bits is the only value it reads differently, and it
    comes back as a float, so a result without floats (every well-formed step message) is
    the stdlib's; one with floats is re-read by the stdlib if the text has a 19-digit run.
    (Scanning every text for such a run first cost more than the decoding: ~2 µs a message.)
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)  # maybe JSON only the stdlib accepts (NaN, "\ud800"): it decides
    if _has_float(value) and (_LONG_INT if isinstance(raw, str) else _LONG_INT_BYTES
                              ).search(raw) is not None:
        return json.loads(raw)
    return value


def _default_str(value: Any) -> str:
    return str(value)


def dumps_reply(message: Any) -> str:
    """A server reply as text: UTF-8-safe, compact; a non-JSON value (a date, a Decimal) is
    sent as its ``str`` and a lone surrogate ASCII-escaped, never an exception."""
    try:
        return orjson.dumps(message, default=_default_str, option=_OPTS).decode()
    except TypeError:  # lone surrogate, huge int, odd key, deep nesting: the stdlib's way
        text = json.dumps(message, ensure_ascii=False, default=str)
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            text = json.dumps(message, default=str)
        return text


def dumps_compact_strict(value: Any) -> str:
    """``json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)``
    (the same exceptions for what cannot be encoded: lone surrogates, NaN, too deep)."""
    try:
        out = orjson.dumps(value)
    except TypeError:
        out = None
    if out is None or b"null" in out:  # null may hide a NaN orjson wrote as null
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        text.encode("utf-8")  # raises UnicodeEncodeError on a lone surrogate, as before
        return text
    return out.decode()


def dumps_body(content: Any) -> bytes:
    """An HTTP response body: compact UTF-8 JSON; a lone surrogate echoed back goes out
    ASCII-escaped (valid JSON) rather than failing the response."""
    try:
        return orjson.dumps(content)
    except TypeError:
        try:
            return json.dumps(content, ensure_ascii=False, allow_nan=False,
                              separators=(",", ":")).encode()
        except UnicodeEncodeError:
            return json.dumps(content, allow_nan=False, separators=(",", ":")).encode()
