"""Hypervolume, contributions, non-dominated filtering and Pareto ranking.

A thin, validated layer over moocore (López-Ibáñez et al., the C library
behind pymoo's indicators): this module checks shapes, finiteness and the
reference point once, names the argument at fault in its errors, and hands
contiguous float64 arrays to moocore, which does all the computing. Nothing
here re-implements moocore's algorithms, except :func:`crowding_distance`
(NSGA-II, not in moocore) and the small incremental archive.

Conventions follow moocore: objectives are minimised unless ``maximise`` is
``True`` (all objectives) or a per-objective sequence of booleans.
"""

from __future__ import annotations

import numpy as np

from mvlearn_ext.utils._optional import import_optional
from mvlearn_ext.utils._validation import (
    as_real_array,
    check_magnitude,
    real_array,
    unit_scaled,
)

__all__ = [
    "ParetoArchive",
    "crowding_distance",
    "filter_dominated",
    "hv_contributions",
    "hypervolume",
    "is_nondominated",
    "pareto_rank",
]

_MOOCORE = None


def _moocore():
    global _MOOCORE
    if _MOOCORE is None:
        _MOOCORE = import_optional("moocore", feature="mvlearn_ext.moo")
    return _MOOCORE


def _check_points(points, name="points", *, allow_empty=True):
    """float64 C-contiguous (n, d) array with finite entries."""
    P = real_array(points, name, allow_empty=True)
    if P.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array of shape (n_points, n_objectives), "
            f"got {P.ndim} dimension(s)"
        )
    if P.shape[1] < 1:
        raise ValueError(f"{name} must have at least one objective (column), got shape {P.shape}")
    if not allow_empty and P.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one point")
    return np.ascontiguousarray(P)


def _check_maximise(maximise, d):
    """A (d,) bool array (or a bool when all objectives agree)."""
    if isinstance(maximise, (bool, np.bool_)):
        return bool(maximise)
    try:
        m = np.asarray(maximise)
    except Exception as exc:  # pragma: no cover - exotic objects
        raise TypeError("maximise must be a bool or a sequence of bools") from exc
    if m.dtype != np.bool_:
        raise TypeError(f"maximise must be a bool or a sequence of bools, got dtype {m.dtype}")
    if m.ndim == 0:
        return bool(m)
    if m.shape != (d,):
        raise ValueError(f"maximise must have one entry per objective ({d}), got shape {m.shape}")
    if m.all():
        return True
    if not m.any():
        return False
    return m


def _real_ref(ref):
    """``ref`` as a finite float64 array; ``None`` is refused by name, not read as NaN."""
    if ref is None:
        raise TypeError("ref must be a real number or an array-like of reals, got None")
    return real_array(ref, "ref")


def _check_ref(ref, d, maximise):
    r = _real_ref(ref)
    if r.ndim == 0:
        r = np.full(d, float(r))
    if r.shape != (d,):
        raise ValueError(f"ref must have one entry per objective ({d}), got shape {r.shape}")
    return r


def _check_volume(values, name, d):
    """Refuse ``values`` whose largest ``d``-dimensional box could overflow float64.

    A hypervolume multiplies ``d`` coordinate differences, each at most twice the
    largest magnitude ``M``: ``(2 M)^d`` must stay finite (``M`` below about
    1e154 in 2-D, 1e102 in 3-D).
    """
    largest = float(np.abs(values).max()) if values.size else 0.0
    if largest > 0.0 and d * np.log(2.0 * largest) >= np.log(np.finfo(np.float64).max):
        raise ValueError(
            f"{name} is too large for a {d}-objective hypervolume: its largest magnitude "
            f"{largest:.3g} makes box volumes overflow float64; rescale the objectives"
        )


def _check_magnitudes(P, r):
    """Refuse points or a reference point whose box volumes would overflow."""
    check_magnitude(P, "points")
    check_magnitude(r, "ref")
    _check_volume(P, "points", P.shape[1])
    _check_volume(r, "ref", P.shape[1])


