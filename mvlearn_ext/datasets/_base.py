"""Helpers shared by the loaders and generators (private)."""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["check_generator", "check_random_state_type", "check_seed_sequence"]


def check_random_state_type(random_state, name="random_state"):
    """Raise unless ``random_state`` is a valid argument; draw nothing from it."""
    if random_state is None or isinstance(
        random_state, (np.random.Generator, np.random.RandomState)
    ):
        return
    if isinstance(random_state, numbers.Integral) and not isinstance(random_state, bool):
        if random_state < 0:
            raise ValueError(f"{name} must be a non-negative int, got {random_state}")
        return
    raise TypeError(
        f"{name} must be None, an int, a numpy.random.Generator or a "
        f"numpy.random.RandomState, got {type(random_state).__name__}"
    )


def check_generator(random_state, name="random_state"):
    """Turn a ``random_state`` argument into a :class:`numpy.random.Generator`.

    NumPy's global random state is never read or advanced.

    Parameters
    ----------
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        ``None`` gives a fresh generator seeded from the operating system
        (results are then not reproducible); an int seeds
        ``numpy.random.default_rng``; a ``Generator`` is used as it is (and
        advanced); a ``RandomState`` is asked for one 63-bit seed (so it is
        advanced too), which seeds a new generator.
    name : str, default="random_state"
        The argument name used in error messages.

    Returns
    -------
    rng : numpy.random.Generator
    """
    check_random_state_type(random_state, name)
    if random_state is None:
        return np.random.default_rng()
    if isinstance(random_state, np.random.Generator):
        return random_state
    if isinstance(random_state, np.random.RandomState):
        seed = random_state.randint(0, np.iinfo(np.int64).max, dtype=np.int64)
        return np.random.default_rng(int(seed))
    return np.random.default_rng(int(random_state))


def check_seed_sequence(random_state, name="random_state"):
    """Turn a ``random_state`` argument into a :class:`numpy.random.SeedSequence`.

    Generators that need several independent streams spawn them from it.
    An int ``s`` gives ``SeedSequence(s)``; ``None`` gives one seeded from the
    operating system; a ``Generator`` or ``RandomState`` is asked for 128
    bits of entropy (and so advanced). NumPy's global random state is never
    used.
    """
    check_random_state_type(random_state, name)
    if random_state is None:
        return np.random.SeedSequence()
    if isinstance(random_state, np.random.Generator):
        return np.random.SeedSequence(random_state.integers(0, 2**32, size=4, dtype=np.uint64))
    if isinstance(random_state, np.random.RandomState):
        return np.random.SeedSequence(random_state.randint(0, 2**32, size=4, dtype=np.uint64))
    return np.random.SeedSequence(int(random_state))
