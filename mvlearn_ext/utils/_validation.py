"""The multi-view input contract: one function validates a list of views.

Every estimator of :mod:`mvlearn_ext` that learns from several views takes
them as ``Xs``, a list of arrays that share their first axis (the samples)::

    Xs = [X_0, X_1, ..., X_{V-1}]    X_v of shape (n_samples, n_features_v)

:func:`validate_views` is the single entry point that turns what a user passes
into that list, once, at the top of ``fit``/``predict``/``transform``, with
errors that name the view at fault and the problem. The drivers and kernels
below the estimators assume its output and check nothing.
:func:`check_views_consistent` records the shape of the views at ``fit`` and
compares it at ``predict``/``transform`` time, the multi-view counterpart of
scikit-learn's ``n_features_in_`` check. :func:`check_Xs` is the same
contract under mvlearn's name and signature.
"""

from __future__ import annotations

import numbers
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.utils import check_array, check_random_state
from sklearn.utils._param_validation import Interval
from sklearn.utils.validation import _get_feature_names

from mvlearn_ext.utils._warnings import warn

__all__ = [
    "LEARNING_RATE_CONSTRAINT",
    "WEIGHT_DECAY_CONSTRAINT",
    "as_real_array",
    "check_Xs",
    "check_layer_sizes",
    "check_magnitude",
    "check_views_consistent",
    "integer_array",
    "real_array",
    "refuse_strings",
    "validate_array",
    "validate_vector",
    "validate_views",
]

#: Floating dtypes kept as they are; any other numeric input becomes float64.
FLOAT_DTYPES = (np.float64, np.float32)

#: The constraint of every step size of a gradient-trained network (torch or
#: scikit-learn's MLP): positive and at most 1e6. Larger steps cannot train a
#: network on standardised data (the weights leave float32's range after one
#: step), and far above it the optimisers fail with overflow errors that do not
#: name the parameter.
LEARNING_RATE_CONSTRAINT = [Interval(Real, 0, 1e6, closed="right")]

#: The constraint of every weight decay: in [0, 1e6]. Above 1e6 the decay
#: outweighs the data term of any standardised fit (the weights only shrink to
#: zero), and far above it the decayed gradient overflows inside the optimiser.
WEIGHT_DECAY_CONSTRAINT = [Interval(Real, 0, 1e6, closed="both")]


def _plural(count, word):
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def _as_list_of_views(Xs, name):
    """The views of ``Xs`` as a Python list, without converting them."""
    if isinstance(Xs, (list, tuple)):
        return list(Xs)
    if sp.issparse(Xs):
        raise TypeError(
            f"{name} is a single scipy sparse matrix; a multi-view estimator needs a list "
            "of views [X_0, X_1, ...], each of shape (n_samples, n_features_v)"
        )
    if isinstance(Xs, np.ndarray):
        if Xs.ndim == 3:
            return list(Xs)
        if Xs.ndim == 1 and Xs.dtype == object:
            return list(Xs)
    ndim = getattr(Xs, "ndim", None)
    if ndim == 2:
        raise TypeError(
            f"{name} is a single 2-D {type(Xs).__name__} of shape {tuple(Xs.shape)}; a "
            "multi-view estimator needs a list of views [X_0, X_1, ...], each of shape "
            "(n_samples, n_features_v). Pass [X] for one view, split the columns with "
            "[X[:, :k], X[:, k:]], or wrap the estimator in "
            "mvlearn_ext.compose.MultiViewAdapter to give it a single array"
        )
    raise TypeError(
        f"{name} must be a list or tuple of views (array-likes of shape "
        "(n_samples, n_features_v)) or a 3-D array of shape (n_views, n_samples, "
        f"n_features); got {type(Xs).__name__}"
        + (f" with ndim={ndim}" if ndim is not None else "")
    )


def _first_bad_entry(values, mask_fn):
    flat = np.flatnonzero(mask_fn(values))[0]
    return np.unravel_index(flat, values.shape)


def _check_finite(X, where, allow_nan):
    """Raise a ValueError naming ``where`` if ``X`` holds NaN or infinity."""
    values = X.data if sp.issparse(X) else X
    if values.dtype.kind not in "fc" or values.size == 0:
        return
    # Fast path: the sum of finite values is finite unless it overflows, in
    # which case the exact test below runs and finds nothing to complain of.
    with np.errstate(over="ignore", invalid="ignore"):
        if np.isfinite(values.sum()):
            return
    has_nan = (not allow_nan) and bool(np.isnan(values).any())
    has_inf = bool(np.isinf(values).any())
    if not (has_nan or has_inf):
        return
    if has_nan and has_inf:
        what, mask_fn = "NaN and infinity", lambda a: ~np.isfinite(a)
    elif has_nan:
        what, mask_fn = "NaN", np.isnan
    else:
        what, mask_fn = "infinity", np.isinf
    if sp.issparse(X):
        location = ""
    elif values.ndim == 2:
        row, col = _first_bad_entry(values, mask_fn)
        location = f" (first at sample {row}, feature {col})"
    else:
        location = f" (first at entry {', '.join(map(str, _first_bad_entry(values, mask_fn)))})"
    hint = "; impute or drop the missing values first" if has_nan else ""
    raise ValueError(f"{where} contains {what}{location}{hint}")


