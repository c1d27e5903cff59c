"""Every warning of the clusterers names the user's line, on both paths and every entry point.

``fit`` lives in a base class behind scikit-learn's ``_fit_context``, and the block
paths call the shared steps from deeper frames, so no fixed ``stacklevel`` can point at
the user's line: the warnings compute their level
(:func:`mvlearn_ext.utils._warnings.find_stack_level`). Here each one is recorded and
its ``filename`` must be this file.
"""

import contextlib
import warnings

import numpy as np
import pytest
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.cluster import DRMC, EOMSCCA, FPMVSCAG, HAGMVC, SMVSC
from mvlearn_ext.cluster._base import BaseClusterer
from mvlearn_ext.datasets import make_multiview_blobs
from mvlearn_ext.utils.discovery import all_estimators


def _small():
    Xs, _ = make_multiview_blobs(60, n_views=2, n_features=4, random_state=0)
    return Xs


@contextlib.contextmanager
def _recording():
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        yield record


def _assert_here(record, category, match):
    ours = [w for w in record if issubclass(w.category, category) and match in str(w.message)]
    assert ours, f"no {category.__name__} matching {match!r}: {[str(w.message) for w in record]}"
    assert {w.filename for w in ours} == {__file__}, [(w.filename, w.lineno) for w in ours]


# (estimator, the data, the block sizes of its paths, the warning's category and text)
CASES = {
    "EOMSCCA-components": (
        lambda bs: EOMSCCA(2, max_iter_inner=1, random_state=0, block_size=bs),
        _small,
        (None, 20),
        ConvergenceWarning,
        "connected components instead of n_clusters=2",
    ),
    "SMVSC-empty-anchor": (
        lambda bs: SMVSC(n_clusters=10, n_init=2, random_state=0, block_size=bs),
        "blobs",  # bench_dask_views(1000): one anchor left empty at m = k
        (None, 300),
        ConvergenceWarning,
        "separates only 9 groups",
    ),
    "FPMVSCAG-empty-anchor": (
        lambda bs: FPMVSCAG(n_clusters=10, n_init=2, random_state=0, block_size=bs),
        "blobs",  # bench_dask_views(1000): one anchor left empty at m = k
        (None, 300),
        ConvergenceWarning,
        "separates only 9 groups",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_warnings_point_at_the_callers_line(case, bench_dask_views):
    make, data, block_sizes, category, match = CASES[case]
    Xs = bench_dask_views(1000)[0] if data == "blobs" else data()
    for block_size in block_sizes:
        with _recording() as record:
            model = make(block_size).fit(Xs)
        _assert_here(record, category, match)
        with _recording() as record:
            make(block_size).fit_predict(Xs)
        _assert_here(record, category, match)
        if hasattr(model, "predict"):  # raises none of these; any other must point here too
            with _recording() as record:
                model.predict(Xs)
            assert {w.filename for w in record} <= {__file__}


def test_warnings_point_at_the_callers_line_on_dask():
    da = pytest.importorskip("dask.array")
    Xs = [da.from_array(X, chunks=20) for X in _small()]
    for make, category, match in (
        (lambda: EOMSCCA(2, max_iter_inner=1, random_state=0), ConvergenceWarning, "components"),
    ):
        with _recording() as record:
            make().fit(Xs)
        _assert_here(record, category, match)


def _identical():
    """Two views in which every sample is the same point."""
    return [np.ones((50, 3)), np.full((50, 2), 2.0)]


#: Every clusterer of the package (found by discovery, so a new one is covered).
_CLUSTERERS = [
    cls
    for _, cls in all_estimators(type_filter="cluster", multiview=True)
    if issubclass(cls, BaseClusterer)
]


@pytest.mark.parametrize("cls", _CLUSTERERS, ids=lambda cls: cls.__name__)
def test_identical_samples_warn_on_every_path(cls):
    """Samples that cannot be told apart get arbitrary labels: every clusterer says so,
    from the caller's line, in memory and over row blocks; one differing entry of
    one sample in the last block is enough to silence it."""
    block_sizes = (None, 20) if cls._fit_blocks is not None else (None,)
    match = f"{cls.__name__}: every sample has the same values in every view"
    for block_size in block_sizes:
        kwargs = {} if block_size is None else {"block_size": block_size}
        with _recording() as record:
            cls(n_clusters=3, random_state=0, **kwargs).fit(_identical())
        _assert_here(record, ConvergenceWarning, match)
        Xs = _identical()
        Xs[1][47, 0] = 3.0
        with _recording() as record:
            cls(n_clusters=2, random_state=0, **kwargs).fit(Xs)
        assert not [w for w in record if "same values" in str(w.message)], cls.__name__


def _three_points(order):
    """Two views of 30 samples, each one of three distinct points (``order``: which)."""
    points = [np.array([[0.0, 1.0], [2.0, 0.0], [5.0, 5.0]]), np.array([[1.0], [-1.0], [3.0]])]
    return [P[order] for P in points]


@pytest.mark.parametrize("cls", _CLUSTERERS, ids=lambda cls: cls.__name__)
def test_fewer_distinct_samples_than_clusters_warn(cls):
    """Three distinct points and four clusters: no partition keeps identical samples
    together and fills every cluster, so every clusterer says so, counting the
    distinct samples over all the row blocks (each block of 10 rows holds one point)."""
    Xs = _three_points(np.repeat([0, 1, 2], 10))
    block_sizes = (None, 10) if cls._fit_blocks is not None else (None,)
    for block_size in block_sizes:
        kwargs = {} if block_size is None else {"block_size": block_size}
        with _recording() as record:
            cls(n_clusters=4, random_state=0, **kwargs).fit(Xs)
        _assert_here(
            record,
            ConvergenceWarning,
            f"{cls.__name__}: Xs has 3 distinct samples, fewer than n_clusters=4",
        )
        with _recording() as record:
            cls(n_clusters=3, random_state=0, **kwargs).fit(Xs)
        assert not [w for w in record if "distinct samples" in str(w.message)], cls.__name__


def test_identical_samples_warn_on_dask():
    da = pytest.importorskip("dask.array")
    Xs = [da.from_array(X, chunks=20) for X in _identical()]
    with _recording() as record:
        HAGMVC(n_clusters=3, random_state=0).fit(Xs)
    _assert_here(record, ConvergenceWarning, "HAGMVC: every sample has the same values")
    # the blocks agree within themselves but not with each other: no warning
    Xs = [da.from_array(np.repeat([[1.0], [2.0]], 25, axis=0), chunks=25)]
    with _recording() as record:
        DRMC(n_clusters=2, random_state=0).fit(Xs)
    assert not [w for w in record if "same values" in str(w.message)]
