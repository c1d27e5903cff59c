"""Rewards of GRAPE (retrieval rank) and VisualScore (Gaussian score reward).

GRAPE (arXiv 2509.23370) trains a query rewriter with GRPO against a frozen
retriever. Reconstruction: the full paper was not available; the reward
structure (a ranking reward that grows as the target ranks higher, a format
reward, combined linearly; the "score inflation" of a raw-similarity reward)
comes from the four published reviews of its withdrawn ICLR 2026 version.
The normalisation of the rank reward and the tie rule are design choices.

VisualScore / OmniQuality-R (arXiv 2510.10609) scores image quality as text
``<think>...</think><answer>s</answer>``; its verifier (authors' code,
``yeppp27/VisualScore``) gives a format reward of 0.5 for a well-formed answer
plus a Gaussian accuracy reward ``exp(-(s_hat - s)^2 / (2 sigma^2))``.
"""

from __future__ import annotations

import re
from numbers import Real

import numpy as np

from mvlearn_ext.utils._validation import (
    check_count,
    check_magnitude,
    check_real,
    integer_array,
    real_array,
)

__all__ = [
    "accuracy_reward",
    "format_reward",
    "gaussian_reward",
    "inflation_score",
    "make_score_inflation_case",
    "parse_answer",
    "rank_reward",
    "retrieval_rank",
    "retrieval_scores",
    "similarity_reward",
]

THINK_ANSWER_PATTERN = re.compile(r"^\s*<think>.*?</think>\s*<answer>(.*?)</answer>\s*$", re.S)
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def _unit_rows(E, name):
    E = real_array(E, name, ndim=(1, 2))
    if E.ndim == 1:
        E = E[None, :]
    check_magnitude(E, name)  # the norms square the embeddings
    norms = np.linalg.norm(E, axis=1, keepdims=True)
    if (norms == 0).any():
        raise ValueError(f"{name} has a zero row; embeddings must be non-zero")
    return E / norms


def retrieval_scores(queries, items):
    """Cosine scores ``s_ij = u_i^T e_j`` of queries against a frozen collection.

    Parameters
    ----------
    queries : array-like of shape (n_queries, d) or (d,)
        Query embeddings (normalised here).
    items : array-like of shape (n_items, d)
        Item embeddings (normalised here).

    Returns
    -------
    scores : ndarray of shape (n_queries, n_items)

    See Also
    --------
    retrieval_rank : The ranks of the targets under these scores.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.rl import retrieval_scores
    >>> retrieval_scores(np.array([[1.0, 0.0]]), np.array([[2.0, 0.0], [0.0, 1.0]])).tolist()
    [[1.0, 0.0]]
    """
    U = _unit_rows(queries, "queries")
    E = _unit_rows(items, "items")
    if U.shape[1] != E.shape[1]:
        raise ValueError(f"queries have {U.shape[1]} dimensions, items have {E.shape[1]}")
    return U @ E.T


def _check_scores(scores):
    """``scores`` as a 2-D float array (one row for a 1-D array)."""
    return np.atleast_2d(real_array(scores, "scores", ndim=(1, 2)))


def _check_targets(targets, scores):
    """``targets`` as item indices into the columns of the validated ``scores``."""
    t = integer_array(targets, "targets", ndim=(0, 1), low=0, high=scores.shape[1] - 1)
    if t.ndim == 0:
        t = t[None]
    if t.shape != (scores.shape[0],):
        raise ValueError(f"targets must have shape ({scores.shape[0]},), got {t.shape}")
    return t


def _ranks(S, t):
    """The ranks of the targets ``t`` under the validated scores ``S``."""
    st = S[np.arange(S.shape[0]), t][:, None]
    ge = S >= st
    ge[np.arange(S.shape[0]), t] = False
    return 1 + ge.sum(axis=1)


