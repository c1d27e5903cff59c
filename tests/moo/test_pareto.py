"""Oracles for the Pareto layer."""

import itertools

import numpy as np
import pytest

moocore = pytest.importorskip("moocore")

from mvlearn_ext.moo import (  # noqa: E402
    ParetoArchive,
    crowding_distance,
    filter_dominated,
    hv_contributions,
    hypervolume,
    is_nondominated,
    pareto_rank,
)

DAT = np.array([[5, 5], [4, 6], [2, 7], [7, 4]], dtype=float)


def hv_inclusion_exclusion(P, r):
    """Brute-force HV (minimisation)."""
    total = 0.0
    n = len(P)
    for size in range(1, n + 1):
        for S in itertools.combinations(range(n), size):
            side = np.clip(r - P[list(S)].max(axis=0), 0, None)
            total += (-1) ** (size + 1) * np.prod(side)
    return total


def dominates(a, b):
    return bool(np.all(a <= b) and np.any(a < b))


def test_hv_2d_oracles():
    assert hypervolume(DAT, [10, 10]) == 38.0
    assert hypervolume(DAT, 0, maximise=True) == 39.0
    assert hypervolume(np.delete(DAT, 2, axis=0), 0, maximise=True) == 37.0


def test_hv_3d_unit_vectors():
    assert hypervolume(np.eye(3), [2, 2, 2]) == pytest.approx(7.0)


@pytest.mark.parametrize("n", [3, 5, 11])
def test_hv_linear_front(n):
    x = np.linspace(0, 1, n)
    P = np.column_stack([x, 1 - x])
    assert hypervolume(P, [1, 1]) == pytest.approx((n - 2) / (2 * (n - 1)))


def test_hv_single_point_outside_duplicates():
    p = np.array([[1.0, 2.0, 0.5]])
    assert hypervolume(p, [3, 3, 3]) == pytest.approx(2 * 1 * 2.5)
    assert hypervolume([[4.0, 1.0, 1.0]], [3, 3, 3]) == 0.0
    assert hypervolume([[3.0, 1.0, 1.0]], [3, 3, 3]) == 0.0  # on the boundary
    base = hypervolume(DAT, [10, 10])
    assert hypervolume(np.vstack([DAT, DAT[:2], [[6, 6]]]), [10, 10]) == base
    assert hypervolume(np.zeros((0, 2)), [1, 1]) == 0.0


@pytest.mark.parametrize("d", [2, 3, 4, 5, 6])
def test_hv_matches_inclusion_exclusion(d):
    rng = np.random.default_rng(d)
    for _ in range(3):
        n = int(rng.integers(1, 11))
        P = rng.random((n, d))
        r = np.full(d, 1.0) + 0.2 * rng.random(d)
        assert hypervolume(P, r) == pytest.approx(
            hv_inclusion_exclusion(P, r), rel=1e-12, abs=1e-14
        )


def test_hv_invariances():
    rng = np.random.default_rng(1)
    P = rng.random((30, 3))
    r = np.ones(3) * 1.1
    hv = hypervolume(P, r)
    c = np.array([3.0, -2.0, 0.5])
    assert hypervolume(P + c, r + c) == pytest.approx(hv)
    s = np.array([2.0, 0.5, 3.0])
    assert hypervolume(P * s, r * s) == pytest.approx(hv * s.prod())
    perm = [2, 0, 1]
    assert hypervolume(P[:, perm], r[perm]) == pytest.approx(hv)
    assert hypervolume(P[rng.permutation(30)], r) == pytest.approx(hv)
    # maximisation is minimisation of the negation, per objective too
    mix = np.array([True, False, True])
    sign = np.where(mix, -1.0, 1.0)
    assert hypervolume(P * sign, r * sign, maximise=mix) == pytest.approx(hv)


def test_hv_contribution_oracles():
    x = np.array([[5, 1], [1, 5], [4, 2], [4, 4], [5, 1]], dtype=float)
    np.testing.assert_array_equal(hv_contributions(x, [6, 6]), [0, 3, 3, 0, 0])
    np.testing.assert_array_equal(
        hv_contributions(x, [6, 6], ignore_dominated=False), [0, 3, 2, 0, 0]
    )
    np.testing.assert_array_equal(hv_contributions(DAT, [10, 10]), [2, 1, 6, 3])


def test_hv_contribution_identity():
    rng = np.random.default_rng(2)
    P = rng.random((15, 3))
    r = np.full(3, 1.05)
    hvc = hv_contributions(P, r, ignore_dominated=False)
    full = hypervolume(P, r)
    loo = np.array([full - hypervolume(np.delete(P, i, 0), r) for i in range(len(P))])
    np.testing.assert_allclose(hvc, loo, atol=1e-12)