def _sum_of_squares(values):
    """The sum of squares of a float array in one BLAS pass (inf on overflow)."""
    if not (values.flags.c_contiguous or values.flags.f_contiguous):
        values = np.ascontiguousarray(values)
    flat = values.ravel(order="K")
    with np.errstate(over="ignore", invalid="ignore"):
        return flat.dtype.type(np.dot(flat, flat))


def as_real_array(value, name):
    """``value`` as a float64 array; ragged lists, strings, complex and non-numbers are refused.

    The errors name ``name``: a ``TypeError`` for what is not a numeric array
    (strings of digits included, as in scikit-learn), a ``ValueError`` for
    complex values. Finiteness is not checked here (see :func:`real_array`).
    """
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged nested lists
        raise TypeError(
            f"{name} must be a numeric array (ragged lists are not), got {type(value).__name__}"
        ) from exc
    if raw.dtype.kind == "c":
        raise ValueError(f"{name} holds complex values; only real numbers are supported")
    refuse_strings(raw, name)
    try:
        return raw.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be a numeric array, got {type(value).__name__} of dtype {raw.dtype}"
        ) from exc


def refuse_strings(value, name):
    """Raise a TypeError naming ``name`` if ``value`` is an array (or nested list) of strings.

    For entry points that convert with scikit-learn's ``validate_data`` and a
    float ``dtype``, which parses strings of digits as numbers: checked before
    that conversion, without copying the data (:func:`as_real_array` refuses
    strings itself). A ragged list is left to the conversion to report.
    """
    dtype = getattr(value, "dtype", None)
    if dtype is None and isinstance(value, (list, tuple)):
        try:
            dtype = np.asarray(value).dtype
        except ValueError:
            return
    if getattr(dtype, "kind", None) in ("U", "S", "V"):
        raise TypeError(f"{name} must be a numeric array, got dtype {dtype}")


def _check_ndim(A, name, ndim):
    if ndim is None:
        return
    allowed = (ndim,) if isinstance(ndim, numbers.Integral) else tuple(ndim)
    if A.ndim not in allowed:
        wanted = " or ".join(f"{d}-D" for d in allowed)
        raise ValueError(f"{name} must be {wanted}, got shape {A.shape}")


def real_array(value, name, *, ndim=None, allow_nan=False, allow_empty=False):
    """``value`` as a float64 array that a numeric routine can use, or an error naming ``name``.

    The array checks of the package's public functions (the estimators use
    :func:`validate_views`, :func:`validate_array` and :func:`validate_vector`).

    Parameters
    ----------
    value : array-like
    name : str
        How to name ``value`` in the messages.
    ndim : int, tuple of int or None, default=None
        The numbers of dimensions accepted (None: any).
    allow_nan : bool, default=False
        Keep NaN entries (where they mean "missing" to the caller).
    allow_empty : bool, default=False
        Accept an array with no entries.

    Returns
    -------
    ndarray of float64

    Raises
    ------
    TypeError
        For what is not a numeric array (ragged lists, strings, objects).
    ValueError
        For complex values, another number of dimensions, no entries, NaN or
        infinity.
    """
    A = as_real_array(value, name)
    _check_ndim(A, name, ndim)
    if A.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty (shape {A.shape})")
    _check_finite(A, name, allow_nan)
    return A


def integer_array(value, name, *, ndim=None, low=None, high=None, allow_empty=False):
    """``value`` as an int64 array of integers in ``[low, high]``, or an error naming ``name``.

    Floats are accepted when every entry is a whole number (labels read from a
    float array); booleans are not integers here.

    Raises
    ------
    TypeError
        For what is not a numeric array, and for booleans.
    ValueError
        For complex values, another number of dimensions, no entries, NaN,
        infinity, fractions, or an entry outside ``[low, high]``.
    """
    try:
        raw = np.asarray(value)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{name} must be an array of integers (ragged lists are not), "
            f"got {type(value).__name__}"
        ) from exc
    if raw.dtype.kind == "b":
        raise TypeError(f"{name} must hold integers, got booleans")
    if raw.dtype.kind in "iu":
        A = raw.astype(np.int64)
        _check_ndim(A, name, ndim)
    else:
        F = real_array(raw, name, ndim=ndim, allow_empty=True)
        if F.size and not np.all(F == np.round(F)):
            raise ValueError(f"{name} must hold whole numbers, got fractions")
        if F.size and np.abs(F).max() >= 2.0**62:
            raise ValueError(f"{name} holds integers too large for int64")
        A = F.astype(np.int64)
    if A.size == 0 and not allow_empty:
        raise ValueError(f"{name} is empty (shape {A.shape})")
    if A.size and low is not None and A.min() < low:
        raise ValueError(f"{name} must be >= {low}, got {A.min()}")
    if A.size and high is not None and A.max() > high:
        raise ValueError(f"{name} must be <= {high}, got {A.max()}")
    return A


