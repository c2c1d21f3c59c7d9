"""The coder's search index is built once per bundle and search code, cached on disk next to
the bundle, and opened -- not rebuilt -- by every later process: a fresh process answers its
first query from the cache, the cached index ranks exactly as a freshly built one, and a
corrupted or missing cache file is rebuilt (atomically) rather than trusted."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from clarus_env.reference import open_reference
from clarus_env.tasks.medical_coding import search

REPO = Path(__file__).resolve().parents[1]
ICD_QUERIES = ["strep throat", "uti", "pink eye", "type 2 diabetes with ckd stage 3a",
               "acute otitis media right ear", "history of colon polyps", "sprained left ankle",
               "bitten by dog", "pneumonia"]
CPT_QUERIES = ["remove impacted ear wax", "flu shot", "destruction of 3 warts",
               "knee joint injection", "office visit new patient moderate", "rapid strep test"]

PROBE = """
import json, sys
from clarus_env.reference import open_reference
from clarus_env.tasks.medical_coding import search
ref = open_reference()
icd = [search.search_icd10(ref, q, limit=5) for q in json.loads(sys.argv[1])]
cpt = [search.search_cpt(ref, q, limit=5) for q in json.loads(sys.argv[2])]
kinds = {k: type(i.docs).__name__ for (_, k), i in search._INDEXES.items()}
print(json.dumps({"icd": icd, "cpt": cpt, "docs": kinds}))
"""


def _probe(cache: Path, icd: list[str], cpt: list[str]) -> dict:
    env = {**os.environ, "CLARUS_SEARCH_CACHE": str(cache), "PYTHONHASHSEED": "7"}
    out = subprocess.run([sys.executable, "-c", PROBE, json.dumps(icd), json.dumps(cpt)],
                         cwd=REPO, env=env, capture_output=True, text=True, timeout=600,
                         check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A cache directory the first probe process fills (it builds both indexes)."""
    d = tmp_path_factory.mktemp("search-cache")
    got = _probe(d, ICD_QUERIES[:1], CPT_QUERIES[:1])
    assert got["docs"] == {"icd": "list", "cpt": "list"}, got["docs"]  # built, not cached
    return d


def test_a_fresh_process_answers_from_the_cache(cache: Path) -> None:
    ref = open_reference()
    files = sorted(p.name for p in cache.iterdir())
    assert files == sorted([search.cache_path(ref, "icd").name,
                            search.cache_path(ref, "cpt").name]), files  # no temp file left
    got = _probe(cache, ICD_QUERIES, CPT_QUERIES)
    assert got["docs"] == {"icd": "_CachedDocs", "cpt": "_CachedDocs"}, got["docs"]


def test_the_cached_index_ranks_like_a_fresh_build(cache: Path) -> None:
    """Every result (code, description, score, matched text) of the cached index equals the
    in-memory build's, in this process and another (PYTHONHASHSEED differs)."""
    ref = open_reference()
    fresh_icd = search._Index(search._icd_docs(ref))
    fresh_cpt = search._Index(search._cpt_docs(ref))
    want_icd = [search._search_icd10(ref, fresh_icd, q, 5) for q in ICD_QUERIES]
    want_cpt = [search._search_cpt(fresh_cpt, q, 5) for q in CPT_QUERIES]
    got = _probe(cache, ICD_QUERIES, CPT_QUERIES)
    assert got["icd"] == want_icd
    assert got["cpt"] == want_cpt


def test_a_corrupted_cache_is_rebuilt(cache: Path) -> None:
    ref = open_reference()
    path = cache / search.cache_path(ref, "cpt").name
    good = _probe(cache, [], CPT_QUERIES)["cpt"]
    path.write_bytes(b"SQLite format 3\x00" + b"\x00" * 4096)  # a truncated, broken file
    got = _probe(cache, [], CPT_QUERIES)
    assert got["docs"]["cpt"] == "list"  # rebuilt in that process ...
    assert got["cpt"] == good
    assert _probe(cache, [], CPT_QUERIES[:1])["docs"]["cpt"] == "_CachedDocs"  # ... and cached


def test_a_missing_or_stale_cache_is_rebuilt(cache: Path, monkeypatch: pytest.MonkeyPatch
                                             ) -> None:
    ref = open_reference()
    path = cache / search.cache_path(ref, "cpt").name
    path.unlink()
    got = _probe(cache, [], CPT_QUERIES[:2])
    assert got["docs"]["cpt"] == "list" and path.is_file()
    # a file whose recorded key differs (another bundle or search code) is not trusted
    monkeypatch.setenv("CLARUS_SEARCH_CACHE", str(cache))
    with pytest.raises(ValueError, match="key"):
        search._open_cached(path, "0" * 64)


def test_an_unwritable_cache_keeps_the_index_in_memory(tmp_path: Path) -> None:
    blocked = tmp_path / "file-not-dir"
    blocked.write_text("a file where the cache directory would be")
    got = _probe(blocked / "cache", [], CPT_QUERIES[:2])
    assert got["docs"]["cpt"] == "list"
    assert [r[0]["code"] for r in got["cpt"]] == [
        r[0]["code"] for r in (search.search_cpt(open_reference(), q, 5) for q in CPT_QUERIES[:2])]


def test_cache_locations(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Beside the bundle first, then the user's cache directory (a read-only bundle); the
    environment variable alone when set."""
    ref = open_reference()
    monkeypatch.delenv("CLARUS_SEARCH_CACHE", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert search.cache_dirs(ref) == [Path(ref.path).parent / ".search-cache",
                                      tmp_path / "clarus" / "search"]
    monkeypatch.setenv("CLARUS_SEARCH_CACHE", str(tmp_path / "mine"))
    assert search.cache_dirs(ref) == [tmp_path / "mine"]
    assert search.cache_path(ref, "icd").parent == tmp_path / "mine"
    assert search.cache_key(ref, "icd") != search.cache_key(ref, "cpt")
