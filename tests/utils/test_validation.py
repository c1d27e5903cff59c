"""The multi-view input contract: validate_views, check_Xs, check_views_consistent."""

import re

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from sklearn.base import BaseEstimator

from mvlearn_ext.utils._validation import (
    check_count,
    check_real,
    check_views_consistent,
    check_Xs,
    validate_views,
)

RNG = np.random.default_rng(0)
X0 = RNG.normal(size=(10, 3))
X1 = RNG.normal(size=(10, 2))


# ------------------------------------------------------------------ accepted inputs


def test_list_of_arrays_is_returned_as_float64_views_without_copy():
    Xs = validate_views([X0, X1])
    assert isinstance(Xs, list) and len(Xs) == 2
    assert Xs[0] is X0 and Xs[1] is X1  # nothing to convert: no copy


def test_copy_true_copies_every_view():
    Xs = validate_views([X0, X1], copy=True)
    assert not any(np.shares_memory(a, b) for a, b in zip(Xs, [X0, X1], strict=True))
    np.testing.assert_array_equal(Xs[0], X0)


@pytest.mark.parametrize("container", [tuple, list])
def test_tuple_and_nested_lists(container):
    Xs = validate_views(container([X0.tolist(), X1.tolist()]))
    assert all(X.dtype == np.float64 for X in Xs)
    np.testing.assert_array_equal(Xs[0], X0)
    np.testing.assert_array_equal(Xs[1], X1)


def test_float32_is_kept_and_other_dtypes_become_float64():
    Xs = validate_views([X0.astype(np.float32), np.arange(20).reshape(10, 2), X1 > 0])
    assert [X.dtype for X in Xs] == [np.float32, np.float64, np.float64]


def test_each_view_keeps_its_own_float_dtype():
    Xs = validate_views([X0.astype(np.float32), X1])
    assert [X.dtype for X in Xs] == [np.float32, np.float64]


def test_dtype_none_keeps_integers():
    (X,) = validate_views([np.arange(6).reshape(3, 2)], dtype=None)
    assert X.dtype.kind == "i"


def test_object_array_of_numbers_is_converted():
    (X,) = validate_views([X0.astype(object)])
    assert X.dtype == np.float64
    np.testing.assert_array_equal(X, X0)


def test_pandas_dataframes_are_accepted():
    frame = pd.DataFrame(X0, columns=["a", "b", "c"])
    frame32 = pd.DataFrame(X1.astype(np.float32))
    Xs = validate_views([frame, frame32])
    assert isinstance(Xs[0], np.ndarray) and Xs[0].dtype == np.float64
    assert Xs[1].dtype == np.float32
    np.testing.assert_array_equal(Xs[0], X0)


def test_pandas_nullable_missing_value_is_reported_as_nan():
    frame = pd.DataFrame({"a": pd.array([1, None, 3], dtype="Int64"), "b": [1.0, 2.0, 3.0]})
    with pytest.raises(ValueError, match=r"view 0 of Xs contains NaN \(first at sample 1"):
        validate_views([frame])


def test_three_d_array_is_a_stack_of_views():
    stack = RNG.normal(size=(3, 10, 4))
    Xs = validate_views(stack)
    assert len(Xs) == 3 and all(X.shape == (10, 4) for X in Xs)
    assert all(np.shares_memory(X, stack) for X in Xs)
    np.testing.assert_array_equal(Xs[2], stack[2])


def test_one_d_object_array_of_views():
    holder = np.empty(2, dtype=object)
    holder[0], holder[1] = X0, X1
    Xs = validate_views(holder)
    assert [X.shape for X in Xs] == [(10, 3), (10, 2)]


def test_order_is_enforced():
    (X,) = validate_views([np.asfortranarray(X0)], order="C")
    assert X.flags.c_contiguous


def test_sparse_views_when_accepted():
    view = sp.csr_matrix(np.eye(10)[:, :4])
    Xs = validate_views([view, X1], accept_sparse=True)
    assert sp.issparse(Xs[0]) and Xs[0].shape == (10, 4)


def test_sparse_view_with_nan_is_refused_when_accepted():
    view = sp.csr_matrix(np.eye(10)[:, :4])
    view.data[0] = np.nan
    with pytest.raises(ValueError, match="view 0 of Xs contains NaN"):
        validate_views([view], accept_sparse=True)


def test_allow_nan_accepts_nan_but_not_inf():
    X = X0.copy()
    X[2, 1] = np.nan
    (out,) = validate_views([X], ensure_all_finite="allow-nan")
    assert np.isnan(out[2, 1])
    X[4, 0] = np.inf
    with pytest.raises(ValueError, match=r"view 0 of Xs contains infinity \(first at sample 4"):
        validate_views([X], ensure_all_finite="allow-nan")


