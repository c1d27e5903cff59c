"""Scale-free MGDA weights, one-objective contributions and argument checks."""

import numpy as np
import pytest

from mvlearn_ext.moo import (
    ParetoArchive,
    hv_contributions,
    hypervolume,
    min_norm_direction,
    min_norm_weights,
    solve_simplex_qp,
)


@pytest.mark.parametrize("scale", [1.0, 1e-170, 1e-200, 1e-300, 2.0**-1000])
def test_min_norm_weights_do_not_depend_on_a_common_scale(scale):
    two = np.array([[1.0, 0.0], [0.0, 2.0]])
    three = np.array([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [0.0, 0.0, 3.0]])
    np.testing.assert_allclose(min_norm_weights(two * scale), [0.8, 0.2], atol=1e-12)
    want = 1.0 / np.array([1.0, 4.0, 9.0])
    np.testing.assert_allclose(min_norm_weights(three * scale), want / want.sum(), atol=1e-9)
    weights, d = min_norm_direction(two * scale)
    np.testing.assert_allclose(weights, [0.8, 0.2], atol=1e-12)
    np.testing.assert_allclose(d, weights @ (two * scale), rtol=1e-12)


@pytest.mark.parametrize(
    "kwargs, error, match",
    [
        ({"tol": "a"}, TypeError, "tol must be a real number"),
        ({"tol": -1.0}, ValueError, "tol must be >= 0"),
        ({"max_iter": 0}, ValueError, "max_iter must be >= 1"),
        ({"max_iter": 2.5}, TypeError, "max_iter must be an int"),
    ],
)
def test_solve_simplex_qp_checks_its_solver_settings(kwargs, error, match):
    with pytest.raises(error, match=match):
        solve_simplex_qp([[1.0, 0.0], [0.0, 3.0]], **kwargs)


@pytest.mark.parametrize("maximise", [False, True])
@pytest.mark.parametrize("ignore_dominated", [False, True])
@pytest.mark.parametrize(
    "points", [[[1.0], [0.5]], [[1.0], [0.5], [0.5]], [[3.0], [0.5], [1.5]], [[3.0]], [[0.7]]]
)
def test_hv_contributions_of_one_objective(points, maximise, ignore_dominated):
    P = np.array(points)
    ref = [0.2] if maximise else [2.0]
    hvc = hv_contributions(P, ref, maximise=maximise, ignore_dominated=ignore_dominated)
    hv = hypervolume(P, ref, maximise=maximise)
    loo = np.array(
        [hv - hypervolume(np.delete(P, i, 0), ref, maximise=maximise) for i in range(len(P))]
    )
    if ignore_dominated:  # the best point's gap to ref: a dominated point does not shrink it
        best = np.argmax(loo) if loo.any() else None
        want = np.zeros(len(P))
        if best is not None:
            want[best] = abs(P[best, 0] - ref[0])
        np.testing.assert_allclose(hvc, want, atol=1e-12)
    else:
        np.testing.assert_allclose(hvc, loo, atol=1e-12)


def test_hv_contributions_one_objective_matches_the_two_objective_convention():
    # a second constant objective inside ref turns each 1-D case into a 2-D one
    P = np.array([[3.0], [0.5], [1.5], [0.25]])
    for ig in (False, True):
        one = hv_contributions(P, [2.0], ignore_dominated=ig)
        two = hv_contributions(np.hstack([P, np.zeros_like(P)]), [2.0, 1.0], ignore_dominated=ig)
        np.testing.assert_allclose(one, two, atol=1e-12)


def test_ref_none_is_refused_by_name():
    with pytest.raises(TypeError, match="ref must be a real number or an array-like"):
        hypervolume([[1.0, 2.0]], ref=None)
    with pytest.raises(TypeError, match="ref must be a real number or an array-like"):
        hv_contributions([[1.0, 2.0]], ref=None)
    with pytest.raises(TypeError, match="ref must be a real number or an array-like"):
        ParetoArchive(ref=None)
