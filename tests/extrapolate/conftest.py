"""One BLAS thread for these tests: the small MLPs run several times faster on a busy machine."""

import pytest
from threadpoolctl import threadpool_limits


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    with threadpool_limits(limits=1):
        yield
