"""PhenoBrain's routing kernel and attention regulariser (NumPy).

Reconstruction: PhenoBrain (Meng et al., ICML 2026 spotlight, OpenReview
9NqKL9QQ4a) is known only from its abstract, which names "a
phenotype-conditioned long-range routing mechanism, which learns a
subject-specific multi-hop communication kernel" and "a phenotypic-guided
attention mechanism regulation method, which uses phenotypic information as
a conditional prior". The forms below (a polynomial in the normalised graph
with phenotype-dependent hop weights, a heat kernel as the alternative, and a
row-wise KL regulariser towards the row-normalised kernel) are this
package's design, built to match those sentences; they are not the paper's
equations.

Every function accepts one matrix ``(N, N)`` or a stack ``(n_subjects, N, N)``.
"""

from __future__ import annotations

from numbers import Integral, Real

import numpy as np

from mvlearn_ext.utils._validation import check_magnitude, real_array

__all__ = [
    "attention_prior_kl",
    "heat_kernel",
    "hop_powers",
    "normalize_connectome",
    "routing_kernel",
    "row_normalize",
]


def _check_square_stack(A, name):
    """A float array of shape (N, N) or (n, N, N), finite; returns (array, was_2d)."""
    arr = real_array(A, name)
    if arr.ndim not in (2, 3) or arr.shape[-1] != arr.shape[-2]:
        raise ValueError(
            f"{name} must have shape (N, N) or (n_subjects, N, N), got shape {arr.shape}"
        )
    was_2d = arr.ndim == 2
    return (arr[None] if was_2d else arr), was_2d


def _check_symmetric(arr, name, was_2d):
    """Refuse, naming ``name`` (and the subject of a stack), a matrix of the stack ``arr``
    of shape (n, N, N) that is not symmetric.

    The tolerance is relative: ``max |A - A^T| <= 1e-8 max |A|`` per matrix, the same
    in any units of ``A``.
    """
    asym = np.abs(arr - np.swapaxes(arr, -1, -2)).max(axis=(1, 2))
    bad = asym > 1e-8 * np.abs(arr).max(axis=(1, 2))
    if bad.any():
        k = int(np.argmax(bad))
        where = "" if was_2d else f"; subject {k} is not"
        raise ValueError(
            f"{name} must be symmetric{where} (largest |{name} - {name}.T| {asym[k]:.3g})"
        )


def _hop_powers(arr, n_hops, name="A_hat"):
    """``I, A, ..., A^H`` of a validated stack ``arr`` of shape (n, N, N).

    Raises a ValueError naming ``name`` when a power overflows float64.
    """
    n, N, _ = arr.shape
    out = np.empty((n, n_hops + 1, N, N))
    out[:, 0] = np.eye(N)
    for h in range(1, n_hops + 1):
        with np.errstate(over="ignore", invalid="ignore"):
            out[:, h] = out[:, h - 1] @ arr
        finite = np.isfinite(out[:, h]).all(axis=(1, 2))
        if not finite.all():
            k = int(np.argmin(finite))
            radius = float(np.abs(np.linalg.eigvals(arr[k])).max())
            raise ValueError(
                f"{name} is too large for {n_hops} hops: its power {h} overflows float64 "
                f"({name}^h grows like r^h, spectral radius r = {radius:.3g}"
                f"{'' if n == 1 else f' for subject {k}'}). Normalise it with "
                "normalize_connectome (spectral radius at most 1) or use fewer hops"
            )
    return out


