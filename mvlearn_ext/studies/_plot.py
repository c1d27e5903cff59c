"""Plot a summary table (matplotlib, imported on first use)."""

from __future__ import annotations

import numpy as np

__all__ = ["plot_summary"]

_STYLES = ("band", "bar", "none")


def plot_summary(
    table,
    *,
    x,
    y="mean",
    hue=None,
    err="se",
    err_scale=1.0,
    style="band",
    logx=False,
    logy=False,
    ax=None,
    marker="o",
    title=None,
):
    """Draw ``y`` against ``x``, one line per ``hue`` level, with error bands or bars.

    Parameters
    ----------
    table : pandas.DataFrame
        For example the output of :func:`summarize`. Within a ``hue`` level
        every ``x`` must appear once.
    x : str
        Column on the horizontal axis (numeric).
    y : str, default="mean"
        Column on the vertical axis.
    hue : str, optional
        Column whose levels get a line each (legend), in order of appearance.
    err : str or None, default="se"
        Column of half-widths of the error band/bars, multiplied by
        ``err_scale`` (e.g. 1.96 for normal 95% intervals). ``None``: none.
    err_scale : float, default=1.0
    style : {"band", "bar", "none"}, default="band"
        Shaded band (``fill_between``), error bars, or no error display.
    logx, logy : bool, default=False
        Logarithmic axes. With ``logy`` the lower edge of a band is clipped
        at a tiny positive value where ``y - err <= 0``.
    ax : matplotlib.axes.Axes, optional
        Draw here; default a new figure's axes.
    marker : str, default="o"
    title : str, optional

    Returns
    -------
    ax : matplotlib.axes.Axes

    Raises
    ------
    ImportError
        If matplotlib is not installed (extra ``bench`` or ``docs``).
    ValueError
        If a column is missing or an ``x`` repeats within a ``hue`` level.

    See Also
    --------
    summarize : The table it draws.
    format_summary : The same table as text.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import pandas as pd
    >>> table = pd.DataFrame({"T": [8, 16, 32] * 2, "method": ["a"] * 3 + ["b"] * 3,
    ...                       "mean": [1.0, 0.5, 0.25, 2.0, 1.0, 0.5], "se": [0.1] * 6})
    >>> ax = plot_summary(table, x="T", hue="method", logx=True, logy=True)
    >>> [line.get_label() for line in ax.get_lines()]
    ['a', 'b']
    >>> ax.get_xscale(), ax.get_yscale()
    ('log', 'log')
    """
    from ..utils._optional import import_optional

    import_optional("matplotlib", feature="plot_summary")
    import matplotlib.pyplot as plt

    if style not in _STYLES:
        raise ValueError(f"style must be one of {_STYLES}, got {style!r}")
    needed = [c for c in (x, y, hue, err) if c is not None]
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise ValueError(f"column(s) {missing} not in the table; it has {list(table.columns)}")
    if ax is None:
        _, ax = plt.subplots()
    groups = [(None, table)] if hue is None else list(table.groupby(hue, sort=False))
    for level, part in groups:
        if part[x].duplicated().any():
            raise ValueError(
                f"{x!r} repeats within {'the table' if hue is None else f'{hue}={level!r}'}: "
                "summarize by the other varying columns too and pass one of them as hue, "
                "or filter the table"
            )
        part = part.sort_values(x)
        xs = part[x].to_numpy(dtype=float)
        ys = part[y].to_numpy(dtype=float)
        label = None if hue is None else str(level)
        (line,) = ax.plot(xs, ys, marker=marker, label=label)
        if err is None or style == "none":
            continue
        half = err_scale * part[err].to_numpy(dtype=float)
        half = np.where(np.isfinite(half), half, 0.0)
        if style == "band":
            lower = ys - half
            if logy:
                lower = np.where(lower > 0, lower, np.nextafter(0, 1) + ys * 1e-3)
            ax.fill_between(xs, lower, ys + half, color=line.get_color(), alpha=0.2, lw=0)
        else:
            ax.errorbar(xs, ys, yerr=half, fmt="none", ecolor=line.get_color(), capsize=3)
    if logx:
        ax.set_xscale("log")
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel(x)
    value = getattr(table, "attrs", {}).get("value")
    ax.set_ylabel(f"{y} of {value}" if value and y in ("mean",) else y)
    if hue is not None:
        ax.legend(title=hue)
    if title is not None:
        ax.set_title(title)
    return ax
