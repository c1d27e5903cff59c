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
  (:class:`~mvlearn_ext.federated.KMEProtocolServer`,
  :class:`~mvlearn_ext.federated.KMEProtocolClient`, in
  :mod:`mvlearn_ext.federated._kme_protocol`): three rounds
  (pooled standardisation moments; RFF mean embedding, variance and ridge
  statistics; the personalised models), the federated form of
  :class:`~mvlearn_ext.federated.KMEPersonalizedRidge`.

:class:`~mvlearn_ext.federated.InProcessSimulator` runs either protocol in
one process. This module builds Flower apps around the same objects (written
against and tested with ``flwr`` 1.42.0; the ``federated`` extra, imported
only when a Flower function is called), with Flower's public Message API
only. The engines that run them, :func:`run_flower_simulation` and
:func:`run_flower_inprocess` with its :class:`InProcessGrid`, are in
:mod:`mvlearn_ext.federated._flower_grid`, the one module that uses
internals of ``flwr`` 1.42 (and so is pinned to that minor version):

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

from numbers import Integral, Real

import numpy as np

from mvlearn_ext.utils._optional import import_optional

__all__ = ["make_client_app", "make_server_app"]

_FEATURE = "mvlearn_ext.federated Flower adapter"


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

    See Also
    --------
    make_server_app : The matching server app.
    run_flower_inprocess : Runs both apps in this process.

    Examples
    --------
    >>> from mvlearn_ext.federated import KMEProtocolClient, make_client_app
    >>> app = make_client_app(lambda i: KMEProtocolClient(i, [[0.0], [1.0]], [0.0, 1.0]))
    >>> type(app).__name__
    'ClientApp'
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

    See Also
    --------
    make_client_app : The matching client app.
    run_flower_simulation : Runs both apps on Flower's Simulation Engine.

    Examples
    --------
    >>> from mvlearn_ext.federated import KMEProtocolServer, make_server_app
    >>> app = make_server_app(KMEProtocolServer(2, n_components=8, random_state=0))
    >>> type(app).__name__
    'ServerApp'
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