def retrieval_rank(scores, targets):
    """Collection-relative rank of each target: 1 = top.

    ``r* = 1 + #{j != t : s_j > s_t} + #{j != t : s_j = s_t}``: ties count
    against the target (a design choice; a tie is not a retrieval).

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_items)
    targets : array-like of int, shape (n_queries,)

    Returns
    -------
    ranks : ndarray of int, shape (n_queries,), in ``[1, n_items]``

    See Also
    --------
    recall_at_k : The share of ranks within ``k``.
    rank_reward : The reward computed from the rank.

    Examples
    --------
    >>> from mvlearn_ext.rl import retrieval_rank
    >>> retrieval_rank([[0.1, 0.9, 0.5], [0.3, 0.3, 0.0]], [2, 0]).tolist()
    [2, 2]
    """
    S = _check_scores(scores)
    return _ranks(S, _check_targets(targets, S))


def rank_reward(scores, targets, *, kind="normalized", k=10):
    """GRAPE's ranking reward ``R^r``: larger when the target ranks higher.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_items)
    targets : array-like of int, shape (n_queries,)
    kind : {"normalized", "literal", "reciprocal", "hit"}, default="normalized"
        ``"literal"``: ``N - r*`` (linear in the rank, scale set by the
        collection size ``N``: the form the reviews attribute to the paper's
        Eq. 4). ``"normalized"``: ``(N - r*) / (N - 1)`` in ``[0, 1]`` (so a
        format weight keeps its meaning for any ``N``; the default, a design
        choice). ``"reciprocal"``: ``1 / r*``. ``"hit"``: ``1`` when
        ``r* <= k``.
    k : int, default=10
        Cut-off of ``"hit"``, at least 1 (checked whatever ``kind``, as in
        :func:`recall_at_k`).

    Returns
    -------
    reward : ndarray of shape (n_queries,)

    Raises
    ------
    ValueError
        If ``kind`` is not one of the above, or ``k`` is below 1.
    TypeError
        If ``k`` is not an int.

    See Also
    --------
    retrieval_rank : The rank it is computed from.
    similarity_reward : The naive reward, which score inflation raises.

    Examples
    --------
    >>> from mvlearn_ext.rl import rank_reward
    >>> rank_reward([[0.9, 0.1, 0.5], [0.2, 0.3, 0.1]], [0, 0]).round(3).tolist()
    [1.0, 0.5]
    """
    k = check_count(k, "k", 1)
    S = _check_scores(scores)
    r = _ranks(S, _check_targets(targets, S)).astype(np.float64)
    N = S.shape[1]
    if kind == "literal":
        return N - r
    if kind == "normalized":
        return (N - r) / max(N - 1, 1)
    if kind == "reciprocal":
        return 1.0 / r
    if kind == "hit":
        return (r <= k).astype(np.float64)
    raise ValueError(f"kind must be 'normalized', 'literal', 'reciprocal' or 'hit', got {kind!r}")


def similarity_reward(scores, targets):
    """The naive reward ``R^sim = s_t``: the raw similarity of the target (an ablation).

    It is open to score inflation: moving the query toward the collection
    mean raises every score, the target's included, without ranking it
    higher (see :func:`make_score_inflation_case`).

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_items)
        Similarity of every query to every item.
    targets : array-like of int, shape (n_queries,)
        Index of each query's target item.

    Returns
    -------
    reward : ndarray of shape (n_queries,)
        The score of each query's target.

    See Also
    --------
    rank_reward : The reward that score inflation cannot raise.

    Examples
    --------
    >>> from mvlearn_ext.rl import similarity_reward
    >>> similarity_reward([[0.9, 0.1], [0.2, 0.3]], [0, 1]).tolist()
    [0.9, 0.3]
    """
    S = _check_scores(scores)
    t = _check_targets(targets, S)
    return S[np.arange(S.shape[0]), t]


