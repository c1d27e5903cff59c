"""The KME multi-task-averaging personalised ridge as an engine-free protocol.

:class:`KMEProtocolServer` and :class:`KMEProtocolClient` are the federated
form of :class:`~mvlearn_ext.federated.KMEPersonalizedRidge`, in three rounds
(pooled standardisation moments; RFF mean embedding, variance and ridge
statistics; the personalised models). Like DREAM's, they are *protocol
objects*: a server with ``configure_round(rnd) -> {client_id: message}`` and
``aggregate_round(rnd, {client_id: reply})``, and clients with ``fit(message)
-> reply``, where messages and replies are flat dicts of NumPy arrays,
numbers and strings. :class:`~mvlearn_ext.federated.InProcessSimulator` runs
them in one process; :mod:`mvlearn_ext.federated._flower` on Flower.
"""

from __future__ import annotations

import numbers
from numbers import Integral, Real

import numpy as np
from sklearn.utils import check_random_state

from mvlearn_ext.federated._kme import (
    KMEPersonalizedRidge,
    RandomFourierMap,
    _check_agents,
    agent_kme_statistics,
    agent_ridge_statistics,
    collaboration_weights,
    is_constant,
    weighted_ridge,
)

__all__ = ["KMEProtocolClient", "KMEProtocolServer"]

_STAGES = ("moments", "statistics", "model")


class KMEProtocolClient:
    """One agent of the KME multi-task-averaging protocol (engine-free).

    The agent keeps its data; it answers three messages, selected by
    ``message["stage"]``:

    ``"moments"``
        ``n``, the mean and the sum of squared deviations of ``z = (x, y)``
        (for the pooled standardisation, combined exactly by the server);
    ``"statistics"``
        given ``z_mean``, ``z_scale``, ``seed``, ``n_components`` and
        ``bandwidth``: the mean RFF feature of the standardised ``z``
        (``D`` floats), the variance scalar ``v`` and the ridge statistics
        ``X^T X / n``, ``X^T y / n`` of the features divided by the pooled
        scale ``z_scale[:-1]`` (with a leading 1-column);
    ``"model"``
        its personalised coefficients ``coef`` (intercept first), which it
        stores as ``coef_`` / ``intercept_`` and answers with its training
        mean squared error.

    Parameters
    ----------
    client_id : int
        The agent's index ``0 .. B-1``.
    X : array-like of shape (n_samples, n_features)
    y : array-like of shape (n_samples,)

    See Also
    --------
    KMEProtocolServer : The server it answers.

    Examples
    --------
    >>> from mvlearn_ext.federated import InProcessSimulator, KMEProtocolClient, KMEProtocolServer
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 2)) for _ in range(3)]
    >>> ys = [X @ [1.0, -1.0] + 0.1 * rng.normal(size=30) for X in Xs]
    >>> server = KMEProtocolServer(3, n_components=16, random_state=0)
    >>> clients = [KMEProtocolClient(i, Xs[i], ys[i]) for i in range(3)]
    >>> _ = InProcessSimulator(server, clients).run(server.n_rounds)
    >>> server.coef_.shape  # one coefficient vector per agent
    (3, 2)
    """

    def __init__(self, client_id, X, y):
        if isinstance(client_id, bool) or not isinstance(client_id, Integral) or client_id < 0:
            raise ValueError(f"client_id must be an int >= 0, got {client_id!r}")
        (X,), (y,) = _check_agents([X], [y])
        self.client_id = int(client_id)
        self.X, self.y = X, y
        self.coef_ = None
        self.intercept_ = None

    def get_state(self):
        if self.coef_ is None:
            return {}
        return {"coef": np.concatenate([[self.intercept_], self.coef_])}

    def set_state(self, state):
        if "coef" in state:
            theta = np.asarray(state["coef"], dtype=np.float64)
            self.intercept_, self.coef_ = float(theta[0]), theta[1:]

    def fit(self, message):
        """Answer one protocol message (see the class docstring).

        Parameters
        ----------
        message : dict
            The server's message; ``message["stage"]`` is ``"moments"``,
            ``"statistics"`` or ``"model"``, with the entries that stage needs.

        Returns
        -------
        reply : dict
            The agent's answer to that stage.
        """
        stage = message.get("stage")
        z = np.column_stack([self.X, self.y])
        if stage == "moments":
            mean = z.mean(axis=0)
            return {"n": int(z.shape[0]), "mean": mean, "m2": ((z - mean) ** 2).sum(axis=0)}
        if stage == "statistics":
            fmap = RandomFourierMap(
                int(message["n_components"]),
                z.shape[1],
                bandwidth=float(message["bandwidth"]),
                random_state=int(message["seed"]),
            )
            zs = (z - np.asarray(message["z_mean"])) / np.asarray(message["z_scale"])
            mean, var = agent_kme_statistics(fmap.transform(zs))
            x_scale = np.asarray(message["z_scale"])[:-1]
            gram, moment, n = agent_ridge_statistics(self.X / x_scale, self.y)
            return {
                "mean_feature": mean,
                "variance": var,
                "gram": gram,
                "moment": moment,
                "n": int(n),
            }
        if stage == "model":
            theta = np.asarray(message["coef"], dtype=np.float64)
            if theta.shape != (self.X.shape[1] + 1,):
                raise ValueError(
                    f"message['coef'] must have shape ({self.X.shape[1] + 1},), got {theta.shape}"
                )
            self.intercept_, self.coef_ = float(theta[0]), theta[1:]
            resid = self.y - self.X @ self.coef_ - self.intercept_
            return {"train_mse": float(np.mean(resid**2))}
        raise ValueError(f"message['stage'] must be one of {_STAGES}, got {stage!r}")