def _strictly_dominate_ref(P, r, maximise):
    """Boolean mask of the points that strictly dominate the reference point."""
    if maximise is True:
        return (P > r).all(axis=1)
    if maximise is False:
        return (P < r).all(axis=1)
    sign = np.where(maximise, -1.0, 1.0)
    return (P * sign < r * sign).all(axis=1)


def _check_ref_policy(P, r, maximise, on_outside):
    if on_outside == "ignore":
        return
    if on_outside != "raise":
        raise ValueError(f"on_outside must be 'ignore' or 'raise', got {on_outside!r}")
    inside = _strictly_dominate_ref(P, r, maximise)
    if not inside.all():
        bad = np.flatnonzero(~inside)
        raise ValueError(
            f"ref is not strictly dominated by {bad.size} point(s) (first: index {bad[0]}, "
            f"{P[bad[0]].tolist()} vs ref {r.tolist()}); such points add no hypervolume. "
            "Move ref beyond the nadir, or pass on_outside='ignore'"
        )


def hypervolume(points, ref, *, maximise=False, on_outside="ignore"):
    """Exact hypervolume dominated by ``points`` and bounded by ``ref``.

    HV(A; r) is the Lebesgue measure of the union of the boxes ``[a, r]``
    (minimisation) over the points ``a`` of ``A``. Dominated and duplicated
    points do not change it; points that do not strictly dominate ``ref``
    contribute nothing. Computed by moocore: O(n log n) in 2-D and 3-D
    (HV3D+, Guerreiro & Fonseca 2018), O(n^2) in 4-D (HV4D+), a recursive
    dimension sweep (Fonseca, Paquete & López-Ibáñez 2006) or
    inclusion-exclusion above.

    Parameters
    ----------
    points : array-like of shape (n_points, n_objectives)
        Finite objective vectors; ``n_points`` may be 0 (HV 0), as an array of
        shape ``(0, n_objectives)``: an empty list has no objectives.
    ref : float or array-like of shape (n_objectives,)
        The reference point (a scalar is broadcast).
    maximise : bool or sequence of bool, default=False
        Which objectives are maximised.
    on_outside : {"ignore", "raise"}, default="ignore"
        ``"ignore"`` follows moocore (such points contribute 0);
        ``"raise"`` raises a ``ValueError`` if some point does not strictly
        dominate ``ref``, which usually means a wrong reference point.

    Returns
    -------
    hv : float

    See Also
    --------
    hv_contributions : Each point's exclusive share.
    ParetoArchive : An archive that tracks the hypervolume gain of each insertion.

    Examples
    --------
    >>> from mvlearn_ext.moo import hypervolume
    >>> hypervolume([[5, 5], [4, 6], [2, 7], [7, 4]], ref=[10, 10])
    38.0
    >>> hypervolume([[5, 5], [4, 6], [2, 7], [7, 4]], ref=0, maximise=True)
    39.0
    """
    P = _check_points(points)
    d = P.shape[1]
    maximise = _check_maximise(maximise, d)
    r = _check_ref(ref, d, maximise)
    _check_magnitudes(P, r)
    _check_ref_policy(P, r, maximise, on_outside)
    if P.shape[0] == 0:
        return 0.0
    return float(_moocore().hypervolume(P, ref=r, maximise=maximise))