def normalize_connectome(A, *, mode="symmetric", sign="positive", top_k=None, zero_diagonal=True):
    """The normalised graph ``A_hat`` of a functional-connectivity matrix.

    ``A_hat = D^{-1/2} W D^{-1/2}`` (``mode="symmetric"``) or ``D^{-1} W``
    (``mode="random_walk"``, row-stochastic), with ``W = max(A, 0)``
    (``sign="positive"``) or ``|A|`` (``sign="absolute"``), the diagonal
    zeroed by default (a Pearson matrix has ones there), optionally sparsified
    to the ``top_k`` strongest edges of each row (kept when either endpoint
    keeps it, so ``W`` stays symmetric), and ``D = diag(W 1)``. An isolated
    node (zero degree) gets a zero row.

    Parameters
    ----------
    A : array-like of shape (N, N) or (n_subjects, N, N)
        Symmetric connectivity matrices; an asymmetric one is refused
        (ValueError), as by :func:`heat_kernel` and ``PhenoBrainClassifier``.
    mode : {"symmetric", "random_walk"}, default="symmetric"
    sign : {"positive", "absolute"}, default="positive"
    top_k : int or None, default=None
        Edges kept per row before normalisation (``None``: all).
    zero_diagonal : bool, default=True

    Returns
    -------
    A_hat : ndarray of the shape of ``A``

    See Also
    --------
    hop_powers : The powers of the normalised graph.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.brain import normalize_connectome
    >>> A = np.array([[1.0, 0.5, -0.2], [0.5, 1.0, 0.3], [-0.2, 0.3, 1.0]])
    >>> np.round(normalize_connectome(A, mode="random_walk"), 3)
    array([[0.   , 1.   , 0.   ],
           [0.625, 0.   , 0.375],
           [0.   , 1.   , 0.   ]])
    """
    arr, was_2d = _check_square_stack(A, "A")
    _check_symmetric(arr, "A", was_2d)
    if mode not in ("symmetric", "random_walk"):
        raise ValueError(f"mode must be 'symmetric' or 'random_walk', got {mode!r}")
    if sign not in ("positive", "absolute"):
        raise ValueError(f"sign must be 'positive' or 'absolute', got {sign!r}")
    W = np.maximum(arr, 0.0) if sign == "positive" else np.abs(arr)
    if zero_diagonal:
        W = W.copy()
        idx = np.arange(W.shape[-1])
        W[:, idx, idx] = 0.0
    if top_k is not None:
        if isinstance(top_k, bool) or not isinstance(top_k, Integral) or top_k < 1:
            raise ValueError(f"top_k must be a positive int or None, got {top_k!r}")
        if top_k < W.shape[-1]:
            order = np.argsort(-W, axis=-1, kind="stable")[..., :top_k]
            keep = np.zeros(W.shape, dtype=bool)
            np.put_along_axis(keep, order, True, axis=-1)
            keep |= np.swapaxes(keep, -1, -2)
            W = np.where(keep, W, 0.0)
    deg = W.sum(axis=-1)
    with np.errstate(divide="ignore"):
        if mode == "symmetric":
            s = np.where(deg > 0, 1.0 / np.sqrt(deg), 0.0)
            out = s[..., :, None] * W * s[..., None, :]
        else:
            s = np.where(deg > 0, 1.0 / deg, 0.0)
            out = s[..., :, None] * W
    return out[0] if was_2d else out


def hop_powers(A_hat, n_hops):
    """The stack ``I, A_hat, A_hat^2, ..., A_hat^H``.

    Parameters
    ----------
    A_hat : array-like of shape (N, N) or (n_subjects, N, N)
    n_hops : int >= 0
        ``H``.

    Returns
    -------
    powers : ndarray of shape (H + 1, N, N) or (n_subjects, H + 1, N, N)

    Raises
    ------
    ValueError
        If a power overflows float64 (a raw connectivity matrix, of spectral
        radius well above 1, over many hops): normalise it first with
        :func:`normalize_connectome`.

    See Also
    --------
    routing_kernel : Their weighted sum.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # a path 0 - 1 - 2
    >>> from mvlearn_ext.brain import hop_powers
    >>> P = hop_powers(A, 2)
    >>> P.shape, P[2][0].tolist()  # two hops reach node 2 from node 0
    ((3, 3, 3), [1.0, 0.0, 1.0])
    """
    arr, was_2d = _check_square_stack(A_hat, "A_hat")
    check_magnitude(arr, "A_hat")
    if isinstance(n_hops, bool) or not isinstance(n_hops, Integral) or n_hops < 0:
        raise ValueError(f"n_hops must be a non-negative int, got {n_hops!r}")
    out = _hop_powers(arr, n_hops)
    return out[0] if was_2d else out