def test_ensure_all_finite_false_accepts_both():
    X = X0.copy()
    X[0, 0], X[1, 1] = np.nan, -np.inf
    (out,) = validate_views([X], ensure_all_finite=False)
    assert np.isnan(out[0, 0]) and np.isneginf(out[1, 1])


def test_huge_finite_values_are_not_mistaken_for_infinity():
    X = np.full((4, 2), np.finfo(np.float64).max)  # the sum overflows; the values do not
    # Refused for their magnitude, never reported as infinity.
    with pytest.raises(ValueError, match=r"view 0 of Xs holds values too large") as info:
        validate_views([X])
    assert "infinity" not in str(info.value)
    (out,) = validate_views([X], ensure_all_finite=False)
    assert out is X


def test_magnitude_limit_is_four_times_the_sum_of_squares():
    from mvlearn_ext.utils._validation import check_magnitude

    for dtype in (np.float64, np.float32):
        X = np.ones((5, 2), dtype=dtype)
        limit = np.sqrt(float(np.finfo(dtype).max) / 4 / X.size)
        (out,) = validate_views([X * dtype(limit * 0.99)])
        with pytest.raises(
            ValueError, match=rf"holds values too large.*overflow {dtype.__name__}"
        ):
            validate_views([X * dtype(limit * 1.01)])
    # NaN entries are ignored where missing values are allowed.
    X = np.array([[np.nan, 1.0], [2.0, 3.0]])
    validate_views([X], ensure_all_finite="allow-nan")
    X[1, 1] = 1e200
    with pytest.raises(ValueError, match=r"largest \|value\| 1e\+200"):
        validate_views([X], ensure_all_finite="allow-nan")
    # The dtype a computation runs in sets the limit (float32 for torch models).
    check_magnitude(np.full((2, 2), 1e19), "X")
    with pytest.raises(ValueError, match="X holds .*overflow float32"):
        check_magnitude(np.full((2, 2), 1e19), "X", compute_dtype=np.float32)


# ------------------------------------------------------------------ refused inputs


@pytest.mark.parametrize(
    "bad",
    [X0, pd.DataFrame(X0)],
    ids=["ndarray", "DataFrame"],
)
def test_single_2d_array_is_refused(bad):
    with pytest.raises(TypeError, match=r"Xs is a single 2-D .* shape \(10, 3\).*list of views"):
        validate_views(bad)


def test_single_sparse_matrix_is_refused():
    with pytest.raises(TypeError, match="Xs is a single scipy sparse matrix"):
        validate_views(sp.csr_matrix(X0))


@pytest.mark.parametrize("bad", [{"a": X0}, "views", 3.0, np.ones(4), np.ones((2, 2, 2, 2))])
def test_other_containers_are_refused(bad):
    with pytest.raises(TypeError, match="Xs must be a list or tuple of views"):
        validate_views(bad)


def test_zero_views():
    with pytest.raises(ValueError, match="Xs is empty; at least 1 view required"):
        validate_views([])


def test_wrong_number_of_views():
    with pytest.raises(ValueError, match="Xs has 2 views but 3 are required"):
        validate_views([X0, X1], n_views=3)
    with pytest.raises(ValueError, match="Xs has 1 view but at least 2 are required"):
        validate_views([X0], min_views=2)


def test_different_number_of_samples_names_the_view():
    with pytest.raises(ValueError, match="view 2 of Xs has 9 samples but view 0 has 10"):
        validate_views([X0, X1, X1[:9]])


def test_one_sample_is_singular_in_the_message():
    with pytest.raises(ValueError, match="view 1 of Xs has 1 sample but view 0 has 10"):
        validate_views([X0, X1[:1]])


@pytest.mark.parametrize(
    ("value", "what"), [(np.nan, "NaN"), (np.inf, "infinity"), (-np.inf, "infinity")]
)
def test_nan_and_inf_name_the_view_and_the_entry(value, what):
    X = X1.copy()
    X[7, 1] = value
    pattern = rf"view 1 of Xs contains {what} \(first at sample 7, feature 1\)"
    with pytest.raises(ValueError, match=pattern):
        validate_views([X0, X])


def test_nan_and_inf_together():
    X = X1.copy()
    X[1, 0], X[2, 0] = np.inf, np.nan
    with pytest.raises(
        ValueError, match=r"view 0 of Xs contains NaN and infinity \(first at sample 1"
    ):
        validate_views([X])


