"""Shared fixtures of the clustering tests."""

import numpy as np
import pytest


def _ten_blob_views(n, seed=0):
    """``(Xs, y)``: three float32 views of 64 features, 10 Gaussian clusters (std 4).

    The cluster centres are uniform in ``[-10, 10]``; with 1000 samples SMVSC and
    FPMVS-CAG at ``m = k`` anchors leave one anchor without samples for some seeds.
    """
    centres = np.random.default_rng(seed).uniform(-10.0, 10.0, size=(3, 10, 64))
    rng = np.random.default_rng([seed, 0])
    labels = rng.integers(10, size=n)
    views = [
        centres[v][labels].astype(np.float32)
        + 4.0 * rng.standard_normal((n, 64), dtype=np.float32)
        for v in range(3)
    ]
    return views, labels


@pytest.fixture(scope="session")
def ten_blob_views():
    """``n -> (Xs, y)``: ten well-separated blobs in three wide float32 views."""
    return _ten_blob_views
