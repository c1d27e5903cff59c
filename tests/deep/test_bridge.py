import subprocess
import sys

import numpy as np
import pytest
import torch

from mvlearn_ext.deep import as_numpy, as_tensor, resolve_device, seeded_generator
from mvlearn_ext.utils import project_simplex


def test_round_trip_keeps_dtype_and_shares_memory():
    X = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = as_tensor(X)
    assert t.dtype == torch.float32
    t[0, 0] = 42.0
    assert X[0, 0] == 42.0  # a view, no copy
    assert as_tensor(np.arange(3)).dtype == torch.float64
    np.testing.assert_array_equal(as_numpy(t * 2), X * 2)
    with pytest.raises(TypeError, match="numeric"):
        as_tensor(np.array(["a"]))


def test_compiled_kernels_take_tensor_memory():
    """Tensors from the bridge go through the compiled core without a copy."""
    t = torch.randn(50, 7, dtype=torch.float64, generator=seeded_generator(0))
    Z = project_simplex(as_numpy(t))
    np.testing.assert_allclose(Z.sum(axis=1), 1.0)


def test_seeded_generator_is_reproducible_and_leaves_global_state():
    state = torch.random.get_rng_state()
    a = torch.rand(5, generator=seeded_generator(123))
    b = torch.rand(5, generator=seeded_generator(123))
    assert torch.equal(a, b)
    assert torch.equal(state, torch.random.get_rng_state())
    c = torch.rand(5, generator=seeded_generator(np.random.default_rng(1)))
    d = torch.rand(5, generator=seeded_generator(np.random.default_rng(1)))
    assert torch.equal(c, d)
    with pytest.raises(TypeError, match="random_state"):
        seeded_generator("seed")


def test_resolve_device():
    assert resolve_device("cpu").type == "cpu"
    assert resolve_device(None).type in ("cpu", "cuda")
    with pytest.raises(ValueError, match="device must be"):
        resolve_device("toaster")


def test_root_import_does_not_import_torch():
    code = "import sys, mvlearn_ext, mvlearn_ext.utils; assert 'torch' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