def unit_exponent(*arrays):
    """``e`` with every finite entry of ``arrays`` below ``2**e`` in magnitude (0 if all are 0).

    Dividing by ``2**e`` (exact in binary floating point) brings the data to
    magnitudes below 1, where squares and squared differences neither
    overflow nor underflow whatever the units of the data; multiplying a
    result by the matching power of two restores the units exactly.
    """
    top = 0.0
    for a in arrays:
        a = np.abs(np.asarray(a, dtype=np.float64))
        top = max(top, float(a[np.isfinite(a)].max(initial=0.0)))
    return int(np.frexp(top)[1]) if top > 0 else 0


def unit_scaled(X):
    """``X`` over the power of two of :func:`unit_exponent`: magnitudes below 1, exactly.

    For computations whose result does not depend on a common scale of ``X``
    (ratios, argmins, simplex weights): their squares then neither overflow nor
    underflow, and at ordinary scales the result is the same bits.
    """
    return np.ldexp(X, -unit_exponent(X))


def max_abs_units(X):
    """Per column of ``X``, its largest magnitude (1 for an all-zero column).

    One of the column's own entries, so that ``X / max_abs_units(X)`` is the same
    array (to rounding) in any units of ``X``, bit for bit under a change of units
    by a power of two, and has no absolute floor (scikit-learn's ``MaxAbsScaler``
    treats columns near 1e-300 as constant): the unit-free coordinates of a fit.
    """
    top = np.max(np.abs(X), axis=0)
    return np.where(top > 0, top, 1.0)


def check_magnitude(X, name, *, allow_nan=False, compute_dtype=None):
    """Raise a ValueError naming ``name`` if ``X`` is too large to compute with.

    Least squares, distances, Gram matrices and standardisation all square
    the data: a finite input whose squares overflow (values of about 1e154
    and more in float64, 1e19 in float32) gives ``inf``/``NaN`` statistics
    deep inside a fit, or a silently wrong result. The check passes when the
    sum of squares of all entries, times 4 (squared differences of two
    entries and centred sums of squares stay below it), is finite. Call it on
    a validated float array (or sparse matrix); NaN and infinity are the
    business of the finiteness check, run before it.

    Parameters
    ----------
    X : ndarray or scipy sparse matrix
        A validated array.
    name : str
        How to name ``X`` in the message (``"X"``, ``"view 1 of Xs"``).
    allow_nan : bool, default=False
        Ignore NaN entries (for inputs where they mark missing values).
    compute_dtype : numpy float dtype, optional
        The dtype the computation runs in when it is not that of ``X`` (for
        example ``numpy.float32`` for a torch model fed float64 data): the
        squares must stay below its largest value.

    Raises
    ------
    ValueError
        If the sum of squares of ``X`` overflows its dtype. The message
        gives the largest absolute value.
    """
    values = X.data if sp.issparse(X) else X
    if values.dtype.kind != "f" or values.size == 0:
        return
    target = np.dtype(compute_dtype if compute_dtype is not None else values.dtype)
    limit = float(np.finfo(target).max) / 4

    def small_enough(v):
        with np.errstate(over="ignore", invalid="ignore"):
            return bool(_sum_of_squares(v) <= limit)

    if small_enough(values):
        return
    if allow_nan:
        values = values[~np.isnan(values)]
        if values.size == 0 or small_enough(values):
            return
    if not np.all(np.isfinite(values)):
        return  # NaN or infinity: reported by the finiteness check
    largest = float(np.abs(values).max())
    raise ValueError(
        f"{name} holds values too large for the computation (largest |value| "
        f"{largest:.3g}): their squares overflow {target.name} (max "
        f"{float(np.finfo(target).max):.3g}). Rescale it first, for example divide "
        f"it by {largest:.0e} or standardise it"
    )


def _ragged_message(rows, where):
    """The error of a view whose rows are not all sequences of the same length."""
    lengths = [len(row) if hasattr(row, "__len__") else None for row in rows]

    def describe(k):
        n = lengths[k]
        return f"row {k} is a single number" if n is None else f"row {k} has {_plural(n, 'value')}"

    mismatch = next((i for i, n in enumerate(lengths) if n != lengths[0]), None)
    if mismatch is None:  # same lengths: an entry is itself a sequence
        return (
            f"{where} is ragged: an entry of its rows is a sequence, not a number; every row "
            "must hold one number per feature"
        )
    return (
        f"{where} is ragged: {describe(0)} but {describe(mismatch)}; every row must hold "
        "one number per feature, the same number in every row"
    )


