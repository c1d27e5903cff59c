"""The dask backend: a distributed LocalCluster gives the numbers of a sequential run."""

import sys

import pytest
from joblib import parallel_config

from mvlearn_ext.studies import ReplicationError, Study
from mvlearn_ext.studies._toy import location_estimators

distributed = pytest.importorskip("distributed")


def _study(**kwargs):
    return Study.from_grid(
        location_estimators, {"n": [10, 40], "sigma": [1.0, 3.0]}, n_replications=5, **kwargs
    )


@pytest.fixture(scope="module")
def reference():
    return _study(root_seed=4).run(progress=False)


def _cluster(processes):
    # In-process workers talk over inproc://; worker processes over localhost only.
    where = {"host": "127.0.0.1"} if processes else {}
    return distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=processes, dashboard_address=None, **where
    )


def test_dask_in_process_workers_match_and_resume(reference, tmp_path):
    path = tmp_path / "r.jsonl"
    with _cluster(False) as cluster, distributed.Client(cluster) as client:
        # The current client is found without client=.
        assert _study(root_seed=4).run(backend="dask", progress=False).equals(reference)
        assert _study(root_seed=4, path=path).run(client=client, progress=False).equals(reference)
        # joblib's own configuration reaches the study too.
        with parallel_config(backend="dask"):
            assert _study(root_seed=4).run(progress=False).equals(reference)
        # Errors from a worker name the replication.
        bad = Study(location_estimators, [{"n": 3}], n_replications=2)
        with pytest.raises(ReplicationError, match="raised KeyError"):
            bad.run(backend="dask", progress=False)
    # The file written through dask resumes sequentially with nothing left to do.
    assert _study(root_seed=4, path=path).run(progress=False).equals(reference)


def test_dask_worker_processes_match(reference):
    with _cluster(True) as cluster, distributed.Client(cluster) as client:
        frame = _study(root_seed=4).run(backend="dask", client=client, n_jobs=2, progress=False)
    assert frame.equals(reference)


def test_dask_without_client():
    try:
        distributed.get_client()
    except ValueError:
        pass
    else:  # pragma: no cover - a client left over by another test
        pytest.skip("a dask client is active")
    with pytest.raises(ValueError, match="needs a dask.distributed Client"):
        _study().run(backend="dask", progress=False)


def test_dask_missing_names_the_extra(monkeypatch):
    from mvlearn_ext.utils._optional import _EXTRAS

    extra, how = _EXTRAS["dask"]
    for missing in ("distributed", "dask"):
        monkeypatch.setitem(sys.modules, missing, None)
        with pytest.raises(ImportError, match=f"optional dependency '{missing}'") as info:
            _study().run(backend="dask", progress=False)
        assert f"(extra '{extra}'): {how}" in str(info.value)
        assert "dask" in how
