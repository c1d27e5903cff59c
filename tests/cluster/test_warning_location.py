"""Every warning of the clusterers names the user's line, on both paths and every entry point.

``fit`` lives in a base class behind scikit-learn's ``_fit_context``, and the block
paths call the shared steps from deeper frames, so no fixed ``stacklevel`` can point at
the user's line: the warnings compute their level
(:func:`mvlearn_ext.utils._warnings.find_stack_level`). Here each one is recorded and
its ``filename`` must be this file.
"""

import contextlib
import warnings

import pytest
from sklearn.exceptions import ConvergenceWarning

from mvlearn_ext.cluster import EOMSCCA, FPMVSCAG, SMVSC
from mvlearn_ext.datasets import make_multiview_blobs


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
        lambda bs: EOMSCCA(2, inner_max_iter=1, random_state=0, block_size=bs),
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
        (lambda: EOMSCCA(2, inner_max_iter=1, random_state=0), ConvergenceWarning, "components"),
    ):
        with _recording() as record:
            make().fit(Xs)
        _assert_here(record, category, match)