def hv_contributions(points, ref, *, maximise=False, ignore_dominated=True):
    """Exclusive hypervolume contribution of every point.

    ``hvc(p) = HV(X) - HV(X \\ {p})``. Duplicates get 0. With
    ``ignore_dominated=True`` (moocore's default) dominated points get 0 and
    do not reduce the contribution of their dominator; with ``False`` the
    mathematical definition is used (a dominated point can shrink the
    contribution of the single point that dominates it).

    Parameters
    ----------
    points : array-like of shape (n_points, n_objectives)
    ref : float or array-like of shape (n_objectives,)
    maximise : bool or sequence of bool, default=False
    ignore_dominated : bool, default=True

    Returns
    -------
    hvc : ndarray of shape (n_points,)

    See Also
    --------
    hypervolume : The hypervolume of the whole set.
    crowding_distance : The NSGA-II diversity measure.

    Examples
    --------
    >>> from mvlearn_ext.moo import hv_contributions
    >>> hv_contributions([[5, 5], [4, 6], [2, 7], [7, 4]], ref=[10, 10])
    array([2., 1., 6., 3.])
    """
    P = _check_points(points)
    d = P.shape[1]
    maximise = _check_maximise(maximise, d)
    r = _check_ref(ref, d, maximise)
    _check_magnitudes(P, r)
    if not isinstance(ignore_dominated, (bool, np.bool_)):
        raise TypeError(f"ignore_dominated must be a bool, got {type(ignore_dominated).__name__}")
    if P.shape[0] == 0:
        return np.zeros(0)
    if d == 1:
        return _hv_contributions_1d(P[:, 0], r[0], maximise, bool(ignore_dominated))
    return np.asarray(
        _moocore().hv_contributions(
            P, ref=r, maximise=maximise, ignore_dominated=bool(ignore_dominated)
        ),
        dtype=np.float64,
    )


def _hv_contributions_1d(p, r, maximise, ignore_dominated):
    """Contributions of one objective (moocore needs two): only a unique best point adds.

    Its contribution is the gap to the reference point (``ignore_dominated``) or
    to the next best point (the definition), within the reference point.
    """
    q, rr = (-p, -r) if maximise else (p, r)
    out = np.zeros(q.size)
    inside = q < rr
    if not inside.any():
        return out
    best = q[inside].min()
    at_best = np.flatnonzero(q == best)
    if at_best.size > 1:
        return out  # duplicates of the best point: removing one changes nothing
    others = q[inside & (q > best)]
    upper = rr if ignore_dominated or others.size == 0 else others.min()
    out[at_best[0]] = upper - best
    return out


def is_nondominated(points, *, maximise=False, keep_weakly=False):
    """Mask of the points that no other point dominates.

    ``x`` dominates ``y`` if ``x <= y`` componentwise (minimisation) and
    ``x != y``. With ``keep_weakly=False`` only the first of several
    duplicated non-dominated points is kept. moocore's Kung-Luccio-Preparata
    sweep: O(n log n) for up to 3 objectives.

    Parameters
    ----------
    points : array-like of shape (n_points, n_objectives)
    maximise : bool or sequence of bool, default=False
    keep_weakly : bool, default=False

    Returns
    -------
    mask : ndarray of bool, shape (n_points,)

    See Also
    --------
    filter_dominated : The non-dominated rows themselves.
    pareto_rank : The rank of every point.

    Examples
    --------
    >>> from mvlearn_ext.moo import is_nondominated
    >>> is_nondominated([[1, 1], [0, 1], [1, 0], [1, 0]])
    array([False,  True,  True, False])
    """
    P = _check_points(points)
    maximise = _check_maximise(maximise, P.shape[1])
    if not isinstance(keep_weakly, (bool, np.bool_)):
        raise TypeError(f"keep_weakly must be a bool, got {type(keep_weakly).__name__}")
    if P.shape[0] == 0:
        return np.zeros(0, dtype=bool)
    return _moocore().is_nondominated(P, maximise=maximise, keep_weakly=bool(keep_weakly))


def filter_dominated(points, *, maximise=False, keep_weakly=False):
    """The rows of ``points`` selected by :func:`is_nondominated`.

    Parameters
    ----------
    points : array-like of shape (n_points, n_objectives)
        The objective vectors, one per row.
    maximise : bool or sequence of bool, default=False
        Whether every objective (or each one) is maximised.
    keep_weakly : bool, default=False
        Keep every copy of a duplicated non-dominated point (only the first
        otherwise).

    Returns
    -------
    front : ndarray of shape (n_front, n_objectives)
        The non-dominated rows, in their input order.

    See Also
    --------
    is_nondominated : The mask it applies.
    pareto_rank : Ranks every front, not only the first.

    Examples
    --------
    >>> from mvlearn_ext.moo import filter_dominated
    >>> filter_dominated([[1.0, 2.0], [2.0, 1.0], [2.0, 2.0]]).tolist()
    [[1.0, 2.0], [2.0, 1.0]]
    """
    P = _check_points(points)
    return P[is_nondominated(P, maximise=maximise, keep_weakly=keep_weakly)]


