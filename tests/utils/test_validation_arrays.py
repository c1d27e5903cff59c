"""``real_array`` and ``integer_array``: the array checks of the public functions."""

import numpy as np
import pytest

from mvlearn_ext.utils._validation import as_real_array, integer_array, real_array


def test_real_array_converts_numbers_and_keeps_values():
    out = real_array([[1, 2], [3, 4]], "x", ndim=2)
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [[1.0, 2.0], [3.0, 4.0]])
    assert real_array(np.float32([1.5]), "x").dtype == np.float64


@pytest.mark.parametrize(
    "value, kwargs, error, match",
    [
        ([[1, 2], [3]], {}, TypeError, "x must be a numeric array .ragged"),
        (["1", "2"], {}, TypeError, "x must be a numeric array, got dtype <U1"),
        ([object(), 1], {}, TypeError, "x must be a numeric array"),
        ([1 + 2j, 1], {}, ValueError, "x holds complex values"),
        ([1.0, np.nan], {}, ValueError, "x contains NaN .first at entry 1."),
        ([1.0, -np.inf], {}, ValueError, "x contains infinity"),
        ([], {}, ValueError, r"x is empty \(shape \(0,\)\)"),
        (np.ones((2, 2, 2)), {"ndim": (1, 2)}, ValueError, "x must be 1-D or 2-D, got shape"),
        ([1.0, 2.0], {"ndim": 2}, ValueError, r"x must be 2-D, got shape \(2,\)"),
        ([np.nan, np.inf], {"allow_nan": True}, ValueError, "x contains infinity"),
    ],
)
def test_real_array_refuses_by_name(value, kwargs, error, match):
    with pytest.raises(error, match=match):
        real_array(value, "x", **kwargs)


def test_real_array_allowances_keep_the_values():
    assert np.isnan(real_array([np.nan, 1.0], "x", allow_nan=True)[0])
    assert real_array(np.empty((0, 3)), "x", allow_empty=True).shape == (0, 3)


def test_as_real_array_refuses_digit_strings_as_scikit_learn_does():
    with pytest.raises(TypeError, match="v must be a numeric array, got dtype"):
        as_real_array(np.array(["1.5", "2"]), "v")


def test_integer_array_accepts_whole_floats_and_checks_bounds():
    np.testing.assert_array_equal(integer_array([0.0, 2.0], "y"), [0, 2])
    assert integer_array(np.int32([3]), "y").dtype == np.int64
    assert integer_array([], "y", allow_empty=True).size == 0


@pytest.mark.parametrize(
    "value, kwargs, error, match",
    [
        ([True, False], {}, TypeError, "y must hold integers, got booleans"),
        ([0.5], {}, ValueError, "y must hold whole numbers"),
        ([np.nan], {}, ValueError, "y contains NaN"),
        ([1e300], {}, ValueError, "y holds integers too large"),
        ([-1, 2], {"low": 0}, ValueError, "y must be >= 0, got -1"),
        ([1, 5], {"high": 4}, ValueError, "y must be <= 4, got 5"),
        ([], {}, ValueError, "y is empty"),
        ([[1]], {"ndim": 1}, ValueError, "y must be 1-D"),
        (["a"], {}, TypeError, "y must be a numeric array"),
    ],
)
def test_integer_array_refuses_by_name(value, kwargs, error, match):
    with pytest.raises(error, match=match):
        integer_array(value, "y", **kwargs)


def test_refuse_strings_names_the_argument_and_leaves_numbers():
    from mvlearn_ext.utils._validation import refuse_strings

    with pytest.raises(TypeError, match="X must be a numeric array, got dtype <U1"):
        refuse_strings([["1", "2"]], "X")
    refuse_strings([[1, 2]], "X")  # numbers and ragged lists are left to the conversion
    refuse_strings([[1, 2], [3]], "X")