def _check_alpha(alpha, n_subjects, was_2d):
    a = real_array(alpha, "alpha")
    if a.ndim == 1:
        a = np.broadcast_to(a, (n_subjects, a.shape[0]))
    elif a.ndim != 2 or (was_2d and a.shape[0] != 1) or (not was_2d and a.shape[0] != n_subjects):
        expected = "(H + 1,)" if was_2d else f"(H + 1,) or ({n_subjects}, H + 1)"
        raise ValueError(f"alpha must have shape {expected}, got {np.shape(alpha)}")
    return a


def routing_kernel(A_hat, alpha):
    """The multi-hop communication kernel ``K = sum_h alpha_h A_hat^h``.

    In PhenoBrain (reconstruction) ``alpha = softmax(MLP(p))`` depends on the
    subject's phenotype ``p``, which makes ``K`` a subject-specific
    long-range routing operator. With ``alpha`` on the simplex and a
    row-stochastic ``A_hat`` (``mode="random_walk"``), ``K`` is
    row-stochastic; with a symmetric ``A_hat``, ``K`` is symmetric; with
    non-negative ``A_hat`` and every ``alpha_h > 0``, ``K[i, j] > 0`` exactly
    when node ``j`` is reachable from ``i`` in at most ``H`` hops.

    Parameters
    ----------
    A_hat : array-like of shape (N, N) or (n_subjects, N, N)
    alpha : array-like of shape (H + 1,) or (n_subjects, H + 1)
        Hop weights, ``alpha[..., h]`` for ``A_hat^h`` (``h = 0`` is the
        identity). One row per subject, or one vector for all.

    Returns
    -------
    K : ndarray of the shape of ``A_hat``

    Raises
    ------
    ValueError
        If a power ``A_hat^h`` or the weighted sum overflows float64: the
        powers of a raw connectivity matrix (spectral radius well above 1)
        grow geometrically with the hops; normalise it first with
        :func:`normalize_connectome` (spectral radius at most 1).

    See Also
    --------
    hop_powers : The powers it sums.
    heat_kernel : A fixed diffusion kernel.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.brain import routing_kernel
    >>> path = np.diag([1.0, 1.0], 1) + np.diag([1.0, 1.0], -1)   # 0 - 1 - 2
    >>> K = routing_kernel(path, [0.0, 0.0, 1.0])                  # two hops only
    >>> K.astype(int)
    array([[1, 0, 1],
           [0, 2, 0],
           [1, 0, 1]])
    """
    arr, was_2d = _check_square_stack(A_hat, "A_hat")
    check_magnitude(arr, "A_hat")
    a = _check_alpha(alpha, arr.shape[0], was_2d)
    P = _hop_powers(arr, a.shape[1] - 1)
    with np.errstate(over="ignore", invalid="ignore"):
        K = np.einsum("nh,nhij->nij", a, P)
    if not np.isfinite(K).all():
        raise ValueError(
            "alpha and A_hat give a kernel sum_h alpha_h A_hat^h that overflows float64: "
            "normalise A_hat with normalize_connectome or use smaller hop weights"
        )
    return K[0] if was_2d else K


def heat_kernel(A_hat, t):
    """The diffusion (heat) kernel ``exp(-t L)``, ``L = I - A_hat``, for symmetric ``A_hat``.

    The alternative routing kernel, with a diffusion time ``t`` that the
    phenotype can set (one per subject). Computed by an eigendecomposition.

    Parameters
    ----------
    A_hat : array-like of shape (N, N) or (n_subjects, N, N)
        Symmetric (``normalize_connectome(mode="symmetric")``).
    t : float >= 0 or array-like of shape (n_subjects,)

    Returns
    -------
    K : ndarray of the shape of ``A_hat``

    See Also
    --------
    routing_kernel : The learned multi-hop kernel.

    Examples
    --------
    >>> import numpy as np
    >>> A = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0], [0.0, 1.0, 0.0]])  # a path 0 - 1 - 2
    >>> from mvlearn_ext.brain import heat_kernel, normalize_connectome
    >>> K = heat_kernel(normalize_connectome(A), 1.0)
    >>> K.shape, bool(np.allclose(K, K.T))
    ((3, 3), True)
    """
    arr, was_2d = _check_square_stack(A_hat, "A_hat")
    check_magnitude(arr, "A_hat")
    _check_symmetric(arr, "A_hat", was_2d)
    tt = real_array(t, "t")
    if tt.ndim == 0:
        tt = np.full(arr.shape[0], float(tt))
    if tt.shape != (arr.shape[0],) or (tt < 0).any():
        raise ValueError(
            f"t must be a non-negative float or one per subject ({arr.shape[0]}), got {t!r}"
        )
    lam, U = np.linalg.eigh(arr)
    decay = np.exp(-tt[:, None] * (1.0 - lam))
    K = np.einsum("nik,nk,njk->nij", U, decay, U)
    return K[0] if was_2d else K


