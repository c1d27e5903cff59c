"""Label-free view weights: how much cluster structure a view carries, and shares.

A multi-view clusterer that adds the views' (standardised) distances gives every
view a say in which samples are neighbours. A view of pure noise then scrambles
the neighbourhoods, and more so the fewer features it has (the squared distance
between two noise rows is a chi-square with ``d_v`` degrees of freedom: its
relative spread is ``sqrt(2 / d_v)``). Reconstruction-based rules
(``alpha_v ∝ 1 / loss_v``) do the opposite of what is needed: a few noise features
are the easiest thing to reconstruct with many anchors, so they get the weight.

:func:`fit_view_weights` scores each view on a random subsample of the rows with
two label-free, scale-free signals and turns the scores into simplex weights:

1. **Cluster structure against a Gaussian null** (``structure_``). k-means with
   ``n_clusters`` centres on the view leaves a fraction ``W_v / T_v`` of the view's
   total variance unexplained. The same k-means on a Gaussian sample with the
   view's own covariance (its principal axes and variances, so the same width,
   scale and correlations, but no clusters) leaves ``W_ref / T_ref``. The score is
   ``c_v = max(0, 1 - (W_v / T_v) / (W_ref / T_ref))``, the relative gain of the
   view over a structureless cloud of its own shape (the gap statistic of
   Tibshirani, Walther & Hastie, 2001, in ratio form). A Gaussian noise view
   scores about 0 in any dimension; it is invariant to the scale of the view.
2. **Agreement with the other views** (``agreement_``). For every ordered pair,
   the fraction of the ``n_neighbors``-nearest-neighbour edges of view ``v`` that
   join two samples of the same k-means cluster of view ``u``, corrected for chance
   (``(rate - sum_c p_c^2) / (1 - sum_c p_c^2)``, 0 for independent views, 1 when
   every edge stays in a cluster). ``s_vu`` is its symmetric mean. A noise view's
   neighbourhoods agree with nothing, so its ``s_vu`` is about 0 for every ``u``,
   even when the noise is not Gaussian (a shuffled copy of a real view, say), which
   the first signal cannot see.

Copies. ``K_vu`` is the chance-corrected overlap of the ``n_neighbors``-NN sets of
views ``v`` and ``u``, to the 8th power (1 for exact copies, below 0.06 for an
overlap below 0.7, so that related but distinct views do not count as copies).
Agreement with a copy of oneself is no evidence, so the effective agreement is
``s'_vu = s_vu (1 - K_vu)``, and the reliability of view ``v`` is
``r_v = max_{u != v} s'_vu / max_{u != w} s'_uw`` (1 for the views of the most
concordant pair).

Scores. When some pair agrees beyond ``agreement_floor``, the views share
structure, and the score of view ``v`` is its reliability ``r_v``: a view that
agrees with another beyond chance carries cluster structure, whatever its shape
(the structure score alone is a poor weight: a view of a few discrete or skewed
features scores high against a Gaussian null, and a view whose clusters live in a
few of many features scores low). Otherwise (a single view, or a single
informative view among noise views) there is no cross-view evidence, and the
score is ``c_v^2``: squared, because the sampling error of ``c_v`` for a Gaussian
view (on 1000 rows up to about 0.02 with five features, 0.1 with two, measured)
would otherwise hand a noise view a tenth of the weight next to a weakly
clustered view (``c_v`` about 0.1).
Each score is then divided by ``sum_u K_vu``, so that the copies of a view
share one view's weight. The weights are the normalised scores (uniform if
every score is 0).

Factor rule (``rule="factor"``). The maximum above cannot tell the two views of
the most concordant pair apart: a view that separates the clusters and a weak view
that agrees with it get the same reliability. With three or more views the
pairwise agreements identify each view's own quality: if every view is a noisy
reading of one partition, with errors independent across views, the agreement of
two views is about the product of their qualities, ``s_vu = q_v q_u`` (the
one-factor model of Spearman; for three views ``q_1 = sqrt(s_12 s_13 / s_23)``,
the triad rule). :func:`factor_quality` fits ``q`` to the agreements, leaving out
the pairs of near copies (their errors are shared). The fit is used only when it
pins down the quality of every agreeing view: each must agree with two views
whose own agreement is measured, or agree with such a view (otherwise a quality
is not identified, and the reliability rule applies). The score of view ``v`` is
then ``min(1, q_v / (tolerance * max_u q_u))^2``: a view within ``tolerance`` of
the best keeps a full score, because the estimates carry sampling error and the
views' value in a sum also depends on what they do not share; a clearly weaker
view loses weight with the square of its shortfall. With two views the product
does not identify the factors, and the reliability rule applies.

Everything a view computes uses a random state derived from ``random_state`` and
not from the view's position, so permuting the views permutes the weights and
copies of a view get identical scores.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.cluster._kernels import smallest_in_gram_rows
from mvlearn_ext.cluster._preprocessing import constant_columns
from mvlearn_ext.utils._threads import map_tasks

__all__ = ["ViewWeights", "fit_view_weights"]

#: Rows used to score the views (a uniform random subsample above this).
DEFAULT_MAX_SAMPLES = 1000
#: Power of the kNN overlap that counts copies: 1 for a copy, below 0.06 for an
#: overlap below 0.7 (views of one object that are not copies of each other).
_COPY_POWER = 8
#: Lloyd iterations of the scoring k-means (after k-means++ seeding).
_LLOYD_ITER = 20
#: Below this many rows the scoring k-means keeps the best of ``_RESTARTS`` runs: there
#: a run costs little, and one run's local optimum more often hides a view's agreement
#: (on 90-row samples the informative view of one blob + two noise views was missed).
_RESTART_ROWS = 1000
_RESTARTS = 3
#: Chance-corrected agreement below which two views count as unrelated.
DEFAULT_AGREEMENT_FLOOR = 0.05
#: ``rule="factor"``: views whose estimated quality is at least this fraction of the
#: best view's keep a full score (see :func:`factor_quality`).
DEFAULT_QUALITY_TOLERANCE = 0.8
#: ``rule="factor"``: two views whose kNN sets overlap by this much beyond chance share
#: their errors, so their agreement is left out of the one-factor fit.
_FACTOR_COPY_OVERLAP = 0.5
_FACTOR_ITER = 100


class ViewWeights:
    """The result of :func:`fit_view_weights` (all arrays indexed by view).

    Attributes
    ----------
    weights_ : ndarray of shape (n_views,)
        Nonnegative, summing to 1.
    structure_ : ndarray of shape (n_views,)
        ``c_v``: cluster structure against the Gaussian null, in [0, 1]. Computed
        only when no two views agree beyond the floor, the one case in which the
        weights use it (it costs a second k-means per view); NaN otherwise.
    agreement_ : ndarray of shape (n_views, n_views)
        ``s_vu``: symmetric chance-corrected agreement (diagonal set to 1).
    reliability_ : ndarray of shape (n_views,)
        ``r_v`` in [0, 1].
    redundancy_ : ndarray of shape (n_views,)
        ``sum_u K_vu`` (1 for a view with no copy, 2 for a view present twice).
    sample_indices_ : ndarray
        The rows used.
    """

    def __init__(self, weights, structure, agreement, reliability, redundancy, rows):
        self.weights_ = weights
        self.structure_ = structure
        self.agreement_ = agreement
        self.reliability_ = reliability
        self.redundancy_ = redundancy
        self.sample_indices_ = rows

    def __repr__(self):
        return f"ViewWeights(weights_={np.array2string(self.weights_, precision=3)})"


def _standardised(X):
    """Centred, z-scored columns (constant columns dropped, by the package's relative rule)."""
    X = np.asarray(X, dtype=np.float64)
    mean = X.mean(axis=0)
    X = X - mean
    std = X.std(axis=0)
    keep = ~constant_columns(mean, std, np.float64)
    return X[:, keep] / std[keep]


def _single(X):
    """``X`` in single precision, C-contiguous.

    The scores' k-means and neighbour sets only decide which rows group together,
    which single-precision distances of standardised rows decide as double
    precision does but for near-ties, at half the cost of the products.
    """
    return np.ascontiguousarray(X, dtype=np.float32)


def _kmeans(X, n_clusters, seed):
    """The best (by within-cluster sum) of :func:`_kmeans_once` runs from ``seed``, ``seed + 1``...

    One run from ``_RESTART_ROWS`` rows up, ``_RESTARTS`` below, in single precision
    (see :func:`_single`).
    """
    X = _single(X)
    n_runs = 1 if X.shape[0] >= _RESTART_ROWS else _RESTARTS
    best = None
    for run in range(n_runs):
        labels, within = _kmeans_once(X, n_clusters, seed + run)
        if best is None or within < best[1]:
            best = (labels, within)
    return best


def _kmeans_once(X, n_clusters, seed, n_iter=_LLOYD_ITER):
    """(labels, within-cluster sum of squares) of k-means++ seeding and ``n_iter`` Lloyd steps.

    The scores compare a view with its Gaussian twin by the same procedure, so a
    fixed, small budget suffices; ``X`` is small (at most ``max_samples`` rows).
    Greedy seeding (each centre the best of ``2 + ln k`` D^2-sampled candidates by
    the potential it leaves, as scikit-learn's ``kmeans_plusplus`` does): a bad
    local optimum of a view's k-means hides that view's agreement with the others,
    and the weights then miss the informative view; the greedy seeding avoids most
    bad optima at the cost of a few extra distance columns, not of whole runs.
    """
    rng = np.random.RandomState(seed)
    n = X.shape[0]
    sq = np.einsum("ij,ij->i", X, X)
    twice = 2.0 * X  # exact: every distance below is sq - (2 X) c + |c|^2, formed once
    centres = np.empty((n_clusters, X.shape[1]), dtype=X.dtype)
    first = rng.randint(n)
    centres[0] = X[first]
    closest = np.maximum(sq - twice @ X[first] + sq[first], 0.0)
    trials = 2 + int(np.log(n_clusters))
    for c in range(1, n_clusters):
        total = closest.sum()
        if total <= 0.0:  # every row on a centre: any row will do
            centres[c] = X[rng.randint(n)]
            continue
        candidates = np.minimum(
            np.searchsorted(np.cumsum(closest), rng.uniform(size=trials) * total), n - 1
        )
        distances = np.maximum(
            sq[:, None] - twice @ X[candidates].T + sq[candidates][None, :], 0.0
        )
        np.minimum(distances, closest[:, None], out=distances)
        best = int(np.argmin(distances.sum(axis=0)))
        centres[c] = X[candidates[best]]
        closest = distances[:, best].copy()
    labels = np.full(n, -1)
    for _ in range(n_iter):
        D = sq[:, None] - twice @ centres.T + np.einsum("ij,ij->i", centres, centres)[None]
        new = D.argmin(axis=1)
        if np.array_equal(new, labels):
            break
        labels = new
        onehot = np.zeros((n, n_clusters), dtype=X.dtype)
        onehot[np.arange(n), labels] = 1.0
        counts = onehot.sum(axis=0)
        sums = onehot.T @ X
        filled = counts > 0
        centres[filled] = sums[filled] / counts[filled, None]
    within = float(np.sum((X - centres[labels]) ** 2, dtype=np.float64))
    return labels, within


def _structure(views, withins, n_clusters, seed, n_threads=1):
    """``c_v`` of every view: its k-means within-cluster share against its Gaussian twin's."""

    def score(pair):
        X, within = pair
        if within is None:
            return 0.0
        twin = _gaussian_twin(X, seed)
        _, within_ref = _kmeans(twin, n_clusters, seed)
        total = float(np.einsum("ij,ij->", X, X))
        total_ref = float(np.einsum("ij,ij->", twin, twin))
        if within_ref > 0.0 and total > 0.0:
            return max(0.0, 1.0 - (within / total) / (within_ref / total_ref))
        return 0.0

    return np.array(map_tasks(score, zip(views, withins, strict=True), n_threads))


def _gaussian_twin(X, seed):
    """A Gaussian sample with the covariance of the centred ``X`` (same shape)."""
    n = X.shape[0]
    variances, axes = np.linalg.eigh(X.T @ X / n)
    noise = np.random.RandomState(seed).standard_normal((n, variances.size))
    return (noise * np.sqrt(np.clip(variances, 0.0, None))) @ axes.T


def _neighbours(X, n_neighbors):
    """Indices (n, n_neighbors) of each row's nearest other rows (squared Euclidean).

    The set of each row, in increasing order of distance. Where the
    ``n_neighbors``-th and the next distance are equal, the set is not unique and
    the row takes the one ``np.argpartition`` picks, so that every row's set is the
    one a partition of the full distance matrix gives. In single precision (see
    :func:`_single`).
    """
    X = _single(X)
    sq = np.einsum("ij,ij->i", X, X)
    gram = X @ X.T
    neighbours, tied = smallest_in_gram_rows(gram, sq, n_neighbors)
    for i in np.flatnonzero(tied):
        row = sq[i] + sq - 2.0 * gram[i]
        row[i] = np.inf
        neighbours[i] = np.argpartition(row, n_neighbors - 1)[:n_neighbors]
    return neighbours


def _same_cluster_agreement(neighbours, labels, n_clusters):
    """Chance-corrected fraction of kNN edges that stay inside a cluster of ``labels``."""
    rate = float(np.mean(labels[neighbours] == labels[:, None]))
    p = np.bincount(labels, minlength=n_clusters) / labels.size
    chance = float(np.dot(p, p))
    if chance >= 1.0:
        return 0.0
    return (rate - chance) / (1.0 - chance)


def _neighbour_overlap(a, b, n_samples):
    """Chance-corrected mean overlap of two kNN index sets (1 for identical sets)."""
    k = a.shape[1]
    hits = int(np.count_nonzero(a[:, :, None] == b[:, None, :]))
    overlap = hits / (k * a.shape[0])
    chance = k / max(n_samples - 1, 1)
    if chance >= 1.0:  # every other sample is a neighbour: the sets carry no information
        return 0.0
    return max(0.0, (overlap - chance) / (1.0 - chance))


def _identified(agreement, valid, floor, agreeing):
    """Whether the one-factor fit pins down the quality of every agreeing view.

    The agreements fix only products ``q_v q_u``. A view ``v`` that agrees beyond
    ``floor`` with two views ``u`` and ``w`` whose own agreement is measured (not
    near copies) is pinned down, ``q_v^2 = s_vu s_vw / s_uw``, and so is every
    view that agrees with such a view; a lone agreeing pair (beside noise views,
    or with a copy as the second partner) fixes its product alone.
    """
    linked = valid & (agreement > floor)
    np.fill_diagonal(linked, False)
    measured = valid.copy()
    np.fill_diagonal(measured, False)
    hub = np.array([bool(np.any(measured[np.ix_(row, row)])) for row in linked])
    pinned = hub | (linked[:, hub].any(axis=1) if hub.any() else hub)
    return bool(np.all(pinned[agreeing]))


def factor_quality(agreement, valid):
    """Least-squares one-factor fit ``agreement[v, u] ~ q_v q_u`` over the ``valid`` pairs.

    Exact updates of one view at a time, ``q_v = sum_u s_vu q_u / sum_u q_u^2`` (the
    sums over the valid partners ``u`` of ``v``), started from the root of each view's mean
    agreement and clipped to [0, 1]. A view with fewer than two valid partners is
    not identified and gets NaN.

    Parameters
    ----------
    agreement : ndarray of shape (n_views, n_views)
        Symmetric chance-corrected agreements.
    valid : ndarray of bool, shape (n_views, n_views)
        Symmetric; the pairs to fit (the diagonal is ignored).

    Returns
    -------
    quality : ndarray of shape (n_views,)
    """
    n_views = agreement.shape[0]
    valid = np.asarray(valid, dtype=bool) & ~np.eye(n_views, dtype=bool)
    counts = valid.sum(axis=1)
    A = np.where(valid, np.clip(agreement, 0.0, 1.0), 0.0)
    q = np.sqrt(A.sum(axis=1) / np.maximum(counts, 1))
    for _ in range(_FACTOR_ITER):
        previous = q.copy()
        for v in range(n_views):  # one view at a time: each step is an exact minimiser
            partners = valid[v]
            denominator = float(np.sum(q[partners] ** 2))
            q[v] = (
                min(1.0, float(A[v, partners] @ q[partners]) / denominator) if denominator else 0.0
            )
        if np.max(np.abs(q - previous)) < 1e-10:
            break
    return np.where(counts >= 2, q, np.nan)


def fit_view_weights(
    Xs,
    n_clusters,
    *,
    n_neighbors=10,
    max_samples=DEFAULT_MAX_SAMPLES,
    agreement_floor=DEFAULT_AGREEMENT_FLOOR,
    rule="reliability",
    tolerance=DEFAULT_QUALITY_TOLERANCE,
    random_state=None,
    keep=None,
    n_threads=1,
):
    """Label-free simplex weights of the views (see the module docstring).

    Parameters
    ----------
    Xs : list of array-like of shape (n_samples, n_features_v)
        The views, already validated (same number of rows, finite). Any per-feature
        affine scaling of a view leaves its weight unchanged (each view is z-scored
        here).
    n_clusters : int
        The number of clusters sought (>= 2 for a meaningful score; with 1 the
        weights are uniform).
    n_neighbors : int, default=10
        Neighbours per row in the agreement and redundancy graphs.
    max_samples : int, default=1000
        Rows used (a uniform random subsample when there are more); the cost is
        ``O(V s^2 (d + 1) + V^2 s k)`` for ``s = min(n, max_samples)`` rows.
    agreement_floor : float, default=0.05
        Largest chance-corrected agreement that still counts as "no shared
        structure" between two views.
    random_state : int, RandomState instance or None, default=None
        Seeds the subsample and the per-view k-means (one seed shared by all views).
    keep : dict or None, default=None
        Receives under ``"neighbours"`` the ``n_neighbors``-nearest-neighbour indices
        of the scored rows in each standardised view (None for a view with no
        non-constant column), for a caller that needs the same neighbourhoods.
    n_threads : int, default=1
        Views scored at once (:func:`~mvlearn_ext.utils._threads.map_tasks`); the
        weights do not depend on it.

    Returns
    -------
    ViewWeights
        ``weights_`` and the diagnostics.

    Raises
    ------
    ValueError
        If ``Xs`` is empty, ``n_clusters < 1``, ``n_neighbors < 1`` or
        ``max_samples < 2``.
    """
    if len(Xs) == 0:
        raise ValueError("Xs must hold at least one view")
    if not isinstance(n_clusters, Integral) or n_clusters < 1:
        raise ValueError(f"n_clusters must be an integer >= 1, got {n_clusters!r}")
    if not isinstance(n_neighbors, Integral) or n_neighbors < 1:
        raise ValueError(f"n_neighbors must be an integer >= 1, got {n_neighbors!r}")
    if not isinstance(max_samples, Integral) or max_samples < 2:
        raise ValueError(f"max_samples must be an integer >= 2, got {max_samples!r}")
    if rule not in ("reliability", "factor"):
        raise ValueError(f"rule must be 'reliability' or 'factor', got {rule!r}")
    if not 0.0 < tolerance <= 1.0:
        raise ValueError(f"tolerance must be in (0, 1], got {tolerance!r}")
    n_views = len(Xs)
    n = np.asarray(Xs[0]).shape[0]
    rng = check_random_state(random_state)
    rows = np.sort(rng.choice(n, size=max_samples, replace=False)) if n > max_samples else None
    seed = int(rng.randint(np.iinfo(np.int32).max))
    views = [_standardised(np.asarray(X)[rows] if rows is not None else X) for X in Xs]
    s = views[0].shape[0]
    k = int(min(n_clusters, s))
    nn = int(min(n_neighbors, s - 1))
    uniform = np.full(n_views, 1.0 / n_views)
    if k < 2 or nn < 1:
        return ViewWeights(
            uniform, np.zeros(n_views), np.eye(n_views), np.ones(n_views), np.ones(n_views), rows
        )

    def score_view(X):
        if X.shape[1] == 0:  # constant view: no structure, agrees with nothing
            return np.zeros(s, dtype=np.intp), None, np.tile(np.arange(1, nn + 1), (s, 1)) % s
        X = _single(X)  # once for both (each converts only what is not single already)
        return (*_kmeans(X, k, seed), _neighbours(X, nn))

    # One task per view; threads inside a view (BLAS, k-means' OpenMP) only cost here.
    labels, withins, neighbours = zip(*map_tasks(score_view, views, n_threads), strict=True)

    constant = [X.shape[1] == 0 for X in views]
    if keep is not None:
        keep["neighbours"] = [
            None if flat else nb for flat, nb in zip(constant, neighbours, strict=True)
        ]
    directed = np.zeros((n_views, n_views))
    overlap = np.eye(n_views)
    for v in range(n_views):
        if constant[v]:
            continue
        for u in range(n_views):
            if u != v and not constant[u]:
                directed[v, u] = _same_cluster_agreement(neighbours[v], labels[u], k)
        for u in range(v + 1, n_views):
            if constant[u]:
                continue
            overlap[v, u] = overlap[u, v] = _neighbour_overlap(neighbours[v], neighbours[u], s)
    agreement = np.clip((directed + directed.T) / 2.0, 0.0, 1.0)
    np.fill_diagonal(agreement, 1.0)
    # Agreement with a copy of oneself is no evidence: discount it by the overlap.
    redundant = overlap**_COPY_POWER
    off = agreement * (1.0 - redundant)
    best = off.max() if n_views > 1 else 0.0
    structure = np.full(n_views, np.nan)
    if best > agreement_floor:
        # Cross-view evidence: the weight follows the agreement (a view that agrees
        # with another beyond chance carries cluster structure, whatever its shape).
        reliability = off.max(axis=1) / best
        score = reliability.copy()
        if rule == "factor" and n_views >= 3:
            valid = overlap < _FACTOR_COPY_OVERLAP
            quality = factor_quality(agreement, valid)
            if (
                _identified(agreement, valid, agreement_floor, off.max(axis=1) > agreement_floor)
                and np.all(np.isfinite(quality))
                and quality.max() > 0.0
            ):
                reliability = quality / quality.max()
                score = np.minimum(1.0, reliability / tolerance) ** 2
    else:
        # No cross-view evidence: the structure score, squared (see the module notes).
        reliability = np.ones(n_views)
        structure = _structure(views, withins, k, seed, n_threads)
        score = structure**2
    redundancy = redundant.sum(axis=1)
    score /= redundancy
    total = score.sum()
    weights = score / total if total > 0.0 else uniform
    return ViewWeights(weights, structure, agreement, reliability, redundancy, rows)
