"""Flower adapter: the package's federated protocols on Flower's Message API.

The federated algorithms of :mod:`mvlearn_ext.federated` are written as
engine-free *protocol objects*: a server with ``configure_round(rnd) ->
{client_id: message}`` and ``aggregate_round(rnd, {client_id: reply})``, and
clients with ``fit(message) -> reply`` (optionally ``get_state`` /
``set_state`` for what they keep between rounds), where messages and replies
are flat dicts of NumPy arrays, numbers and strings. Two protocols ship:

* DREAM (:class:`~mvlearn_ext.federated.DREAMServer`,
  :class:`~mvlearn_ext.federated.DREAMClient`), multi-round, stateful
  clients (control variates and momentum);
* the KME multi-task-averaging personalised ridge
  (:class:`KMEProtocolServer`, :class:`KMEProtocolClient`): three rounds
  (pooled standardisation moments; RFF mean embedding, variance and ridge
  statistics; the personalised models), the federated form of
  :class:`~mvlearn_ext.federated.KMEPersonalizedRidge`.

:class:`~mvlearn_ext.federated.InProcessSimulator` runs either protocol in
one process. This module runs the same objects on Flower (written against and
tested with ``flwr`` 1.42.0; the ``federated`` extra, imported only when a
Flower function is called). The apps use Flower's public Message API only;
:class:`InProcessGrid` and :func:`run_flower_inprocess` also use three
internals of 1.42 (``flwr.common.serde`` for the wire round trip, the
``Metadata`` fields that Flower's own ``InMemoryGrid`` sets, and
``flwr.supercore.task_identity.TaskIdentity``, which ``run_simulation`` sets
too), so they are pinned to that minor version:

* :func:`make_client_app` wraps a client factory ``client_fn(client_id)`` in
  a ``flwr.clientapp.ClientApp`` (Message API): a ``query`` handler that
  reports the node's ``partition-id`` and a ``train`` handler that runs
  ``fit``; client state survives between rounds in Flower's
  ``Context.state`` (an ``ArrayRecord``), because Flower rebuilds the
  client for every message;
* :func:`make_server_app` wraps a protocol server in a
  ``flwr.serverapp.ServerApp`` whose ``main`` maps partition ids to node ids
  (one query round), then sends every round's messages with
  ``grid.send_and_receive`` and feeds the replies to ``aggregate_round``;
* :func:`run_flower_simulation` runs both with
  ``flwr.simulation.run_simulation`` (Flower's Simulation Engine, which
  needs Ray: the ``flwr[simulation]`` extra);
* :func:`run_flower_inprocess` runs the same ``ServerApp`` and
  ``ClientApp`` objects without Ray, through :class:`InProcessGrid`, a
  ``flwr.serverapp.Grid`` that delivers each ``Message`` by calling the
  ``ClientApp`` directly with a per-node ``Context``. It exercises the apps'
  handlers, the ``RecordDict`` / ``ArrayRecord`` / ``ConfigRecord``
  serialisation of every payload, the ``Context.state`` persistence and the
  ``reply_to`` bookkeeping; it does *not* exercise Flower's SuperLink state,
  its message routing between processes or Ray.

Payloads use Flower's records: arrays go to one ``ArrayRecord`` (NumPy's
``.npy`` serialisation, lossless for float64) and scalars to one
``ConfigRecord``, so the same seeds give bit-identical numbers on every
engine.
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
    weighted_ridge,
)
from mvlearn_ext.utils._optional import import_optional, is_available

__all__ = [
    "InProcessGrid",
    "KMEProtocolClient",
    "KMEProtocolServer",
    "make_client_app",
    "make_server_app",
    "run_flower_inprocess",
    "run_flower_simulation",
]

_FEATURE = "mvlearn_ext.federated Flower adapter"
_STAGES = ("moments", "statistics", "model")


# ---------------------------------------------------------------------------
# KME multi-task averaging as an engine-free protocol
# ---------------------------------------------------------------------------


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
        ``X^T X / n``, ``X^T y / n`` (with a leading 1-column);
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
        """Answer one protocol message (see the class docstring)."""
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
            gram, moment, n = agent_ridge_statistics(self.X, self.y)
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
    package's design (project spec §7.3), not the paper's.

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
            self.z_mean_ = mean
            self.z_scale_ = np.sqrt(pooled / N) + 1e-12
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
            theta = weighted_ridge(grams, moments, self.weights_, alpha=self.alpha)
            self.intercept_ = theta[:, 0]
            self.coef_ = theta[:, 1:]
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


# ---------------------------------------------------------------------------
# Payloads <-> Flower records
# ---------------------------------------------------------------------------

_PAYLOAD = "mvlearn_ext"  # records "<prefix>.arrays" and "<prefix>.config"
_STATE = "mvlearn_ext.state"
_PARTITION_KEY = "partition-id"


def _flwr():
    return import_optional("flwr", feature=_FEATURE)


def _split_payload(payload, where):
    if not isinstance(payload, dict):
        raise TypeError(f"{where} must be a dict, got {type(payload).__name__}")
    arrays, config = {}, {}
    for key, value in payload.items():
        if not isinstance(key, str):
            raise TypeError(f"{where} keys must be str, got {key!r}")
        if isinstance(value, np.ndarray):
            arrays[key] = np.ascontiguousarray(value)
        elif isinstance(value, (bool, np.bool_)):
            config[key] = bool(value)
        elif isinstance(value, (Integral, np.integer)):
            config[key] = int(value)
        elif isinstance(value, (Real, np.floating)):
            config[key] = float(value)
        elif isinstance(value, str):
            config[key] = value
        else:
            raise TypeError(
                f"{where}[{key!r}] must be a NumPy array, a number or a str, "
                f"got {type(value).__name__}"
            )
    return arrays, config


def _put_payload(records, prefix, payload, where):
    """Store a flat dict of arrays and scalars in ``records`` (a ``RecordDict``)."""
    from flwr.app import Array, ArrayRecord, ConfigRecord

    arrays, config = _split_payload(payload, where)
    records[f"{prefix}.arrays"] = ArrayRecord({k: Array(v) for k, v in arrays.items()})
    records[f"{prefix}.config"] = ConfigRecord(config)
    return records


def _get_payload(records, prefix, where):
    """Inverse of :func:`_put_payload`."""
    try:
        arrays = records.array_records[f"{prefix}.arrays"]
        config = records.config_records[f"{prefix}.config"]
    except KeyError as exc:
        raise ValueError(
            f"{where} is not an mvlearn_ext payload (missing record {exc.args[0]!r})"
        ) from None
    out = {key: arr.numpy() for key, arr in arrays.items()}
    out.update(config)
    return out


def _to_recorddict(payload, where="payload"):
    from flwr.app import RecordDict

    return _put_payload(RecordDict(), _PAYLOAD, payload, where)


def _from_recorddict(content, where="message content"):
    return _get_payload(content, _PAYLOAD, where)


# ---------------------------------------------------------------------------
# ClientApp / ServerApp
# ---------------------------------------------------------------------------


def _partition_id(context):
    try:
        return int(context.node_config[_PARTITION_KEY])
    except KeyError:
        raise ValueError(
            f"the node has no {_PARTITION_KEY!r} in its node_config; the simulation engine "
            f"sets it, a deployed SuperNode needs --node-config '{_PARTITION_KEY}=<i>'"
        ) from None


def make_client_app(client_fn):
    """A Flower ``ClientApp`` that runs the package's protocol clients.

    Parameters
    ----------
    client_fn : callable
        ``client_fn(client_id) -> client``, with ``client.fit(message) ->
        reply`` (flat dicts of arrays and scalars) and optionally
        ``get_state() -> dict`` / ``set_state(dict)``. ``client_id`` is the
        node's ``partition-id``. Flower builds a new client for every message
        (its ``ClientApp`` is stateless by design), so ``client_fn`` must be
        cheap and deterministic; what the client keeps between rounds goes
        through ``get_state`` / ``set_state`` into Flower's ``Context.state``.
        Under the Ray engine the function is pickled into the actor
        processes with Ray's cloudpickle: closures, lambdas and what they
        capture (data, a problem object) travel by value, but classes and
        functions of a module are pickled by reference, so that module must
        be importable there (the package's own are; for a module that is
        not, ``ray.cloudpickle.register_pickle_by_value(module)``).

    Returns
    -------
    app : flwr.clientapp.ClientApp
        With a ``query`` handler (answers ``{"client_id": partition_id}``)
        and a ``train`` handler (runs ``fit``).
    """
    if not callable(client_fn):
        raise TypeError(f"client_fn must be callable, got {type(client_fn).__name__}")
    _flwr()
    from flwr.app import Message
    from flwr.clientapp import ClientApp

    app = ClientApp()

    @app.query()
    def _query(msg, context):
        return Message(_to_recorddict({"client_id": _partition_id(context)}), reply_to=msg)

    @app.train()
    def _train(msg, context):
        cid = _partition_id(context)
        client = client_fn(cid)
        own = getattr(client, "client_id", cid)
        if own != cid:
            raise ValueError(f"client_fn({cid}) returned a client with client_id={own}")
        if f"{_STATE}.arrays" in context.state and hasattr(client, "set_state"):
            client.set_state(_get_payload(context.state, _STATE, "client state"))
        reply = client.fit(_from_recorddict(msg.content))
        if hasattr(client, "get_state"):
            _put_payload(context.state, _STATE, client.get_state(), "client state")
        return Message(_to_recorddict(reply, "client reply"), reply_to=msg)

    return app


def _replies_by_client(replies, node_to_client, rnd):
    out = {}
    for reply in replies:
        if reply.has_error():
            raise RuntimeError(
                f"round {rnd}: node {reply.metadata.src_node_id} failed: {reply.error.reason}"
            )
        out[node_to_client[reply.metadata.src_node_id]] = _from_recorddict(reply.content)
    return out


def _drive(server, grid, n_rounds, *, n_clients, timeout, callback, wait_nodes):
    """The ``ServerApp`` main loop: discover the nodes, then run the protocol rounds."""
    import time

    from flwr.app import Message, MessageType

    deadline = time.monotonic() + wait_nodes
    nodes = sorted(grid.get_node_ids())
    while len(nodes) < n_clients and time.monotonic() < deadline:
        time.sleep(0.05)
        nodes = sorted(grid.get_node_ids())
    if len(nodes) != n_clients:
        raise RuntimeError(f"the server expects {n_clients} nodes, the grid has {len(nodes)}")
    queries = [
        Message(_to_recorddict({}), dst_node_id=nid, message_type=MessageType.QUERY)
        for nid in nodes
    ]
    node_to_client = {}
    for reply in grid.send_and_receive(queries, timeout=timeout):
        if reply.has_error():
            raise RuntimeError(f"node discovery failed: {reply.error.reason}")
        node_to_client[reply.metadata.src_node_id] = int(
            _from_recorddict(reply.content)["client_id"]
        )
    if sorted(node_to_client.values()) != list(range(n_clients)):
        raise RuntimeError(
            f"the nodes' partition ids {sorted(node_to_client.values())} are not "
            f"0..{n_clients - 1}"
        )
    client_to_node = {c: nid for nid, c in node_to_client.items()}
    for rnd in range(n_rounds):
        messages = server.configure_round(rnd)
        out = [
            Message(
                _to_recorddict(msg, "server message"),
                dst_node_id=client_to_node[int(cid)],
                message_type=MessageType.TRAIN,
                group_id=str(rnd),
            )
            for cid, msg in messages.items()
        ]
        replies = _replies_by_client(
            grid.send_and_receive(out, timeout=timeout), node_to_client, rnd
        )
        if set(replies) != {int(c) for c in messages}:
            raise RuntimeError(
                f"round {rnd}: replies from {sorted(replies)}, expected {sorted(messages)}"
            )
        server.aggregate_round(rnd, replies)
        if callback is not None:
            callback(rnd, server)
    return server


def _check_rounds(server, n_rounds):
    if n_rounds is None:
        n_rounds = getattr(server, "n_rounds", None)
        if n_rounds is None:
            raise ValueError("n_rounds is required for a server without an n_rounds attribute")
    if isinstance(n_rounds, bool) or not isinstance(n_rounds, Integral) or n_rounds < 1:
        raise ValueError(f"n_rounds must be an int >= 1, got {n_rounds!r}")
    for name in ("configure_round", "aggregate_round"):
        if not callable(getattr(server, name, None)):
            raise TypeError(f"server must have a {name}() method (a protocol server)")
    if not isinstance(getattr(server, "n_clients", None), Integral):
        raise TypeError("server must have an int attribute n_clients (a protocol server)")
    return int(n_rounds)


def make_server_app(server, n_rounds=None, *, timeout=None, callback=None, wait_nodes=60.0):
    """A Flower ``ServerApp`` that runs a protocol server.

    Parameters
    ----------
    server : protocol server
        E.g. :class:`~mvlearn_ext.federated.DREAMServer` or
        :class:`KMEProtocolServer`; it is updated in place.
    n_rounds : int, optional
        Defaults to ``server.n_rounds`` where the protocol fixes it.
    timeout : float, optional
        Passed to ``grid.send_and_receive``.
    callback : callable, optional
        ``callback(rnd, server)`` after every round.
    wait_nodes : float, default=60.0
        Seconds to wait for ``server.n_clients`` nodes to register.

    Returns
    -------
    app : flwr.serverapp.ServerApp
        Its ``main(grid, context)`` sends one ``query`` message per node
        (partition id to node id), then, for every round, one ``train``
        message per sampled client (``group_id`` is the round) and feeds
        the replies to ``server.aggregate_round``. A client error is raised
        as ``RuntimeError``.
    """
    n_rounds = _check_rounds(server, n_rounds)
    _flwr()
    from flwr.serverapp import ServerApp

    app = ServerApp()

    @app.main()
    def _main(grid, context):
        _drive(
            server,
            grid,
            n_rounds,
            n_clients=int(server.n_clients),
            timeout=timeout,
            callback=callback,
            wait_nodes=wait_nodes,
        )

    return app


# ---------------------------------------------------------------------------
# Engines: an in-process Grid, and Flower's Simulation Engine
# ---------------------------------------------------------------------------


def _wire_copy(content):
    """``RecordDict`` -> protobuf bytes -> ``RecordDict`` (what a real transport does)."""
    from flwr.common.serde import recorddict_from_proto, recorddict_to_proto
    from flwr.proto.recorddict_pb2 import RecordDict as ProtoRecordDict

    data = recorddict_to_proto(content).SerializeToString()
    return recorddict_from_proto(ProtoRecordDict.FromString(data))


class InProcessGrid:
    """A Flower ``Grid`` that delivers every ``Message`` to a ``ClientApp`` in this process.

    It stands in for the SuperLink and the Simulation Engine when Ray is not
    wanted (tests, CI, debugging): ``push_messages`` gives each message an id,
    serialises its content to Flower's protobuf wire format and back, calls
    ``client_app(message, context)`` with the destination node's ``Context``
    (kept across rounds, with ``node_config = {"partition-id": i,
    "num-partitions": n}``, as the engine sets it) and stores the reply,
    equally serialised; an exception in the ``ClientApp`` becomes an error
    reply, as in the engine. Node ids are random 63-bit integers (seeded by
    ``seed``) whose order differs from the partition order, so the server
    must map them. Not exercised: the SuperLink's ``LinkState``, message
    TTLs, concurrency between nodes, Ray's actors and its pickling of the
    apps.

    Registered as a virtual subclass of ``flwr.serverapp.Grid``.

    Parameters
    ----------
    client_app : flwr.clientapp.ClientApp
    num_nodes : int
    seed : int, default=0
        Seeds the node ids.
    """

    def __init__(self, client_app, num_nodes, *, seed=0):
        _flwr()
        from flwr.app import Context, RecordDict
        from flwr.serverapp import Grid

        if isinstance(num_nodes, bool) or not isinstance(num_nodes, Integral) or num_nodes < 1:
            raise ValueError(f"num_nodes must be an int >= 1, got {num_nodes!r}")
        if not callable(client_app):
            raise TypeError(f"client_app must be a ClientApp, got {type(client_app).__name__}")
        Grid.register(InProcessGrid)
        self.client_app = client_app
        rng = np.random.default_rng(seed)
        ids = []
        while len(ids) < num_nodes:
            nid = int(rng.integers(2, 2**63 - 1))
            if nid not in ids:
                ids.append(nid)
        self._run = None
        self.run_id = int(rng.integers(1, 2**63 - 1))
        self.contexts = {
            nid: Context(
                run_id=self.run_id,
                node_id=nid,
                node_config={_PARTITION_KEY: i, "num-partitions": int(num_nodes)},
                state=RecordDict(),
                run_config={},
            )
            for i, nid in enumerate(ids)
        }
        self._replies = {}
        self.n_delivered = 0

    def set_run(self, run):
        self._run = run

    @property
    def run(self):
        return self._run

    def create_message(self, content, message_type, dst_node_id, group_id, ttl=None):
        from flwr.app import Message

        return Message(content, dst_node_id, message_type, ttl=ttl, group_id=group_id)

    def get_node_ids(self):
        return list(self.contexts)

    def push_messages(self, messages):
        import traceback
        import uuid

        from flwr.app import Error, Message
        from flwr.common.constant import SUPERLINK_NODE_ID, ErrorCode

        ids = []
        for msg in messages:
            dst = msg.metadata.dst_node_id
            if dst not in self.contexts:
                raise ValueError(f"message for unknown node {dst}")
            # as Flower's InMemoryGrid / LinkState do: assign the id and the source
            msg.metadata.__dict__["_message_id"] = str(uuid.uuid4())
            msg.metadata.__dict__["_src_node_id"] = SUPERLINK_NODE_ID
            delivered = Message(
                _wire_copy(msg.content),
                dst,
                msg.metadata.message_type,
                ttl=msg.metadata.ttl,
                group_id=msg.metadata.group_id,
            )
            for key in ("_message_id", "_src_node_id", "_run_id"):
                delivered.metadata.__dict__[key] = msg.metadata.__dict__[key]
            try:
                reply = self.client_app(delivered, self.contexts[dst])
            except Exception as exc:  # reported as an error reply, as in the engine
                reason = f"{type(exc).__name__}: {exc}\n{traceback.format_exc(limit=3)}"
                reply = Message(
                    Error(code=ErrorCode.CLIENT_APP_RAISED_EXCEPTION, reason=reason),
                    reply_to=delivered,
                )
            else:
                if reply.has_content():
                    reply.content = _wire_copy(reply.content)
            reply.metadata.__dict__["_message_id"] = str(uuid.uuid4())
            self._replies[msg.metadata.message_id] = reply
            self.n_delivered += 1
            ids.append(msg.metadata.message_id)
        return ids

    def pull_messages(self, message_ids):
        return [self._replies.pop(i) for i in list(message_ids) if i in self._replies]

    def send_and_receive(self, messages, *, timeout=None):
        return self.pull_messages(self.push_messages(messages))


def run_flower_inprocess(server, client_fn, n_rounds=None, *, callback=None, seed=0):
    """Run a protocol on Flower's ``ServerApp`` / ``ClientApp`` objects, without Ray.

    The apps are those of :func:`make_server_app` and :func:`make_client_app`;
    :class:`InProcessGrid` delivers the messages (see it for what is and is
    not exercised). Same seeds, same numbers as
    :class:`~mvlearn_ext.federated.InProcessSimulator` and as
    :func:`run_flower_simulation`.

    Parameters
    ----------
    server : protocol server
        Updated in place; it must have ``n_clients``.
    client_fn : callable
        ``client_fn(client_id) -> client`` (see :func:`make_client_app`).
    n_rounds : int, optional
        Defaults to ``server.n_rounds``.
    callback : callable, optional
        ``callback(rnd, server)`` after every round.
    seed : int, default=0
        Seeds the node ids only.

    Returns
    -------
    server
        The same object, after ``n_rounds`` rounds.

    """
    _flwr()
    from flwr.app import Context, RecordDict
    from flwr.common.constant import SUPERLINK_NODE_ID
    from flwr.supercore.task_identity import TaskIdentity

    server_app = make_server_app(server, n_rounds, callback=callback, wait_nodes=0.0)
    grid = InProcessGrid(make_client_app(client_fn), int(server.n_clients), seed=seed)
    # the process-wide identity that Flower's runtimes set before running a ServerApp
    # (run_simulation sets the same three fields); restored afterwards
    saved = (TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id)
    TaskIdentity.task_id, TaskIdentity.run_id = 1, grid.run_id
    TaskIdentity.node_id = SUPERLINK_NODE_ID
    try:
        context = Context(
            run_id=grid.run_id, node_id=0, node_config={}, state=RecordDict(), run_config={}
        )
        server_app(grid, context)
    finally:
        TaskIdentity._task_id, TaskIdentity._run_id, TaskIdentity._node_id = saved
    return server


def run_flower_simulation(
    server,
    client_fn,
    n_rounds=None,
    *,
    callback=None,
    backend_config=None,
    verbose=False,
):
    """Run a protocol on Flower's Simulation Engine (``flwr.simulation.run_simulation``).

    Needs Ray (``pip install "flwr[simulation]"``). The ``ServerApp`` runs in
    a thread of this process, so ``server`` is updated in place; the
    ``ClientApp`` (with ``client_fn`` and whatever it closes over) is pickled
    into Ray actor processes, one virtual SuperNode per client with
    ``partition-id`` ``0 .. n_clients - 1``. Ray's start-up takes seconds to
    tens of seconds.

    Parameters
    ----------
    server : protocol server
        Updated in place; it must have ``n_clients``.
    client_fn : callable
        ``client_fn(client_id) -> client`` (see :func:`make_client_app`).
    n_rounds : int, optional
        Defaults to ``server.n_rounds``.
    callback : callable, optional
        ``callback(rnd, server)`` after every round (runs in the server thread).
    backend_config : dict, optional
        Flower's backend config. The default runs one CPU per client, at most
        2 CPUs for Ray in all, without Ray's dashboard.
    verbose : bool, default=False
        Flower's debug logging.

    Returns
    -------
    server
        The same object, after ``n_rounds`` rounds.
    """
    _flwr()
    if not is_available("ray"):
        raise ImportError(
            f"{_FEATURE}: Flower's Simulation Engine needs Ray: pip install 'flwr[simulation]' "
            "(or use run_flower_inprocess, which needs flwr only)"
        )
    from flwr.simulation import run_simulation

    n_rounds = _check_rounds(server, n_rounds)
    done = []

    def _cb(rnd, srv):
        done.append(rnd)
        if callback is not None:
            callback(rnd, srv)

    if backend_config is None:
        backend_config = {
            "client_resources": {"num_cpus": 1, "num_gpus": 0.0},
            "init_args": {"num_cpus": 2, "include_dashboard": False},
        }
    run_simulation(
        server_app=make_server_app(server, n_rounds, callback=_cb),
        client_app=make_client_app(client_fn),
        num_supernodes=int(server.n_clients),
        backend_config=backend_config,
        verbose_logging=bool(verbose),
    )
    if len(done) != n_rounds:
        raise RuntimeError(f"the Flower simulation stopped after {len(done)} of {n_rounds} rounds")
    return server
