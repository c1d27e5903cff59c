"""The embedded Handwritten data: contents, view selection, shuffling, copies."""

from pathlib import Path

import numpy as np
import pytest

from mvlearn_ext.datasets import _handwritten as hw
from mvlearn_ext.datasets import handwritten_view_names, load_handwritten

REPO_ROOT = Path(__file__).resolve().parents[2]
CSV_DIR = REPO_ROOT.parent / "shared" / "data" / "uci_mfeat"
needs_csv = pytest.mark.skipif(not CSV_DIR.is_dir(), reason=f"source CSVs not found at {CSV_DIR}")

CODES = ["fou", "fac", "kar", "pix", "zer", "mor"]
N_FEATURES = [76, 216, 64, 240, 47, 6]


def test_default_load_shapes_dtypes_and_labels():
    Xs, y = load_handwritten()
    assert isinstance(Xs, list) and len(Xs) == 6
    assert [X.shape for X in Xs] == [(2000, d) for d in N_FEATURES]
    assert all(X.dtype == np.float64 and X.flags.c_contiguous for X in Xs)
    assert all(np.isfinite(X).all() for X in Xs)
    assert y.dtype == np.int64 and y.shape == (2000,)
    np.testing.assert_array_equal(y, np.repeat(np.arange(10), 200))  # ordered by digit


def test_integer_views_hold_integers():
    Xs, _ = load_handwritten(views=["pix", "fac"])
    pix, fac = Xs
    assert set(np.unique(pix)) <= set(range(7))
    assert np.array_equal(fac, np.round(fac)) and fac.min() >= 0


def test_bunch_contents():
    data = load_handwritten(return_Xs_y=False)
    assert data.view_names == CODES
    assert len(data.view_descriptions) == 6
    assert [len(names) for names in data.feature_names] == N_FEATURES
    assert data.feature_names[3][:2] == ["pix_0", "pix_1"]
    np.testing.assert_array_equal(data.target_names, np.arange(10))
    np.testing.assert_array_equal(data.sample_index, np.arange(2000))
    assert "CC BY 4.0" in data.DESCR and "10.24432/C5HC70" in data.DESCR
    Xs, y = load_handwritten()
    for a, b in zip(data.views, Xs, strict=True):
        np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(data.target, y)


@pytest.mark.parametrize(
    ("views", "expected"),
    [
        ("pix", ["pix"]),
        ("Pixel", ["pix"]),
        (3, ["pix"]),
        (np.int64(5), ["mor"]),
        (["fourier", "zer"], ["fou", "zer"]),
        (["mor", "fou"], ["mor", "fou"]),  # order as given
        ([4, "Karhunen-Loeve", "profile"], ["zer", "kar", "fac"]),
        (("morphological", 0), ["mor", "fou"]),
        (np.array([2, 1]), ["kar", "fac"]),
        (None, CODES),
    ],
)
def test_view_selection(views, expected):
    assert handwritten_view_names(views) == expected
    data = load_handwritten(views=views, return_Xs_y=False)
    assert data.view_names == expected
    full, _ = load_handwritten()
    for code, X in zip(expected, data.views, strict=True):
        np.testing.assert_array_equal(X, full[CODES.index(code)])


@pytest.mark.parametrize(
    ("views", "error", "match"),
    [
        ("pixle", ValueError, r"unknown view name 'pixle'\. Did you mean 'pixel'\?"),
        (["fou", "nope"], ValueError, r"unknown view name 'nope'.*Valid names: 'fou'"),
        (6, ValueError, r"view index 6 is out of range; indices run from 0 to 5"),
        (-1, ValueError, r"view index -1 is out of range"),
        (["pix", "pixel"], ValueError, r"view 'pix' is selected twice \(as 'pixel'\)"),
        ([0, "fou"], ValueError, r"view 'fou' is selected twice"),
        ([], ValueError, r"views is empty"),
        (1.5, TypeError, r"views must be None, a view name, a view index or a list"),
        (True, TypeError, r"views must be None"),
        ([True], TypeError, r"each entry must be a view name \(str\) or index \(int\)"),
        ({"pix": 1}, TypeError, r"views must be None"),
    ],
)
def test_view_selection_errors(views, error, match):
    with pytest.raises(error, match=match):
        handwritten_view_names(views)
    with pytest.raises(error, match=match):
        load_handwritten(views=views)


@pytest.mark.parametrize("name", ["shuffle", "return_Xs_y", "as_frame"])
def test_flags_must_be_bool(name):
    with pytest.raises(TypeError, match=f"{name} must be a bool"):
        load_handwritten(**{name: "yes"})


def test_bad_random_state():
    with pytest.raises(TypeError, match="random_state must be None, an int"):
        load_handwritten(shuffle=True, random_state="seed")
    with pytest.raises(TypeError, match="random_state must be None, an int"):
        load_handwritten(shuffle=False, random_state=1.5)
    with pytest.raises(ValueError, match="random_state must be a non-negative int"):
        load_handwritten(shuffle=True, random_state=-3)


def test_shuffle_keeps_views_and_labels_aligned():
    Xs, y = load_handwritten()
    data = load_handwritten(shuffle=True, random_state=0, return_Xs_y=False)
    perm = data.sample_index
    assert sorted(perm.tolist()) == list(range(2000))
    assert not np.array_equal(perm, np.arange(2000))
    for X_shuffled, X in zip(data.views, Xs, strict=True):
        np.testing.assert_array_equal(X_shuffled, X[perm])
    np.testing.assert_array_equal(data.target, y[perm])


