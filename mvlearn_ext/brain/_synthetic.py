"""Synthetic connectomes whose meaning depends on the phenotype (PhenoBrain demo).

A package design, built to exhibit the
motivation of PhenoBrain's abstract: "the same functional connectivity
pattern may support different conclusions under different phenotype
contexts". Not one of the paper's datasets (those are built from public
imaging data and need downloads).
"""

from __future__ import annotations

from numbers import Real

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.utils._validation import check_count, check_real

__all__ = ["make_phenotype_connectomes", "make_routed_connectomes"]


def _check_generator_args(ints, floats, noise, label_noise, path_range):
    """Validate the arguments the connectome generators share; return ``(low, high)``.

    ``ints`` is ``[(name, value, minimum)]``, ``floats`` is ``[(name, value)]``.
    """
    for name, value, low in ints:
        check_count(value, name, low)
    for name, value in floats:
        check_real(value, name)
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise!r}")
    if not isinstance(label_noise, Real) or not 0 <= label_noise <= 0.5:
        raise ValueError(f"label_noise must be in [0, 0.5], got {label_noise!r}")
    try:
        lo, hi = (float(v) for v in path_range)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"path_range must be two floats (low, high), got {path_range!r}") from exc
    if not lo < hi:
        raise ValueError(f"path_range must have low < high, got {path_range!r}")
    return lo, hi


def _noisy_connectomes(block, rois_per_module, noise, rng):
    """Block strengths ``(n, M, M)`` to connectomes: symmetric noise, unit diagonal, clipped."""
    n, Mn = block.shape[:2]
    N = Mn * rois_per_module
    module = np.repeat(np.arange(Mn), rois_per_module)
    B = block[:, module][:, :, module]
    E = rng.normal(size=(n, N, N))
    E = (E + np.swapaxes(E, 1, 2)) / np.sqrt(2.0)
    A = np.clip(B + noise * E, -1.0, 1.0)
    diag = np.arange(N)
    A[:, diag, diag] = 1.0
    return A


def _median_labels(score, label_noise, rng):
    """``1[score > median]``, then a share ``label_noise`` of the labels flipped."""
    y = (score > np.median(score)).astype(int)
    flip = rng.uniform(size=score.shape[0]) < label_noise
    y[flip] = 1 - y[flip]
    return y


def make_phenotype_connectomes(
    n_subjects=400,
    *,
    n_modules=4,
    rois_per_module=4,
    within=0.5,
    between=0.05,
    path_range=(0.05, 0.6),
    noise=0.1,
    label_noise=0.05,
    age_effect=0.1,
    random_state=None,
    return_paths=False,
):
    """Connectomes with a phenotype-routed 2-hop label signal.

    ``n_modules`` modules (``M1, ..., M4`` for the default 4) of
    ``rois_per_module`` ROIs each. Subject ``s`` has a binary phenotype
    ``g_s`` (a group, 50/50) and a continuous age. Four between-module
    strengths are drawn uniformly in ``path_range``: ``a`` (M1-M2), ``b``
    (M2-M3), ``c`` (M1-M4) and ``d`` (M4-M3). The label reads the strength of
    the *2-hop* route from M1 to M3 that the phenotype selects::

        s = a * b   if g = 0   (through M2)
        s = c * d   if g = 1   (through M4)
        y = 1[s > median(s)], then a share ``label_noise`` of labels flipped.

    The direct M1-M3 block carries no signal (it is ``between`` like every
    other block), and the four strengths are independent of ``g``, so the
    same connectome pattern predicts the label under one phenotype and is
    noise under the other. Age scales the within-module strength by
    ``1 - age_effect * age`` (a nuisance, unrelated to the label).

    The connectome is ``A = B + noise * E`` with ``B`` the block matrix of
    these strengths, ``E`` symmetric standard normal, the diagonal set to 1
    and the entries clipped to ``[-1, 1]`` (a Pearson-like matrix, not a
    correlation of simulated time series).

    Parameters
    ----------
    n_subjects : int, default=400
    n_modules : int >= 4, default=4
        Modules beyond the fourth are background.
    rois_per_module : int >= 1, default=4
    within : float, default=0.5
        Within-module strength at age 0.
    between : float, default=0.05
        Strength of the other between-module blocks.
    path_range : tuple of two floats, default=(0.05, 0.6)
    noise : float >= 0, default=0.1
        Standard deviation of the edge noise.
    label_noise : float in [0, 0.5], default=0.05
    age_effect : float, default=0.1
    random_state : int, RandomState instance or None, default=None
    return_paths : bool, default=False
        Also return the latent strengths ``(a, b, c, d)`` and the path score.

    Returns
    -------
    A : ndarray of shape (n_subjects, N, N)
        ``N = n_modules * rois_per_module``.
    phenotypes : ndarray of shape (n_subjects, 2)
        Columns: the group ``g`` (0/1) and the standardised age.
    y : ndarray of int, shape (n_subjects,)
    paths : ndarray of shape (n_subjects, 4), optional
        ``a, b, c, d``.
    score : ndarray of shape (n_subjects,), optional
        ``s`` (before the label noise).

    See Also
    --------
    make_routed_connectomes : Many routes picked by a categorical phenotype.
    PhenoBrainClassifier : The classifier for such data.

    Examples
    --------
    >>> from mvlearn_ext.brain import make_phenotype_connectomes
    >>> A, P, y = make_phenotype_connectomes(100, random_state=0)
    >>> A.shape, P.shape, y.shape, float(A[0, 0, 0])
    ((100, 16, 16), (100, 2), (100,), 1.0)
    """
    lo, hi = _check_generator_args(
        [("n_subjects", n_subjects, 2), ("n_modules", n_modules, 4)]
        + [("rois_per_module", rois_per_module, 1)],
        [("within", within), ("between", between), ("noise", noise), ("age_effect", age_effect)],
        noise,
        label_noise,
        path_range,
    )
    rng = check_random_state(random_state)
    n, Mn = int(n_subjects), int(n_modules)
    g = rng.randint(0, 2, size=n)
    age = rng.uniform(-1.0, 1.0, size=n)  # standardised to [-1, 1]
    paths = rng.uniform(lo, hi, size=(n, 4))  # a: M1-M2, b: M2-M3, c: M1-M4, d: M4-M3
    block = np.full((n, Mn, Mn), float(between))
    idx = np.arange(Mn)
    block[:, idx, idx] = (within * (1.0 - age_effect * age))[:, None]
    for k, (u, v) in enumerate(((0, 1), (1, 2), (0, 3), (3, 2))):
        block[:, u, v] = block[:, v, u] = paths[:, k]
    A = _noisy_connectomes(block, int(rois_per_module), noise, rng)
    score = np.where(g == 0, paths[:, 0] * paths[:, 1], paths[:, 2] * paths[:, 3])
    y = _median_labels(score, label_noise, rng)
    phenotypes = np.column_stack([g.astype(np.float64), age / np.sqrt(1.0 / 3.0)])
    if return_paths:
        return A, phenotypes, y, paths, score
    return A, phenotypes, y


