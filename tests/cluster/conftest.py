"""Shared fixtures of the clustering tests."""

import numpy as np
import pytest


@pytest.fixture(scope="session")
def bench_dask_views():
    """``views(n)``: ``(Xs, y)``, three 64-feature float32 views of ten Gaussian blobs.

    The centres are uniform on ``[-10, 10]``, the noise standard deviation 4; with
    seed 0 the first ten samples cover only seven of the ten blobs, which some tests
    rely on. The out-of-core benchmark writes the same data to its zarr stores.
    """

    def views(n, seed=0):
        centres = np.random.default_rng(seed).uniform(-10.0, 10.0, size=(3, 10, 64))
        rng = np.random.default_rng([seed, 0])
        y = rng.integers(10, size=n)
        Xs = [
            centres[v][y].astype(np.float32) + 4.0 * rng.standard_normal((n, 64), dtype=np.float32)
            for v in range(3)
        ]
        return Xs, y

    return views
