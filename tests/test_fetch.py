"""Downloads and the mirror: retries, clear failures, pins, zip handling."""

from __future__ import annotations

import io
import time
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from pipelines.fetcher import Fetcher, load_pins
from pipelines.lib.archive import read_zip_member
from pipelines.lib.errors import FetchError, IntegrityError, SourceFormatError
from pipelines.lib.fetch import find_link, rebase
from pipelines.sources import InputSpec

from .httpserver import Reply, Routes, serve

SPEC = InputSpec(
    key="gpci", source="pfs", release="RVU99Z", fmt="gpci",
    url="https://www.cms.gov/files/zip/rvu99z.zip", member=r"GPCI\d{4}\.csv",
    page="https://www.cms.gov/medicare/pfs/rvu99z", link=r"/files/zip/rvu99z[^/\"']*\.zip$",
    mirror=("rvu99z/GPCI2099.csv",),
)


def zipped(**members: bytes) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members.items():
            zf.writestr(name, data)
    return buf.getvalue()


PAGE = b'<html><a href="/files/zip/rvu99z-updated-01-02-2099.zip">RVU99Z</a>' \
       b'<a href="/files/zip/other.zip">x</a></html>'
ZIP = zipped(**{"GPCI2099.csv": b"hello", "PPRRVU2099.csv": b"x"})


def fetcher(base: str, **kw: object) -> Fetcher:
    return Fetcher(base_url=base, timeout_s=kw.pop("timeout_s", 2.0), retries=2, backoff_s=0.01,
                   **kw)  # type: ignore[arg-type]


def test_download_scrapes_release_page_and_reads_member_case_insensitively() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.ok("/files/zip/rvu99z-updated-01-02-2099.zip", zipped(**{"gpci2099.CSV": b"hello"}))
    with serve(routes) as base:
        got = fetcher(base).obtain(SPEC)
    assert got is not None
    assert got.data == b"hello"
    assert got.file == "rvu99z-updated-01-02-2099.zip!gpci2099.CSV"
    assert got.origin == "download" and not got.excerpt
    assert got.sha256 == "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"


def test_5xx_is_retried_then_succeeds() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set("/files/zip/rvu99z-updated-01-02-2099.zip", (503, b"busy"), (500, b"x"), (200, ZIP))
    with serve(routes) as base:
        got = fetcher(base).obtain(SPEC)
    assert got is not None and got.data == b"hello"
    assert routes.hits["/files/zip/rvu99z-updated-01-02-2099.zip"] == 3


def test_5xx_forever_fails_clearly_after_retries() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set("/files/zip/rvu99z-updated-01-02-2099.zip", (500, b"boom"))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base).obtain(SPEC)
    assert "rvu99z-updated-01-02-2099.zip" in str(err.value)
    assert "3 attempts" in str(err.value) and "500" in str(err.value)
    assert routes.hits["/files/zip/rvu99z-updated-01-02-2099.zip"] == 3


def test_404_fails_at_once_with_the_url() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    with serve(routes) as base, pytest.raises(FetchError, match=r"HTTP 404.*|.*404") as err:
        fetcher(base).obtain(SPEC)
    assert "/files/zip/rvu99z-updated-01-02-2099.zip" in str(err.value)
    assert routes.hits["/files/zip/rvu99z-updated-01-02-2099.zip"] == 1


def test_timeout_is_retried_then_fails_clearly() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.ok("/files/zip/rvu99z-updated-01-02-2099.zip", ZIP)
    routes.delay["/files/zip/rvu99z-updated-01-02-2099.zip"] = 1.0
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base, timeout_s=0.2).obtain(SPEC)
    assert "rvu99z-updated-01-02-2099.zip" in str(err.value)
    assert "3 attempts" in str(err.value)
    assert routes.hits["/files/zip/rvu99z-updated-01-02-2099.zip"] == 3


def test_page_without_link_names_page_and_pattern() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", b"<html>nothing here</html>")
    with serve(routes) as base, pytest.raises(FetchError, match="no link matching"):
        fetcher(base).obtain(SPEC)


def test_sha256_mismatch_against_pin() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.ok("/files/zip/rvu99z-updated-01-02-2099.zip", ZIP)
    with serve(routes) as base, pytest.raises(IntegrityError) as err:
        fetcher(base, pins={"RVU99Z": {"GPCI2099.csv": "0" * 64}}).obtain(SPEC)
    assert "GPCI2099.csv" in str(err.value) and "0" * 64 in str(err.value)