def _check_view(
    view, where, *, dtype, ensure_all_finite, accept_sparse, copy, order, one_of_views=True
):
    """Convert one view to a validated 2-D array (or sparse matrix)."""
    if sp.issparse(view):
        if not accept_sparse:
            raise TypeError(
                f"{where} is a scipy sparse matrix ({view.format}) but dense views are "
                "required; convert it with .toarray()"
            )
    elif isinstance(view, (list, tuple)):
        try:
            view = np.asarray(view)
        except ValueError as exc:
            raise ValueError(_ragged_message(view, where)) from exc
    kind = getattr(getattr(view, "dtype", None), "kind", None)
    if kind in ("U", "S", "V"):
        raise ValueError(
            f"{where} holds non-numeric values (dtype {view.dtype}); convert it to numbers "
            "(for example with an encoder) before passing it"
        )
    if kind == "c":
        raise ValueError(
            f"{where} holds complex values (dtype {view.dtype}): Complex data not "
            "supported; pass the real part, the modulus, or both as separate features"
        )
    try:
        view = check_array(
            view,
            accept_sparse=accept_sparse,
            dtype=dtype,
            order=order,
            copy=copy,
            ensure_all_finite=False,  # checked below, with a message naming the view
            ensure_2d=False,  # checked below, with a message naming the view
            allow_nd=True,
            ensure_min_samples=0,
            ensure_min_features=0,
            input_name=where,
        )
    except TypeError as exc:
        raise TypeError(f"{where} could not be converted to a numeric array: {exc}") from exc
    except ValueError as exc:
        if getattr(getattr(view, "dtype", None), "kind", None) == "O" and "sequence" in str(exc):
            # NumPy's "setting an array element with a sequence": rows of different lengths
            raise ValueError(_ragged_message(view, where)) from exc
        raise ValueError(f"{where} could not be converted to a numeric array: {exc}") from exc
    if view.ndim != 2:
        hint = (
            "; reshape a single feature with x.reshape(-1, 1)"
            if view.ndim == 1
            else " (a 3-D stack of views goes in place of the whole list, not inside it)"
            if view.ndim == 3 and one_of_views
            else ""
        )
        wanted = (
            "each view must be 2-D of shape (n_samples, n_features_v)"
            if one_of_views
            else "it must be 2-D of shape (n_samples, n_features)"
        )
        raise ValueError(f"{where} is {view.ndim}-D with shape {view.shape}, but {wanted}{hint}")
    if view.shape[1] == 0:
        raise ValueError(
            f"{where} has 0 features (shape {view.shape}); every view needs at least one"
        )
    if ensure_all_finite:
        allow_nan = ensure_all_finite == "allow-nan"
        _check_finite(view, where, allow_nan=allow_nan)
        check_magnitude(view, where, allow_nan=allow_nan)
    return view


def validate_array(X, name, *, dtype=FLOAT_DTYPES, ensure_all_finite=True, min_samples=1):
    """Validate one 2-D array with the messages of :func:`validate_views`.

    For estimators that take a single array (or several arrays that are not
    views, such as one per agent or per task): the same checks as for one
    view, with ``name`` in every message (ragged nested lists, strings,
    complex values, not 2-D, no features, NaN or infinity, values too large
    to square, too few rows).

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
    name : str
        How to name ``X`` in the messages (``"X"``, ``"Xs[2]"``).
    dtype : type, list of types or None, default=(numpy.float64, numpy.float32)
    ensure_all_finite : bool or "allow-nan", default=True
    min_samples : int, default=1

    Returns
    -------
    X : ndarray of shape (n_samples, n_features)

    """
    try:
        shape = np.shape(X) if not sp.issparse(X) else X.shape
    except ValueError:  # ragged: reported by _check_view
        shape = None
    if shape is not None and len(shape) == 2 and shape[1] == 0:
        # scikit-learn's wording, which its estimator checks expect
        raise ValueError(
            f"{name} has 0 feature(s) (shape={tuple(shape)}) while a minimum of 1 is required."
        )
    X = _check_view(
        X,
        name,
        dtype=dtype,
        ensure_all_finite=ensure_all_finite,
        accept_sparse=False,
        copy=False,
        order=None,
        one_of_views=False,
    )
    if X.shape[0] < min_samples:
        raise ValueError(
            f"{name} has {_plural(X.shape[0], 'sample')} but at least {min_samples} "
            f"{'is' if min_samples == 1 else 'are'} required"
        )
    return X


def validate_vector(y, name, *, n_samples=None, ensure_all_finite=True):
    """Validate a 1-D float64 target with messages that name it.

    A column vector of shape ``(n, 1)`` is accepted as ``(n,)``.

    Parameters
    ----------
    y : array-like of shape (n_samples,)
    name : str
        How to name ``y`` in the messages.
    n_samples : int, optional
        The length required (the rows of the matching ``X``).
    ensure_all_finite : bool, default=True

    Returns
    -------
    y : ndarray of shape (n_samples,), float64

    """
    if isinstance(y, (list, tuple)):
        try:
            y = np.asarray(y)
        except ValueError as exc:
            raise ValueError(f"{name} is ragged: its entries are not all scalars") from exc
    y = np.asarray(y)
    if y.dtype.kind in ("U", "S", "V"):
        raise ValueError(
            f"{name} holds non-numeric values (dtype {y.dtype}); convert it to numbers first"
        )
    if y.dtype.kind == "c":
        raise ValueError(
            f"{name} holds complex values (dtype {y.dtype}); only real numbers are supported"
        )
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"{name} must be 1-D of shape (n_samples,), got shape {y.shape}")
    try:
        y = y.astype(np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} could not be converted to float64: {exc}") from exc
    if n_samples is not None and y.shape[0] != n_samples:
        raise ValueError(
            f"{name} has {y.shape[0]} entries but {n_samples} are required (one per row of X)"
        )
    if ensure_all_finite:
        _check_finite(y, name, allow_nan=False)
        check_magnitude(y, name)
    return y


