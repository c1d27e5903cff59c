"""Study: tidy results, identical numbers on every backend, clear errors."""

import json
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import partial

import numpy as np
import pandas as pd
import pytest

from mvlearn_ext.studies import ReplicationError, Study, summarize, to_frame
from mvlearn_ext.studies._toy import location_estimators, thread_report

GRID = {"n": [10, 40], "sigma": [1.0, 3.0]}


@pytest.fixture(scope="module")
def reference():
    study = Study.from_grid(location_estimators, GRID, n_replications=6, root_seed=3)
    return study, study.run(progress=False)


def test_tidy_frame(reference):
    study, frame = reference
    assert list(frame.columns) == ["n", "sigma", "setting_id", "replication", "method", "sq_err"]
    assert len(frame) == 4 * 6 * 2
    # Ordered by setting, replication, record; settings as from_grid lists them.
    expected = [(s, r, m) for s in range(4) for r in range(6) for m in ("mean", "median")]
    assert list(zip(frame.setting_id, frame.replication, frame.method, strict=True)) == expected
    for s, setting in enumerate(study.settings):
        part = frame[frame.setting_id == s]
        assert (part.n == setting["n"]).all() and (part.sigma == setting["sigma"]).all()
    assert study.settings == [
        {"n": 10, "sigma": 1.0},
        {"n": 10, "sigma": 3.0},
        {"n": 40, "sigma": 1.0},
        {"n": 40, "sigma": 3.0},
    ]


@pytest.mark.parametrize(
    "backend, n_jobs",
    [("sequential", None), ("threading", 2), ("threading", -1), ("loky", 2), (None, 2)],
)
def test_identical_numbers_on_every_backend(reference, backend, n_jobs):
    study, frame = reference
    assert study.run(backend=backend, n_jobs=n_jobs, progress=False).equals(frame)


def test_map_object_backend(reference):
    study, frame = reference
    with ThreadPoolExecutor(2) as pool:
        assert study.run(backend=pool, progress=False).equals(frame)


def test_partial_replicate_and_records_output():
    def rep(setting, rng, *, scale):
        return {"y": scale * float(rng.normal())}

    study = Study(partial(rep, scale=2.0), [{"a": 0}], n_replications=3, root_seed=0)
    records = study.run(output="records", progress=False)
    assert isinstance(records, list) and [r["replication"] for r in records] == [0, 1, 2]
    assert to_frame(records).equals(study.run(progress=False))
    assert all(set(r) == {"a", "setting_id", "replication", "y"} for r in records)


def test_monte_carlo_oracle():
    # E[(mean - mu)^2] = sigma^2 / n exactly; the median's is larger (about pi/2 times).
    study = Study.from_grid(
        location_estimators, {"n": [25], "sigma": [2.0], "mu": [1.0]}, n_replications=400
    )
    table = summarize(study.run(progress=False), by="method", value="sq_err").set_index("method")
    mean = table.loc["mean"]
    assert abs(mean["mean"] - 4.0 / 25) < 4 * mean["se"]
    assert table.loc["median", "mean"] > mean["mean"]
    assert (table["n"] == 400).all()


def test_numpy_values_in_settings_and_records():
    def rep(setting, rng):
        return {"v": np.float32(0.5), "i": np.int64(3), "arr": np.arange(2)}

    frame = Study(rep, [{"a": np.int64(2), "b": np.float64(0.1)}], n_replications=1).run(
        progress=False
    )
    row = frame.iloc[0]
    assert row["a"] == 2 and row["b"] == 0.1 and row["v"] == 0.5 and row["i"] == 3
    assert row["arr"] == [0, 1]


def test_settings_from_any_iterable():
    study = Study(_ok, ({"a": a} for a in range(3)), n_replications=1)
    assert study.settings == [{"a": 0}, {"a": 1}, {"a": 2}]
    with pytest.raises(TypeError, match="list of dicts"):
        Study(_ok, 3, n_replications=1)
    with pytest.raises(TypeError, match="list of dicts"):
        Study(_ok, np.array([1, 2]), n_replications=1)


