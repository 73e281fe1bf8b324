"""Score cache: key derivation, exact round trips, atomic writes, corrupt and temporary files."""

from __future__ import annotations

import hashlib
import json
import math
import os
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from automd_analysis.scoring.cache import CACHE_FORMAT, ScoreCache, cache_key, sha256_file

HEX = st.text(alphabet="0123456789abcdef", min_size=64, max_size=64)


def test_cache_key_is_sha256_of_its_documented_parts():
    key = cache_key("a" * 64, "b" * 64, "c" * 64, "0.1.0")
    parts = ["a" * 64, "b" * 64, "c" * 64, "0.1.0", CACHE_FORMAT]
    assert key == hashlib.sha256(json.dumps(parts).encode()).hexdigest()
    assert (
        cache_key(None, "b" * 64, "c" * 64, "0.1.0")
        == hashlib.sha256(
            json.dumps(["absent", "b" * 64, "c" * 64, "0.1.0", CACHE_FORMAT]).encode()
        ).hexdigest()
    )


@settings(max_examples=60)
@given(a=HEX, b=HEX, c=HEX, v=st.sampled_from(["0.1.0", "0.1.1", "1.0.0"]), which=st.integers(0, 3))
def test_cache_key_changes_with_every_component(a, b, c, v, which):
    parts = [a, b, c, v]
    changed = list(parts)
    changed[which] = (parts[which][::-1] + "x") if which < 3 else parts[which] + ".post1"
    if changed[which] == parts[which]:
        return
    assert cache_key(*parts) == cache_key(*parts)
    assert cache_key(*parts) != cache_key(*changed)
    assert len(cache_key(*parts)) == 64


def test_sha256_file(tmp_path):
    path = tmp_path / "f.csv"
    data = b"id,p\n" + b"1,0.5\n" * 300_000
    path.write_bytes(data)
    assert sha256_file(path, chunk=1000) == hashlib.sha256(data).hexdigest()


def test_round_trip_is_exact_including_nan_inf_and_numpy(tmp_path):
    cache = ScoreCache(tmp_path / "cache")
    key = "ab" + "0" * 62
    x = 0.1 + 0.2  # not representable in few digits
    entry = {
        "valid": True,
        "metrics": {
            "raw": np.float64(x),
            "nan": math.nan,
            "inf": math.inf,
            "n": np.int64(7),
            "arr": np.array([1.5, 2.5]),
            "tup": (1, 2),
        },
        "reasons": [],
    }
    path = cache.put(key, entry)
    assert path == tmp_path / "cache" / "ab" / f"{key}.json"
    got = cache.get(key)
    assert got["metrics"]["raw"] == x
    assert math.isnan(got["metrics"]["nan"]) and got["metrics"]["inf"] == math.inf
    assert got["metrics"]["n"] == 7 and got["metrics"]["arr"] == [1.5, 2.5]
    assert got["metrics"]["tup"] == [1, 2]
    assert got["key"] == key and got["format"] == CACHE_FORMAT
    assert cache.has(key) and not cache.has("cd" + "0" * 62)


def test_put_is_deterministic_bytes(tmp_path):
    cache = ScoreCache(tmp_path)
    key = "0" * 64
    cache.put(key, {"b": 1, "a": [0.25, None]})
    first = cache.path(key).read_bytes()
    cache.put(key, {"a": [0.25, None], "b": 1})
    assert cache.path(key).read_bytes() == first


@pytest.mark.parametrize(
    "content",
    [b"", b"{", b"[1, 2]", b'{"key": "other", "format": 1}', b"\xff\xfe"],
)
def test_corrupt_or_foreign_entry_is_missing(tmp_path, content):
    cache = ScoreCache(tmp_path)
    key = "1" * 64
    cache.path(key).parent.mkdir(parents=True)
    cache.path(key).write_bytes(content)
    assert cache.get(key) is None


def test_entry_of_another_format_is_missing(tmp_path):
    cache = ScoreCache(tmp_path)
    key = "2" * 64
    cache.put(key, {"valid": True})
    doc = json.loads(cache.path(key).read_text())
    doc["format"] = CACHE_FORMAT + 1
    cache.path(key).write_text(json.dumps(doc))
    assert cache.get(key) is None


def test_failed_write_leaves_no_entry_and_no_temporary(tmp_path, monkeypatch):
    cache = ScoreCache(tmp_path)
    key = "3" * 64

    def boom(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        cache.put(key, {"valid": True})
    monkeypatch.undo()
    assert cache.get(key) is None
    assert list((tmp_path / key[:2]).iterdir()) == []


def test_failed_write_keeps_the_previous_entry(tmp_path, monkeypatch):
    cache = ScoreCache(tmp_path)
    key = "4" * 64
    cache.put(key, {"version": 1})

    def boom(src, dst):
        raise KeyboardInterrupt  # e.g. Ctrl-C exactly during the write

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(KeyboardInterrupt):
        cache.put(key, {"version": 2})
    monkeypatch.undo()
    assert cache.get(key)["version"] == 1


def test_temporaries_are_ignored_and_cleaned_by_age(tmp_path):
    cache = ScoreCache(tmp_path)
    key = "5" * 64
    cache.put(key, {"valid": False})
    old = tmp_path / "55" / ".tmp-old.json"
    new = tmp_path / "55" / ".tmp-new.json"
    old.write_text("{")
    new.write_text("{")
    past = time.time() - 3600
    os.utime(old, (past, past))
    assert cache.get(key)["valid"] is False
    assert cache.clean_temporaries(older_than=600) == 1
    assert not old.exists() and new.exists()
    assert cache.clean_temporaries() == 1
    assert cache.get(key)["valid"] is False


def test_clean_temporaries_without_directory(tmp_path):
    assert ScoreCache(tmp_path / "nope").clean_temporaries() == 0