def test_truncated_zip_is_a_clear_error() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.ok("/files/zip/rvu99z-updated-01-02-2099.zip", ZIP[: len(ZIP) // 2])
    with serve(routes) as base, pytest.raises(SourceFormatError) as err:
        fetcher(base).obtain(SPEC)
    assert "rvu99z-updated-01-02-2099.zip" in str(err.value)
    assert "truncated or corrupt" in str(err.value)


def test_missing_member_lists_what_the_zip_has() -> None:
    with pytest.raises(SourceFormatError) as err:
        read_zip_member(zipped(**{"README.txt": b"x"}), r"GPCI\d{4}\.csv", "rvu99z.zip")
    msg = str(err.value)
    assert "rvu99z.zip" in msg and "GPCI" in msg and "README.txt" in msg


def test_corrupt_member_crc_is_a_clear_error() -> None:
    data = bytearray(zipped(**{"GPCI2099.csv": b"hello world " * 50}))
    i = data.index(b"GPCI2099.csv") + len("GPCI2099.csv")
    data[i + 5] ^= 0xFF  # flip a byte of the compressed payload
    with pytest.raises(SourceFormatError, match="rvu99z.zip"):
        read_zip_member(bytes(data), r"GPCI\d{4}\.csv", "rvu99z.zip")


def test_empty_download_is_a_clear_error() -> None:
    with pytest.raises(SourceFormatError, match="empty"):
        read_zip_member(b"", r"x", "rvu99z.zip")


def test_mirror_reads_file_or_zip_member(tmp_path: Path) -> None:
    (tmp_path / "rvu99z").mkdir()
    (tmp_path / "rvu99z" / "GPCI2099.csv").write_bytes(b"mirror")
    got = Fetcher(mirror=tmp_path).obtain(SPEC)
    assert got is not None and got.data == b"mirror" and got.origin == "mirror:rvu99z/GPCI2099.csv"
    (tmp_path / "rvu99z" / "GPCI2099.csv").unlink()
    (tmp_path / "rvu99z" / "r.zip").write_bytes(ZIP)
    zspec = replace(SPEC, mirror=("rvu99z/r.zip",))
    got = Fetcher(mirror=tmp_path).obtain(zspec)
    assert got is not None and got.data == b"hello" and got.file == "r.zip!GPCI2099.csv"


def test_mirror_missing_file_names_paths_tried(tmp_path: Path) -> None:
    with pytest.raises(FetchError) as err:
        Fetcher(mirror=tmp_path).obtain(SPEC)
    assert "rvu99z/GPCI2099.csv" in str(err.value)
    assert Fetcher(mirror=tmp_path).obtain(replace(SPEC, optional=True)) is None


def test_find_link_rejects_ambiguous_pages() -> None:
    page = b'<a href="/files/zip/rvu99z.zip"></a><a href="/files/zip/rvu99z-v2.zip"></a>'
    with pytest.raises(FetchError, match="several links"):
        find_link(page, r"/files/zip/rvu99z[^/]*\.zip$", "https://x/p")


def test_rebase_keeps_path() -> None:
    assert rebase("https://www.cms.gov/files/zip/a.zip?x=1", "http://127.0.0.1:9/") == \
        "http://127.0.0.1:9/files/zip/a.zip?x=1"
    assert rebase("https://www.cms.gov/a", None) == "https://www.cms.gov/a"


def test_pins_file_errors_are_clear(tmp_path: Path) -> None:
    bad = tmp_path / "pins.json"
    bad.write_text("{nope")
    with pytest.raises(FetchError, match="pins.json"):
        load_pins(bad)
    assert load_pins("") == {}
    assert "GPCI2026.csv" in load_pins(None)["RVU26C"]
    with pytest.raises(FetchError, match="does not exist"):
        load_pins(tmp_path / "pins.jsno")  # a typo must not turn verification off
    bad.write_text('{"GPCI2026.csv": "ab"}')  # the old, name-only layout
    with pytest.raises(FetchError, match="each release"):
        load_pins(bad)


def test_pins_are_keyed_by_release_not_only_by_file_name() -> None:
    """CMS reuses GPCI2099.csv across releases: another release's pin must not apply."""
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.ok("/files/zip/rvu99z-updated-01-02-2099.zip", ZIP)
    good = "2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824"
    with serve(routes) as base:
        got = fetcher(base, pins={"RVU99Y": {"GPCI2099.csv": "0" * 64},
                                  "RVU99Z": {"GPCI2099.csv": good}}).obtain(SPEC)
    assert got is not None and got.sha256 == good


ZIP_URL = "/files/zip/rvu99z-updated-01-02-2099.zip"
LICENCE = "/license/ama"
LICENCE_PAGE = (b'<html><body><h1>License for Use of Current Procedural Terminology</h1>'
                b'<form method="post" action="/license/ama/accept">'
                b'<input type="hidden" name="file" '
                b'value="/files/zip/rvu99z-updated-01-02-2099.zip">'
                b'<input type="hidden" name="form_token" value="t0k3n">'
                b'<input type="submit" name="op" value="Accept">'
                b'<input type="submit" name="op" value="Decline"></form></body></html>')
HTML = {"Content-Type": "text/html; charset=utf-8"}


def licence_site(after_accept: Reply) -> Routes:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", b'<a href="/license/ama?file=/files/zip/'
              b'rvu99z-updated-01-02-2099.zip">RVU99Z</a>')
    routes.set(LICENCE, Reply(200, LICENCE_PAGE, HTML))
    routes.set("/license/ama/accept", after_accept)
    return routes


def test_ama_licence_page_is_accepted_like_a_browser() -> None:
    routes = licence_site(Reply(200, ZIP, {"Content-Type": "application/zip"}))
    spec = replace(SPEC, link=r"rvu99z[^/\"']*\.zip$")
    with serve(routes) as base:
        got = fetcher(base).obtain(spec)
    assert got is not None and got.data == b"hello"
    assert got.file == "rvu99z-updated-01-02-2099.zip!GPCI2099.csv"
    (path, form, _), = routes.posts
    assert path == "/license/ama/accept"
    assert b"form_token=t0k3n" in form and b"op=Accept" in form and b"Decline" not in form


def test_licence_page_that_will_not_let_go_says_how_to_fetch_by_hand() -> None:
    routes = licence_site(Reply(200, LICENCE_PAGE, HTML))
    spec = replace(SPEC, link=r"rvu99z[^/\"']*\.zip$")
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base).obtain(spec)
    msg = str(err.value)
    assert "licence page" in msg and "/license/ama" in msg
    assert "rvu99z/GPCI2099.csv" in msg and "CLARUS_CMS_MIRROR" in msg
    assert "truncated or corrupt" not in msg


