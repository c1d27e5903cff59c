"""A suite of multi-view clustering data sets, built locally, split into dev and eval.

Every set is built from data that ships with the package or with
scikit-learn, or generated; nothing is downloaded. The sets are fixed for a
given ``random_state`` (default 0): the noise views and the synthetic sets
are drawn from a stream that depends only on ``random_state`` and on the
name of the set, so loading one set, or the whole suite, gives the same
arrays.

The sets built from scikit-learn's digits and breast-cancer data form the
*evaluation* split, held out when the suite was built; the real-data suite
(:func:`~mvlearn_ext.datasets.load_mvc_real_suite`), on which the current
defaults of HAGMVC and DRMC were chosen, contains views of the same data, so
read their scores as a second sample rather than as untouched data. All the
others form the *development* split.
"""

from __future__ import annotations

import zlib

import numpy as np
from sklearn.utils import Bunch

from mvlearn_ext.datasets._base import check_seed_sequence
from mvlearn_ext.datasets._generators import make_multiview_blobs
from mvlearn_ext.datasets._handwritten import VIEW_CODES, load_handwritten
from mvlearn_ext.utils._validation import check_bool

__all__ = ["load_mvc_dataset", "load_mvc_suite", "mvc_suite_names"]

_SPLITS = ("dev", "eval", "all")


def _rng(seed_sequence, name):
    """A generator for set ``name``, independent of the other sets."""
    key = zlib.crc32(name.encode("ascii"))
    child = np.random.SeedSequence(seed_sequence.entropy, spawn_key=(key,))
    return np.random.default_rng(child)


def _gaussian_like(X, rng):
    """Gaussian noise of the shape of ``X``, column means and deviations matched.

    It keeps the scale of the view it replaces (so that methods that do not
    standardise see the same units) and carries no information on the labels.
    """
    mean = X.mean(axis=0)
    std = X.std(axis=0)
    return mean + std * rng.standard_normal(X.shape)


# --- Handwritten and its variants ------------------------------------------------------------


def _handwritten(views=None):
    Xs, y = load_handwritten(views=views)
    return [np.array(X) for X in Xs], y


def _build_handwritten(rng):
    Xs, y = _handwritten()
    return Xs, y, list(VIEW_CODES), ()


def _replace_by_noise(code):
    def build(rng):
        Xs, y = _handwritten()
        v = VIEW_CODES.index(code)
        Xs[v] = _gaussian_like(Xs[v], rng)
        names = [f"noise({c})" if c == code else c for c in VIEW_CODES]
        return Xs, y, names, (v,)

    return build


# The three views on which k-means alone does worst (z-scored features, k = 10):
# a suite member where combining views has the most to add.
_WEAK_VIEWS = ("fou", "zer", "mor")


def _build_handwritten_weak(rng):
    Xs, y = _handwritten(views=list(_WEAK_VIEWS))
    return Xs, y, list(_WEAK_VIEWS), ()


# --- synthetic sets --------------------------------------------------------------------------


def _seed(rng):
    return int(rng.integers(0, 2**32 - 1))


def _build_blobs_one_informative(rng):
    Xs, y = make_multiview_blobs(
        600,
        n_views=3,
        n_features=[10, 3, 3],
        n_clusters=4,
        cluster_std=[6.0, 1.0, 1.0],
        informative=[1.0, 0.0, 0.0],
        random_state=_seed(rng),
    )
    return Xs, y, ["informative", "noise_a", "noise_b"], (1, 2)


def _build_blobs_mixed(rng):
    Xs, y = make_multiview_blobs(
        800,
        n_views=4,
        n_features=[20, 8, 2, 50],
        n_clusters=5,
        cluster_std=[6.0, 5.0, 2.5, 1.0],
        informative=[0.25, 1.0, 1.0, 0.0],
        noise=[0.0, 0.3, 0.0, 0.0],
        random_state=_seed(rng),
    )
    return Xs, y, ["wide_sparse", "mid_flipped", "narrow", "noise"], (3,)


# --- sets built from scikit-learn's bundled data ---------------------------------------------


def _columns(X, groups):
    return [np.ascontiguousarray(X[:, list(columns)], dtype=np.float64) for columns in groups]