def test_replicate_receives_json_settings_and_empty_setting():
    seen = []

    def rep(setting, rng):
        seen.append(setting)
        return []

    frame = Study(rep, [{"t": (1, 2), "z": None}, {}], n_replications=1).run(progress=False)
    assert seen == [{"t": [1, 2], "z": None}, {}]
    assert len(frame) == 0 and {"t", "z", "setting_id", "replication"} <= set(frame.columns)


def test_progress_bar(capsys, reference):
    study, _ = reference
    study.run(progress=True)
    err = capsys.readouterr().err
    assert "48/48" not in err and "24/24" in err  # one step per replication
    study.run(progress=False)
    assert capsys.readouterr().err == ""


def test_inner_threads_capped_only_when_parallel():
    import numba

    study = Study(thread_report, [{"a": 1}, {"a": 2}], n_replications=2)
    par = study.run(backend="threading", n_jobs=2, progress=False)
    assert (par["numba_threads"] == 1).all() and par["blas_threads"].isin([1, -1]).all()
    loky = study.run(backend="loky", n_jobs=2, progress=False)
    assert (loky["numba_threads"] == 1).all() and loky["blas_threads"].isin([1, -1]).all()
    seq = study.run(backend="sequential", progress=False)
    assert (seq["numba_threads"] == numba.get_num_threads()).all()
    free = study.run(backend="threading", n_jobs=2, inner_threads=None, progress=False)
    assert (free["numba_threads"] == numba.get_num_threads()).all()


# ------------------------------------------------------------------ errors


def _ok(setting, rng):
    return {"x": 1.0}


@pytest.mark.parametrize(
    "settings, exc, match",
    [
        ([], ValueError, "settings is empty"),
        ({"a": [1, 2]}, TypeError, "from_grid"),
        ("abc", TypeError, "list of dicts"),
        ([{"a": 1}, 3], TypeError, r"settings\[1\] must be a dict"),
        ([{"a": object()}], TypeError, r"settings\[0\]\['a'\] is not JSON-serialisable"),
        ([{"a": {1: 2}}], TypeError, "non-string key"),
        ([{"a": 1}, {"a": 1}], ValueError, r"settings\[1\] duplicates settings\[0\]"),
        ([{"replication": 1}], ValueError, "reserved"),
    ],
)
def test_bad_settings(settings, exc, match):
    with pytest.raises(exc, match=match):
        Study(_ok, settings, n_replications=1)


@pytest.mark.parametrize(
    "n, exc",
    [(0, ValueError), (-3, ValueError), (2.0, TypeError), (True, TypeError), (None, TypeError)],
)
def test_bad_n_replications(n, exc):
    with pytest.raises(exc, match="n_replications"):
        Study(_ok, [{"a": 1}], n_replications=n)


def test_bad_arguments():
    with pytest.raises(TypeError, match="replicate must be callable"):
        Study("f", [{"a": 1}], n_replications=1)
    with pytest.raises(TypeError, match="path"):
        Study(_ok, [{"a": 1}], n_replications=1, path=3)
    study = Study(_ok, [{"a": 1}], n_replications=1)
    with pytest.raises(ValueError, match="output"):
        study.run(output="json")
    with pytest.raises(ValueError, match="inner_threads"):
        study.run(inner_threads=0)
    with pytest.raises(ValueError, match="n_jobs"):
        study.run(n_jobs=0)
    with pytest.raises(ValueError, match="backend must be one of"):
        study.run(backend="nope")
    with pytest.raises(TypeError, match="backend"):
        study.run(backend=3)
    with pytest.raises(ValueError, match="client= is for backend='dask'"):
        study.run(backend="loky", client=object())
    with pytest.raises(ValueError, match="empty"):
        Study.from_grid(_ok, {"a": []}, n_replications=1)
    with pytest.raises(TypeError, match="list of values"):
        Study.from_grid(_ok, {"a": 1}, n_replications=1)
    with pytest.raises(ValueError, match=r"replication must be in \[0, 1\)"):
        study.rng(0, 1)


