"""One way to report progress: log lines and tqdm bars on stderr, driven by ``verbose``.

Every estimator with a ``verbose`` parameter follows the same rule (see
``docs/design.md``, "Vocabulary"):

* ``verbose=0`` (the default): silent;
* ``verbose >= 1``: a tqdm bar over the fit's long loop (iterations, epochs,
  blocks) and a line at each stage, prefixed by the estimator's name;
* ``verbose >= 2``: also a line per iteration where a driver has one to say.

Everything goes to stderr, so a fit's progress never mixes with what a script
prints on stdout. ``tqdm`` is a base dependency; it is imported on first use.
"""

from __future__ import annotations

import sys

__all__ = ["VerboseMixin", "log_message", "progress_bar"]


def log_message(name, message, verbose, level=1):
    """Print ``[name] message`` to stderr when ``verbose >= level``."""
    if verbose and verbose >= level:
        print(f"[{name}] {message}", file=sys.stderr, flush=True)


def progress_bar(iterable=None, *, verbose, desc, total=None, unit="it"):
    """A tqdm bar on stderr, disabled (but still iterable) unless ``verbose``.

    Parameters
    ----------
    iterable : iterable, optional
        What to iterate over; None for a bar advanced with ``update``.
    verbose : int or bool
        The estimator's ``verbose``; the bar shows when it is at least 1.
    desc : str
        The bar's label, usually the estimator's class name and the stage.
    total : int, optional
        The number of steps, when ``iterable`` has no length.
    unit : str, default="it"
        The unit shown (``"epoch"``, ``"block"``, ``"rep"``, ...).

    Returns
    -------
    bar : tqdm.tqdm
    """
    from tqdm.auto import tqdm

    return tqdm(
        iterable,
        total=total,
        desc=desc,
        unit=unit,
        disable=not verbose,
        file=sys.stderr,
        leave=False,
        dynamic_ncols=True,
    )


class VerboseMixin:
    """``_log`` and ``_progress`` for an estimator with a ``verbose`` parameter.

    The name in the prefix is the class name, so a subclass reports as itself.
    """

    def _log(self, message, level=1):
        log_message(type(self).__name__, message, getattr(self, "verbose", 0), level)

    def _progress(self, iterable=None, *, desc=None, total=None, unit="it"):
        name = type(self).__name__
        return progress_bar(
            iterable,
            verbose=getattr(self, "verbose", 0),
            desc=name if desc is None else f"{name} {desc}",
            total=total,
            unit=unit,
        )
