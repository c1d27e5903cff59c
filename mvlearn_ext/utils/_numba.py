"""The one place that owns the Numba flags of the package.

Every jitted function in ``mvlearn_ext`` is declared with :func:`jit` (and
never with ``numba.njit`` directly), so that caching, threading and the
floating-point flags are set here and switchable by environment variables:

``MVLEARN_EXT_NUMBA_CACHE``
    ``1`` (default) caches compiled kernels on disk next to the sources (or in
    ``NUMBA_CACHE_DIR``); ``0`` compiles afresh in each process.
``MVLEARN_EXT_NUMBA_PARALLEL``
    ``1`` (default) compiles kernels declared ``parallel=True`` with Numba's
    threading layer; ``0`` compiles them serially (``prange`` becomes
    ``range``), for debugging or for running under an outer process pool.
    The number of threads is Numba's own ``NUMBA_NUM_THREADS`` /
    :func:`numba.set_num_threads`; an estimator's ``n_jobs``/``n_threads``
    sets it for the duration of its call through :func:`numba_threads`.

No kernel may use bare ``fastmath=True``: it licenses the compiler to assume
there are no NaNs or infinities, which has produced silent NaNs elsewhere.
Kernels that can profit from reassociation get the narrow, safe subset
:data:`SAFE_FASTMATH` (``reassoc``/``contract``), which keeps IEEE semantics
for NaN, infinities and signed zeros.
"""

from __future__ import annotations

import contextlib
import os

import numba

__all__ = [
    "jit",
    "NUMBA_CACHE",
    "NUMBA_PARALLEL",
    "SAFE_FASTMATH",
    "numba_threads",
    "registered_kernels",
]


def _env_flag(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value.strip() == "":
        return default
    value = value.strip().lower()
    if value in ("1", "true", "yes", "on"):
        return True
    if value in ("0", "false", "no", "off"):
        return False
    raise ValueError(
        f"environment variable {name}={value!r}: expected 0/1, true/false, yes/no or on/off"
    )


NUMBA_CACHE: bool = _env_flag("MVLEARN_EXT_NUMBA_CACHE", True)
NUMBA_PARALLEL: bool = _env_flag("MVLEARN_EXT_NUMBA_PARALLEL", True)
SAFE_FASTMATH: frozenset[str] = frozenset({"reassoc", "contract"})

_REGISTRY: list = []


def jit(func=None, *, parallel: bool = False, fastmath=False, signature=None, inline="never"):
    """Compile ``func`` in nopython mode with the package's flags.

    Parameters
    ----------
    func : callable, optional
        The function; ``@jit`` and ``@jit(parallel=True)`` both work.
    parallel : bool, default=False
        Request Numba's parallel backend (``prange``); honoured only when
        ``MVLEARN_EXT_NUMBA_PARALLEL`` is on.
    fastmath : bool or set of str, default=False
        ``False`` or a subset of :data:`SAFE_FASTMATH`. ``True`` is refused.
    signature : str or list, optional
        Eager compilation signature(s), passed to Numba.
    inline : {"never", "always"}, default="never"
        ``"always"`` inlines the function into its jitted callers at the level
        of Numba's IR (a small helper shared by hot loops costs no call).

    Returns
    -------
    dispatcher : numba.core.registry.CPUDispatcher
        The compiled function, with ``__mvlearn_ext_jit__ = True``.
    """
    if fastmath is True:
        raise ValueError("fastmath=True is not allowed in mvlearn_ext; use SAFE_FASTMATH")
    if fastmath and not set(fastmath) <= SAFE_FASTMATH:
        raise ValueError(f"fastmath flags {set(fastmath) - SAFE_FASTMATH} are not allowed")
    if inline not in ("never", "always"):
        raise ValueError(f"inline must be 'never' or 'always', got {inline!r}")

    def decorate(f):
        options = dict(
            nopython=True,
            nogil=True,
            cache=NUMBA_CACHE,
            parallel=bool(parallel and NUMBA_PARALLEL),
            fastmath=set(fastmath) if fastmath else False,
            error_model="numpy",
            inline=inline,
        )
        dispatcher = numba.jit(signature, **options)(f) if signature else numba.jit(**options)(f)
        dispatcher.__mvlearn_ext_jit__ = True
        _REGISTRY.append(dispatcher)
        return dispatcher

    return decorate(func) if func is not None else decorate


def registered_kernels() -> list:
    """The dispatchers created through :func:`jit` so far (for tests and ``info``)."""
    return list(_REGISTRY)


@contextlib.contextmanager
def numba_threads(n_threads):
    """Run the ``parallel=True`` kernels of the block on at most ``n_threads`` threads.

    ``n_threads`` is a resolved positive count (see
    :func:`mvlearn_ext.utils.effective_n_jobs`), capped at the size of
    Numba's pool (``NUMBA_NUM_THREADS``, fixed at launch); ``None`` leaves
    Numba's setting as it is. Numba's setting belongs to the calling thread and
    is restored on exit, also when the block raises.
    """
    if n_threads is None:
        yield
        return
    old = numba.get_num_threads()
    numba.set_num_threads(max(1, min(int(n_threads), numba.config.NUMBA_NUM_THREADS)))
    try:
        yield
    finally:
        numba.set_num_threads(old)
