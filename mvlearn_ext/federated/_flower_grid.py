"""Engines for the Flower apps: an in-process ``Grid``, and Flower's Simulation Engine.

:func:`run_flower_simulation` runs the apps of :mod:`mvlearn_ext.federated._flower`
with ``flwr.simulation.run_simulation`` (Flower's public Simulation Engine,
which needs Ray: the ``flwr[simulation]`` extra). :func:`run_flower_inprocess`
runs the same ``ServerApp`` and ``ClientApp`` objects without Ray, through
:class:`InProcessGrid`, a ``flwr.serverapp.Grid`` that delivers each
``Message`` by calling the ``ClientApp`` directly with a per-node
``Context``. Unlike the apps, these use three internals of ``flwr`` 1.42
(``flwr.common.serde`` for the wire round trip, the ``Metadata`` fields that
Flower's own ``InMemoryGrid`` sets, and
``flwr.supercore.task_identity.TaskIdentity``, which ``run_simulation`` sets
too), so this module is pinned to that minor version; it is kept apart so
that a Flower upgrade touches it alone.
"""

from __future__ import annotations

from numbers import Integral

import numpy as np

from mvlearn_ext.federated._flower import (
    _FEATURE,
    _PARTITION_KEY,
    _check_rounds,
    _flwr,
    make_client_app,
    make_server_app,
)
from mvlearn_ext.utils._optional import is_available

__all__ = ["InProcessGrid", "run_flower_inprocess", "run_flower_simulation"]


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
    ``random_state``) whose order differs from the partition order, so the server
    must map them. Not exercised: the SuperLink's ``LinkState``, message
    TTLs, concurrency between nodes, Ray's actors and its pickling of the
    apps.

    Registered as a virtual subclass of ``flwr.serverapp.Grid``.

    Parameters
    ----------
    client_app : flwr.clientapp.ClientApp
    n_nodes : int
    random_state : int, default=0
        Seeds the node ids.

    See Also
    --------
    run_flower_inprocess : Runs a protocol on this grid.

    Examples
    --------
    >>> from mvlearn_ext.federated import InProcessGrid, KMEProtocolClient, make_client_app
    >>> app = make_client_app(lambda i: KMEProtocolClient(i, [[0.0], [1.0]], [0.0, 1.0]))
    >>> grid = InProcessGrid(app, n_nodes=2)
    >>> len(list(grid.get_node_ids()))
    2
    """

    def __init__(self, client_app, n_nodes, *, random_state=0):
        _flwr()
        from flwr.app import Context, RecordDict
        from flwr.serverapp import Grid

        if isinstance(n_nodes, bool) or not isinstance(n_nodes, Integral) or n_nodes < 1:
            raise ValueError(f"n_nodes must be an int >= 1, got {n_nodes!r}")
        if not callable(client_app):
            raise TypeError(f"client_app must be a ClientApp, got {type(client_app).__name__}")
        Grid.register(InProcessGrid)
        self.client_app = client_app
        rng = np.random.default_rng(random_state)
        ids = []
        while len(ids) < n_nodes:
            nid = int(rng.integers(2, 2**63 - 1))
            if nid not in ids:
                ids.append(nid)
        self._run = None
        self.run_id = int(rng.integers(1, 2**63 - 1))
        self.contexts = {
            nid: Context(
                run_id=self.run_id,
                node_id=nid,
                node_config={_PARTITION_KEY: i, "num-partitions": int(n_nodes)},
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


def run_flower_inprocess(server, client_fn, n_rounds=None, *, callback=None, random_state=0):
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
    random_state : int, default=0
        Seeds the node ids only.

    Returns
    -------
    server
        The same object, after ``n_rounds`` rounds.

    See Also
    --------
    run_flower_simulation : The same run on Flower's Simulation Engine (Ray).
    InProcessSimulator : The same protocol without Flower.

    Examples
    --------
    >>> from mvlearn_ext.federated import KMEProtocolClient, KMEProtocolServer
    >>> from mvlearn_ext.federated import run_flower_inprocess
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 2)) for _ in range(3)]
    >>> ys = [X @ [1.0, -1.0] + 0.1 * rng.normal(size=30) for X in Xs]
    >>> server = KMEProtocolServer(3, n_components=16, random_state=0)
    >>> server = run_flower_inprocess(server, lambda i: KMEProtocolClient(i, Xs[i], ys[i]))
    >>> server.coef_.shape  # one coefficient vector per agent
    (3, 2)
    """
    _flwr()
    from flwr.app import Context, RecordDict
    from flwr.common.constant import SUPERLINK_NODE_ID
    from flwr.supercore.task_identity import TaskIdentity

    server_app = make_server_app(server, n_rounds, callback=callback, wait_nodes=0.0)
    grid = InProcessGrid(
        make_client_app(client_fn), int(server.n_clients), random_state=random_state
    )
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

    See Also
    --------
    run_flower_inprocess : The same run in this process, without Ray.
    make_server_app : The server app it runs.

    Examples
    --------
    >>> from mvlearn_ext.federated import KMEProtocolClient, KMEProtocolServer
    >>> from mvlearn_ext.federated import run_flower_simulation
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> Xs = [rng.normal(size=(30, 2)) for _ in range(3)]
    >>> ys = [X @ [1.0, -1.0] + 0.1 * rng.normal(size=30) for X in Xs]
    >>> server = KMEProtocolServer(3, n_components=16, random_state=0)
    >>> def client_fn(i):
    ...     return KMEProtocolClient(i, Xs[i], ys[i])
    >>> server = run_flower_simulation(server, client_fn)  # doctest: +SKIP
    >>> server.coef_.shape  # doctest: +SKIP
    (3, 2)
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