def inflation_score(scores, targets=None):
    """``iota = mean_j s_j``, over the negatives when ``targets`` is given.

    Parameters
    ----------
    scores : array-like of shape (n_queries, n_items)
        Similarity of every query to every item.
    targets : array-like of int, shape (n_queries,), optional
        Index of each query's target item, left out of the mean (which then
        needs at least 2 items); every item counts when None.

    Returns
    -------
    iota : ndarray of shape (n_queries,)
        The mean score of each query.

    See Also
    --------
    make_score_inflation_case : A case of score inflation.
    rank_reward : The reward that inflation cannot raise.

    Examples
    --------
    >>> from mvlearn_ext.rl import inflation_score
    >>> inflation_score([[0.2, 0.4, 0.9]], targets=[2]).round(6).tolist()  # mean over negatives
    [0.3]
    """
    S = _check_scores(scores)
    if targets is None:
        return S.mean(axis=1)
    t = _check_targets(targets, S)
    neg = np.ones(S.shape, dtype=bool)
    neg[np.arange(S.shape[0]), t] = False
    if S.shape[1] < 2:
        raise ValueError("the inflation score over negatives needs at least 2 items")
    return np.where(neg, S, 0.0).sum(axis=1) / (S.shape[1] - 1)


def make_score_inflation_case(alpha=1.25):
    """A deterministic case of score inflation.

    Six unit item embeddings in R^3: the target ``e_t`` (index 0), two "hub"
    items close to the collection mean ``e_bar``, and three others. The
    query ``q`` is orthogonal to ``e_bar`` and has the target on top. The
    inflated query ``q' = normalise(q + alpha e_bar)`` raises the target's
    similarity (``R^sim`` rises, since ``e_t`` has a positive component along
    ``e_bar``) and the mean score ``iota``, but the two hubs rise faster and
    overtake the target, so its rank falls and ``R^r`` falls.

    Parameters
    ----------
    alpha : float, default=1.25
        The step toward the collection mean. The case shows inflation (the
        hubs overtake the target while its similarity is still above that
        of ``q``) for ``alpha`` between about 1.0 and 1.5; beyond about 1.55
        the target's similarity falls as well.

    Returns
    -------
    case : dict
        ``items`` (6, 3), ``query`` (3,), ``inflated_query`` (3,),
        ``collection_mean`` (3,), ``target`` (int).

    See Also
    --------
    rank_reward : The reward that is not inflated.
    similarity_reward : The reward that is.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.rl import make_score_inflation_case, rank_reward, retrieval_scores
    >>> from mvlearn_ext.rl import similarity_reward
    >>> case = make_score_inflation_case()
    >>> S = retrieval_scores(np.stack([case["query"], case["inflated_query"]]), case["items"])
    >>> t = [case["target"]] * 2
    >>> bool(similarity_reward(S, t)[1] > similarity_reward(S, t)[0])
    True
    >>> bool(rank_reward(S, t)[1] < rank_reward(S, t)[0])
    True
    """
    if not isinstance(alpha, Real) or alpha <= 0:
        raise ValueError(f"alpha must be a positive float, got {alpha!r}")
    items = np.array(
        [
            [1.0, 0.0, 0.25],  # target: near the query, a little along the mean
            [1.0, 0.1, 1.0],  # hub 1: near the mean, second to the target for q
            [1.0, -0.1, 1.0],  # hub 2
            [-0.5, 1.0, 0.9],
            [-0.5, -1.0, 0.9],
            [-1.0, 0.0, 0.8],
        ]
    )
    items /= np.linalg.norm(items, axis=1, keepdims=True)
    mean = items.mean(axis=0)
    mean /= np.linalg.norm(mean)
    # The query: the target direction with its component along the mean removed.
    q = items[0] - (items[0] @ mean) * mean
    q /= np.linalg.norm(q)
    q2 = q + alpha * mean
    q2 /= np.linalg.norm(q2)
    return {
        "items": items,
        "query": q,
        "inflated_query": q2,
        "collection_mean": mean,
        "target": 0,
    }


