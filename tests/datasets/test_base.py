"""The random-state helpers of the data set generators."""

import numpy as np
import pytest

from mvlearn_ext.datasets._base import check_generator, check_seed_sequence


def test_check_generator_is_reproducible_and_passes_generators_through():
    assert int(check_generator(0).integers(100)) == int(check_generator(0).integers(100))
    rng = np.random.default_rng(3)
    assert check_generator(rng) is rng
    legacy = np.random.RandomState(1)
    first = check_generator(legacy).integers(10**9)
    assert first != check_generator(legacy).integers(10**9)  # the RandomState advanced


def test_check_seed_sequence():
    assert check_seed_sequence(7).entropy == 7
    a = check_seed_sequence(np.random.default_rng(0)).generate_state(2)
    b = check_seed_sequence(np.random.default_rng(0)).generate_state(2)
    np.testing.assert_array_equal(a, b)
    with pytest.raises((TypeError, ValueError), match="random_state"):
        check_seed_sequence("seed")