def make_routed_connectomes(
    n_subjects=800,
    *,
    n_routes=8,
    rois_per_module=2,
    within=0.5,
    between=0.05,
    path_range=(0.05, 0.6),
    noise=0.1,
    label_noise=0.05,
    random_state=None,
    return_paths=False,
):
    """Connectomes where a categorical phenotype picks one of many 2-hop routes.

    The regime in which a phenotype-agnostic representation of limited width
    must carry every candidate route for a head with the phenotype to pick
    the right one. ``n_routes + 2`` modules of ``rois_per_module`` ROIs: a
    source ``S`` (module 0), a target ``T`` (module 1) and one relay ``R_k``
    per route (module ``k + 2``). Subject ``s`` has a phenotype category
    ``g_s`` uniform on ``{0, ..., n_routes - 1}`` and, for every route,
    strengths ``a_k`` (S-R_k) and ``b_k`` (R_k-T) drawn uniformly in
    ``path_range``, independent of ``g``. The label reads the route the
    phenotype selects::

        s = a_g * b_g,   y = 1[s > median(s)],

    then a share ``label_noise`` of labels is flipped. Every other block
    (the direct S-T block included) is ``between``; the connectome is built
    as in :func:`make_phenotype_connectomes` (block matrix plus symmetric
    noise, unit diagonal, clipped to ``[-1, 1]``). A package design, not
    one of the paper's datasets.

    Parameters
    ----------
    n_subjects : int, default=800
    n_routes : int >= 2, default=8
    rois_per_module : int >= 1, default=2
    within, between : float, default=0.5, 0.05
    path_range : tuple of two floats, default=(0.05, 0.6)
    noise : float >= 0, default=0.1
    label_noise : float in [0, 0.5], default=0.05
    random_state : int, RandomState instance or None, default=None
    return_paths : bool, default=False
        Also return the strengths ``(a, b)`` and the score ``s``.

    Returns
    -------
    A : ndarray of shape (n_subjects, N, N)
        ``N = (n_routes + 2) * rois_per_module``.
    phenotypes : ndarray of shape (n_subjects, n_routes)
        The one-hot category ``g``.
    y : ndarray of int, shape (n_subjects,)
    a, b : ndarray of shape (n_subjects, n_routes), optional
    score : ndarray of shape (n_subjects,), optional

    See Also
    --------
    make_phenotype_connectomes : A continuous phenotype.

    Examples
    --------
    >>> from mvlearn_ext.brain import make_routed_connectomes
    >>> A, P, y = make_routed_connectomes(50, random_state=0)
    >>> A.shape, P.shape, float(P.sum(axis=1).max())
    ((50, 20, 20), (50, 8), 1.0)
    """
    lo, hi = _check_generator_args(
        [("n_subjects", n_subjects, 2), ("n_routes", n_routes, 2)]
        + [("rois_per_module", rois_per_module, 1)],
        [("within", within), ("between", between), ("noise", noise)],
        noise,
        label_noise,
        path_range,
    )
    rng = check_random_state(random_state)
    n, K = int(n_subjects), int(n_routes)
    Mn = K + 2
    g = rng.randint(0, K, size=n)
    a = rng.uniform(lo, hi, size=(n, K))
    b = rng.uniform(lo, hi, size=(n, K))
    block = np.full((n, Mn, Mn), float(between))
    idx = np.arange(Mn)
    block[:, idx, idx] = float(within)
    relay = np.arange(K) + 2
    block[:, 0, relay] = block[:, relay, 0] = a
    block[:, 1, relay] = block[:, relay, 1] = b
    A = _noisy_connectomes(block, int(rois_per_module), noise, rng)
    rows = np.arange(n)
    score = a[rows, g] * b[rows, g]
    y = _median_labels(score, label_noise, rng)
    phenotypes = np.eye(K)[g]
    if return_paths:
        return A, phenotypes, y, a, b, score
    return A, phenotypes, y