def format_reward(completions, *, pattern=THINK_ANSWER_PATTERN, value=1.0):
    """``value`` for each completion that matches ``pattern``, else 0.

    The default pattern is ``<think>...</think><answer>...</answer>`` (the
    whole string, whitespace around the tags allowed). VisualScore's
    verifier uses ``value=0.5``; GRAPE's format reward is ``{0, 1}``.

    Parameters
    ----------
    completions : list of str
        The generated texts (a non-string entry does not match).
    pattern : str or compiled regular expression, default=THINK_ANSWER_PATTERN
        The required format, matched from the start of each completion
        (``re.match``).
    value : float, default=1.0
        The reward of a well-formed completion.

    Returns
    -------
    reward : ndarray of shape (n_completions,)

    See Also
    --------
    parse_answer : The answer inside a well-formed completion.

    Examples
    --------
    >>> from mvlearn_ext.rl import format_reward
    >>> format_reward(["<think>x</think><answer>3</answer>", "3"]).tolist()
    [1.0, 0.0]
    """
    if isinstance(completions, str):
        raise TypeError("completions must be a list of strings, not a single string")
    pat = re.compile(pattern) if isinstance(pattern, str) else pattern
    return np.array(
        [value if isinstance(c, str) and pat.match(c) else 0.0 for c in completions],
        dtype=np.float64,
    )


def parse_answer(completions, *, pattern=THINK_ANSWER_PATTERN):
    """The number inside ``<answer>...</answer>``; NaN when missing or garbled.

    Parameters
    ----------
    completions : list of str
        The generated texts (a non-string entry does not match).
    pattern : str or compiled regular expression, default=THINK_ANSWER_PATTERN
        Matched from the start of each completion (``re.match``); its first
        group is the answer.

    Returns
    -------
    answers : ndarray of shape (n_completions,)
        The number of each answer, NaN where the format does not match or
        the answer is not a single number.

    See Also
    --------
    format_reward : Rewards the well-formed completions.

    Examples
    --------
    >>> from mvlearn_ext.rl import parse_answer
    >>> parse_answer(["<think>...</think><answer>3.5</answer>", "no tags"]).tolist()
    [3.5, nan]
    """
    if isinstance(completions, str):
        raise TypeError("completions must be a list of strings, not a single string")
    pat = re.compile(pattern) if isinstance(pattern, str) else pattern
    out = np.full(len(completions), np.nan)
    for i, c in enumerate(completions):
        m = pat.match(c) if isinstance(c, str) else None
        if m is None:
            continue
        num = _NUMBER.match(m.group(1))
        if num is not None:
            out[i] = float(num.group(1))
    return out


def gaussian_reward(predictions, targets, *, sigma=0.8):
    """VisualScore's continuous accuracy reward ``exp(-(s_hat - s)^2 / (2 sigma^2))``.

    Equal to 1 at a perfect score and ``exp(-1/2)`` one ``sigma`` away;
    symmetric and decreasing in ``|s_hat - s|``; a NaN prediction (an
    unparsable answer) scores 0. The reward is computed as
    ``exp(-(|e| / sigma)^2 / 2)``, where an error too large to square in
    float64 gives its limit 0 exactly (no overflow). ``sigma`` may be an array (the per-dataset
    variant of the authors' code: AVA x1.5, EvalMuse x1.5, KonIQ x0.8 of
    ``sigma_0 = 0.8``).

    Parameters
    ----------
    predictions : array-like
        Predicted scores ``s_hat`` (NaN for an unparsable answer).
    targets : array-like
        True scores ``s`` (finite), broadcast against ``predictions``.
    sigma : float or array-like, default=0.8
        The width ``sigma`` (positive), broadcast against ``predictions``.

    Returns
    -------
    reward : ndarray
        In ``[0, 1]``, of the broadcast shape.

    See Also
    --------
    accuracy_reward : The other accuracy rewards.

    Examples
    --------
    >>> from mvlearn_ext.rl import gaussian_reward
    >>> gaussian_reward([3.0, 3.8, float("nan")], [3.0, 3.0, 3.0]).round(4).tolist()
    [1.0, 0.6065, 0.0]
    """
    sig = real_array(sigma, "sigma")
    if (sig <= 0).any():
        raise ValueError(f"sigma must be positive and finite, got {sigma!r}")
    p = real_array(predictions, "predictions", allow_nan=True, allow_empty=True)
    s = real_array(targets, "targets", allow_empty=True)
    with np.errstate(over="ignore"):  # |e| / sigma beyond float64: the reward's limit 0
        z = np.abs(p - s) / sig
        r = np.exp(-0.5 * (z * z))
    return np.where(np.isnan(p), 0.0, r)


