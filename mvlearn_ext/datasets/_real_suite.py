"""A development suite of real multi-view clustering data, built locally.

It complements :func:`~mvlearn_ext.datasets.load_mvc_suite` with the regimes where
that suite is thin: small samples (n = 40 to 150), views that are redundant
transforms of one signal, and views of very unequal quality. Everything is built
from data shipped with the package or with scikit-learn, or generated; nothing is
downloaded.
"""

from __future__ import annotations

import functools
import zlib
from importlib import resources

import numpy as np

from mvlearn_ext.datasets._base import check_seed_sequence
from mvlearn_ext.datasets._generators import make_multiview_blobs
from mvlearn_ext.datasets._suite import load_mvc_dataset

__all__ = ["load_mvc_real_suite", "mvc_real_suite_names"]

_ARCHIVE = "mvc_real.npz"
_FORMAT_VERSION = 1


@functools.lru_cache(maxsize=1)
def _archive():
    path = resources.files("mvlearn_ext.datasets").joinpath("data", _ARCHIVE)
    with path.open("rb") as fh, np.load(fh) as data:
        arrays = {key: data[key] for key in data.files}
    if int(arrays["format_version"]) != _FORMAT_VERSION:
        raise RuntimeError(f"{_ARCHIVE} has an unknown format version")
    return arrays


def _rng(seed_sequence, name):
    """A generator for set ``name``, independent of the other sets."""
    key = zlib.crc32(name.encode("ascii"))
    return np.random.default_rng(np.random.SeedSequence(seed_sequence.entropy, spawn_key=(key,)))


def _stratified(y, n_samples, rng):
    """Sorted indices of ``n_samples`` rows, each class in proportion (largest remainder)."""
    classes, counts = np.unique(y, return_counts=True)
    exact = n_samples * counts / counts.sum()
    take = np.floor(exact).astype(np.int64)
    order = np.argsort(-(exact - take), kind="stable")
    take[order[: n_samples - int(take.sum())]] += 1
    chosen = [
        rng.choice(np.flatnonzero(y == c), size=int(t), replace=False)
        for c, t in zip(classes, take, strict=True)
    ]
    return np.sort(np.concatenate(chosen))


def _transforms(series):
    """Three views of one signal: the series, its amplitude spectrum, its first differences.

    The spectrum is ``|rfft|`` of the series minus its mean (the constant term is
    dropped): it keeps the frequency content and forgets the phase, so it is
    invariant to circular shifts; the differences keep the shape and forget the
    level. All three are computed from the same numbers.
    """
    centred = series - series.mean(axis=1, keepdims=True)
    spectrum = np.abs(np.fft.rfft(centred, axis=1))[:, 1:]
    return [series.copy(), spectrum, np.diff(series, axis=1)]


# --------------------------------------------------------------------------- builders


def _suite_set(name):
    def build(rng, random_state):
        return load_mvc_dataset(name, random_state=random_state, return_Xs_y=True)

    return build


def _subsample(name, n_samples):
    def build(rng, random_state):
        Xs, y = load_mvc_dataset(name, random_state=random_state, return_Xs_y=True)
        rows = _stratified(y, n_samples, rng)
        return [X[rows] for X in Xs], y[rows]

    return build


def _nutrimouse(label):
    def build(rng, random_state):
        data = _archive()
        return [data["nutrimouse_gene"], data["nutrimouse_lipid"]], data[f"nutrimouse_{label}"]

    return build


def _series(key):
    def build(rng, random_state):
        data = _archive()
        return _transforms(np.asarray(data[key], dtype=np.float64)), data[f"{key}_target"]

    return build


def _seed(rng):
    return int(rng.integers(0, 2**32 - 1))


def _blobs_one_strong(n_samples, copies):
    """One view that separates the clusters and weak views that mislead.

    In each weak view the clusters are well separated too, but half of the
    samples, drawn independently in each view, sit in a random cluster: a
    weak view alone is right about half the time, and its wrong neighbourhoods
    look as clustered as the right ones. With ``copies`` the last weak view is
    repeated with fresh noise of 5% of its spread, so that a weighting that
    counts views would give it ``copies + 1`` shares.
    """

    def build(rng, random_state):
        Xs, y = make_multiview_blobs(
            n_samples,
            n_views=3,
            n_features=[4, 30, 30],
            n_clusters=4,
            cluster_std=[1.5, 3.0, 3.0],
            noise=[0.0, 0.5, 0.5],
            random_state=_seed(rng),
        )
        for _ in range(copies):
            Xs.append(Xs[2] + 0.05 * Xs[2].std(axis=0) * rng.standard_normal(Xs[2].shape))
        return Xs, y

    return build