def pareto_rank(points, *, maximise=False):
    """0-based Pareto rank (non-dominated sorting) of every point.

    Rank 0 is the non-dominated front; rank ``k`` is the front of what is
    left after removing ranks ``< k``. Duplicates share a rank. moocore:
    Jensen's O(n log n) sweep in 2-D, front peeling above.

    Parameters
    ----------
    points : array-like of shape (n_points, n_objectives)
    maximise : bool or sequence of bool, default=False

    Returns
    -------
    ranks : ndarray of int64, shape (n_points,)

    See Also
    --------
    is_nondominated : The first front only.
    crowding_distance : Spreads the points of one front.

    Examples
    --------
    >>> from mvlearn_ext.moo import pareto_rank
    >>> pareto_rank([[1, 1], [0, 1], [1, 0], [1, 0]])
    array([1, 0, 0, 0])
    """
    P = _check_points(points)
    maximise = _check_maximise(maximise, P.shape[1])
    if P.shape[0] == 0:
        return np.zeros(0, dtype=np.int64)
    return _moocore().pareto_rank(P, maximise=maximise).astype(np.int64, copy=False)


def crowding_distance(points):
    """NSGA-II crowding distance (Deb et al. 2002) of the points of one front.

    Per objective, the points are sorted; the two boundary points get
    ``inf`` and each interior point adds ``(f(next) - f(prev)) / (f_max -
    f_min)``. An objective with ``f_max == f_min`` adds nothing. Invariant to
    the direction of optimisation (so there is no ``maximise``).

    Parameters
    ----------
    points : array-like of shape (n_points, n_objectives)

    Returns
    -------
    distance : ndarray of shape (n_points,)

    See Also
    --------
    pareto_rank : The fronts whose points it spreads.
    hv_contributions : Another diversity measure, by hypervolume.

    Examples
    --------
    >>> from mvlearn_ext.moo import crowding_distance
    >>> crowding_distance([[0.0, 1.0], [0.25, 0.5], [1.0, 0.0]])
    array([inf,  2., inf])
    """
    P = _check_points(points)
    # Exactly rescaled below magnitude 1, so that no span f_max - f_min overflows: the
    # ratios of gaps to spans do not depend on a common scale.
    P = unit_scaled(P)
    n, d = P.shape
    dist = np.zeros(n)
    if n <= 2:
        dist[:] = np.inf
        return dist
    for k in range(d):
        order = np.argsort(P[:, k], kind="stable")
        f = P[order, k]
        span = f[-1] - f[0]
        dist[order[0]] = np.inf
        dist[order[-1]] = np.inf
        if span > 0:
            dist[order[1:-1]] += (f[2:] - f[:-2]) / span
    return dist


