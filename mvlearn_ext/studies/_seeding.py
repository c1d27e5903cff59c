"""Settings as canonical JSON, and the seed of every (setting, replication) pair.

The seeding scheme (version 1)
------------------------------
A setting is a ``dict`` with ``str`` keys and JSON values. Its *canonical form*
is ``json.dumps(setting, sort_keys=True, separators=(",", ":"))`` after NumPy
scalars become Python scalars and tuples become lists. Its *key* is the first
8 bytes of the SHA-256 digest of that text, read as a big-endian unsigned
integer ``k`` (``0 <= k < 2**64``). Replication ``r`` of that setting draws
from ::

    numpy.random.Generator(numpy.random.PCG64(
        numpy.random.SeedSequence(root_seed, spawn_key=(k, r))))

which is the child that ``SeedSequence(root_seed).spawn(k + 1)[k].spawn(r + 1)[r]``
would return (a ``SeedSequence`` is determined by its entropy and its spawn
key). So the numbers of a replication depend only on ``root_seed``, the
setting's content and ``r``: not on the backend, the number of jobs, the
order of execution, the position of the setting in the study, or the other
settings.
"""

from __future__ import annotations

import hashlib
import json
import numbers
from collections.abc import Mapping

import numpy as np

__all__ = [
    "SEEDING_SCHEME",
    "canonical_json",
    "jsonable",
    "replication_rng",
    "replication_seed",
    "setting_key",
]

SEEDING_SCHEME = "sha256-spawn-key/1"
_PLAIN = frozenset({float, int, str, bool, type(None)})


def jsonable(value, *, where: str):
    """``value`` as plain JSON types (dict/list/str/int/float/bool/None).

    NumPy scalars become Python scalars, arrays and tuples become lists.
    Raises ``TypeError`` naming ``where`` for anything else.
    """
    if type(value) in _PLAIN:  # the common case, without the checks below
        return value
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, np.generic):
        return jsonable(value.item(), where=where)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        return float(value)
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist(), where=where)
    if isinstance(value, (list, tuple)):
        return [jsonable(v, where=f"{where}[{i}]") for i, v in enumerate(value)]
    if isinstance(value, Mapping):
        out = {}
        for k, v in value.items():
            if not isinstance(k, str):
                raise TypeError(f"{where} has a non-string key {k!r}; JSON keys must be str")
            out[k] = jsonable(v, where=f"{where}[{k!r}]")
        return out
    raise TypeError(
        f"{where} is not JSON-serialisable: {type(value).__name__} {value!r} "
        "(use numbers, strings, booleans, None, lists or dicts)"
    )


def canonical_json(setting: Mapping) -> str:
    """The canonical JSON text of a (JSON-ready) setting: sorted keys, no spaces."""
    return json.dumps(setting, sort_keys=True, separators=(",", ":"), allow_nan=True)


def setting_key(setting: Mapping) -> int:
    """The 64-bit key of a setting: SHA-256 of its canonical JSON, first 8 bytes.

    Parameters
    ----------
    setting : mapping
        A JSON-ready setting (its key order does not matter).

    Returns
    -------
    key : int
        In ``[0, 2**64)``.

    See Also
    --------
    Study : Seeds every replication from the setting's key.

    Examples
    --------
    >>> setting_key({"b": 2, "a": 1}) == setting_key({"a": 1, "b": 2})
    True
    >>> setting_key({"a": 1}) == setting_key({"a": 1.0})  # 1 and 1.0 differ in JSON
    False
    """
    digest = hashlib.sha256(canonical_json(setting).encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big")


def _check_root_seed(root_seed):
    """``root_seed`` as an int or a tuple of ints, all non-negative."""
    if isinstance(root_seed, (bool, np.bool_)):
        raise TypeError(f"root_seed must be a non-negative int, got {root_seed!r}")
    if isinstance(root_seed, numbers.Integral):
        if root_seed < 0:
            raise ValueError(f"root_seed must be a non-negative int, got {root_seed!r}")
        return int(root_seed)
    if isinstance(root_seed, (list, tuple)) and root_seed:
        return tuple(_check_root_seed(s) for s in root_seed)
    raise TypeError(
        f"root_seed must be a non-negative int (or a non-empty sequence of them), "
        f"got {type(root_seed).__name__} {root_seed!r}"
    )


def replication_seed(root_seed, key: int, replication: int) -> np.random.SeedSequence:
    """The ``SeedSequence`` of replication ``replication`` of the setting with ``key``."""
    entropy = list(root_seed) if isinstance(root_seed, tuple) else root_seed
    return np.random.SeedSequence(entropy, spawn_key=(int(key), int(replication)))


def replication_rng(root_seed, key: int, replication: int) -> np.random.Generator:
    """The generator handed to the replicate function (PCG64, explicitly)."""
    return np.random.Generator(np.random.PCG64(replication_seed(root_seed, key, replication)))
