"""Missing-view patterns and the masking rules of CIMLN (NumPy).

CIMLN: causal-invariant meta-learning for unbalanced incomplete multi-view
clustering (ICML 2026, OpenReview FlIaRXdJ1b; authors' code
``jinjiaqi1998/CIMLN``). The unbalanced protocol below follows that code's
``get_mask_unbalance``; the view-targeted counterfactual masking follows the
paper's statement that low-missing-rate views are masked (the code masks
uniformly, available as ``mode="uniform"``).
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from mvlearn_ext.utils._validation import (
    as_random_state,
    check_magnitude,
    integer_array,
    max_abs_units,
    real_array,
    validate_views,
)

__all__ = [
    "context_statistic",
    "counterfactual_mask",
    "counterfactual_view_probs",
    "make_unbalanced_mask",
    "mask_from_nan",
    "mask_views",
    "mean_impute",
    "view_miss_probabilities",
]

# Per-view miss probabilities of the authors' code, by number of views.
_MISS_TABLE = {
    2: (0.0, 1.0),
    3: (0.0, 0.5, 1.0),
    4: (0.0, 0.25, 0.75, 1.0),
    5: (0.0, 0.25, 0.5, 0.75, 1.0),
    6: (0.0, 0.2, 0.4, 0.6, 0.8, 1.0),
}


def view_miss_probabilities(n_views):
    """The miss probabilities ``mu_v`` of the unbalanced protocol (2 to 6 views).

    The table of the authors' code: from 0 (never missing) to 1 (always
    missing among incomplete samples); for 4 views it is ``[0, .25, .75, 1]``,
    not an evenly spaced grid.

    Parameters
    ----------
    n_views : int
        The number of views, 2 to 6.

    Returns
    -------
    mu : ndarray of shape (n_views,)
        The miss probability of every view, increasing from 0 to 1.

    See Also
    --------
    make_unbalanced_mask : The protocol that uses them.

    Examples
    --------
    >>> from mvlearn_ext.incomplete import view_miss_probabilities
    >>> view_miss_probabilities(4).tolist()
    [0.0, 0.25, 0.75, 1.0]
    """
    if not isinstance(n_views, Integral) or n_views not in _MISS_TABLE:
        raise ValueError(f"n_views must be an int in 2..6 (the protocol's table), got {n_views!r}")
    return np.array(_MISS_TABLE[n_views])


def make_unbalanced_mask(n_samples, n_views, *, missing_rate=0.5, random_state=None):
    """An unbalanced missing-view pattern (CIMLN's protocol).

    ``floor(missing_rate * n_samples)`` samples, chosen at random, are
    incomplete. Each incomplete sample first gets one guaranteed view,
    drawn without replacement from a shuffled pool that holds
    ``round(n_incomplete * (1 - mu_v))`` copies of view ``v`` (topped up
    with view 0 if rounding leaves it short); each of its other views is
    then dropped with probability ``mu_v``
    (:func:`view_miss_probabilities`). View 0 (``mu = 0``) is never missing
    and the view with ``mu = 1`` is always missing in incomplete samples, so
    every selected sample is indeed incomplete and every sample keeps a view.

    Parameters
    ----------
    n_samples : int
    n_views : int in 2..6
    missing_rate : float in [0, 1], default=0.5
        The share ``eta`` of incomplete samples.
    random_state : int, RandomState or Generator instance or None, default=None

    Returns
    -------
    mask : ndarray of bool, shape (n_samples, n_views)
        ``True`` where the view is observed.

    See Also
    --------
    make_rate_mask : A mask with given observation rates.
    view_miss_probabilities : The miss probabilities of the protocol.

    Examples
    --------
    >>> from mvlearn_ext.incomplete import make_unbalanced_mask
    >>> m = make_unbalanced_mask(1000, 3, random_state=0)
    >>> int((~m.all(axis=1)).sum()), bool(m[:, 0].all()), bool(m.any(axis=1).all())
    (500, True, True)
    """
    if isinstance(n_samples, bool) or not isinstance(n_samples, Integral) or n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    mu = view_miss_probabilities(n_views)
    if (
        isinstance(missing_rate, bool)
        or not isinstance(missing_rate, Real)
        or not 0 <= missing_rate <= 1
    ):
        raise ValueError(f"missing_rate must be a float in [0, 1], got {missing_rate!r}")
    rng = as_random_state(random_state)
    n_inc = int(np.floor(missing_rate * n_samples))
    mask = np.ones((n_samples, n_views), dtype=bool)
    if n_inc == 0:
        return mask
    rows = rng.choice(n_samples, size=n_inc, replace=False)
    quota = np.rint(n_inc * (1 - mu)).astype(int)
    pool = np.repeat(np.arange(n_views), quota)
    if pool.size < n_inc:
        pool = np.concatenate([pool, np.zeros(n_inc - pool.size, dtype=int)])
    rng.shuffle(pool)
    guaranteed = pool[:n_inc]
    drop = rng.uniform(size=(n_inc, n_views)) < mu
    drop[np.arange(n_inc), guaranteed] = False
    drop[:, mu == 1.0] = True  # the always-missing view, even if it were guaranteed
    drop[:, 0] = False
    mask[rows] = ~drop
    return mask


def _as_bool(value, name):
    """``value`` as a bool array: booleans, or the integers (or whole floats) 0 and 1."""
    try:
        b = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise TypeError(f"{name} must be an array of booleans, got a ragged sequence") from exc
    if b.dtype == bool:
        return b
    if b.dtype.kind == "O":
        raise TypeError(f"{name} must be an array of booleans, got {type(value).__name__}")
    return integer_array(b, name, low=0, high=1, allow_empty=True).astype(bool)


def _check_mask(mask, name="mask", *, shape=None):
    """``mask`` as a 2-D bool array (of ``shape`` if given) in which every sample has a view."""
    m = _as_bool(mask, name)
    if m.ndim != 2:
        raise ValueError(f"{name} must be 2-D (n_samples, n_views), got {m.ndim}-D")
    if shape is not None and m.shape != shape:
        raise ValueError(f"{name} has shape {m.shape}, expected {shape}")
    if m.shape[0] == 0:
        raise ValueError(f"{name} has no samples (shape {m.shape})")
    if not m.any(axis=1).all():
        bad = int(np.flatnonzero(~m.any(axis=1))[0])
        raise ValueError(f"{name}: sample {bad} has no observed view")
    return m


def mask_from_nan(Xs):
    """The observed-view mask of views whose missing rows are all-NaN.

    A row is missing in view ``v`` when every entry is NaN; a row with only
    some NaN entries is an error (a partially observed view is not a
    missing view).

    Parameters
    ----------
    Xs : list of array-like, each of shape (n_samples, n_features_v)
        The views, a missing row being all-NaN.

    Returns
    -------
    mask : ndarray of bool, shape (n_samples, n_views)
        True where a view of a sample is observed.

    See Also
    --------
    mask_views : The reverse: NaN rows from a mask.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.incomplete import mask_from_nan
    >>> mask_from_nan([np.array([[1.0], [np.nan]]), np.ones((2, 2))]).tolist()
    [[True, True], [False, True]]
    """
    return _mask_from_nan(validate_views(Xs, ensure_all_finite="allow-nan"))


def _mask_from_nan(Xs):
    """:func:`mask_from_nan` on validated views."""
    cols = []
    for v, X in enumerate(Xs):
        nan = np.isnan(X)
        full = nan.all(axis=1)
        partial = nan.any(axis=1) & ~full
        if partial.any():
            raise ValueError(
                f"view {v}: row {int(np.flatnonzero(partial)[0])} is partly NaN; a missing "
                "view must be an all-NaN row"
            )
        cols.append(~full)
    return np.column_stack(cols)


def _observed_rows(X, obs, v):
    """A float64 copy of view ``v`` with its unobserved rows set to 0, the observed ones checked.

    The observed rows must be finite; the unobserved ones may hold anything
    numeric (NaN included).
    """
    return real_array(
        np.where(obs[:, None], X, 0.0), f"view {v} of Xs (in the rows mask marks observed)"
    )


def mask_views(Xs, mask):
    """Copies of the views with the unobserved rows set to NaN.

    Parameters
    ----------
    Xs : list of array-like, each of shape (n_samples, n_features_v)
        The views; the values of unobserved rows are ignored (they may be
        NaN, so masking already masked views is allowed), those of observed
        rows must be finite, and small enough that their squares do not
        overflow (the estimators that take masked views square them).
    mask : array-like of bool, shape (n_samples, n_views)
        True where a view of a sample is observed; every sample needs one.

    Returns
    -------
    Xs_masked : list of ndarray
        Float copies of the views, unobserved rows all-NaN.

    See Also
    --------
    mask_from_nan : The reverse: a mask from NaN rows.
    mean_impute : Fills the missing rows instead.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([[True, True], [True, False], [False, True]])
    >>> from mvlearn_ext.incomplete import mask_views
    >>> Xs = mask_views([np.ones((3, 1)), np.ones((3, 2))], mask)
    >>> Xs[0].ravel().tolist()
    [1.0, 1.0, nan]
    """
    Xs = validate_views(Xs, ensure_all_finite=False)  # NaN may fill the unobserved rows
    m = _check_mask(mask, shape=(Xs[0].shape[0], len(Xs)))
    out = []
    for v, X in enumerate(Xs):
        X = _observed_rows(X, m[:, v], v)
        check_magnitude(X, f"view {v} of Xs")  # the masked views are for estimators that square
        X[~m[:, v]] = np.nan
        out.append(X)
    return out


def mean_impute(Xs, mask):
    """Fill each view's missing rows with the mean of its observed rows (the baseline).

    Parameters
    ----------
    Xs : list of array-like, each of shape (n_samples, n_features_v)
        The views; the values of unobserved rows are ignored (they may be
        NaN), those of observed rows must be finite.
    mask : array-like of bool, shape (n_samples, n_views)
        True where a view of a sample is observed.

    Returns
    -------
    Xs_imputed : list of ndarray
        Float copies of the views; a view with no observed row is filled
        with zeros. The means are taken in units where each column's largest
        observed magnitude is 1, so they neither overflow nor underflow.

    See Also
    --------
    mask_views : Marks the missing rows with NaN instead.
    CIMLN : Clustering that needs no imputation.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([[True, True], [True, False], [False, True]])
    >>> from mvlearn_ext.incomplete import mean_impute
    >>> Xs = mean_impute([np.array([[1.0], [3.0], [9.0]]), np.ones((3, 1))], mask)
    >>> Xs[0].ravel().tolist()
    [1.0, 3.0, 2.0]
    """
    Xs = validate_views(Xs, ensure_all_finite=False)  # NaN may fill the unobserved rows
    m = _check_mask(mask, shape=(Xs[0].shape[0], len(Xs)))
    out = []
    for v, X in enumerate(Xs):
        obs = m[:, v]
        X = _observed_rows(X, obs, v)
        if obs.any():
            unit = max_abs_units(X[obs])
            X[~obs] = (X[obs] / unit).mean(axis=0) * unit
        else:
            X[~obs] = 0.0
        out.append(X)
    return out


def counterfactual_view_probs(mask, beta=0.3, *, mode="observation"):
    """Per-view probabilities ``beta_v`` of the counterfactual masking.

    ``mode="observation"`` (default, the paper's intent: mask the
    *low-missing-rate* views): ``beta_v = min(1, beta V o_v / sum_u o_u)``
    with ``o_v`` the observation rate of view ``v``, so the mean over views
    is ``beta`` before clipping and a view observed more often is masked
    more often. The normalisation by the mean observation rate is this
    implementation's choice. ``mode="uniform"`` (the authors' code):
    ``beta_v = beta``.

    Parameters
    ----------
    mask : array-like of bool, shape (n_samples, n_views)
        True where a view of a sample is observed.
    beta : float, default=0.3
        The mean masking probability over views, in [0, 1].
    mode : {"observation", "uniform"}, default="observation"
        Scale ``beta`` by each view's observation rate, or use it for
        every view.

    Returns
    -------
    view_probs : ndarray of shape (n_views,)
        ``beta_v``, each in [0, 1].

    See Also
    --------
    counterfactual_mask : Draws the mask.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([[True, True], [True, False], [False, True]])
    >>> from mvlearn_ext.incomplete import counterfactual_view_probs
    >>> counterfactual_view_probs(mask, 0.3, mode="uniform").tolist()
    [0.3, 0.3]
    """
    m = _check_mask(mask)
    if isinstance(beta, bool) or not isinstance(beta, Real) or not 0 <= beta <= 1:
        raise ValueError(f"beta must be a float in [0, 1], got {beta!r}")
    V = m.shape[1]
    if mode == "uniform":
        return np.full(V, float(beta))
    if mode == "observation":
        o = m.mean(axis=0)
        return np.minimum(1.0, beta * V * o / o.sum())
    raise ValueError(f"mode must be 'observation' or 'uniform', got {mode!r}")


def counterfactual_mask(mask, view_probs, *, keep_one=True, random_state=None):
    """``m' = m * Bernoulli(1 - beta_v)``: drop observed views at random.

    Parameters
    ----------
    mask : array-like of bool, shape (n_samples, n_views)
    view_probs : array-like of shape (n_views,)
        ``beta_v`` (:func:`counterfactual_view_probs`).
    keep_one : bool, default=True
        A sample's last observed view is never masked (one of its dropped
        views, chosen at random, is restored). The authors' code has no such
        guard (``False``), so a sample can lose every view.
    random_state : int, RandomState or Generator instance or None, default=None

    Returns
    -------
    cf_mask : ndarray of bool, a subset of ``mask``

    See Also
    --------
    counterfactual_view_probs : The masking probabilities.

    Examples
    --------
    >>> import numpy as np
    >>> mask = np.array([[True, True], [True, False], [False, True]])
    >>> from mvlearn_ext.incomplete import counterfactual_mask
    >>> new = counterfactual_mask(mask, [0.5, 0.5], random_state=0)
    >>> bool(new.any(axis=1).all()), bool((new <= mask).all())  # a view kept, none added
    (True, True)
    """
    m = _check_mask(mask)
    p = real_array(view_probs, "view_probs", ndim=1)
    if p.shape != (m.shape[1],) or (p < 0).any() or (p > 1).any():
        raise ValueError(f"view_probs must be {m.shape[1]} probabilities, got {view_probs!r}")
    rng = as_random_state(random_state)
    cf = m & (rng.uniform(size=m.shape) >= p)
    if keep_one:
        empty = np.flatnonzero(~cf.any(axis=1))
        for i in empty:
            cf[i, rng.choice(np.flatnonzero(m[i]))] = True
    return cf


def context_statistic(H, complete):
    """CIMLN's context ``c_v = mean_{i complete} (h_bar_i * h_{i,v})`` for every view.

    Parameters
    ----------
    H : array-like of shape (n_views, n_samples, d)
        View embeddings.
    complete : array-like of bool, shape (n_samples,)
        The complete samples; ``h_bar_i`` is the mean of sample ``i``'s view
        embeddings.

    Returns
    -------
    C : ndarray of shape (n_views, d)

    See Also
    --------
    CIMLN : The estimator that uses it.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.incomplete import context_statistic
    >>> H = np.ones((2, 3, 4))  # 2 views, 3 samples, 4 dimensions
    >>> context_statistic(H, [True, True, False]).shape
    (2, 4)
    """
    H = real_array(H, "H", ndim=3)
    check_magnitude(H, "H")
    c = _as_bool(complete, "complete")
    if c.shape != (H.shape[1],):
        raise ValueError(
            f"complete must have shape ({H.shape[1]},) (n_samples of H), got {c.shape}"
        )
    if not c.any():
        raise ValueError("context_statistic needs at least one complete sample")
    Hc = H[:, c]
    hbar = Hc.mean(axis=0)
    return (hbar[None] * Hc).mean(axis=1)