def test_zero_features():
    with pytest.raises(ValueError, match=r"view 1 of Xs has 0 features \(shape \(10, 0\)\)"):
        validate_views([X0, np.empty((10, 0))])


def test_zero_samples():
    with pytest.raises(ValueError, match="Xs has 0 samples but at least 1 is required"):
        validate_views([np.empty((0, 3)), np.empty((0, 2))])
    assert validate_views([np.empty((0, 3))], min_samples=0)[0].shape == (0, 3)


def test_min_samples():
    with pytest.raises(ValueError, match="Xs has 10 samples but at least 11 are required"):
        validate_views([X0], min_samples=11)


def test_fewer_samples_than_clusters():
    with pytest.raises(ValueError, match="Xs has 10 samples but n_clusters=11"):
        validate_views([X0, X1], n_clusters=11)
    assert len(validate_views([X0, X1], n_clusters=10)) == 2


def test_one_d_view():
    with pytest.raises(
        ValueError, match=r"view 1 of Xs is 1-D with shape \(10,\).*reshape\(-1, 1\)"
    ):
        validate_views([X0, X1[:, 0]])


def test_three_d_view_inside_the_list():
    with pytest.raises(ValueError, match=r"view 0 of Xs is 3-D .*in place of the whole list"):
        validate_views([np.ones((2, 10, 3))])


def test_ragged_nested_list():
    with pytest.raises(ValueError, match="view 1 of Xs is ragged"):
        validate_views([X0, [[1.0, 2.0], [3.0]]])


def test_strings_are_refused_even_when_they_look_numeric():
    with pytest.raises(ValueError, match=r"view 1 of Xs holds non-numeric values \(dtype <U"):
        validate_views([[[1.0]], [["1.5"]]])


def test_string_column_in_a_dataframe():
    frame = pd.DataFrame({"a": ["x", "y"], "b": [1.0, 2.0]})
    with pytest.raises(ValueError, match="view 0 of Xs could not be converted.*'x'"):
        validate_views([frame])


def test_object_that_is_not_a_number_keeps_its_type_error():
    X = X0.astype(object)
    X[0, 0] = {"not": "a number"}
    with pytest.raises(TypeError, match=r"view 0 of Xs could not be converted.*argument must be"):
        validate_views([X])


def test_complex_views_are_refused():
    with pytest.raises(ValueError, match="view 0 of Xs .*Complex data not supported"):
        validate_views([X0 + 1j])


def test_sparse_view_is_refused_by_default():
    with pytest.raises(TypeError, match=r"view 1 of Xs is a scipy sparse matrix \(csr\)"):
        validate_views([X0, sp.csr_matrix(X1)])


def test_custom_name_appears_in_messages():
    with pytest.raises(ValueError, match="view 1 of Xs_test has 9 samples"):
        validate_views([X0, X1[:9]], name="Xs_test")


@pytest.mark.parametrize(
    ("kwargs", "error", "pattern"),
    [
        ({"n_views": 0}, ValueError, "n_views must be >= 1, got 0"),
        ({"n_views": 2.0}, TypeError, "n_views must be an int, got float"),
        ({"min_views": True}, TypeError, "min_views must be an int, got bool"),
        ({"min_samples": -1}, ValueError, "min_samples must be >= 0"),
        ({"n_clusters": 0}, ValueError, "n_clusters must be >= 1"),
        ({"ensure_all_finite": "yes"}, ValueError, "ensure_all_finite must be True, False or"),
    ],
)
def test_invalid_arguments(kwargs, error, pattern):
    with pytest.raises(error, match=pattern):
        validate_views([X0], **kwargs)


# ------------------------------------------------------------------ check_Xs (mvlearn)


def test_check_xs_return_dimensions():
    Xs, n_views, n_samples, n_features = check_Xs([X0, X1], return_dimensions=True)
    assert (n_views, n_samples, n_features) == (2, 10, [3, 2])
    assert all(isinstance(X, np.ndarray) for X in Xs)


def test_check_xs_multiview_and_enforce_views():
    with pytest.raises(ValueError, match="at least 2 are required"):
        check_Xs([X0], multiview=True)
    with pytest.raises(ValueError, match="Xs has 2 views but 3 are required"):
        check_Xs([X0, X1], enforce_views=3)  # enforced even without multiview=True
    assert len(check_Xs([X0, X1], multiview=True, enforce_views=2)) == 2


def test_check_xs_refuses_a_2d_array_unlike_mvlearn():
    with pytest.raises(TypeError, match="list of views"):
        check_Xs(X0)


def test_check_xs_copy():
    Xs = check_Xs([X0], copy=True)
    assert not np.shares_memory(Xs[0], X0)


# ------------------------------------------------------------------ check_views_consistent


