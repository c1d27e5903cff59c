"""Summaries of tidy Monte Carlo results: mean, standard error, count; log-log slopes."""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

__all__ = ["LogLogFit", "fit_loglog_slope", "format_summary", "summarize"]

_STATS = ("mean", "se", "n", "std")


def summarize(frame, *, by, value):
    """Mean, standard error and count of ``value`` per group of ``by``.

    Parameters
    ----------
    frame : pandas.DataFrame or list of dict
        Tidy results, e.g. from :meth:`Study.run`.
    by : str or list of str
        Grouping columns (e.g. ``["delta", "method"]``); an empty list gives
        one row over everything.
    value : str
        The numeric column to summarise.

    Returns
    -------
    table : pandas.DataFrame
        One row per group, sorted by ``by``: the ``by`` columns, then
        ``mean``, ``se`` (sample standard deviation / sqrt(n); NaN when
        n = 1), ``n`` (the number of non-missing values; missing ones are
        skipped) and ``std`` (ddof = 1). ``table.attrs["value"]`` is ``value``.
        Each group is summarised on its values divided by a power of two
        near their largest magnitude, so the statistics are the same (up to
        that exact factor) at any representable scale.

    Raises
    ------
    ValueError
        If a column is missing, a ``by`` column is named like a summary
        column (``mean``, ``se``, ``n``, ``std``), or a group's mean or
        standard deviation overflows float64 (values near the largest float).
    TypeError
        If ``value`` is not numeric.

    See Also
    --------
    format_summary : The table as ``"mean ± se"`` strings.
    plot_summary : The table as a figure.

    Examples
    --------
    >>> import pandas as pd
    >>> frame = pd.DataFrame({"method": ["a", "a", "b", "b", "b"],
    ...                       "mse": [1.0, 3.0, 2.0, 2.0, 2.0]})
    >>> summarize(frame, by="method", value="mse")
      method  mean   se  n      std
    0      a   2.0  1.0  2  1.41...
    1      b   2.0  0.0  3  0.00...
    """
    from ._study import _import_pandas

    pd = _import_pandas("summarize")
    if not isinstance(frame, pd.DataFrame):
        frame = pd.DataFrame.from_records(list(frame))
    by = [by] if isinstance(by, str) else list(by)
    if not isinstance(value, str):
        raise TypeError(f"value must be one column name (str), got {value!r}")
    missing = [c for c in [*by, value] if c not in frame.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the frame; it has {list(frame.columns)}")
    clash = [c for c in by if c in _STATS]
    if clash:
        raise ValueError(
            f"grouping column(s) {clash} clash with the summary columns {list(_STATS)}; "
            f"rename them first, e.g. frame.rename(columns={{{clash[0]!r}: "
            f"{clash[0] + '_'!r}}})"
        )
    if value in by:
        raise ValueError(f"value {value!r} is also a grouping column in by={by}")
    values = frame[value]
    if not (pd.api.types.is_numeric_dtype(values) or values.isna().all()):
        raise TypeError(f"column {value!r} is not numeric (dtype {values.dtype})")
    values = values.astype(float)
    # Every group is summarised on its values over a power of two near its
    # largest finite magnitude (an exact division), so that the squares of
    # the standard deviation neither underflow nor overflow at any scale.
    keys = [frame[c] for c in by] if by else [pd.Series(0, index=values.index)]
    magnitude = values.abs().where(np.isfinite(values))
    top = magnitude.groupby(keys, sort=True, dropna=False).transform("max").to_numpy()
    top = np.where(np.isfinite(top) & (top > 0), top, 1.0)
    exponent = pd.Series(np.frexp(top)[1], index=values.index)
    scaled = pd.Series(np.ldexp(values.to_numpy(), -exponent.to_numpy()), index=values.index)
    table = scaled.groupby(keys, sort=True, dropna=False).agg(["mean", "std", "count"])
    e = exponent.groupby(keys, sort=True, dropna=False).max().to_numpy(float)
    e = np.nan_to_num(e, nan=0.0).astype(int)  # 0 for an empty (unobserved) group
    table = table.reset_index() if by else table.reset_index(drop=True)
    table = table.rename(columns={"count": "n"})
    table["n"] = table["n"].astype(int)
    se = table["std"].to_numpy() / np.sqrt(table["n"].where(table["n"] > 0).to_numpy(float))
    with np.errstate(over="ignore", under="ignore"):
        for name, v in (("mean", table["mean"].to_numpy()), ("std", table["std"].to_numpy())):
            table[name] = np.ldexp(v, e)
            overflow = np.isfinite(v) & ~np.isfinite(table[name].to_numpy())
            if overflow.any():
                raise ValueError(
                    f"column {value!r}: the {name} of a group overflows float64 (values up "
                    f"to {np.max(np.abs(magnitude)):.3g}); rescale the column"
                )
        table["se"] = np.ldexp(se, e)
    table = table[[*by, *_STATS]]
    table.attrs["value"] = value
    return table


def format_summary(table, *, index, columns=None, digits=3, markdown=False):
    """A wide table of ``"mean ± se"`` strings, e.g. settings x methods, for reports.

    Parameters
    ----------
    table : pandas.DataFrame
        Output of :func:`summarize` (columns ``mean`` and ``se``).
    index : str or list of str
        Columns that become the rows (e.g. ``["delta", "eps"]``).
    columns : str, optional
        Column whose levels become the columns (e.g. ``"method"``); ``None``
        gives one column, ``"mean ± se"``.
    digits : int, default=3
        Significant digits of the mean and the standard error.
    markdown : bool, default=False
        Return a Markdown table (str) instead of a DataFrame.

    Returns
    -------
    wide : pandas.DataFrame or str

    See Also
    --------
    summarize : The table it formats.
    plot_summary : The same table as a figure.

    Examples
    --------
    >>> import pandas as pd
    >>> table = pd.DataFrame({"delta": [0.1, 0.1, 0.5, 0.5], "method": ["a", "b"] * 2,
    ...                       "mean": [1.0, 2.0, 0.25, 0.5], "se": [0.01, 0.02, 0.001, 0.1]})
    >>> print(format_summary(table, index="delta", columns="method", markdown=True))
    | delta | a | b |
    |---|---|---|
    | 0.1 | 1 ± 0.01 | 2 ± 0.02 |
    | 0.5 | 0.25 ± 0.001 | 0.5 ± 0.1 |
    """
    index = [index] if isinstance(index, str) else list(index)
    needed = [*index, "mean", "se", *([columns] if columns is not None else [])]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the table; it has {list(table.columns)}")
    if isinstance(digits, bool) or not isinstance(digits, int) or digits < 1:
        raise ValueError(f"digits must be an int >= 1, got {digits!r}")
    text = [
        f"{m:.{digits}g} ± {e:.{digits}g}" for m, e in zip(table["mean"], table["se"], strict=True)
    ]
    cells = table[index + ([columns] if columns is not None else [])].copy()
    cells["mean ± se"] = text
    if columns is None:
        wide = cells.set_index(index)
    else:
        if cells.duplicated(subset=[*index, columns]).any():
            raise ValueError(
                f"several rows per ({', '.join(index)}, {columns}): add the other varying "
                "columns to index"
            )
        wide = cells.pivot(index=index, columns=columns, values="mean ± se")
        wide.columns.name = None
    if not markdown:
        return wide
    flat = wide.reset_index()
    head = [str(c) for c in flat.columns]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for row in flat.itertuples(index=False):
        lines.append("| " + " | ".join("" if _isna(v) else str(v) for v in row) + " |")
    return "\n".join(lines)


def _isna(v):
    return v is None or (isinstance(v, float) and math.isnan(v))


class LogLogFit(NamedTuple):
    """Line through ``(log x, log y)``: ``log y = intercept + slope log x``.

    Natural logarithms; ``slope`` does not depend on the base.
    ``slope_se`` and ``intercept_se`` are standard errors (NaN for an
    unweighted fit of 2 points, which has no residual to estimate the noise
    from); ``ci_low`` and ``ci_high`` the normal interval of the slope at the
    fit's ``level``. Built by :func:`fit_loglog_slope`.

    Parameters
    ----------
    slope : float
        The exponent of ``y ~ C x**slope``.
    intercept : float
        ``log C``.
    slope_se : float
        Standard error of ``slope``.
    intercept_se : float
        Standard error of ``intercept``.
    n : int
        Number of points fitted.
    ci_low : float
        Lower end of the slope's interval.
    ci_high : float
        Upper end of the slope's interval.

    See Also
    --------
    fit_loglog_slope : Returns it.

    Examples
    --------
    >>> from mvlearn_ext.studies import fit_loglog_slope
    >>> fit = fit_loglog_slope([10, 100, 1000], [1.0, 0.1, 0.01])
    >>> round(fit.slope, 6), fit.n
    (-1.0, 3)
    """

    slope: float
    intercept: float
    slope_se: float
    intercept_se: float
    n: int
    ci_low: float
    ci_high: float


def fit_loglog_slope(x, y, se=None, *, level=0.95):
    """Fit ``y ~ C x**slope`` by least squares on log-log axes, with standard errors.

    Without ``se``, ordinary least squares with the residual variance. With
    ``se`` (the standard errors of the ``y``, e.g. of Monte Carlo means), weighted
    least squares with the delta-method variance ``(se / y)^2`` of each
    ``log y``, whose standard errors then come from those variances; a zero
    ``se`` (a deterministic point) falls back to ordinary least squares. The
    errors cover the noise of the ``y`` only, not a curvature of the curve
    (pre-asymptotic terms).

    Parameters
    ----------
    x, y : array-like of shape (n,)
        Positive, finite values (e.g. horizons ``T`` and mean regrets), n >= 2
        with at least two distinct ``x``.
    se : array-like of shape (n,) or None, default=None
        Non-negative standard errors of ``y``.
    level : float, default=0.95
        Coverage of the slope's normal interval, in (0, 1).

    Returns
    -------
    fit : LogLogFit
        ``slope``, ``intercept`` (of ``log y`` at ``log x = 0``), their
        standard errors, ``n``, and the slope's interval.

    See Also
    --------
    LogLogFit : The result.
    summarize : The means and standard errors it can weight by.

    Examples
    --------
    >>> T = np.array([2.0**k for k in range(8, 15)])
    >>> fit = fit_loglog_slope(T, 3.0 * T**-1.5)
    >>> round(fit.slope, 6), round(float(np.exp(fit.intercept)), 6), fit.n
    (-1.5, 3.0, 7)
    """
    from scipy.stats import norm

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or x.shape != y.shape:
        raise ValueError(
            f"x and y must be 1-d of the same length, got shapes {x.shape} and {y.shape}"
        )
    for name, v in (("x", x), ("y", y)):
        if not np.all(np.isfinite(v)) or np.any(v <= 0):
            raise ValueError(f"{name} must be finite and positive for a log-log fit")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    n = x.size
    lx, ly = np.log(x), np.log(y)
    if n < 2 or np.ptp(lx) == 0:
        raise ValueError("a log-log fit needs at least two distinct x values")
    if se is not None:
        se = np.asarray(se, dtype=float)
        if se.shape != y.shape or not np.all(np.isfinite(se)) or np.any(se < 0):
            raise ValueError(f"se must hold {n} finite values >= 0, one per y")
    if se is not None and np.all(se > 0):
        w = (y / se) ** 2
        X = np.column_stack([np.ones(n), lx])
        cov = np.linalg.inv(X.T @ (w[:, None] * X))
        intercept, slope = (float(v) for v in cov @ X.T @ (w * ly))
        slope_se, intercept_se = math.sqrt(cov[1, 1]), math.sqrt(cov[0, 0])
    else:
        mx = lx.mean()
        sxx = float(np.sum((lx - mx) ** 2))
        slope = float(np.sum((lx - mx) * (ly - ly.mean())) / sxx)
        intercept = float(ly.mean() - slope * mx)
        if n > 2:
            resid = ly - (intercept + slope * lx)
            s2 = float(resid @ resid) / (n - 2)
            slope_se = math.sqrt(s2 / sxx)
            intercept_se = math.sqrt(s2 * (1.0 / n + mx * mx / sxx))
        else:
            slope_se = intercept_se = math.nan
    z = float(norm.ppf(0.5 + level / 2.0))
    return LogLogFit(
        slope, intercept, slope_se, intercept_se, n, slope - z * slope_se, slope + z * slope_se
    )