def _memory_bytes():
    """Bytes of physical memory (a bound no single array can exceed usefully), or None."""
    import os

    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # not available on this platform
        return None


def _bytes(n):
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if n < 1024:
            return f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} PiB"


def check_allocation(n_values, name, value, *, what=None, itemsize=8):
    """Refuse a size hyperparameter whose arrays cannot fit in this machine's memory.

    ``n_values`` is the number of entries of the largest array (or tensor)
    that ``name`` (set to ``value``) makes the estimator allocate for the data
    at hand, counted in Python integers or floats so that it cannot overflow;
    ``what`` names that array in the message. The check runs before the
    allocation, so that the error names the parameter rather than NumPy's or
    torch's out-of-memory error. Nothing is checked where the platform does not
    report its memory.
    """
    memory = _memory_bytes()
    if memory is None:
        return
    need = float(itemsize) * float(n_values)
    if need <= memory:
        return
    if what is None:
        raise ValueError(
            f"{name}={value!r} needs an array of {need / 2**30:.3g} GiB, more than this "
            f"machine's {memory / 2**30:.3g} GiB of memory"
        )
    raise ValueError(
        f"{name}={value!r} is too large: {what} would need {_bytes(need)}, more than "
        f"this machine's {_bytes(memory)} of memory"
    )


def check_layer_sizes(value, name):
    """The hidden-layer widths ``value`` as a tuple of positive ints.

    For parameters declared ``[tuple, list]`` in ``_parameter_constraints``,
    whose entries scikit-learn's declarative validation does not check.

    """
    bad = [
        v
        for v in value
        if isinstance(v, bool) or not isinstance(v, (numbers.Integral, np.integer))
    ]
    if bad or any(v < 1 for v in value):
        raise ValueError(f"{name} must hold positive ints (layer widths), got {value!r}")
    return tuple(int(v) for v in value)


def check_count(value, name, minimum):
    """``value`` as an ``int`` if it is an integer (not a bool) ``>= minimum``.

    Raises TypeError for a non-integer, ValueError below ``minimum``; the
    messages name the argument ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_bool(value, name):
    """``value`` as a ``bool`` if it is one (Python or NumPy), else a TypeError naming ``name``."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be a bool, got {value!r}")
    return bool(value)