def _build_wine(rng):
    from sklearn.datasets import load_wine

    data = load_wine()
    # 0 alcohol, 1 malic_acid, 2 ash, 3 alcalinity_of_ash, 4 magnesium,
    # 5 total_phenols, 6 flavanoids, 7 nonflavanoid_phenols, 8 proanthocyanins,
    # 9 color_intensity, 10 hue, 11 od280/od315, 12 proline.
    groups = ([5, 6, 7, 8, 11], [9, 10], [0, 1, 2, 3, 4, 12])
    return (
        _columns(data.data, groups),
        data.target.astype(np.int64),
        ["phenolics", "colour", "composition"],
        (),
    )


def _build_iris(rng):
    from sklearn.datasets import load_iris

    data = load_iris()
    return (
        _columns(data.data, ([0, 1], [2, 3])),
        data.target.astype(np.int64),
        ["sepal", "petal"],
        (),
    )


def _digit_images():
    from sklearn.datasets import load_digits

    data = load_digits()
    return data.images.astype(np.float64), data.target.astype(np.int64)


def _build_digits_quadrants(rng):
    images, y = _digit_images()
    n = images.shape[0]
    Xs = [
        np.ascontiguousarray(images[:, r : r + 4, c : c + 4].reshape(n, 16))
        for r in (0, 4)
        for c in (0, 4)
    ]
    return Xs, y, ["top_left", "top_right", "bottom_left", "bottom_right"], ()