def test_html_where_a_zip_was_expected_is_named_as_such() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(200, b"<html><body>Maintenance</body></html>", HTML))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base).obtain(SPEC)
    assert ZIP_URL in str(err.value) and "HTML page" in str(err.value)


def test_connection_reset_mid_file_is_retried() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(200, ZIP, cut_at=20), Reply(200, ZIP))
    with serve(routes) as base:
        got = fetcher(base).obtain(SPEC)
    assert got is not None and got.data == b"hello"
    assert routes.hits[ZIP_URL] == 2


def test_connection_reset_every_time_fails_naming_the_url() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(200, ZIP, cut_at=20))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base).obtain(SPEC)
    msg = str(err.value)
    assert ZIP_URL in msg and "mid-file" in msg and "3 attempts" in msg, msg
    assert routes.hits[ZIP_URL] == 3


def test_429_is_retried_after_the_retry_after_delay() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(429, b"slow down", {"Retry-After": "1"}), Reply(200, ZIP))
    with serve(routes) as base:
        f = fetcher(base)
        f.get("https://www.cms.gov/medicare/pfs/rvu99z")
        t0 = time.monotonic()
        got = f.obtain(SPEC)
        waited = time.monotonic() - t0
    assert got is not None and got.data == b"hello"
    assert routes.hits[ZIP_URL] == 2
    assert waited >= 0.9  # the server's Retry-After, not the 0.01 s backoff


def test_429_forever_fails_clearly() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(429, b"slow down", {"Retry-After": "0"}))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base).obtain(SPEC)
    assert ZIP_URL in str(err.value) and "429" in str(err.value) and "3 attempts" in str(err.value)


def test_trickling_server_hits_the_low_speed_floor() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(200, ZIP, trickle_s=0.05))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base, low_speed_bps=1000, low_speed_s=0.5).obtain(SPEC)
    assert ZIP_URL in str(err.value) and "too slow" in str(err.value)


def test_trickling_server_hits_the_deadline() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.set(ZIP_URL, Reply(200, ZIP, trickle_s=0.05))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base, low_speed_bps=1, low_speed_s=60, deadline_s=0.5).obtain(SPEC)
    assert ZIP_URL in str(err.value) and "deadline" in str(err.value)


def test_oversized_file_is_refused_before_reading() -> None:
    routes = Routes()
    routes.ok("/medicare/pfs/rvu99z", PAGE)
    routes.ok(ZIP_URL, ZIP + bytes(1000))
    with serve(routes) as base, pytest.raises(FetchError) as err:
        fetcher(base, max_bytes=500).obtain(SPEC)
    assert ZIP_URL in str(err.value) and "500-byte limit" in str(err.value)


def test_licence_accept_link_or_get_form_is_followed() -> None:
    link_page = (b'<html><p>AMA CPT licence</p><a href="/license/ama/decline">I decline</a>'
                 b'<a href="/license/ama/accepted?file=/files/zip/x.zip">I accept</a></html>')
    get_form = (b'<html><p>License</p><form action="/license/ama/ok" method="get">'
                b'<input type="hidden" name="file" value="/files/zip/a b.zip">'
                b'<button type="submit" name="agree" value="yes">Agree</button></form></html>')
    for page, target in ((link_page, "/license/ama/accepted"), (get_form, "/license/ama/ok")):
        routes = licence_site(Reply(200, b"unused"))
        routes.set(LICENCE, Reply(200, page, HTML))
        routes.set(target, Reply(200, ZIP, {"Content-Type": "application/zip"}))
        spec = replace(SPEC, link=r"rvu99z[^/\"']*\.zip$")
        with serve(routes) as base:
            got = fetcher(base).obtain(spec)
        assert got is not None and got.data == b"hello"
        assert routes.hits[target] == 1 and routes.hits["/license/ama/decline"] == 0