def accuracy_reward(predictions, targets, *, kind="gaussian", sigma=0.8, max_error=4.0, tol=0.25):
    """The accuracy rewards of VisualScore's verifier, by ``kind``.

    ``"gaussian"`` (:func:`gaussian_reward`), ``"mae"`` (``-|e|``), ``"mse"``
    (``-e^2``), ``"bounded"`` (``1 - |e| / max_error``, floored at 0) and
    ``"binary"`` (``|e| < tol``). A NaN prediction scores 0.

    Parameters
    ----------
    predictions : array-like
        Predicted scores ``s_hat`` (NaN for an unparsable answer).
    targets : array-like
        True scores ``s`` (finite), broadcast against ``predictions``.
    kind : {"gaussian", "mae", "mse", "bounded", "binary"}, default="gaussian"
        The reward of the error ``e = s_hat - s``.
    sigma : float or array-like, default=0.8
        The width of ``"gaussian"``.
    max_error : float, default=4.0
        The error at which ``"bounded"`` reaches 0; positive and finite.
    tol : float, default=0.25
        The error below which ``"binary"`` gives 1; positive and finite.

    Returns
    -------
    reward : ndarray
        Of the broadcast shape of ``predictions`` and ``targets``.

    Raises
    ------
    ValueError
        If ``kind`` is not one of the above, if ``max_error`` or ``tol`` is
        not positive and finite (checked whatever ``kind``), for ``"mse"``, if
        the scores are too large to square, or, for ``"mae"``, if an error
        overflows float64.
    TypeError
        If ``max_error`` or ``tol`` is not a real number.

    See Also
    --------
    gaussian_reward : The default ``kind``.
    parse_answer : Extracts the predictions from completions.

    Examples
    --------
    >>> from mvlearn_ext.rl import accuracy_reward
    >>> accuracy_reward([3.0, 4.0], [3.0, 3.0], kind="binary", tol=0.25).tolist()
    [1.0, 0.0]
    """
    max_error = check_real(max_error, "max_error", low=0.0, low_open=True)
    tol = check_real(tol, "tol", low=0.0, low_open=True)
    if kind == "gaussian":
        return gaussian_reward(predictions, targets, sigma=sigma)
    p = real_array(predictions, "predictions", allow_nan=True, allow_empty=True)
    s = real_array(targets, "targets", allow_empty=True)
    if kind == "mse":  # squares the errors
        check_magnitude(p, "predictions", allow_nan=True)
        check_magnitude(s, "targets")
    with np.errstate(over="ignore"):  # an overflowing error is inf: "bounded" and
        e = p - s  # "binary" take their limits, "mae" refuses it below
    if kind == "mae":
        if np.any(np.isinf(e)):
            raise ValueError(
                "predictions and targets differ by more than float64 holds (an error "
                "beyond 1.8e308); rescale both first"
            )
        r = -np.abs(e)
    elif kind == "mse":
        r = -(e * e)
    elif kind == "bounded":
        r = np.maximum(0.0, 1.0 - np.abs(e) / max_error)
    elif kind == "binary":
        r = (np.abs(e) < tol).astype(np.float64)
    else:
        raise ValueError(
            f"kind must be 'gaussian', 'mae', 'mse', 'bounded' or 'binary', got {kind!r}"
        )
    return np.where(np.isnan(p), 0.0, r)
