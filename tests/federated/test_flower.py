"""Flower adapter: the same protocols give the same numbers on Flower as in process.

The engine-free KME protocol tests run without flwr; the Flower tests skip
cleanly without it (``pytest.importorskip("flwr")``), and the Ray simulation
test also needs ``ray`` (the ``flwr[simulation]`` extra) and is marked slow.
"""

import sys

import numpy as np
import pytest

from mvlearn_ext.federated import (
    DREAMClient,
    DREAMServer,
    InProcessSimulator,
    KMEPersonalizedRidge,
    KMEProtocolClient,
    KMEProtocolServer,
    QuadraticFMOL,
    run_dream,
)


def clustered_agents(*, B=4, n=30, p=2, seed=0):
    rng = np.random.default_rng(seed)
    Xs, ys = [], []
    for b in range(B):
        X = rng.normal(size=(n + 5 * b, p))  # unequal sizes
        t = np.ones(p) + 3.0 * (b % 2)
        Xs.append(X)
        ys.append(X @ t + 0.3 * rng.normal(size=X.shape[0]))
    return Xs, ys


KME_PARAMS = dict(n_components=32, bandwidth=1.5, alpha=1e-3, nu=0.3, random_state=3)


def kme_inprocess(Xs, ys, **params):
    server = KMEProtocolServer(len(Xs), **params)
    clients = [KMEProtocolClient(i, X, y) for i, (X, y) in enumerate(zip(Xs, ys, strict=True))]
    InProcessSimulator(server, clients).run(server.n_rounds)
    return server


def dream_setup(prob, *, seed, participation=1.0, momentum=0.5):
    server = DREAMServer(
        np.zeros(prob.dim),
        n_tasks=prob.n_tasks,
        n_clients=prob.n_clients,
        learning_rate=0.1,
        participation=participation,
        random_state=seed,
    )

    def client_fn(i):
        return DREAMClient(
            i,
            lambda s, y: prob.grad(i, s, y),
            n_tasks=prob.n_tasks,
            dim=prob.dim,
            local_steps=3,
            learning_rate_local=0.05,
            momentum=momentum,
            control_variates=True,
            noise=prob.noise,
            random_state=seed,
        )

    return server, client_fn


# ----------------------------------------------------------- engine-free protocol