class _Fitted(BaseEstimator):
    pass


def test_consistency_records_at_fit():
    est = _Fitted()
    check_views_consistent(est, [X0, X1], reset=True)
    assert est.n_views_ == 2
    assert est.n_features_per_view_ == (3, 2)
    assert all(type(width) is int for width in est.n_features_per_view_)


def test_consistency_accepts_the_same_shape_and_other_sample_counts():
    est = _Fitted()
    check_views_consistent(est, [X0, X1], reset=True)
    check_views_consistent(est, [X0[:4], X1[:4]], reset=False)


def test_consistency_refuses_another_number_of_views():
    est = _Fitted()
    check_views_consistent(est, [X0, X1], reset=True)
    with pytest.raises(ValueError, match="Xs has 3 views but _Fitted was fitted with 2"):
        check_views_consistent(est, [X0, X1, X1], reset=False)
    with pytest.raises(ValueError, match="Xs has 1 view but _Fitted was fitted with 2"):
        check_views_consistent(est, [X0], reset=False)


def test_consistency_refuses_another_width():
    est = _Fitted()
    check_views_consistent(est, [X0, X1], reset=True)
    message = "view 1 of Xs has 3 features but _Fitted was fitted with 2 features in that view"
    with pytest.raises(ValueError, match=re.escape(message)):
        check_views_consistent(est, [X0, X0], reset=False)


def test_consistency_refit_resets():
    est = _Fitted()
    check_views_consistent(est, [X0, X1], reset=True)
    check_views_consistent(est, [X1], reset=True)
    assert (est.n_views_, est.n_features_per_view_) == (1, (2,))


def test_consistency_does_nothing_before_fit():
    est = _Fitted()
    check_views_consistent(est, [X0], reset=False)
    assert not hasattr(est, "n_views_")


def test_check_count_and_check_real_accept_and_refuse():
    assert check_count(np.int64(3), "k", 1) == 3 and type(check_count(3, "k", 3)) is int
    with pytest.raises(TypeError, match="k must be an int, got float"):
        check_count(3.0, "k", 1)
    with pytest.raises(TypeError, match="k must be an int, got bool"):
        check_count(True, "k", 0)
    with pytest.raises(ValueError, match="k must be >= 2, got 1"):
        check_count(1, "k", 2)
    assert check_real(np.float32(0.5), "a", low=0.0, high=1.0) == 0.5
    assert check_real(0.0, "a", low=0.0) == 0.0 and check_real(-7, "a") == -7.0
    with pytest.raises(ValueError, match=r"a must be > 0.0, got 0.0"):
        check_real(0.0, "a", low=0.0, low_open=True)
    with pytest.raises(ValueError, match="a must be <= 1.0, got 1.5"):
        check_real(1.5, "a", low=0.0, high=1.0)
    with pytest.raises(ValueError, match="a must be finite, got inf"):
        check_real(np.inf, "a")
    with pytest.raises(TypeError, match="a must be a real number, got str"):
        check_real("1", "a")
    with pytest.raises(TypeError, match="a must be a real number, got bool"):
        check_real(False, "a")


def test_check_allocation_names_the_parameter():
    from mvlearn_ext.utils._validation import check_allocation

    check_allocation(10**6, "n_components", 1000)  # 8 MB: fine
    with pytest.raises(ValueError, match=r"n_components=1000000000000 needs an array of .* GiB"):
        check_allocation(10**24, "n_components", 10**12)


def test_a_nan_in_a_vector_is_named_with_its_entry():
    from mvlearn_ext.utils._validation import validate_vector

    with pytest.raises(ValueError, match=r"ys\[1\] contains NaN \(first at entry 2\)"):
        validate_vector([0.0, 1.0, np.nan], "ys[1]")


def test_consistency_refuses_views_that_are_not_finite_real_matrices():
    est = _Fitted()
    with pytest.raises(ValueError, match=r"view 1 of Xs is 1-D with shape \(10,\)"):
        check_views_consistent(est, [X0, X1[:, 0]], reset=True)
    bad = X0.copy()
    bad[2, 1] = np.nan
    with pytest.raises(ValueError, match=r"view 0 of Xs contains NaN \(first at sample 2"):
        check_views_consistent(est, [bad, X1], reset=True)
    with pytest.raises(TypeError, match="view 0 of Xs must be a numeric array"):
        check_views_consistent(est, [X0.astype(str), X1], reset=True)
    with pytest.raises(ValueError, match="view 1 of Xs holds complex values"):
        check_views_consistent(est, [X0, X1 + 1j], reset=True)
    assert not hasattr(est, "n_views_")
