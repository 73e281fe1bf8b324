"""numba for the metric kernels: imported and compiled on first use, cached in a per-user directory.

Importing :mod:`automd_analysis.metrics` must stay cheap (a user computing one AUROC should not pay
for numba's import, about half a second), so kernels are declared with :func:`cached_njit`, which
returns a :class:`LazyKernel`: a callable that imports numba and compiles the Python function the
first time it is called. Kernels call each other and use :data:`prange`; when a kernel is compiled,
every lazy kernel and the ``prange`` placeholder among the globals it names are replaced in its
module by the real dispatcher and ``numba.prange`` (numba resolves globals at compile time), so
compiled kernels call compiled kernels directly.

``@numba.njit(cache=True)`` stores compiled kernels next to the source by default, i.e. inside the
installed package. A read-only install, a shared checkout or a container image must not be written
to, so - unless the user set ``NUMBA_CACHE_DIR`` - the cache goes to
``$XDG_CACHE_HOME/automd-analysis/numba`` (``~/.cache/...``), else to a per-user directory under the
system temporary directory. If neither can be written, caching is switched off (every process then
compiles its kernels once, about a second) and nothing fails.

numba checks a cached kernel against its own source file only, not against the kernels it calls:
after an upgrade that changed a callee's module and not the caller's, the stale caller would be
loaded and link against a callee that no longer exists (LLVM aborts the process). So the chosen
directory has one sub-folder per digest of this package's sources (:func:`sources_digest`): a
changed kernel anywhere starts a fresh cache.
"""

from __future__ import annotations

import functools
import hashlib
import os
import types
from pathlib import Path

__all__ = ["LazyKernel", "cache_dir", "cached_njit", "import_numba", "prange"]


def _writable(path: Path) -> bool:
    import tempfile

    try:
        path.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe-"):
            pass
    except OSError:
        return False
    return True


def sources_digest(folder: Path) -> str:
    """sha256 (16 hex digits) of the names and bytes of the ``*.py`` files in ``folder``."""
    digest = hashlib.sha256()
    for path in sorted(folder.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


@functools.cache
def cache_dir() -> str | None:
    """The numba cache directory (chosen on first use; ``None``: caching off)."""
    import tempfile

    given = os.environ.get("NUMBA_CACHE_DIR")
    if given:
        return given
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    key = sources_digest(Path(__file__).parent)
    candidates = [
        base / "automd-analysis" / "numba" / key,
        Path(tempfile.gettempdir()) / f"automd-analysis-numba-{os.getuid()}" / key,
    ]
    for path in candidates:
        if _writable(path):
            return str(path)
    return None


def import_numba():
    """The numba module, with the cache directory of this module in place."""
    where = cache_dir()
    if where is not None:
        os.environ.setdefault("NUMBA_CACHE_DIR", where)
    import numba

    if where is not None:
        numba.config.CACHE_DIR = where  # also when numba was imported before this module
    return numba


def set_kernel_threads(n: int) -> None:
    """Run the compiled kernels on ``n`` threads (a Dask task: 1, as a local worker process)."""
    import_numba().set_num_threads(int(n))


def prange(*args):
    """Placeholder of ``numba.prange`` (a plain ``range`` until the kernel using it compiles)."""
    return range(*args)


def _global_names(code: types.CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names |= _global_names(const)
    return names


class LazyKernel:
    """A numba kernel compiled on its first call (see the module docstring)."""

    def __init__(self, py_func, options: dict):
        self.py_func = py_func
        self.options = options
        self._dispatcher = None
        self.__name__ = py_func.__name__
        self.__qualname__ = py_func.__qualname__
        self.__doc__ = py_func.__doc__
        self.__module__ = py_func.__module__

    @property
    def dispatcher(self):
        """The compiled numba dispatcher (importing numba and linking the globals on first use)."""
        if self._dispatcher is None:
            numba = import_numba()
            # the dispatcher compiles on its first call, so it can exist before its callees do
            # (which also resolves recursion: a kernel naming itself gets its own dispatcher)
            options = {"cache": cache_dir() is not None, **self.options}
            self._dispatcher = numba.njit(**options)(self.py_func)
            namespace = self.py_func.__globals__
            for name in _global_names(self.py_func.__code__):
                value = namespace.get(name)
                if isinstance(value, LazyKernel):
                    namespace[name] = value.dispatcher
                elif value is prange:
                    namespace[name] = numba.prange
        return self._dispatcher

    def __call__(self, *args):
        return self.dispatcher(*args)


def cached_njit(**options):
    """Decorator: a :class:`LazyKernel` for ``numba.njit(cache=True, **options)`` (without cache
    when no cache directory is usable)."""

    def decorate(func) -> LazyKernel:
        return LazyKernel(func, options)

    return decorate