def test_kme_protocol_matches_estimator():
    Xs, ys = clustered_agents()
    server = kme_inprocess(Xs, ys, **KME_PARAMS)
    est = KMEPersonalizedRidge(**KME_PARAMS).fit(Xs, ys)
    # pooled standardisation from per-agent moments equals the stacked one
    np.testing.assert_allclose(server.z_mean_, est.z_mean_, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(server.z_scale_, est.z_scale_, rtol=1e-12)
    np.testing.assert_allclose(server.weights_, est.weights_, atol=1e-9)
    np.testing.assert_allclose(server.coef_, est.coef_, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(server.intercept_, est.intercept_, rtol=1e-9, atol=1e-10)
    # round 2 delivers each agent its own model; its reported training error is real
    for b, (X, y) in enumerate(zip(Xs, ys, strict=True)):
        mse = np.mean((y - est.predict(X, b)) ** 2)
        assert server.train_mse_[b] == pytest.approx(mse, rel=1e-9)
    # communication: moments (1 + 2 (p + 1)), then D + 1 + (p+1)^2 + (p+1) + 1, then 1
    p1 = 3
    assert server.floats_uploaded_ == 4 * ((1 + 2 * p1) + (32 + 1 + p1 * p1 + p1 + 1) + 1)
    pred = server.to_estimator().predict(Xs[1], 1)
    np.testing.assert_allclose(pred, est.predict(Xs[1], 1), rtol=1e-9, atol=1e-10)


def test_kme_protocol_errors():
    with pytest.raises(ValueError, match="bandwidth='median'"):
        KMEProtocolServer(3, bandwidth="median")
    with pytest.raises(ValueError, match="n_clients"):
        KMEProtocolServer(0)
    with pytest.raises(ValueError, match="weights"):
        KMEProtocolServer(2, weights="oracle")
    server = KMEProtocolServer(2, n_components=8, random_state=0)
    with pytest.raises(RuntimeError, match="round 1 needs round 0"):
        server.configure_round(1)
    with pytest.raises(ValueError, match="no reply from clients \\[1\\]"):
        server.aggregate_round(0, {0: {"n": 3, "mean": np.zeros(2), "m2": np.ones(2)}})
    with pytest.raises(ValueError, match="stage"):
        KMEProtocolClient(0, np.zeros((3, 1)), np.zeros(3)).fit({"stage": "nope"})
    with pytest.raises(ValueError, match="rows"):
        KMEProtocolClient(0, np.zeros((3, 1)), np.zeros(4))


# ----------------------------------------------------------- Flower objects, in process


@pytest.fixture
def flwr():
    return pytest.importorskip("flwr")


def test_payload_round_trip_is_exact(flwr):
    from mvlearn_ext.federated._flower import _from_recorddict, _to_recorddict

    rng = np.random.default_rng(0)
    payload = {
        "x": rng.normal(size=(3, 4)),
        "i": np.arange(5, dtype=np.int32),
        "round": 7,
        "lr": 0.1,
        "stage": "moments",
        "flag": True,
        "np_scalar": np.float64(2.5),
    }
    back = _from_recorddict(_to_recorddict(payload))
    assert set(back) == set(payload)
    np.testing.assert_array_equal(back["x"], payload["x"])
    assert back["x"].dtype == np.float64 and back["i"].dtype == np.int32
    assert back["round"] == 7 and isinstance(back["round"], int)
    assert back["stage"] == "moments" and back["flag"] is True and back["np_scalar"] == 2.5
    with pytest.raises(TypeError, match=r"payload\['bad'\]"):
        _to_recorddict({"bad": [1, 2]})


def test_dream_on_flower_apps_matches_inprocess_simulator(flwr):
    from mvlearn_ext.federated import run_flower_inprocess

    prob = QuadraticFMOL(
        n_clients=4, n_tasks=2, dim=3, heterogeneity=1.5, noise=0.1, random_state=0
    )
    # partial participation, momentum, control variates and gradient noise: the result
    # depends on the sampled clients, on the seeds and on the state kept across rounds
    ref_server, client_fn = dream_setup(prob, seed=5, participation=0.5)
    InProcessSimulator(ref_server, [client_fn(i) for i in range(4)]).run(6)
    fl_server, client_fn = dream_setup(prob, seed=5, participation=0.5)
    run_flower_inprocess(fl_server, client_fn, n_rounds=6)
    np.testing.assert_array_equal(fl_server.x, ref_server.x)
    np.testing.assert_array_equal(fl_server.c, ref_server.c)
    assert [h["clients"] for h in fl_server.history] == [h["clients"] for h in ref_server.history]
    # and it is run_dream's numbers (same seeds, full participation, no momentum)
    res = run_dream(
        prob,
        n_rounds=4,
        local_steps=3,
        learning_rate_local=0.05,
        learning_rate=0.1,
        random_state=2,
    )
    server, client_fn = dream_setup(prob, seed=2, momentum=0.0)
    run_flower_inprocess(server, client_fn, n_rounds=4)
    np.testing.assert_array_equal(server.x, res.x)


def test_dream_state_really_travels_through_context(flwr):
    """Dropping the client state between rounds changes the result (the test can fail)."""
    from mvlearn_ext.federated import run_flower_inprocess

    prob = QuadraticFMOL(n_clients=3, n_tasks=2, dim=3, heterogeneity=1.5, random_state=1)
    server, client_fn = dream_setup(prob, seed=0)
    run_flower_inprocess(server, client_fn, n_rounds=5)

    class Stateless:
        def __init__(self, inner):
            self.client_id, self.fit = inner.client_id, inner.fit

    amnesic, fn = dream_setup(prob, seed=0)
    run_flower_inprocess(amnesic, lambda i: Stateless(fn(i)), n_rounds=5)
    assert np.abs(server.x - amnesic.x).max() > 1e-6


def test_kme_on_flower_apps_matches_inprocess_and_estimator(flwr):
    from mvlearn_ext.federated import run_flower_inprocess

    Xs, ys = clustered_agents(B=3, seed=1)
    ref = kme_inprocess(Xs, ys, **KME_PARAMS)
    server = KMEProtocolServer(3, **KME_PARAMS)
    run_flower_inprocess(server, lambda i: KMEProtocolClient(i, Xs[i], ys[i]))
    np.testing.assert_array_equal(server.weights_, ref.weights_)
    np.testing.assert_array_equal(server.coef_, ref.coef_)
    np.testing.assert_array_equal(server.train_mse_, ref.train_mse_)
    est = KMEPersonalizedRidge(**KME_PARAMS).fit(Xs, ys)
    np.testing.assert_allclose(server.coef_, est.coef_, rtol=1e-9, atol=1e-10)


def test_flower_errors(flwr):
    from mvlearn_ext.federated import make_client_app, make_server_app, run_flower_inprocess

    prob = QuadraticFMOL(n_clients=2, n_tasks=2, dim=2, random_state=0)
    server, client_fn = dream_setup(prob, seed=0)
    with pytest.raises(TypeError, match="client_fn must be callable"):
        make_client_app(3)
    with pytest.raises(ValueError, match="n_rounds is required"):
        make_server_app(server)
    with pytest.raises(TypeError, match="protocol server"):
        make_server_app(object(), 2)
    # a grid with the wrong number of nodes is refused before any message is sent
    from flwr.app import Context, RecordDict

    from mvlearn_ext.federated import InProcessGrid

    grid = InProcessGrid(make_client_app(client_fn), 3)
    ctx = Context(run_id=0, node_id=0, node_config={}, state=RecordDict(), run_config={})
    with pytest.raises(RuntimeError, match="expects 2 nodes, the grid has 3"):
        make_server_app(server, 1, wait_nodes=0.0)(grid, ctx)
    assert grid.n_delivered == 0

    def broken(i):
        client = client_fn(i)
        if i == 1:
            client.fit = lambda msg: (_ for _ in ()).throw(ValueError("boom"))
        return client

    with pytest.raises(RuntimeError, match="round 0.*boom"):
        run_flower_inprocess(server, broken, n_rounds=2)
    with pytest.raises(RuntimeError, match="client_fn\\(1\\) returned a client with client_id=0"):
        run_flower_inprocess(server, lambda i: client_fn(0), n_rounds=1)


def test_missing_flwr_names_the_extra(monkeypatch):
    from mvlearn_ext.federated import make_client_app

    monkeypatch.setitem(sys.modules, "flwr", None)
    with pytest.raises(ImportError, match="extra 'federated'"):
        make_client_app(lambda i: None)


# ----------------------------------------------------------- Flower's Simulation Engine (Ray)


class Sequence:
    """Test helper: protocol servers (or clients) run one after the other, as one protocol.

    One Ray start-up then covers both protocols (Ray's start-up dominates the run time).
    """

    def __init__(self, parts, rounds=None):
        self.parts, self.rounds = parts, rounds
        self.client_id = getattr(parts[0], "client_id", None)
        if rounds is not None:
            self.n_clients, self.n_rounds = parts[0].n_clients, sum(rounds)

    def _locate(self, rnd):
        for k, r in enumerate(self.rounds):
            if rnd < r:
                return k, rnd
            rnd -= r
        raise ValueError(rnd)

    def configure_round(self, rnd):
        k, local = self._locate(rnd)
        return {c: {**m, "part": k} for c, m in self.parts[k].configure_round(local).items()}

    def aggregate_round(self, rnd, replies):
        k, local = self._locate(rnd)
        return self.parts[k].aggregate_round(local, replies)

    def fit(self, message):
        message = dict(message)
        return self.parts[message.pop("part")].fit(message)

    def get_state(self):
        return {f"{k}/{n}": v for k, p in enumerate(self.parts) for n, v in p.get_state().items()}

    def set_state(self, state):
        for k, p in enumerate(self.parts):
            prefix = f"{k}/"
            sub = {n[len(prefix) :]: v for n, v in state.items() if n.startswith(prefix)}
            if sub:
                p.set_state(sub)


@pytest.mark.slow
def test_dream_and_kme_on_flower_simulation_engine(flwr):
    """One short run of Flower's Simulation Engine (Ray): same numbers as in process."""
    ray_cloudpickle = pytest.importorskip("ray.cloudpickle")
    from mvlearn_ext.federated import run_flower_simulation

    # the Ray actors cannot import this test module: ship its helpers by value
    ray_cloudpickle.register_pickle_by_value(sys.modules[__name__])
    try:
        _simulation_matches_inprocess(run_flower_simulation)
    finally:
        ray_cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _simulation_matches_inprocess(run_flower_simulation):
    prob = QuadraticFMOL(
        n_clients=3, n_tasks=2, dim=3, heterogeneity=1.5, noise=0.1, random_state=0
    )
    Xs, ys = clustered_agents(B=3, seed=1)

    def make():
        dream, dream_client = dream_setup(prob, seed=4, participation=0.7)
        kme = KMEProtocolServer(3, **KME_PARAMS)
        server = Sequence([dream, kme], rounds=[3, kme.n_rounds])

        def client_fn(i):
            return Sequence([dream_client(i), KMEProtocolClient(i, Xs[i], ys[i])])

        return server, client_fn

    ref, client_fn = make()
    InProcessSimulator(ref, [client_fn(i) for i in range(3)]).run(ref.n_rounds)
    server, client_fn = make()
    run_flower_simulation(server, client_fn)
    dream, kme = server.parts
    np.testing.assert_array_equal(dream.x, ref.parts[0].x)
    np.testing.assert_array_equal(dream.c, ref.parts[0].c)
    assert [h["clients"] for h in dream.history] == [h["clients"] for h in ref.parts[0].history]
    np.testing.assert_array_equal(kme.weights_, ref.parts[1].weights_)
    np.testing.assert_array_equal(kme.coef_, ref.parts[1].coef_)