class KMEProtocolServer:
    """Server of the KME multi-task-averaging protocol (engine-free).

    Three rounds, the federated form of
    :class:`~mvlearn_ext.federated.KMEPersonalizedRidge` (same parameters,
    same seeds, same numbers up to floating-point rounding of the pooled
    standardisation, which the server combines from per-agent moments with
    the exact parallel-variance formula instead of stacking the data):

    0. ``"moments"``: pooled mean and standard deviation of ``z = (x, y)``;
    1. ``"statistics"``: broadcast the standardisation, the RFF seed and
       bandwidth; receive the mean RFF features, variances and ridge
       statistics; compute the collaboration weights
       (:func:`~mvlearn_ext.federated.collaboration_weights`) and the
       personalised ridge fits
       (:func:`~mvlearn_ext.federated.weighted_ridge`);
    2. ``"model"``: send every agent its own coefficients.

    Reconstruction of Fermanian, Le Bars & Bellet (arXiv 2603.02233), as in
    :mod:`mvlearn_ext.federated._kme`; the three-round schedule is this
    package's design, not the paper's.

    Parameters
    ----------
    n_clients : int
        Number of agents ``B``.
    n_components : int, default=256
    bandwidth : float, default=1.0
        Gaussian-kernel width on the standardised ``z``. ``"median"`` (an
        option of the estimator) needs pooled raw samples and is therefore
        not available in the federated protocol.
    alpha : float, default=1e-3
    weights : {"unbiased", "local", "global"}, default="unbiased"
    nu : float in [0, 1], default=0.3
    random_state : int, RandomState instance or None, default=None
        Drawn exactly as :class:`~mvlearn_ext.federated.KMEPersonalizedRidge`
        draws it, so both give the same RFF map for the same value.

    Attributes
    ----------
    weights_ : ndarray of shape (B, B)
    coef_ : ndarray of shape (B, n_features)
    intercept_ : ndarray of shape (B,)
    z_mean_, z_scale_ : ndarray of shape (n_features + 1,)
    train_mse_ : ndarray of shape (B,)
        Each agent's training error of its own model (reported in round 2).
    floats_uploaded_ : int
        Floats sent by all agents to the server.
    history : list of dict
        One entry per completed round.

    See Also
    --------
    KMEProtocolClient : The agents it coordinates.
    KMEPersonalizedRidge : The same fit in one process.

    Examples
    --------
    >>> import numpy as np
    >>> from mvlearn_ext.federated import (
    ...     InProcessSimulator, KMEPersonalizedRidge, KMEProtocolClient, KMEProtocolServer)
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 2)) for _ in range(3)]
    >>> ys = [X @ [1.0, -1.0] + 0.1 * rng.normal(size=30) for X in Xs]
    >>> server = KMEProtocolServer(3, n_components=16, random_state=0)
    >>> clients = [KMEProtocolClient(i, Xs[i], ys[i]) for i in range(3)]
    >>> _ = InProcessSimulator(server, clients).run(server.n_rounds)
    >>> est = KMEPersonalizedRidge(n_components=16, random_state=0).fit(Xs, ys)
    >>> bool(np.allclose(server.coef_, est.coef_))
    True
    """

    n_rounds = 3

    def __init__(
        self,
        n_clients,
        *,
        n_components=256,
        bandwidth=1.0,
        alpha=1e-3,
        weights="unbiased",
        nu=0.3,
        random_state=None,
    ):
        if isinstance(n_clients, bool) or not isinstance(n_clients, Integral) or n_clients < 1:
            raise ValueError(f"n_clients must be an int >= 1, got {n_clients!r}")
        if (
            isinstance(n_components, bool)
            or not isinstance(n_components, Integral)
            or n_components < 1
        ):
            raise ValueError(f"n_components must be an int >= 1, got {n_components!r}")
        if isinstance(bandwidth, str):
            raise ValueError(
                f"bandwidth={bandwidth!r} needs pooled raw samples and is not available in "
                "the federated protocol; pass a number"
            )
        if isinstance(bandwidth, bool) or not isinstance(bandwidth, Real) or not bandwidth > 0:
            raise ValueError(f"bandwidth must be a number > 0, got {bandwidth!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, Real) or not alpha >= 0:
            raise ValueError(f"alpha must be a number >= 0, got {alpha!r}")
        if weights not in ("unbiased", "local", "global"):
            raise ValueError(f"weights must be 'unbiased', 'local' or 'global', got {weights!r}")
        if isinstance(nu, bool) or not isinstance(nu, numbers.Real) or not 0 <= nu <= 1:
            raise ValueError(f"nu must be a number in [0, 1], got {nu!r}")
        self.n_clients = int(n_clients)
        self.n_components = int(n_components)
        self.bandwidth = float(bandwidth)
        self.alpha = float(alpha)
        self.weights = weights
        self.nu = float(nu)
        self.random_state = random_state
        # the estimator draws its RFF seed first from check_random_state(random_state)
        self.seed_ = int(check_random_state(random_state).randint(2**31 - 1))
        self.floats_uploaded_ = 0
        self.history = []

    def configure_round(self, rnd):
        """``{client_id: message}`` for round ``rnd`` (every agent, every round)."""
        if rnd == 0:
            msg = {"stage": "moments"}
            return {i: msg for i in range(self.n_clients)}
        if rnd == 1:
            self._need("z_mean_", rnd)
            msg = {
                "stage": "statistics",
                "z_mean": self.z_mean_,
                "z_scale": self.z_scale_,
                "seed": self.seed_,
                "n_components": self.n_components,
                "bandwidth": self.bandwidth,
            }
            return {i: msg for i in range(self.n_clients)}
        if rnd == 2:
            self._need("weights_", rnd)
            theta = np.column_stack([self.intercept_, self.coef_])
            return {i: {"stage": "model", "coef": theta[i]} for i in range(self.n_clients)}
        raise ValueError(f"the KME protocol has rounds 0, 1, 2; got rnd={rnd!r}")

    def _need(self, attr, rnd):
        if not hasattr(self, attr):
            raise RuntimeError(f"round {rnd} needs round {rnd - 1} to be aggregated first")

    def _check_replies(self, rnd, replies):
        missing = sorted(set(range(self.n_clients)) - set(replies))
        if missing:
            raise ValueError(f"round {rnd}: no reply from clients {missing}")
        extra = sorted(set(replies) - set(range(self.n_clients)))
        if extra:
            raise ValueError(f"round {rnd}: replies from unknown clients {extra}")
        self.floats_uploaded_ += sum(int(np.size(v)) for r in replies.values() for v in r.values())
        return [replies[i] for i in range(self.n_clients)]

    def aggregate_round(self, rnd, replies):
        """Apply the replies ``{client_id: reply}`` of round ``rnd``."""
        reps = self._check_replies(rnd, replies)
        if rnd == 0:
            n = np.array([r["n"] for r in reps], dtype=np.float64)
            means = np.stack([np.asarray(r["mean"], dtype=np.float64) for r in reps])
            m2 = np.stack([np.asarray(r["m2"], dtype=np.float64) for r in reps])
            if means.ndim != 2:
                raise ValueError("round 0: every agent must send a 1-D mean of z")
            N = n.sum()
            mean = n @ means / N
            # exact pooling of per-agent sums of squares (Chan, Golub & LeVeque 1979)
            pooled = m2.sum(0) + n @ (means - mean) ** 2
            std = np.sqrt(pooled / N)
            self.z_mean_ = mean
            self.z_scale_ = np.where(is_constant(mean, std), 1.0, std)
            self.n_samples_ = n.astype(int)
        elif rnd == 1:
            means = np.stack([np.asarray(r["mean_feature"], dtype=np.float64) for r in reps])
            var = np.array([float(r["variance"]) for r in reps])
            grams = np.stack([np.asarray(r["gram"], dtype=np.float64) for r in reps])
            moments = np.stack([np.asarray(r["moment"], dtype=np.float64) for r in reps])
            n = np.array([int(r["n"]) for r in reps])
            if means.shape != (self.n_clients, self.n_components):
                raise ValueError(
                    f"round 1: mean features must have {self.n_components} entries each"
                )
            p1 = self.z_mean_.size  # n_features + 1 (z = (x, y)), the ridge dimension too
            if grams.shape[1:] != (p1, p1) or moments.shape[1:] != (p1,):
                raise ValueError(f"round 1: ridge statistics must be ({p1}, {p1}) and ({p1},)")
            self.weights_ = collaboration_weights(
                means, var, method=self.weights, nu=self.nu, n_samples=n
            )
            # the clients' ridge statistics are of the standardised features
            theta = weighted_ridge(grams, moments, self.weights_, alpha=self.alpha)
            self.intercept_ = theta[:, 0]
            self.coef_ = theta[:, 1:] / self.z_scale_[:-1]
        elif rnd == 2:
            self.train_mse_ = np.array([float(r["train_mse"]) for r in reps])
        else:
            raise ValueError(f"the KME protocol has rounds 0, 1, 2; got rnd={rnd!r}")
        self.history.append({"round": int(rnd), "clients": list(range(self.n_clients))})
        return self

    def to_estimator(self):
        """A fitted :class:`~mvlearn_ext.federated.KMEPersonalizedRidge` (for ``predict``)."""
        self._need("weights_", 2)
        est = KMEPersonalizedRidge(
            n_components=self.n_components,
            bandwidth=self.bandwidth,
            alpha=self.alpha,
            weights=self.weights,
            nu=self.nu,
            random_state=self.random_state,
        )
        est.z_mean_ = self.z_mean_.copy()
        est.z_scale_ = self.z_scale_.copy()
        est.bandwidth_ = self.bandwidth
        est.weights_ = self.weights_.copy()
        est.intercept_ = self.intercept_.copy()
        est.coef_ = self.coef_.copy()
        est.n_agents_ = self.n_clients
        est.n_features_in_ = self.coef_.shape[1]
        return est
