"""BADIT's NumPy parts: PiSSA-MoE initialisation and balanced regrouping of rank-1 units.

BADIT (Wang, Li, Li, Chi, Niu, Sugiyama, ICML 2026, arXiv 2605.05676; code
``wangbing1416/BADIT``) splits the top singular triplets of a linear layer's
weight into K LoRA experts of rank r (orthogonal in row and column spaces)
over a residual base, and regroups the K*r rank-1 units by clustering their
gradient directions so that each expert gathers units that move together.

Fixed here (the public code can do otherwise): the regroup is always a true
permutation (exactly r units per expert, none dropped or duplicated), by an
optimal capacity-constrained assignment; the gate can be permuted together
with the units (``gate_permutation``).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import linear_sum_assignment

from mvlearn_ext.utils._validation import (
    check_count,
    check_magnitude,
    check_real,
    check_rng,
    integer_array,
    real_array,
)

__all__ = [
    "balanced_assignment",
    "balanced_spherical_kmeans",
    "expert_orthogonality",
    "gate_permutation",
    "intra_inter_cosine",
    "pissa_moe_init",
    "regroup_permutation",
    "should_regroup",
    "unit_gradient_vectors",
]


def _unit_rows(X):
    """The rows of ``X`` scaled to unit norm (zero rows stay zero), in any units.

    Each row is divided by its largest magnitude before its norm is taken, so
    that rows of about 1e-170 (whose squares underflow) or 1e200 (whose squares
    overflow) give the same directions as rows of about 1.
    """
    top = np.max(np.abs(X), axis=1, keepdims=True)
    Y = np.divide(X, top, out=np.zeros_like(X), where=top > 0)
    norms = np.linalg.norm(Y, axis=1, keepdims=True)
    return np.divide(Y, norms, out=np.zeros_like(Y), where=norms > 0)


def pissa_moe_init(weight, n_experts, rank, *, lora_alpha=None):
    """Split the top ``n_experts * rank`` singular triplets of ``weight`` into LoRA experts.

    With ``W = U S V^T`` and ``s = lora_alpha / rank``, expert e takes the
    triplets ``e*r .. (e+1)*r - 1``: ``B_e = U_e diag(sqrt(S_e / s))``,
    ``A_e = diag(sqrt(S_e / s)) V_e^T``, and the residual is
    ``W_res = W - s sum_e B_e A_e``, so ``W_res + s sum_e B_e A_e = W``
    exactly (to float rounding). Experts are mutually orthogonal:
    ``A_e A_f^T = 0`` and ``B_e^T B_f = 0`` for e != f.

    Parameters
    ----------
    weight : array-like of shape (n_out, n_in)
        In the ``torch.nn.Linear`` layout.
    n_experts, rank : int
        K and r, with ``K * r <= min(n_out, n_in)``.
    lora_alpha : float, default=None
        peft's alpha, a finite number > 0 (default ``rank``, so s = 1).

    Returns
    -------
    residual : ndarray of shape (n_out, n_in)
    B : ndarray of shape (n_experts, n_out, rank)
    A : ndarray of shape (n_experts, rank, n_in)
    scaling : float
        s.

    See Also
    --------
    LoRAMoELinear : The layer it initialises.
    expert_orthogonality : Checks the experts' orthogonality.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.adapters import pissa_moe_init
    >>> W = np.random.default_rng(0).normal(size=(6, 5))
    >>> res, B, A, s = pissa_moe_init(W, 2, 2)
    >>> bool(np.allclose(res + s * np.einsum("eor,eri->oi", B, A), W))
    True
    """
    W = real_array(weight, "weight", ndim=2)
    K, r = check_count(n_experts, "n_experts", 1), check_count(rank, "rank", 1)
    if K * r > min(W.shape):
        raise ValueError(f"n_experts * rank = {K * r} exceeds min(weight.shape) = {min(W.shape)}")
    alpha = (
        float(r)
        if lora_alpha is None
        else check_real(lora_alpha, "lora_alpha", low=0, low_open=True)
    )
    s = alpha / r
    U, S, Vt = np.linalg.svd(W, full_matrices=False)
    root = np.sqrt(S[: K * r] / s)
    B = (U[:, : K * r] * root).T.reshape(K, r, W.shape[0]).transpose(0, 2, 1)
    A = (root[:, None] * Vt[: K * r]).reshape(K, r, W.shape[1])
    residual = W - s * np.einsum("eor,eri->oi", B, A)
    return residual, B, A, s


def expert_orthogonality(B, A):
    """Largest ``|A_e A_f^T|`` and ``|B_e^T B_f|`` entry over expert pairs e != f.

    Parameters
    ----------
    B : array-like of shape (n_experts, n_out, rank)
        The up-projection factors of the experts.
    A : array-like of shape (n_experts, rank, n_in)
        The down-projection factors of the experts.

    Returns
    -------
    worst : dict
        ``{"A": float, "B": float}``, the largest absolute cross-expert entry
        of each factor (0 for exactly orthogonal experts).

    See Also
    --------
    pissa_moe_init : Initialises orthogonal experts.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.adapters import expert_orthogonality, pissa_moe_init
    >>> _, B, A, _ = pissa_moe_init(np.random.default_rng(0).normal(size=(6, 5)), 2, 2)
    >>> worst = expert_orthogonality(B, A)
    >>> bool(worst["A"] < 1e-10), bool(worst["B"] < 1e-10)
    (True, True)
    """
    B, A = real_array(B, "B", ndim=3), real_array(A, "A", ndim=3)
    if B.shape[0] != A.shape[0] or B.shape[2] != A.shape[1]:
        raise ValueError(
            f"B (n_experts, n_out, rank) and A (n_experts, rank, n_in) do not match: "
            f"{B.shape}, {A.shape}"
        )
    check_magnitude(B, "B")
    check_magnitude(A, "A")
    K = A.shape[0]
    worst_a = worst_b = 0.0
    for e in range(K):
        for f in range(K):
            if e != f:
                worst_a = max(worst_a, float(np.abs(A[e] @ A[f].T).max()))
                worst_b = max(worst_b, float(np.abs(B[e].T @ B[f]).max()))
    return {"A": worst_a, "B": worst_b}


def unit_gradient_vectors(grad_B, grad_A):
    """Unit-normalised gradient vector of every rank-1 unit (e, i).

    ``gamma_{e,i} = [dL/dA_e[i, :], dL/dB_e[:, i]] / norm``, rows ordered
    ``e * r + i``. Zero gradients stay zero; the directions do not depend on
    the units of the gradients (any finite magnitude is accepted).

    Parameters
    ----------
    grad_B : array-like of shape (n_experts, n_out, rank)
    grad_A : array-like of shape (n_experts, rank, n_in)

    Returns
    -------
    vectors : ndarray of shape (n_experts * rank, n_in + n_out)

    See Also
    --------
    balanced_spherical_kmeans : Clusters these vectors.
    intra_inter_cosine : Their mean cosines.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.adapters import unit_gradient_vectors
    >>> V = unit_gradient_vectors(np.ones((2, 3, 2)), np.ones((2, 2, 4)))
    >>> V.shape, bool(np.allclose(np.linalg.norm(V, axis=1), 1.0))
    ((4, 7), True)
    """
    gB, gA = real_array(grad_B, "grad_B", ndim=3), real_array(grad_A, "grad_A", ndim=3)
    if gB.shape[0] != gA.shape[0] or gB.shape[2] != gA.shape[1]:
        raise ValueError(
            f"grad_B (K, n_out, r) and grad_A (K, r, n_in) do not match: {gB.shape}, {gA.shape}"
        )
    K, r = gA.shape[:2]
    vec = np.concatenate([gA.reshape(K * r, -1), gB.transpose(0, 2, 1).reshape(K * r, -1)], axis=1)
    return _unit_rows(vec)


def balanced_assignment(vectors, centroids, capacity, *, metric="cosine"):
    """Assign every vector to a centroid, exactly ``capacity`` per centroid, at minimum total cost.

    Solved exactly as a linear assignment (Hungarian) on the
    ``n x (K * capacity)`` cost matrix with each centroid replicated
    ``capacity`` times; needs ``n == K * capacity``. Cost: ``1 - cos`` or
    squared Euclidean distance, computed in units where the largest entry of
    ``vectors`` and ``centroids`` is 1, so that the labels do not depend on the
    units of the data.

    Parameters
    ----------
    vectors : array-like of shape (n, d)
        The points to assign; ``n`` must equal ``n_centroids * capacity``.
    centroids : array-like of shape (n_centroids, d)
        The centroids.
    capacity : int
        The number of points every centroid receives.
    metric : {"cosine", "euclidean"}, default="cosine"
        The cost of assigning a point to a centroid: ``1 - cos`` or the
        squared Euclidean distance.

    Returns
    -------
    labels : ndarray of int, shape (n,)
        Each label appears exactly ``capacity`` times.

    See Also
    --------
    balanced_spherical_kmeans : The clustering built on it.

    Examples
    --------
    >>> from mvlearn_ext.adapters import balanced_assignment
    >>> vectors = [[1.0, 0.0], [0.9, 0.1], [0.8, 0.2], [0.0, 1.0]]
    >>> balanced_assignment(vectors, [[1.0, 0.0], [0.0, 1.0]], 2).tolist()
    [0, 0, 1, 1]
    """
    X, C = real_array(vectors, "vectors", ndim=2), real_array(centroids, "centroids", ndim=2)
    cap = check_count(capacity, "capacity", 1)
    if X.shape[1] != C.shape[1]:
        raise ValueError(f"vectors (n, d) and centroids (K, d) do not match: {X.shape}, {C.shape}")
    if X.shape[0] != C.shape[0] * cap:
        raise ValueError(
            f"need n = K * capacity vectors, got n = {X.shape[0]}, K = {C.shape[0]}, "
            f"capacity = {cap}"
        )
    if metric == "cosine":
        cost = 1.0 - _unit_rows(X) @ _unit_rows(C).T
    elif metric == "euclidean":
        top = max(float(np.abs(X).max()), float(np.abs(C).max()))
        if top > 0:
            X, C = X / top, C / top
        cost = ((X[:, None, :] - C[None, :, :]) ** 2).sum(axis=2)
    else:
        raise ValueError(f"metric must be 'cosine' or 'euclidean', got {metric!r}")
    rows, cols = linear_sum_assignment(np.repeat(cost, cap, axis=1))
    labels = np.empty(X.shape[0], dtype=int)
    labels[rows] = cols // cap
    return labels


def balanced_spherical_kmeans(vectors, n_clusters, *, max_iter=20, n_init=4, random_state=None):
    """Spherical k-means with clusters of exactly ``n / n_clusters`` points.

    Centroids are renormalised means, points are assigned by cosine under the
    capacity constraint (:func:`balanced_assignment`); the best of ``n_init``
    seeded starts (highest total cosine) is returned. The public BADIT code
    runs Euclidean k-means and then fills under-full clusters at random,
    which can drop or duplicate units; this never does. Only the directions
    of the rows matter (any finite magnitude is accepted); zero rows have
    cosine 0 with every centroid.

    Parameters
    ----------
    vectors : array-like of shape (n, d)
        The points; ``n`` must be a multiple of ``n_clusters``.
    n_clusters : int
        The number of clusters, each of exactly ``n / n_clusters`` points.
    max_iter : int, default=20
        Assignment and centroid steps of each start.
    n_init : int, default=4
        Seeded starts; the one with the highest total cosine is kept.
    random_state : int, Generator or None, default=None
        Seeds the starts.

    Returns
    -------
    labels : ndarray of int, shape (n,)

    See Also
    --------
    balanced_assignment : Its assignment step.
    sklearn.cluster.KMeans : Unconstrained k-means.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.adapters import balanced_spherical_kmeans
    >>> X = np.array([[1.0, 0.0], [1.0, 0.1], [0.0, 1.0], [0.1, 1.0]])
    >>> labels = balanced_spherical_kmeans(X, 2, random_state=0)
    >>> np.bincount(labels).tolist(), bool(labels[0] == labels[1])
    ([2, 2], True)
    """
    X = real_array(vectors, "vectors", ndim=2)
    K = check_count(n_clusters, "n_clusters", 1)
    if X.shape[0] % K:
        raise ValueError(
            f"vectors must have a multiple of n_clusters = {K} rows, got shape {X.shape}"
        )
    cap = X.shape[0] // K
    Xu = _unit_rows(X)
    rng = check_rng(random_state)
    best, best_score = None, -np.inf
    for _ in range(check_count(n_init, "n_init", 1)):
        centroids = Xu[rng.choice(X.shape[0], K, replace=False)]
        labels = None
        for _ in range(check_count(max_iter, "max_iter", 1)):
            new = balanced_assignment(Xu, centroids, cap)
            if labels is not None and np.array_equal(new, labels):
                break
            labels = new
            centroids = np.stack([Xu[labels == k].sum(axis=0) for k in range(K)])
            cn = np.linalg.norm(centroids, axis=1, keepdims=True)
            centroids = np.divide(centroids, cn, out=np.zeros_like(centroids), where=cn > 0)
        score = float(np.sum(Xu * centroids[labels]))
        if score > best_score:
            best, best_score = labels, score
    return best


def regroup_permutation(labels, n_experts, rank):
    """The unit permutation that puts the units labelled ``e`` into expert ``e``.

    Returns ``perm`` of length ``K * r`` with new flat unit ``e * r + i`` taken
    from old flat unit ``perm[e * r + i]`` (units of one label keep their
    relative order). Raises unless every label appears exactly ``rank`` times,
    so the result is always a permutation.

    Parameters
    ----------
    labels : array-like of int, shape (n_experts * rank,)
        The expert of every flat rank-1 unit (each label exactly ``rank``
        times).
    n_experts : int
        The number of experts.
    rank : int
        The rank of every expert.

    Returns
    -------
    perm : ndarray of int, shape (n_experts * rank,)
        The old flat unit of every new flat unit.

    See Also
    --------
    balanced_spherical_kmeans : The labels it takes.
    gate_permutation : The matching permutation of the gate.

    Examples
    --------
    >>> from mvlearn_ext.adapters import regroup_permutation
    >>> regroup_permutation([1, 0, 1, 0], 2, 2).tolist()
    [1, 3, 0, 2]
    """
    K, r = check_count(n_experts, "n_experts", 1), check_count(rank, "rank", 1)
    labels = integer_array(labels, "labels", ndim=1, low=0, high=K - 1)
    if labels.shape != (K * r,):
        raise ValueError(f"labels must have shape ({K * r},), got {labels.shape}")
    counts = np.bincount(labels, minlength=K)
    if counts.size != K or np.any(counts != r):
        raise ValueError(
            f"every expert needs exactly rank = {r} units; label counts are {counts.tolist()}"
        )
    return np.argsort(labels, kind="stable")


def gate_permutation(perm, n_experts, rank):
    """Old expert whose gate row each new expert inherits: the largest unit overlap.

    A permutation of the experts, by a linear assignment on the overlap counts
    (``permute_gate`` option; the public code leaves the gate unpermuted).

    Parameters
    ----------
    perm : array-like of int, shape (n_experts * rank,)
        The unit permutation of :func:`regroup_permutation`.
    n_experts : int
        The number of experts.
    rank : int
        The rank of every expert.

    Returns
    -------
    experts : ndarray of int, shape (n_experts,)
        The old expert whose gate row new expert ``e`` takes.

    See Also
    --------
    regroup_permutation : The unit permutation.

    Examples
    --------
    >>> from mvlearn_ext.adapters import gate_permutation
    >>> gate_permutation([2, 3, 0, 1], 2, 2).tolist()  # the experts swap
    [1, 0]
    """
    K, r = check_count(n_experts, "n_experts", 1), check_count(rank, "rank", 1)
    perm = integer_array(perm, "perm", ndim=1)
    if perm.shape != (K * r,):
        raise ValueError(f"perm must have shape ({K * r},), got {perm.shape}")
    if not np.array_equal(np.sort(perm), np.arange(K * r)):
        raise ValueError(
            f"perm must be a permutation of 0 .. {K * r - 1}: it repeats or misses units"
        )
    overlap = np.zeros((K, K))
    for new_flat, old_flat in enumerate(perm):
        overlap[new_flat // r, old_flat // r] += 1
    _, cols = linear_sum_assignment(-overlap)
    return cols


def intra_inter_cosine(vectors, labels):
    """Mean cosine between unit gradients within the same expert and across experts.

    Parameters
    ----------
    vectors : array-like of shape (n_units, d)
        The unit gradient vectors (:func:`unit_gradient_vectors`).
    labels : array-like of int, shape (n_units,)
        The expert of every unit.

    Returns
    -------
    cosines : dict
        ``{"intra": float, "inter": float}``; NaN where no pair exists. A zero
        row has cosine 0 with every row; the cosines do not depend on the
        units of the rows.

    See Also
    --------
    unit_gradient_vectors : The vectors it compares.

    Examples
    --------
    >>> from mvlearn_ext.adapters import intra_inter_cosine
    >>> intra_inter_cosine([[1.0, 0.0], [1.0, 0.0], [0.0, 1.0], [0.0, 1.0]], [0, 0, 1, 1])
    {'intra': 1.0, 'inter': 0.0}
    """
    X = real_array(vectors, "vectors", ndim=2)
    labels = integer_array(labels, "labels", ndim=1)
    if labels.shape[0] != X.shape[0]:
        raise ValueError(
            f"labels must have one entry per row of vectors ({X.shape[0]}), got {labels.shape[0]}"
        )
    Xu = _unit_rows(X)
    cos = Xu @ Xu.T
    same = labels[:, None] == labels[None, :]
    off = ~np.eye(labels.size, dtype=bool)
    intra = cos[same & off]
    inter = cos[~same]
    return {
        "intra": float(intra.mean()) if intra.size else float("nan"),
        "inter": float(inter.mean()) if inter.size else float("nan"),
    }


def should_regroup(epoch, n_epochs):
    """BADIT's schedule: regroup after epoch ``epoch`` (1-based) while it is <= n_epochs / 2.

    Parameters
    ----------
    epoch : int >= 1
        The epoch just finished, counted from 1.
    n_epochs : int >= 1
        The number of training epochs.

    Returns
    -------
    regroup : bool
        Whether the experts are regrouped after this epoch.

    See Also
    --------
    regroup_permutation : The regrouping.

    Examples
    --------
    >>> from mvlearn_ext.adapters import should_regroup
    >>> [should_regroup(epoch, 4) for epoch in (1, 2, 3)]
    [True, True, False]
    """
    epoch = check_count(epoch, "epoch", 1)
    return epoch <= check_count(n_epochs, "n_epochs", 1) / 2