# name: (builder, description); the table of load_mvc_real_suite gives n, k and the views
_SETS = {
    "handwritten": (
        _suite_set("handwritten"),
        "UCI Multiple Features (Handwritten): 2000 digits, 10 classes; fou 76, fac 216, "
        "kar 64, pix 240, zer 47, mor 6.",
    ),
    "handwritten-noise-pix": (
        _suite_set("handwritten-noise-pix"),
        "Handwritten with pix replaced by Gaussian noise of its column means and deviations.",
    ),
    "handwritten-weak3": (
        _suite_set("handwritten-weak3"),
        "Handwritten's three weakest views: fou 76, zer 47, mor 6.",
    ),
    "digits-quadrants": (
        _suite_set("digits-quadrants"),
        "scikit-learn's 8x8 digits (1797 samples, 10 classes): the four 4x4 quadrants.",
    ),
    "digits-profiles": (
        _suite_set("digits-profiles"),
        "scikit-learn's digits: row sums (8), column sums (8), the image pooled to 4x4 (16).",
    ),
    "breast-cancer-groups": (
        _suite_set("breast-cancer-groups"),
        "scikit-learn's breast cancer data (569 samples, 2 classes): mean, standard-error "
        "and worst-value feature groups (10 each).",
    ),
    "nutrimouse-genotype": (
        _nutrimouse("genotype"),
        "Nutrimouse (40 mice): 120 liver gene expressions and 21 hepatic fatty acids; "
        "labels: genotype (wild type, PPAR-alpha deficient).",
    ),
    "nutrimouse-diet": (
        _nutrimouse("diet"),
        "Nutrimouse, the same two views; labels: the five diets.",
    ),
    "gesture-z-transforms": (
        _series("gesture"),
        "PickupGestureWiimoteZ (100 pick-up gestures of 10 subjects; label: the subject), "
        "each z-acceleration series resampled to 128 points; views: the series (128), its "
        "amplitude spectrum (64), its first differences (127).",
    ),
    "chinatown-transforms": (
        _series("unittest"),
        "aeon's UnitTest series (42 days of hourly pedestrian counts in Melbourne's "
        "Chinatown, 2 classes: weekday, weekend); views: the series (24), its amplitude "
        "spectrum (12), its first differences (23).",
    ),
    "handwritten-n100": (
        _subsample("handwritten", 100),
        "Handwritten, 100 samples (10 per class), all six views.",
    ),
    "handwritten-weak3-n150": (
        _subsample("handwritten-weak3", 150),
        "handwritten-weak3, 150 samples (15 per class).",
    ),
    "digits-quadrants-n150": (
        _subsample("digits-quadrants", 150),
        "digits-quadrants, 150 samples (stratified).",
    ),
    "digits-profiles-n120": (
        _subsample("digits-profiles", 120),
        "digits-profiles, 120 samples (stratified).",
    ),
    "breast-cancer-groups-n60": (
        _subsample("breast-cancer-groups", 60),
        "breast-cancer-groups, 60 samples (stratified).",
    ),
    "blobs-strong-weak": (
        _blobs_one_strong(600, 0),
        "Generated (make_multiview_blobs), 600 samples, 4 clusters: one 4-feature view "
        "(cluster_std 1.5) and two 30-feature views (cluster_std 3) in which half of the "
        "samples, drawn independently per view, sit in a random cluster.",
    ),
    "blobs-strong-weak-n120": (
        _blobs_one_strong(120, 0),
        "blobs-strong-weak with 120 samples.",
    ),
    "blobs-strong-redundant": (
        _blobs_one_strong(600, 2),
        "blobs-strong-weak with the last weak view repeated twice more (fresh noise of 5% "
        "of its spread): five views, three of them near copies.",
    ),
}


def mvc_real_suite_names():
    """Names of the data sets of the real-data development suite, in a fixed order.

    Returns
    -------
    names : tuple of str

    See Also
    --------
    load_mvc_real_suite : Loads these data sets.

    Examples
    --------
    >>> from mvlearn_ext.datasets import mvc_real_suite_names
    >>> mvc_real_suite_names()[:2]
    ('handwritten', 'handwritten-noise-pix')
    """
    return tuple(_SETS)


