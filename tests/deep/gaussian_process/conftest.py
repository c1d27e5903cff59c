import numpy as np
import pytest


@pytest.fixture
def rank_two_outputs():
    """Eight outputs driven by two output features: a ``n_latent`` above the
    targets' rank leaves latent dimensions that hold only the tie-breaking
    noise of the initial latents."""
    rng = np.random.RandomState(0)
    X = np.linspace(0, 1, 60)[:, None]
    H = rng.normal(size=(8, 2))
    Y = np.sin(6 * X + H[:, 0]) * (1 + 0.3 * H[:, 1]) + 0.05 * rng.normal(size=(60, 8))
    return X, Y