class ParetoArchive:
    """Non-dominated archive with the exact hypervolume gain of each insertion.

    Keeps the non-dominated subset of everything added (duplicates once) and
    its hypervolume against a fixed reference point.

    Parameters
    ----------
    ref : array-like of shape (n_objectives,)
        The reference point.
    maximise : bool or sequence of bool, default=False

    Attributes
    ----------
    points_ : ndarray of shape (n_archived, n_objectives)
    hypervolume_ : float

    See Also
    --------
    hypervolume : The hypervolume of a set of points.
    filter_dominated : The non-dominated rows of a set.

    Examples
    --------
    >>> from mvlearn_ext.moo import ParetoArchive
    >>> archive = ParetoArchive(ref=[0.0, 0.0], maximise=True)
    >>> archive.add([0.5, 0.5])
    0.25
    >>> archive.gain([0.25, 0.25])  # dominated: no gain
    0.0
    >>> archive.add([1.0, 0.25])
    0.125
    """

    def __init__(self, ref, *, maximise=False):
        self.ref = ref
        self.maximise = maximise
        r = _real_ref(ref)
        if r.ndim != 1:
            raise ValueError(f"ref must be a non-empty 1-D array, got shape {r.shape}")
        self._d = r.size
        self._ref = _check_ref(r, self._d, None)
        check_magnitude(self._ref, "ref")
        _check_volume(self._ref, "ref", self._d)
        self._max = _check_maximise(maximise, self._d)
        self.points_ = np.empty((0, self._d))
        self.hypervolume_ = 0.0

    def _row(self, point):
        """``point`` (one point or a batch of rows) as a checked (m, n_objectives) array."""
        p = as_real_array(point, "point")
        if p.ndim not in (1, 2) or p.shape[-1] != self._d:
            raise ValueError(
                f"point must have shape ({self._d},) or (m, {self._d}) (one entry per "
                f"objective), got {p.shape}"
            )
        P = _check_points(p.reshape(-1, self._d), "point")
        check_magnitude(P, "point")
        _check_volume(P, "point", self._d)  # a hypervolume gain multiplies coordinates
        return P

    def gain(self, point):
        """HV(archive ∪ {point}) - HV(archive) >= 0, without adding it.

        ``point`` may also be an (m, n_objectives) batch: one gain per row,
        each against the archive as it stands.

        Parameters
        ----------
        point : array-like of shape (n_objectives,) or (m, n_objectives)
            One point, or a batch of points (which may have no rows).

        Returns
        -------
        gain : float or ndarray of shape (m,)
            A float for one point, an array for a batch.

        Raises
        ------
        TypeError
            If ``point`` is not numeric (strings of digits included).
        ValueError
            If ``point`` has not one entry per objective (an empty point
            included), or holds complex values, NaN, infinity or values too
            large to square.
        """
        P = self._row(point)
        if self._d == 2:
            gains = self._gain_2d(P)
        else:
            gains = np.array(
                [
                    hypervolume(np.vstack([self.points_, p[None]]), self._ref, maximise=self._max)
                    - self.hypervolume_
                    for p in P
                ]
            )
        gains = np.maximum(gains, 0.0)  # round-off below zero for dominated points
        return float(gains[0]) if np.ndim(point) == 1 else gains

    def _gain_2d(self, P):
        """Exact 2-D gains of a batch, vectorised (no moocore call per row).

        In maximisation form, the gain of ``p`` is the box ``[r, p]`` minus
        its part covered by the archive, which is the hypervolume of the
        clipped points ``min(a, p)``. Sorted by the first coordinate
        (descending), an archive of mutually non-dominated points has its
        second coordinate ascending, and clipping keeps both orders, so that
        hypervolume is one sum of strips. A point weakly dominated by an
        archive point gains exactly 0.
        """
        sign = np.where(self._max, 1.0, -1.0)
        Q = P * sign
        r = self._ref * sign
        A = self.points_ * sign
        box = np.prod(np.maximum(Q - r, 0.0), axis=1)
        if A.shape[0] == 0:
            return box
        A = A[np.argsort(-A[:, 0], kind="stable")]
        C = np.minimum(A[None, :, :], Q[:, None, :])  # (batch, archive, 2)
        xc = np.maximum(C[:, :, 0], r[0])
        width = xc - np.concatenate([xc[:, 1:], np.full((xc.shape[0], 1), r[0])], axis=1)
        covered = np.sum(width * np.maximum(C[:, :, 1] - r[1], 0.0), axis=1)
        gains = box - covered
        dominated = (A[None, :, :] >= Q[:, None, :]).all(axis=2).any(axis=1)
        gains[dominated] = 0.0
        return gains

    def add(self, point):
        """Insert ``point`` (or a batch of rows); return the total HV gain."""
        P = self._row(point)
        allp = np.vstack([self.points_, P])
        keep = is_nondominated(allp, maximise=self._max)
        self.points_ = allp[keep]
        new_hv = hypervolume(self.points_, self._ref, maximise=self._max)
        gain = max(new_hv - self.hypervolume_, 0.0)
        self.hypervolume_ = new_hv
        return float(gain)

    def __len__(self):
        return self.points_.shape[0]