def test_shuffle_alignment_without_trusting_sample_index():
    """Recover where each shuffled row came from with the pixel and Fourier
    views together; the other views and the label must agree with it."""
    Xs, y = load_handwritten()
    Ss, t = load_handwritten(shuffle=True, random_state=1)
    key = np.hstack([Xs[3], Xs[0]])
    lookup = {}
    for i, row in enumerate(map(bytes, key)):
        lookup.setdefault(row, []).append(i)
    for i, row in enumerate(map(bytes, np.hstack([Ss[3], Ss[0]]))):
        sources = lookup[row]
        assert any(
            t[i] == y[j] and all(np.array_equal(S[i], X[j]) for S, X in zip(Ss, Xs, strict=True))
            for j in sources
        )


def test_shuffle_is_seeded_and_leaves_the_global_rng_alone():
    state = np.random.get_state()  # noqa: NPY002 - the global state is what we check
    a = load_handwritten(shuffle=True, random_state=7, return_Xs_y=False)
    b = load_handwritten(shuffle=True, random_state=7, return_Xs_y=False)
    c = load_handwritten(shuffle=True, random_state=8, return_Xs_y=False)
    load_handwritten(shuffle=True)  # unseeded: a fresh generator, not the global one
    after = np.random.get_state()  # noqa: NPY002 - the global state is what we check
    assert state[0] == after[0] and np.array_equal(state[1], after[1]) and state[2:] == after[2:]
    np.testing.assert_array_equal(a.sample_index, b.sample_index)
    assert not np.array_equal(a.sample_index, c.sample_index)
    # A Generator is used (and advanced) as given.
    g1, g2 = np.random.default_rng(3), np.random.default_rng(3)
    np.testing.assert_array_equal(
        load_handwritten(shuffle=True, random_state=g1, return_Xs_y=False).sample_index,
        load_handwritten(shuffle=True, random_state=g2, return_Xs_y=False).sample_index,
    )
    # A RandomState instance works as well.
    rs = np.random.RandomState(0)
    assert load_handwritten(shuffle=True, random_state=rs, return_Xs_y=False).sample_index.size


def test_unshuffled_load_does_not_advance_a_generator():
    rng = np.random.default_rng(0)
    before = rng.bit_generator.state
    load_handwritten(random_state=rng)
    assert rng.bit_generator.state == before


@pytest.mark.parametrize("shuffle", [False, True])
def test_returned_arrays_are_fresh_copies(shuffle):
    Xs, y = load_handwritten(shuffle=shuffle, random_state=0)
    reference = [X.copy() for X in Xs], y.copy()
    for X in Xs:
        assert X.flags.writeable
        X[:] = -1.0
    y[:] = -1
    Xs2, y2 = load_handwritten(shuffle=shuffle, random_state=0)
    for X2, X in zip(Xs2, reference[0], strict=True):
        np.testing.assert_array_equal(X2, X)
    np.testing.assert_array_equal(y2, reference[1])
    assert not any(np.shares_memory(a, b) for a in Xs for b in Xs2)


def test_archive_is_cached_and_read_only():
    views, target = hw._load_archive()
    assert hw._load_archive()[0] is views
    assert not target.flags.writeable
    assert not any(X.flags.writeable for X in views.values())


def test_as_frame():
    pd = pytest.importorskip("pandas")
    data = load_handwritten(
        views=["mor", "pix"], shuffle=True, random_state=0, as_frame=True, return_Xs_y=False
    )
    mor, pix = data.views
    assert isinstance(mor, pd.DataFrame) and isinstance(data.target, pd.Series)
    assert list(mor.columns) == [f"mor_{j}" for j in range(6)]
    assert pix.shape == (2000, 240)
    assert mor.index.name == "sample" and data.target.name == "digit"
    np.testing.assert_array_equal(mor.index.to_numpy(), data.sample_index)
    Xs, y = load_handwritten(views=["mor"])
    np.testing.assert_array_equal(mor.to_numpy(), Xs[0][data.sample_index])
    np.testing.assert_array_equal(data.target.to_numpy(), y[data.sample_index])
    Xs_f, y_f = load_handwritten(as_frame=True)
    assert len(Xs_f) == 6 and isinstance(y_f, pd.Series)


def test_archive_is_small():
    path = Path(hw.__file__).parent / "data" / "handwritten.npz"
    assert path.stat().st_size < 5 * 2**20


@needs_csv
def test_values_equal_the_csv_exactly():
    Xs, y = load_handwritten()
    for code, X in zip(CODES, Xs, strict=True):
        table = np.loadtxt(CSV_DIR / f"mfeat-{code}.csv", delimiter=",", skiprows=1)
        np.testing.assert_array_equal(X, table[:, :-1], err_msg=code)
        np.testing.assert_array_equal(y, table[:, -1].astype(np.int64), err_msg=code)


@needs_csv
def test_build_script_reproduces_the_shipped_archive(tmp_path):
    from mvlearn_ext.datasets import _build_handwritten as build

    report = build.build(CSV_DIR, tmp_path / "hw.npz")
    assert report["dtypes"]["pix"] == "uint8" and report["dtypes"]["fac"] == "uint16"
    shipped = Path(hw.__file__).parent / "data" / "handwritten.npz"
    with np.load(tmp_path / "hw.npz") as new, np.load(shipped) as old:
        assert sorted(new.files) == sorted(old.files)
        for name in new.files:
            assert new[name].dtype == old[name].dtype, name
            np.testing.assert_array_equal(new[name], old[name], err_msg=name)


def test_smallest_exact_dtype():
    from mvlearn_ext.datasets._build_handwritten import smallest_exact_dtype

    assert smallest_exact_dtype(np.array([0.0, 6.0])) == np.uint8
    assert smallest_exact_dtype(np.array([0.0, 1353.0])) == np.uint16
    assert smallest_exact_dtype(np.array([-1.0, 0.5])) == np.float32
    assert smallest_exact_dtype(np.array([0.1, 2.0])) == np.float64