def test_dominance_oracles():
    S = np.array([[1, 1], [0, 1], [1, 0], [1, 0]])
    np.testing.assert_array_equal(is_nondominated(S), [False, True, True, False])
    np.testing.assert_array_equal(is_nondominated(S, keep_weakly=True), [False, True, True, True])
    np.testing.assert_array_equal(pareto_rank(S), [1, 0, 0, 0])
    np.testing.assert_array_equal(filter_dominated(S), [[0, 1], [1, 0]])
    pg = [[0, 1], [-1, 3], [2.3, -0.2], [1.1, -0.12], [1.1, 2.12], [-1.1, -1.1]]
    np.testing.assert_array_equal(pareto_rank(pg), [1, 1, 1, 1, 2, 0])


@pytest.mark.parametrize("d", [2, 3, 4])
def test_ranks_match_brute_force(d):
    rng = np.random.default_rng(10 + d)
    P = rng.integers(0, 5, size=(60, d)).astype(float)  # many ties and duplicates
    ranks = pareto_rank(P)
    # Deb's O(MN^2) reference: peel fronts
    ref = np.full(len(P), -1)
    left = set(range(len(P)))
    k = 0
    while left:
        front = [i for i in left if not any(dominates(P[j], P[i]) for j in left)]
        ref[front] = k
        left -= set(front)
        k += 1
    np.testing.assert_array_equal(ranks, ref)
    for f in range(1, ranks.max() + 1):
        prev = P[ranks == f - 1]
        for p in P[ranks == f]:
            assert any(dominates(q, p) for q in prev)
    nd = is_nondominated(P, keep_weakly=True)
    np.testing.assert_array_equal(nd, ranks == 0)
    np.testing.assert_array_equal(pareto_rank(-P, maximise=True), ranks)


def test_crowding_distance():
    P = np.array([[0.0, 1.0], [0.25, 0.5], [0.5, 0.4], [1.0, 0.0]])
    cd = crowding_distance(P)
    assert np.isinf(cd[[0, 3]]).all()
    np.testing.assert_allclose(cd[1:3], [0.5 + 0.6, 0.75 + 0.5])


def test_archive_gain_is_exact():
    rng = np.random.default_rng(3)
    arch = ParetoArchive(ref=[0.0, 0.0], maximise=True)
    seen = []
    for _ in range(20):
        p = rng.random(2)
        g = arch.gain(p)
        seen.append(p)
        before = hypervolume(np.array(seen[:-1]).reshape(-1, 2), [0, 0], maximise=True)
        after = hypervolume(np.array(seen), [0, 0], maximise=True)
        assert g == pytest.approx(after - before, abs=1e-12)
        assert g >= 0
        assert arch.add(p) == pytest.approx(g, abs=1e-12)
        assert arch.hypervolume_ == pytest.approx(after)
    assert is_nondominated(arch.points_, maximise=True).all()
    assert arch.gain(arch.points_[0] * 0.5) == 0.0


def test_archive_gain_refuses_unusable_points_by_name():
    arch = ParetoArchive(ref=[0.0, 0.0], maximise=True)
    arch.add([0.5, 0.5])
    for point, exc, match in [
        ([], ValueError, "point must have shape"),
        ([0.5, 0.5, 0.5], ValueError, "point must have shape"),
        ([[[0.5, 0.5]]], ValueError, "point must have shape"),
        ([0.25e300, 0.25e300], ValueError, "point holds values too large"),
        ([0.25, np.nan], ValueError, "point contains NaN"),
        (["0.25", "0.25"], TypeError, "point must be a numeric array"),
        ([0.25, 0.25j], ValueError, "point holds complex"),
    ]:
        with pytest.raises(exc, match=match):
            arch.gain(point)
    # a batch without rows has no gains
    assert arch.gain(np.empty((0, 2))).shape == (0,)