def _build_digits_profiles(rng):
    images, y = _digit_images()
    n = images.shape[0]
    pooled = images.reshape(n, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(n, 16)
    Xs = [images.sum(axis=2), images.sum(axis=1), np.ascontiguousarray(pooled)]
    return Xs, y, ["row_sums", "column_sums", "pooled_4x4"], ()


def _build_breast_cancer(rng):
    from sklearn.datasets import load_breast_cancer

    data = load_breast_cancer()
    names = list(data.feature_names)
    groups = (
        [i for i, f in enumerate(names) if f.startswith("mean ")],
        [i for i, f in enumerate(names) if f.endswith(" error")],
        [i for i, f in enumerate(names) if f.startswith("worst ")],
    )
    return (
        _columns(data.data, groups),
        data.target.astype(np.int64),
        ["mean", "se", "worst"],
        (),
    )


# name: (split, builder, description)
_SETS = {
    "handwritten": (
        "dev",
        _build_handwritten,
        "UCI Multiple Features (Handwritten): 2000 digits, 10 classes, six views "
        "(fou 76, fac 216, kar 64, pix 240, zer 47, mor 6), in load_handwritten's order.",
    ),
    "handwritten-noise-pix": (
        "dev",
        _replace_by_noise("pix"),
        "Handwritten with its widest view, pix (240 features), replaced by Gaussian noise "
        "with the column means and deviations of pix.",
    ),
    "handwritten-noise-mor": (
        "dev",
        _replace_by_noise("mor"),
        "Handwritten with its narrowest view, mor (6 features), replaced by Gaussian noise "
        "with the column means and deviations of mor.",
    ),
    "handwritten-weak3": (
        "dev",
        _build_handwritten_weak,
        "Handwritten's three weakest views alone (fou 76, zer 47, mor 6 features; the views "
        "on which k-means alone does worst).",
    ),
    "blobs-1inf-2noise": (
        "dev",
        _build_blobs_one_informative,
        "make_multiview_blobs: 600 samples, 4 clusters; one informative 10-feature view "
        "(cluster_std 6) and two 3-feature views of pure noise.",
    ),
    "blobs-mixed": (
        "dev",
        _build_blobs_mixed,
        "make_multiview_blobs: 800 samples, 5 clusters; a 20-feature view with 5 informative "
        "features (cluster_std 6), an 8-feature view with 30% of rows redrawn from a random "
        "cluster (cluster_std 5), a 2-feature view (cluster_std 2.5) and a 50-feature view "
        "of pure noise.",
    ),
    "wine-groups": (
        "dev",
        _build_wine,
        "scikit-learn's wine data (178 samples, 3 cultivars) split by feature groups: "
        "phenolics (5), colour (2), composition (6).",
    ),
    "iris-sepal-petal": (
        "dev",
        _build_iris,
        "scikit-learn's iris data (150 samples, 3 species): sepal (2) and petal (2) "
        "measurements as two views.",
    ),
    "digits-quadrants": (
        "eval",
        _build_digits_quadrants,
        "HELD OUT. scikit-learn's 8x8 digits (1797 samples, 10 classes): the four 4x4 "
        "quadrants of the image as four 16-feature views.",
    ),
    "digits-profiles": (
        "eval",
        _build_digits_profiles,
        "HELD OUT. scikit-learn's 8x8 digits: row sums (8), column sums (8) and the image "
        "mean-pooled to 4x4 (16) as three views.",
    ),
    "breast-cancer-groups": (
        "eval",
        _build_breast_cancer,
        "HELD OUT. scikit-learn's breast cancer data (569 samples, 2 classes): the mean, "
        "standard-error and worst-value feature groups (10 each) as three views.",
    ),
}


def _check_split(split):
    if split not in _SPLITS:
        raise ValueError(f"split must be one of {_SPLITS}, got {split!r}")


def mvc_suite_names(split="dev"):
    """Names of the data sets of the multi-view clustering suite.

    Parameters
    ----------
    split : {"dev", "eval", "all"}, default="dev"
        ``"dev"``: the development sets, on which methods may be developed
        and their defaults chosen. ``"eval"``: the sets built from
        scikit-learn's digits and breast-cancer data, held out when the suite
        was built; the real-data suite
        (:func:`~mvlearn_ext.datasets.load_mvc_real_suite`), on which
        the current defaults of HAGMVC and DRMC were chosen, holds views of the
        same data, so these sets are no longer untouched.
        ``"all"``: the development sets, then the held-out ones.

    Returns
    -------
    names : tuple of str
        In a fixed order.

    See Also
    --------
    load_mvc_suite : Builds these data sets.

    Examples
    --------
    >>> from mvlearn_ext.datasets import mvc_suite_names
    >>> mvc_suite_names("eval")
    ('digits-quadrants', 'digits-profiles', 'breast-cancer-groups')
    """
    _check_split(split)
    return tuple(name for name, (s, _, _) in _SETS.items() if split == "all" or s == split)


def load_mvc_dataset(name, *, random_state=0, return_Xs_y=False):
    """Build one data set of the multi-view clustering suite.

    ==========================  =====  ======  ==  ============================
    name                        split  n       k   views (features)
    ==========================  =====  ======  ==  ============================
    ``handwritten``             dev    2000    10  fou 76, fac 216, kar 64,
                                                   pix 240, zer 47, mor 6
    ``handwritten-noise-pix``   dev    2000    10  as above, pix is noise
    ``handwritten-noise-mor``   dev    2000    10  as above, mor is noise
    ``handwritten-weak3``       dev    2000    10  fou 76, zer 47, mor 6
    ``blobs-1inf-2noise``       dev    600     4   10; noise 3, noise 3
    ``blobs-mixed``             dev    800     5   20, 8, 2; noise 50
    ``wine-groups``             dev    178     3   5, 2, 6
    ``iris-sepal-petal``        dev    150     3   2, 2
    ``digits-quadrants``        eval   1797    10  16, 16, 16, 16
    ``digits-profiles``         eval   1797    10  8, 8, 16
    ``breast-cancer-groups``    eval   569     2   10, 10, 10
    ==========================  =====  ======  ==  ============================

    A noise view is drawn independently of the labels: in the Handwritten
    variants it is Gaussian with the column means and standard deviations of
    the view it replaces; in the synthetic sets it is an uninformative view
    of :func:`make_multiview_blobs`. The ``eval`` sets are meant for
    reporting, not for choosing defaults (see
    :func:`~mvlearn_ext.datasets.mvc_suite_names`).
    Nothing is downloaded.

    Parameters
    ----------
    name : str
        A name from :func:`mvc_suite_names` (``split="all"``).
    random_state : int, numpy.random.Generator or numpy.random.RandomState, default=0
        Seeds the noise views and the synthetic sets. The stream of each set
        depends only on ``random_state`` and its name. The sets without
        random parts do not depend on it. ``None`` draws fresh entropy (not
        reproducible).
    return_Xs_y : bool, default=False
        Return ``(Xs, y)`` instead of a :class:`~sklearn.utils.Bunch`.

    Returns
    -------
    data : :class:`~sklearn.utils.Bunch`
        With keys ``Xs`` (list of float64 arrays of shape
        ``(n_samples, n_features_v)``), ``y`` (int64 labels, 0 to
        ``n_clusters - 1``), ``name``, ``split`` (``"dev"`` or ``"eval"``),
        ``n_clusters``, ``view_names`` (list of str), ``noise_views`` (tuple
        of the indices of the views that are pure noise) and ``DESCR``.
    (Xs, y) : tuple
        Only when ``return_Xs_y=True``.

    Raises
    ------
    ValueError
        If ``name`` is not a set of the suite.

    See Also
    --------
    load_mvc_suite : Several sets at once, by split.

    Examples
    --------
    >>> from mvlearn_ext.datasets import load_mvc_dataset
    >>> data = load_mvc_dataset("blobs-1inf-2noise")
    >>> [X.shape for X in data.Xs], data.n_clusters, data.noise_views, data.split
    ([(600, 10), (600, 3), (600, 3)], 4, (1, 2), 'dev')
    """
    if not isinstance(name, str) or name not in _SETS:
        raise ValueError(f"name must be one of the suite's data sets {tuple(_SETS)}, got {name!r}")
    check_bool(return_Xs_y, "return_Xs_y")
    split, build, descr = _SETS[name]
    seed_sequence = check_seed_sequence(random_state)
    Xs, y, view_names, noise_views = build(_rng(seed_sequence, name))
    Xs = [np.ascontiguousarray(X, dtype=np.float64) for X in Xs]
    y = np.asarray(y, dtype=np.int64)
    if return_Xs_y:
        return Xs, y
    return Bunch(
        Xs=Xs,
        y=y,
        name=name,
        split=split,
        n_clusters=int(np.unique(y).size),
        view_names=list(view_names),
        noise_views=tuple(int(v) for v in noise_views),
        DESCR=descr,
    )


def load_mvc_suite(split="dev", *, names=None, random_state=0):
    """Build the data sets of the multi-view clustering suite.

    Parameters
    ----------
    split : {"dev", "eval", "all"}, default="dev"
        Which sets: the development sets (the default), the evaluation sets
        (built from scikit-learn's digits and breast-cancer data; see
        :func:`~mvlearn_ext.datasets.mvc_suite_names`), or both.
    names : sequence of str, optional
        Restrict to these sets (each must belong to ``split``).
    random_state : int, numpy.random.Generator or numpy.random.RandomState, default=0
        As in :func:`load_mvc_dataset`; every set gets the same value, so a
        set is the same whether built alone or with the suite. A
        ``Generator`` or ``RandomState`` is asked for one seed, used for
        every set.

    Returns
    -------
    suite : dict of str to :class:`~sklearn.utils.Bunch`
        The sets in the order of :func:`mvc_suite_names`, each as returned
        by :func:`load_mvc_dataset`.

    See Also
    --------
    mvc_suite_names : The names of its data sets.
    load_mvc_real_suite : The real-data suite.

    Examples
    --------
    >>> from mvlearn_ext.datasets import load_mvc_suite
    >>> suite = load_mvc_suite("dev", names=["wine-groups", "iris-sepal-petal"])
    >>> {name: len(data.Xs) for name, data in suite.items()}
    {'wine-groups': 3, 'iris-sepal-petal': 2}
    """
    _check_split(split)
    available = mvc_suite_names(split)
    if names is None:
        selected = available
    else:
        if isinstance(names, str):
            names = [names]
        selected = tuple(names)
        for name in selected:
            if name not in available:
                raise ValueError(
                    f"names: {name!r} is not a {split!r} set of the suite; "
                    f"the {split!r} sets are {available}"
                )
        selected = tuple(n for n in available if n in selected)
    if not isinstance(random_state, (int, np.integer)) or isinstance(random_state, bool):
        # one seed for every set, so that each set is built as by load_mvc_dataset
        random_state = int(check_seed_sequence(random_state).generate_state(1, np.uint64)[0])
    return {name: load_mvc_dataset(name, random_state=random_state) for name in selected}