def load_mvc_real_suite(names=None, *, random_state=0):
    """Build the real-data development suite of multi-view clustering.

    Eighteen sets, chosen to cover small samples, redundant views and views of
    very unequal quality. No set is downloaded: the nutrimouse and series data
    are shipped with the package (``data/README_mvc_real.md`` gives their
    sources and licences), the others come from
    :func:`load_mvc_dataset` (Handwritten, scikit-learn's digits and breast
    cancer) or are generated.

    ============================  ====  ==  ========================================
    name                          n     k   views (features)
    ============================  ====  ==  ========================================
    ``handwritten``               2000  10  fou 76, fac 216, kar 64, pix 240, zer 47,
                                            mor 6
    ``handwritten-noise-pix``     2000  10  as above, pix replaced by noise
    ``handwritten-weak3``         2000  10  fou 76, zer 47, mor 6
    ``digits-quadrants``          1797  10  16, 16, 16, 16
    ``digits-profiles``           1797  10  8, 8, 16
    ``breast-cancer-groups``      569   2   10, 10, 10
    ``nutrimouse-genotype``       40    2   genes 120, fatty acids 21
    ``nutrimouse-diet``           40    5   genes 120, fatty acids 21
    ``gesture-z-transforms``      100   10  series 128, spectrum 64, differences 127
    ``chinatown-transforms``      42    2   series 24, spectrum 12, differences 23
    ``handwritten-n100``          100   10  as ``handwritten``
    ``handwritten-weak3-n150``    150   10  as ``handwritten-weak3``
    ``digits-quadrants-n150``     150   10  as ``digits-quadrants``
    ``digits-profiles-n120``      120   10  as ``digits-profiles``
    ``breast-cancer-groups-n60``  60    2   as ``breast-cancer-groups``
    ``blobs-strong-weak``         600   4   strong 4; weak 30, weak 30
    ``blobs-strong-weak-n120``    120   4   as above
    ``blobs-strong-redundant``    600   4   strong 4; weak 30, weak 30 and two near
                                            copies of the last
    ============================  ====  ==  ========================================

    The ``-n<count>`` sets are stratified subsamples (each class in proportion
    to its size in the full set) of the set they name. In the ``-transforms``
    sets the three views are computed from one series: they are redundant,
    not independent. In the ``blobs-strong-*`` sets one view alone separates
    the clusters far better than the other views and than their
    concatenation (in the others, half of the samples sit in a random cluster).

    Parameters
    ----------
    names : sequence of str, optional
        Build only these sets (in the suite's order); all by default.
    random_state : int, numpy.random.Generator or numpy.random.RandomState, default=0
        Seeds the subsamples, the noise views and the generated sets. Each set
        depends only on ``random_state`` and its name, so a set is the same
        whether built alone or with the others. The sets without random parts
        do not depend on it.

    Returns
    -------
    suite : list of tuple
        One ``(name, Xs, y)`` per set: ``Xs`` a list of float64 arrays of
        shape ``(n_samples, n_features_v)``, ``y`` int64 labels from 0 to
        ``n_clusters - 1``.

    Raises
    ------
    ValueError
        If a name is not a set of the suite.

    See Also
    --------
    load_mvc_suite : The multi-view clustering suite with a held-out split.

    Examples
    --------
    >>> from mvlearn_ext.datasets import load_mvc_real_suite
    >>> for name, Xs, y in load_mvc_real_suite(["nutrimouse-diet", "chinatown-transforms"]):
    ...     print(name, [X.shape for X in Xs], int(y.max()) + 1)
    nutrimouse-diet [(40, 120), (40, 21)] 5
    chinatown-transforms [(42, 24), (42, 12), (42, 23)] 2
    """
    if names is None:
        selected = tuple(_SETS)
    else:
        if isinstance(names, str):
            names = [names]
        names = list(names)
        for name in names:
            if not isinstance(name, str) or name not in _SETS:
                raise ValueError(
                    f"names: {name!r} is not a set of the real-data suite; "
                    f"the sets are {tuple(_SETS)}"
                )
        selected = tuple(name for name in _SETS if name in names)
    seed_sequence = check_seed_sequence(random_state)
    # one integer for the sets built by load_mvc_dataset, derived like theirs
    if isinstance(random_state, (int, np.integer)) and not isinstance(random_state, bool):
        suite_seed = int(random_state)
    else:
        suite_seed = int(seed_sequence.generate_state(1, np.uint64)[0])
    out = []
    for name in selected:
        build, _ = _SETS[name]
        Xs, y = build(_rng(seed_sequence, name), suite_seed)
        Xs = [np.ascontiguousarray(X, dtype=np.float64) for X in Xs]
        out.append((name, Xs, np.asarray(y, dtype=np.int64)))
    return out