def test_errors():
    with pytest.raises(ValueError, match="points contains NaN"):
        hypervolume([[np.nan, 1.0]], [2, 2])
    with pytest.raises(ValueError, match="2-D"):
        hypervolume([1.0, 2.0], [2, 2])
    with pytest.raises(ValueError, match="ref must have one entry per objective"):
        hypervolume(DAT, [10, 10, 10])
    with pytest.raises(ValueError, match="ref contains infinity"):
        hypervolume(DAT, [10, np.inf])
    with pytest.raises(ValueError, match="ref is not strictly dominated"):
        hypervolume(DAT, [6, 10], on_outside="raise")
    assert hypervolume(DAT, [10, 10], on_outside="raise") == 38.0
    with pytest.raises(ValueError, match="maximise must have one entry"):
        pareto_rank(DAT, maximise=[True])
    with pytest.raises(TypeError, match="maximise"):
        is_nondominated(DAT, maximise=[1, 0])
    with pytest.raises(TypeError, match="numeric"):
        hypervolume([["a", "b"]], [1, 1])
    with pytest.raises(ValueError, match="on_outside"):
        hypervolume(DAT, [10, 10], on_outside="warn")


@pytest.mark.parametrize(
    "call, exc, match",
    [
        (
            lambda: hypervolume(DAT.astype(str), [10, 10]),
            TypeError,
            "points must be a numeric array",
        ),
        (lambda: hypervolume(DAT, ["10", "10"]), TypeError, "ref must be a numeric array"),
        (lambda: hv_contributions(DAT + 1j, [10, 10]), ValueError, "points holds complex"),
        (lambda: hv_contributions(DAT, [10, 10j]), ValueError, "ref holds complex"),
        (lambda: hypervolume(DAT, [1e300, 1e300]), ValueError, "ref holds values too large"),
        (lambda: pareto_rank(DAT[:, :, None]), ValueError, "points must be a 2-D array"),
        (lambda: is_nondominated([[1.0, np.inf]]), ValueError, "points contains infinity"),
        (lambda: filter_dominated([[1.0, 2.0], [1.0, "x"]]), TypeError, "points"),
    ],
)
def test_unusable_arrays_are_refused_by_name(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_empty_point_sets_keep_their_natural_answers():
    empty = np.empty((0, 2))
    assert hypervolume(empty, [1, 1]) == 0.0
    assert hv_contributions(empty, [1, 1]).shape == (0,)
    assert filter_dominated(empty).shape == (0, 2)
    assert pareto_rank(empty).dtype == np.int64


def test_matches_moocore_on_random_data():
    rng = np.random.default_rng(4)
    P = rng.random((500, 3))
    assert hypervolume(P, [1, 1, 1]) == moocore.hypervolume(P, ref=[1, 1, 1])
    np.testing.assert_array_equal(pareto_rank(P), moocore.pareto_rank(P))


def test_archive_gain_2d_matches_hypervolume_difference():
    # the vectorised 2-D gain against HV(A + {p}) - HV(A) from moocore, all senses
    from mvlearn_ext.moo import ParetoArchive

    rng = np.random.default_rng(11)
    for maximise in (True, False, [True, False]):
        sign = np.where(np.broadcast_to(maximise, 2), 1.0, -1.0)
        for _ in range(30):
            ref = np.where(sign > 0, -0.2, 1.2) + rng.normal(0, 0.05, 2)
            a = ParetoArchive(ref=ref, maximise=maximise)
            a.add(rng.random((rng.integers(0, 9), 2)))
            P = np.vstack([rng.random((15, 2)), a.points_[:2]])  # archived points gain 0
            want = [
                hypervolume(np.vstack([a.points_, p[None]]), ref, maximise=maximise)
                - a.hypervolume_
                for p in P
            ]
            np.testing.assert_allclose(a.gain(P), np.maximum(want, 0), atol=1e-14)
            assert np.all(a.gain(a.points_) == 0.0)


@pytest.mark.parametrize("d, scale", [(3, 1e110), (4, 1e80)])
def test_hypervolume_refuses_values_whose_boxes_overflow(d, scale):
    P = np.eye(d) * scale + scale
    ref = np.full(d, 3.0 * scale)
    for call in (lambda: hypervolume(P, ref), lambda: hv_contributions(P, ref)):
        with pytest.raises(ValueError, match=f"points is too large for a {d}-objective"):
            call()
    with pytest.raises(ValueError, match=f"ref is too large for a {d}-objective"):
        ParetoArchive(ref=ref)
    small = hypervolume(P / scale, ref / scale)  # the same points in other units
    assert np.isfinite(small) and small > 0


@pytest.mark.parametrize("scale", [1e-300, 1e300, 2.0**1000])
def test_crowding_distance_is_the_same_at_any_scale(scale):
    # Gaps over spans: a common scale changes nothing, even where spans of the raw
    # values would overflow or underflow.
    np.testing.assert_allclose(crowding_distance(DAT * scale), crowding_distance(DAT), rtol=1e-12)