@pytest.mark.parametrize(
    "returned, exc, match",
    [
        (3.0, TypeError, "must return a dict or a list of dicts"),
        ([{"x": 1}, 2], TypeError, "must return a dict or a list of dicts"),
        ({"x": object()}, TypeError, "not JSON-serialisable"),
        ({"a": 1.0}, ValueError, "clash"),
        ({"setting_id": 1.0}, ValueError, "clash"),
    ],
)
def test_bad_return_values_name_setting_and_replication(returned, exc, match):
    def rep(setting, rng):
        return returned

    study = Study(rep, [{"a": 5}], n_replications=2)
    with pytest.raises(exc, match=match) as info:
        study.run(progress=False)
    assert "replication 0 of setting 0 {'a': 5}" in str(info.value)


class _Boom:
    def __call__(self, setting, rng):
        if setting["a"] == 2:
            raise KeyError("missing thing")
        return {"x": 1.0}


@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_exception_in_replication_names_it(backend):
    study = Study(_Boom(), [{"a": 1}, {"a": 2}], n_replications=2)
    with pytest.raises(ReplicationError, match=r"of setting 1 \{'a': 2\} raised KeyError") as info:
        study.run(backend=backend, n_jobs=2, progress=False)
    err = info.value
    assert err.setting_id == 1 and err.setting == {"a": 2} and err.replication in (0, 1)
    assert isinstance(err.__cause__, KeyError)


def test_exception_in_loky_worker_carries_remote_traceback():
    study = Study(location_estimators, [{"n": 5}], n_replications=2)  # no "sigma": KeyError
    with pytest.raises(ReplicationError, match="raised KeyError") as info:
        study.run(backend="loky", n_jobs=2, progress=False)
    assert isinstance(info.value.__cause__, KeyError)
    assert "location_estimators" in str(info.value)  # the worker's traceback


def test_without_pandas(monkeypatch):
    study = Study(_ok, [{"a": 1}], n_replications=2)
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pandas"):
        study.run(progress=False)
    with pytest.raises(ImportError, match="pandas"):
        to_frame([{"a": 1}])
    records = study.run(output="records", progress=False)
    assert records == [
        {"a": 1, "setting_id": 0, "replication": 0, "x": 1.0},
        {"a": 1, "setting_id": 0, "replication": 1, "x": 1.0},
    ]


def test_repr_and_n_tasks():
    study = Study(_ok, [{"a": 1}, {"a": 2}], n_replications=3, root_seed=7)
    assert study.n_tasks == 6
    assert "2 settings" in repr(study) and "root_seed=7" in repr(study)
    assert json.loads(json.dumps(study.settings)) == study.settings
    assert isinstance(study.run(progress=False), pd.DataFrame)


def test_on_error_continue_runs_the_rest(tmp_path):
    import pickle

    path = tmp_path / "r.jsonl"
    study = Study(_Boom(), [{"a": 1}, {"a": 2}, {"a": 3}], n_replications=3, path=path)
    with pytest.raises(ReplicationError, match="3 of 9 replications failed") as info:
        study.run(on_error="continue", progress=False)
    err = info.value
    assert [(f.setting_id, f.replication) for f in err.failures] == [(1, 0), (1, 1), (1, 2)]
    assert isinstance(err.__cause__, KeyError) and err.setting == {"a": 2}
    assert len(path.read_text().splitlines()) == 1 + 6  # the others are saved
    assert sorted((r["a"], r["replication"]) for r in err.results) == [
        (a, r) for a in (1, 3) for r in range(3)
    ]
    again = pickle.loads(pickle.dumps(err))
    assert again.replication == 0 and len(again.failures) == 3
    single = pickle.loads(pickle.dumps(ReplicationError("m", 0, {"a": 1}, 2)))
    assert single.failures == [single] and single.replication == 2
    with pytest.raises(ValueError, match="on_error"):
        study.run(on_error="ignore")


def test_a_huge_local_n_jobs_is_capped_at_the_cpus(reference, monkeypatch):
    import joblib

    study, frame = reference
    seen = []
    real = joblib.parallel_config

    def record(**config):
        seen.append(config.get("n_jobs"))
        return real(**config)

    monkeypatch.setattr(joblib, "parallel_config", record)
    assert study.run(backend="threading", n_jobs=10**6, progress=False).equals(frame)
    assert seen and 1 <= seen[0] <= joblib.cpu_count()
    with pytest.raises(ValueError, match="n_jobs"):
        study.run(backend="threading", n_jobs=0, progress=False)