def check_real(value, name, *, low=None, low_open=False, high=None):
    """``value`` as a finite ``float`` in ``[low, high]`` (``(low, high]`` if ``low_open``).

    Raises TypeError for a non-real (or a bool), ValueError for a non-finite
    value or one out of bounds (``None``: unbounded); the messages name ``name``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and (value < low or (low_open and value == low)):
        raise ValueError(f"{name} must be {'>' if low_open else '>='} {low}, got {value!r}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be <= {high}, got {value!r}")
    return value


def validate_views(
    Xs,
    *,
    n_views=None,
    min_views=1,
    min_samples=1,
    n_clusters=None,
    dtype=FLOAT_DTYPES,
    ensure_all_finite=True,
    accept_sparse=False,
    copy=False,
    order=None,
    name="Xs",
):
    """Validate a multi-view dataset and return it as a list of 2-D arrays.

    This is the one place where ``mvlearn_ext`` checks a multi-view input:
    estimators call it once at the top of ``fit``, ``predict`` and
    ``transform``, and everything below assumes its output. Each error names
    the view at fault (by its index in ``Xs``) and the problem.

    Parameters
    ----------
    Xs : list or tuple of array-like, or ndarray of shape (n_views, n_samples, n_features)
        The views. Each view is an array-like of shape
        ``(n_samples, n_features_v)``: a NumPy array, a nested list, a pandas
        DataFrame, or anything :func:`sklearn.utils.check_array` accepts.
        All views must have the same number of samples, in the same order.
        A 3-D array is read as a stack of views of equal width (the views
        returned are then views of it, not copies, unless ``copy=True``). A
        single 2-D array or DataFrame is refused with a ``TypeError``: it is
        ambiguous (one view, or several views side by side?) and is almost
        always a concatenation passed by mistake; wrap it as ``[X]`` or split
        its columns (:class:`mvlearn_ext.compose.ViewSplitter`).
    n_views : int, optional
        The exact number of views required.
    min_views : int, default=1
        The minimum number of views (``2`` for methods that are only defined
        on two or more views).
    min_samples : int, default=1
        The minimum number of samples.
    n_clusters : int, optional
        When given, at least ``n_clusters`` samples are required, with an
        error message that says so.
    dtype : str, type, list of types or None, default=(numpy.float64, numpy.float32)
        Passed to :func:`sklearn.utils.check_array` for each view: with the
        default, float64 and float32 views keep their dtype and every other
        numeric dtype (int, bool, object holding numbers) becomes float64.
        ``None`` keeps each view's dtype. Views holding strings are refused.
    ensure_all_finite : bool or "allow-nan", default=True
        Refuse views that hold NaN or infinity (``True``), only infinity
        (``"allow-nan"``), or nothing (``False``). Unless ``False``, views
        whose values are too large to square are refused too
        (:func:`check_magnitude`).
    accept_sparse : bool, str or list of str, default=False
        ``False`` refuses scipy sparse views with a ``TypeError``; otherwise
        passed to :func:`sklearn.utils.check_array` (``True`` or the formats
        to accept), and the sparse views are returned as such.
    copy : bool, default=False
        Copy every view, even when no conversion is needed.
    order : {"C", "F"} or None, default=None
        Memory layout required of each view; ``None`` keeps it.
    name : str, default="Xs"
        The name of the argument, used in the error messages.

    Returns
    -------
    Xs : list of ndarray
        The validated views, each of shape ``(n_samples, n_features_v)``
        (scipy sparse matrices for the sparse views when ``accept_sparse``
        allows them). Each view keeps its own dtype among those ``dtype``
        allows; views are not cast to a common dtype.

    Raises
    ------
    TypeError
        If ``Xs`` is not a list, tuple or 3-D array of views (in particular a
        single 2-D array), if a view is sparse and ``accept_sparse`` is false,
        or if a view holds objects that are not numbers.
    ValueError
        If there are no views or not the number required, if a view is not
        2-D, is ragged, holds strings, has no features, holds NaN or
        infinity or values too large to square, if the views have different
        numbers of samples, or if there are fewer samples than
        ``min_samples`` or ``n_clusters``.

    See Also
    --------
    check_views_consistent : Record the views' shape at fit, check it after.
    check_Xs : The same contract under mvlearn's name and signature.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.utils import validate_views
    >>> Xs = validate_views([np.ones((4, 2)), [[1, 2, 3]] * 4])
    >>> [(X.shape, X.dtype.name) for X in Xs]
    [((4, 2), 'float64'), ((4, 3), 'float64')]
    >>> validate_views([np.ones((4, 2)), np.ones((3, 2))])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: view 1 of Xs has 3 samples but view 0 has 4; ...
    """
    min_views = check_count(min_views, "min_views", 1)
    min_samples = check_count(min_samples, "min_samples", 0)
    if n_views is not None:
        n_views = check_count(n_views, "n_views", 1)
    if n_clusters is not None:
        n_clusters = check_count(n_clusters, "n_clusters", 1)
    if ensure_all_finite not in (True, False, "allow-nan"):
        raise ValueError(
            f"ensure_all_finite must be True, False or 'allow-nan', got {ensure_all_finite!r}"
        )

    views = _as_list_of_views(Xs, name)
    if not views:
        raise ValueError(f"{name} is empty; at least {_plural(min_views, 'view')} required")
    if n_views is not None and len(views) != n_views:
        raise ValueError(
            f"{name} has {_plural(len(views), 'view')} but {n_views} "
            f"{'is' if n_views == 1 else 'are'} required"
        )
    if len(views) < min_views:
        raise ValueError(
            f"{name} has {_plural(len(views), 'view')} but at least {min_views} "
            f"{'is' if min_views == 1 else 'are'} required"
        )

    checked = []
    for index, view in enumerate(views):
        view = _check_view(
            view,
            f"view {index} of {name}",
            dtype=dtype,
            ensure_all_finite=ensure_all_finite,
            accept_sparse=accept_sparse,
            copy=copy,
            order=order,
        )
        if checked and view.shape[0] != checked[0].shape[0]:
            raise ValueError(
                f"view {index} of {name} has {_plural(view.shape[0], 'sample')} but view 0 "
                f"has {checked[0].shape[0]}; all views must hold the same samples in the "
                "same order"
            )
        checked.append(view)

    n_samples = checked[0].shape[0]
    if n_samples < min_samples:
        raise ValueError(
            f"{name} has {_plural(n_samples, 'sample')} but at least {min_samples} "
            f"{'is' if min_samples == 1 else 'are'} required"
        )
    if n_clusters is not None and n_samples < n_clusters:
        raise ValueError(
            f"{name} has {_plural(n_samples, 'sample')} but n_clusters={n_clusters}; "
            "there must be at least as many samples as clusters"
        )
    return checked


def check_Xs(Xs, multiview=False, enforce_views=None, copy=False, return_dimensions=False):
    """Validate a multi-view dataset, with mvlearn's signature.

    The same contract as :func:`validate_views` (whose keyword arguments are
    the ones to use in new code), under the name and arguments of
    ``mvlearn.utils.check_Xs`` so that code written for mvlearn runs as is.

    Parameters
    ----------
    Xs : list or tuple of array-like, or ndarray of shape (n_views, n_samples, n_features)
        The views, each of shape ``(n_samples, n_features_v)``.
    multiview : bool, default=False
        Require at least two views.
    enforce_views : int, optional
        The exact number of views required.
    copy : bool, default=False
        Copy every view.
    return_dimensions : bool, default=False
        Also return the number of views, of samples and of features per view.

    Returns
    -------
    Xs : list of ndarray
        The validated views.
    n_views : int
        Only with ``return_dimensions=True``.
    n_samples : int
        Only with ``return_dimensions=True``.
    n_features : list of int
        The width of each view; only with ``return_dimensions=True``.

    See Also
    --------
    validate_views : The package's own validation of views.
    check_views_consistent : Checks the views against those seen at fit.

    Notes
    -----
    Two deliberate differences with mvlearn: a single 2-D array is refused
    (mvlearn read it as one view, which silently runs a multi-view method on
    a concatenation), and ``enforce_views`` is enforced whatever
    ``multiview`` is (mvlearn only checked it together with
    ``multiview=True``). Views are converted to float64 (float32 is kept).

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.utils import check_Xs
    >>> Xs, n_views, n_samples, n_features = check_Xs(
    ...     [np.zeros((5, 3)), np.zeros((5, 2))], multiview=True, return_dimensions=True
    ... )
    >>> n_views, n_samples, n_features
    (2, 5, [3, 2])
    """
    Xs = validate_views(
        Xs, n_views=enforce_views, min_views=2 if multiview else 1, copy=copy, name="Xs"
    )
    if return_dimensions:
        return Xs, len(Xs), Xs[0].shape[0], [X.shape[1] for X in Xs]
    return Xs


def check_views_consistent(estimator, Xs, *, reset, name="Xs"):
    """Record the number and widths of the views at fit; compare them later.

    The multi-view counterpart of scikit-learn's ``n_features_in_`` check.
    With ``reset=True`` (in ``fit``) it sets ``estimator.n_views_`` and
    ``estimator.n_features_per_view_``; with ``reset=False`` (in ``predict``,
    ``transform``, ``score``) it raises a ``ValueError`` if ``Xs`` does not
    have the shape the estimator was fitted on. Call it on the output of
    :func:`validate_views`.

    Parameters
    ----------
    estimator : estimator instance
        The estimator being fitted or used.
    Xs : list of ndarray
        Validated views: 2-D arrays of real numbers. Views held in memory
        (NumPy arrays, scipy sparse matrices) must be finite; memmaps, zarr
        and dask arrays are not read here (their estimators check them block
        by block).
    reset : bool
        Record (``True``) or check (``False``).
    name : str, default="Xs"
        The name of the argument, used in the error messages.

    Raises
    ------
    TypeError
        If a view is not an array, or holds strings or other non-numbers.
    ValueError
        If a view is not 2-D, holds complex values, NaN or infinity. With
        ``reset=False``, if the number of views or the number of features of
        a view differs from what the estimator was fitted with. Nothing is
        compared if the estimator has no ``n_views_`` yet (as scikit-learn
        does for ``n_features_in_``; ``check_is_fitted`` is the guard against
        unfitted use).

    See Also
    --------
    check_Xs : Validates the views themselves.

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.base import BaseEstimator
    >>> from mvlearn_ext.utils import check_views_consistent
    >>> est = BaseEstimator()
    >>> check_views_consistent(est, [np.ones((3, 2)), np.ones((3, 4))], reset=True)
    >>> est.n_views_, est.n_features_per_view_
    (2, (2, 4))
    >>> check_views_consistent(est, [np.ones((3, 2)), np.ones((3, 5))], reset=False)
    ... # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: view 1 of Xs has 5 features but BaseEstimator was fitted with 4 ...
    """
    _views_consistent(estimator, Xs, reset=reset, name=name, values_checked=False)


def _views_consistent(estimator, Xs, *, reset, name="Xs", values_checked=True):
    """:func:`check_views_consistent`; ``values_checked``: the views come from
    :func:`validate_views` (or are read block by block), so their values are not
    scanned a second time."""
    for index, X in enumerate(Xs):
        where = f"view {index} of {name}"
        if getattr(X, "shape", None) is None or getattr(X, "dtype", None) is None:
            raise TypeError(f"{where} must be an array, got {type(X).__name__}")
        kind = np.dtype(X.dtype).kind
        if kind == "c":
            raise ValueError(f"{where} holds complex values; only real numbers are supported")
        if kind not in "biuf":
            raise TypeError(f"{where} must be a numeric array, got dtype {X.dtype}")
        if len(X.shape) != 2:
            raise ValueError(
                f"{where} is {len(X.shape)}-D with shape {tuple(X.shape)}, but each view "
                "must be 2-D of shape (n_samples, n_features_v)"
            )
        in_memory = sp.issparse(X) or (isinstance(X, np.ndarray) and not isinstance(X, np.memmap))
        if in_memory and not values_checked:
            _check_finite(X, where, allow_nan=False)
    n_views = len(Xs)
    n_features = tuple(int(X.shape[1]) for X in Xs)
    if reset:
        estimator.n_views_ = n_views
        estimator.n_features_per_view_ = n_features
        return
    if not hasattr(estimator, "n_views_"):
        return
    owner = type(estimator).__name__
    if n_views != estimator.n_views_:
        raise ValueError(
            f"{name} has {_plural(n_views, 'view')} but {owner} was fitted with "
            f"{estimator.n_views_}"
        )
    for index, (width, fitted_width) in enumerate(
        zip(n_features, estimator.n_features_per_view_, strict=True)
    ):
        if width != fitted_width:
            raise ValueError(
                f"view {index} of {name} has {_plural(width, 'feature')} but {owner} was "
                f"fitted with {fitted_width} features in that view"
            )


def _view_feature_names(Xs):
    """The string column names of each DataFrame view of ``Xs`` (None for the other
    views), or None when no view has them (scikit-learn's rule for one array)."""
    if not isinstance(Xs, (list, tuple)):
        return None
    names = [_get_feature_names(X) for X in Xs]
    return names if any(n is not None for n in names) else None


def _names_difference(seen, given):
    """How the column names ``given`` differ from those ``seen`` at fit, in words."""
    if set(seen) == set(given):
        return "the same names in another order"
    new = [c for c in given if c not in set(seen)][:5]
    missing = [c for c in seen if c not in set(given)][:5]
    return f"unseen at fit: {new}; seen at fit but missing: {missing}"


def _view_feature_names_consistent(estimator, names, *, reset, name="Xs"):
    """Record (``reset``) or check the per-view feature names, as scikit-learn does for one X.

    At fit, ``feature_names_per_view_`` is set when some view has string column
    names, and removed otherwise. Later, a view whose names differ from those
    of the fit (other names, or the same in another order) raises
    ``ValueError``; a view with names where the fit had none, or the converse,
    warns (``UserWarning``).
    """
    if reset:
        if names is None:
            estimator.__dict__.pop("feature_names_per_view_", None)
        else:
            estimator.feature_names_per_view_ = names
        return
    fitted = getattr(estimator, "feature_names_per_view_", None)
    if fitted is None and names is None:
        return
    fitted = fitted or [None] * estimator.n_views_
    names = names or [None] * estimator.n_views_
    owner = type(estimator).__name__
    unnamed, unexpected = [], []
    for index, (seen, given) in enumerate(zip(fitted, names, strict=True)):
        if seen is None and given is None:
            continue
        if seen is None:
            unexpected.append(index)
        elif given is None:
            unnamed.append(index)
        elif not np.array_equal(seen, given):
            raise ValueError(
                f"the feature names of view {index} of {name} differ from those {owner} "
                f"was fitted with ({_names_difference(seen, given)})"
            )
    for indices, what in (
        (unnamed, "no feature names, but {} was fitted with feature names there"),
        (unexpected, "feature names, but {} was fitted without feature names there"),
    ):
        if indices:
            views = ", ".join(str(i) for i in indices)
            subject = (
                f"view {views} of {name} has"
                if len(indices) == 1
                else (f"views {views} of {name} have")
            )
            warn(f"{subject} {what.format(owner)}", UserWarning)


def as_random_state(random_state):
    """A ``numpy.random.RandomState`` from ``None``, an int, a ``RandomState`` or a ``Generator``.

    The counterpart of :func:`check_rng` for code that draws from a
    ``RandomState``: an int gives scikit-learn's stream
    (``check_random_state``), and a ``Generator`` is wrapped (its bit
    generator drives the ``RandomState``, so drawing advances it). A bool, a
    float or any other type is a ``TypeError``, an int outside ``[0, 2**32)``
    a ``ValueError``, both naming ``random_state``.
    """
    if isinstance(random_state, np.random.Generator):
        return np.random.RandomState(random_state.bit_generator)
    if random_state is None or isinstance(random_state, np.random.RandomState):
        return check_random_state(random_state)
    if isinstance(random_state, numbers.Integral) and not isinstance(
        random_state, (bool, np.bool_)
    ):
        if not 0 <= random_state < 2**32:
            raise ValueError(f"random_state must be in [0, 2**32 - 1], got {random_state}")
        return check_random_state(int(random_state))
    raise TypeError(
        "random_state must be None, an int, a numpy Generator or RandomState, "
        f"got {type(random_state).__name__} {random_state!r}"
    )


def check_rng(random_state):
    """A ``numpy.random.Generator`` from a scikit-learn style ``random_state``."""
    if random_state is None or isinstance(
        random_state, (numbers.Integral, np.random.SeedSequence)
    ):
        if isinstance(random_state, bool):
            raise TypeError("random_state must be None, an int or a numpy Generator, got bool")
        return np.random.default_rng(random_state)
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        return np.random.default_rng(random_state.randint(2**31 - 1))
    raise TypeError(
        "random_state must be None, an int, a numpy Generator or RandomState, "
        f"got {type(random_state).__name__}"
    )