def row_normalize(K, *, eps=0.0):
    """``K_tilde = (K + eps) / row sums``: each row a distribution (needs non-negative ``K``).

    Parameters
    ----------
    K : array-like of shape (N, N) or (n_subjects, N, N)
        A non-negative kernel or a stack of them.
    eps : float, default=0.0
        Added to every entry before normalising; a positive value keeps
        all-zero rows well defined.

    Returns
    -------
    K_tilde : ndarray of the shape of ``K``
        Rows summing to one.

    See Also
    --------
    attention_prior_kl : Uses the normalised kernel as a prior.

    Examples
    --------
    >>> from mvlearn_ext.brain import row_normalize
    >>> row_normalize([[1.0, 3.0], [2.0, 2.0]]).tolist()
    [[0.25, 0.75], [0.5, 0.5]]
    """
    arr, was_2d = _check_square_stack(K, "K")
    if not isinstance(eps, Real) or eps < 0:
        raise ValueError(f"eps must be a non-negative float, got {eps!r}")
    if (arr < -1e-12).any():
        raise ValueError("K must be non-negative to be row-normalised")
    arr = np.maximum(arr, 0.0) + eps
    s = arr.sum(axis=-1, keepdims=True)
    if (s <= 0).any():
        raise ValueError("K has an all-zero row; pass eps > 0")
    out = arr / s
    return out[0] if was_2d else out


def attention_prior_kl(attention, prior, *, eps=1e-8, return_grad=False):
    """The attention regulariser ``L_reg = mean_i KL(Attn_i || K_tilde_i)``.

    Reconstruction of the "phenotype-guided attention regulation": the
    phenotype-conditioned kernel, row-normalised, is a prior for each row of
    a ROI attention matrix. ``L_reg = 0`` when the attention equals the prior,
    and the negative gradient points towards the prior:
    ``<-grad_i, K_tilde_i - Attn_i> = (KL(A_i||K_i) + KL(K_i||A_i)) / n_rows``.

    Parameters
    ----------
    attention : array-like of shape (N, N) or (n_subjects, N, N)
        Rows on the simplex.
    prior : array-like of the same shape
        Rows on the simplex (:func:`row_normalize` of a kernel).
    eps : float, default=1e-8
        Floor inside the logarithms.
    return_grad : bool, default=False
        Also return the gradient of ``L_reg`` with respect to ``attention``.

    Returns
    -------
    loss : float
    grad : ndarray of the shape of ``attention``
        Only with ``return_grad=True``.

    See Also
    --------
    row_normalize : The prior's normalisation.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.brain import attention_prior_kl
    >>> P = np.full((3, 3), 1 / 3)
    >>> attention_prior_kl(P, P)
    0.0
    """
    a, _ = _check_square_stack(attention, "attention")
    q, _ = _check_square_stack(prior, "prior")
    if a.shape != q.shape:
        raise ValueError(
            f"attention and prior must have the same shape, got {np.shape(attention)} "
            f"and {np.shape(prior)}"
        )
    for name, arr in (("attention", a), ("prior", q)):
        if (arr < 0).any() or not np.allclose(arr.sum(axis=-1), 1.0, atol=1e-6):
            raise ValueError(f"the rows of {name} must be probability distributions")
    if not isinstance(eps, Real) or eps <= 0:
        raise ValueError(f"eps must be a positive float, got {eps!r}")
    log_ratio = np.log(np.maximum(a, eps)) - np.log(np.maximum(q, eps))
    n_rows = a.shape[0] * a.shape[1]
    loss = float((a * log_ratio).sum() / n_rows)
    if not return_grad:
        return loss
    grad = (log_ratio + 1.0) / n_rows
    return loss, grad.reshape(np.shape(attention))
