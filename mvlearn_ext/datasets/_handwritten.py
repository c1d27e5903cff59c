"""The embedded Handwritten data set (UCI "Multiple Features", six views)."""

from __future__ import annotations

import difflib
import functools
import numbers
from importlib import resources

import numpy as np
from sklearn.utils import Bunch

from mvlearn_ext.datasets._base import check_generator, check_random_state_type
from mvlearn_ext.utils._validation import check_bool

__all__ = ["handwritten_view_names", "load_handwritten"]

_FORMAT_VERSION = 1
_ARCHIVE = "handwritten.npz"
_DESCR_FILE = "README_handwritten.md"

# (code, description, aliases) in the canonical (UCI) order.
_VIEWS = (
    ("fou", "Fourier coefficients of the character shapes", ("fourier",)),
    ("fac", "profile correlations", ("profile", "profile_correlations", "profiles")),
    ("kar", "Karhunen-Loeve coefficients", ("karhunen_loeve", "karhunen", "kl")),
    ("pix", "pixel averages in 2 x 3 windows", ("pixel", "pixels")),
    ("zer", "Zernike moments", ("zernike",)),
    ("mor", "morphological features", ("morphological", "morphology")),
)
VIEW_CODES = tuple(code for code, _, _ in _VIEWS)
VIEW_DESCRIPTIONS = {code: descr for code, descr, _ in _VIEWS}
_NAME_TO_CODE = {}
for _code, _, _aliases in _VIEWS:
    for _name in (_code, *_aliases):
        _NAME_TO_CODE[_name] = _code
del _code, _aliases, _name


def _normalise_name(name):
    return name.strip().lower().replace("-", "_").replace(" ", "_")


def _describe_valid_names():
    parts = []
    for code, _, aliases in _VIEWS:
        parts.append(f"{code!r} (or {', '.join(repr(a) for a in aliases)})")
    return "; ".join(parts)


def handwritten_view_names(views=None):
    """The codes of the Handwritten views that ``views`` selects, in the order given.

    :func:`load_handwritten` selects its views with this function, so it
    checks a selection and names the views it returns without reading the
    data (``load_handwritten(views=views, return_Xs_y=False).view_names``).

    Parameters
    ----------
    views : None, str, int or list of str and int, default=None
        ``None`` selects the six views in the canonical order
        ``("fou", "fac", "kar", "pix", "zer", "mor")``. A name is a view code
        or one of its aliases (``"fourier"``, ``"profile"``,
        ``"karhunen_loeve"``, ``"pixel"``, ``"zernike"``, ``"morphological"``;
        case, spaces and hyphens do not matter); an int is the position of the
        view in the canonical order, 0 to 5.

    Returns
    -------
    codes : list of str
        The three-letter code of each selected view.

    Raises
    ------
    ValueError
        If ``views`` names an unknown view, an index outside 0-5, the same
        view twice, or no view.
    TypeError
        If ``views`` or one of its entries has an unsupported type.

    See Also
    --------
    load_handwritten : the data of the selected views.

    Examples
    --------
    >>> from mvlearn_ext.datasets import handwritten_view_names
    >>> handwritten_view_names()
    ['fou', 'fac', 'kar', 'pix', 'zer', 'mor']
    >>> handwritten_view_names(["Pixel", 0, "morphological"])
    ['pix', 'fou', 'mor']
    """
    if views is None:
        return list(VIEW_CODES)
    if isinstance(views, (str, numbers.Integral)) and not isinstance(views, bool):
        items = [views]
    elif isinstance(views, (list, tuple)) or (isinstance(views, np.ndarray) and views.ndim == 1):
        items = list(views)
    else:
        raise TypeError(
            f"views must be None, a view name, a view index or a list of them, "
            f"got {type(views).__name__}"
        )
    if not items:
        raise ValueError("views is empty; select at least one view, or pass None for all")
    codes = []
    for item in items:
        if isinstance(item, str):
            key = _normalise_name(item)
            if key not in _NAME_TO_CODE:
                close = difflib.get_close_matches(key, list(_NAME_TO_CODE), n=1)
                hint = f" Did you mean {close[0]!r}?" if close else ""
                raise ValueError(
                    f"views: unknown view name {item!r}.{hint} "
                    f"Valid names: {_describe_valid_names()}."
                )
            code = _NAME_TO_CODE[key]
        elif isinstance(item, numbers.Integral) and not isinstance(item, (bool, np.bool_)):
            index = int(item)
            if not 0 <= index < len(VIEW_CODES):
                raise ValueError(
                    f"views: view index {index} is out of range; indices run from 0 to "
                    f"{len(VIEW_CODES) - 1} in the order {', '.join(VIEW_CODES)}"
                )
            code = VIEW_CODES[index]
        else:
            raise TypeError(
                f"views: each entry must be a view name (str) or index (int), "
                f"got {item!r} of type {type(item).__name__}"
            )
        if code in codes:
            raise ValueError(f"views: view {code!r} is selected twice (as {item!r})")
        codes.append(code)
    return codes


def _data_file(name):
    return resources.files("mvlearn_ext.datasets").joinpath("data").joinpath(name)


@functools.lru_cache(maxsize=1)
def _load_archive():
    """Decompress the archive once; the arrays are float64 and read-only."""
    with _data_file(_ARCHIVE).open("rb") as fh, np.load(fh, allow_pickle=False) as npz:
        version = int(npz["format_version"])
        if version != _FORMAT_VERSION:
            raise RuntimeError(
                f"{_ARCHIVE} has format version {version}, this code reads version "
                f"{_FORMAT_VERSION}; rebuild it with "
                "`python -m mvlearn_ext.datasets._build_handwritten`"
            )
        stored_codes = tuple(str(c) for c in npz["view_codes"])
        if stored_codes != VIEW_CODES:
            raise RuntimeError(f"{_ARCHIVE} holds views {stored_codes}, expected {VIEW_CODES}")
        views = {}
        for code in VIEW_CODES:
            X = npz[f"view_{code}"].astype(np.float64)
            X.setflags(write=False)
            views[code] = X
        target = npz["target"].astype(np.int64)
        target.setflags(write=False)
    return views, target


@functools.lru_cache(maxsize=1)
def _load_descr():
    return _data_file(_DESCR_FILE).read_text(encoding="utf-8")


def load_handwritten(
    *, views=None, shuffle=False, random_state=None, return_Xs_y=True, as_frame=False
):
    """Load the Handwritten digits data set (UCI "Multiple Features"), six views.

    2000 images of handwritten digits (0-9, 200 of each), each described by
    six feature sets: the "Handwritten" / "HW" benchmark of the multi-view
    clustering literature. The data ship with the package (no download).

    =====  ============================================  ========
    code   view                                          features
    =====  ============================================  ========
    fou    Fourier coefficients of the character shapes        76
    fac    profile correlations                               216
    kar    Karhunen-Loeve coefficients                         64
    pix    pixel averages in 2 x 3 windows                    240
    zer    Zernike moments                                     47
    mor    morphological features                               6
    =====  ============================================  ========

    Every value equals the float64 value of its text in the original files.
    Created by R. P. W. Duin; distributed by the UCI Machine Learning
    Repository under CC BY 4.0 (see ``DESCR`` for the attribution).

    Parameters
    ----------
    views : None, str, int or list of str and int, default=None
        The views to return, in the order given. ``None`` returns all six in
        the order of the table. A view is named by its code or an alias
        (``"fourier"``, ``"profile"``, ``"karhunen_loeve"``, ``"pixel"``,
        ``"zernike"``, ``"morphological"``; case does not matter) or by its
        position in the table (0 to 5). A single name or index still returns a
        list of one view.
    shuffle : bool, default=False
        Permute the samples (the same permutation for every view and for the
        labels). Unshuffled, the rows are ordered by digit.
    random_state : None, int, numpy.random.Generator or numpy.random.RandomState
        The permutation's randomness when ``shuffle=True``. NumPy's global
        random state is never used: ``None`` draws a fresh, unseeded
        generator.
    return_Xs_y : bool, default=True
        Return ``(Xs, y)``; if False, return a :class:`~sklearn.utils.Bunch`.
    as_frame : bool, default=False
        Return each view as a :class:`pandas.DataFrame` (columns named
        ``"<code>_<j>"``, index the original row number, named ``"sample"``)
        and the target as a :class:`pandas.Series` named ``"digit"``. Needs
        pandas.

    Returns
    -------
    Xs : list of ndarray of shape (2000, n_features_v)
        The views, float64. Fresh copies: changing them does not change what
        the next call returns.
    y : ndarray of int64 of shape (2000,)
        The digit of each sample.
    data : :class:`~sklearn.utils.Bunch`
        Only when ``return_Xs_y=False``, with the keys

        views : list of arrays
            ``Xs`` above.
        target : ndarray
            ``y`` above.
        view_names : list of str
            The code of each returned view.
        view_descriptions : list of str
            What each returned view measures.
        feature_names : list of list of str
            Per view, ``"<code>_<j>"`` for its ``j``-th feature.
        target_names : ndarray of shape (10,)
            The digits 0 to 9.
        sample_index : ndarray of int64 of shape (2000,)
            The original row of each returned sample (``arange(2000)`` unless
            shuffled).
        DESCR : str
            Description of the data, with source, licence and citation.

    Raises
    ------
    ValueError
        If ``views`` names an unknown view, an index outside 0-5, the same
        view twice, or no view.
    TypeError
        If ``views`` or ``random_state`` has an unsupported type.

    See Also
    --------
    handwritten_view_names : the codes of a selection of views, without the data.

    References
    ----------
    .. [1] Duin, R. (1998). Multiple Features [Dataset]. UCI Machine Learning
       Repository. https://doi.org/10.24432/C5HC70

    Examples
    --------
    >>> from mvlearn_ext.datasets import load_handwritten
    >>> Xs, y = load_handwritten()
    >>> [X.shape for X in Xs]
    [(2000, 76), (2000, 216), (2000, 64), (2000, 240), (2000, 47), (2000, 6)]
    >>> y[:3], y[-3:]
    (array([0, 0, 0]), array([9, 9, 9]))
    >>> Xs, y = load_handwritten(views=["pixel", "mor"], shuffle=True, random_state=0)
    >>> [X.shape for X in Xs]
    [(2000, 240), (2000, 6)]
    >>> data = load_handwritten(views=[3, 0], return_Xs_y=False)
    >>> data.view_names
    ['pix', 'fou']
    """
    codes = handwritten_view_names(views)
    for name, value in (
        ("shuffle", shuffle),
        ("return_Xs_y", return_Xs_y),
        ("as_frame", as_frame),
    ):
        check_bool(value, name)
    if as_frame:
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - pandas is installed in the tests
            raise ImportError(
                "load_handwritten(as_frame=True) needs pandas: pip install pandas"
            ) from exc

    arrays, target = _load_archive()
    n_samples = target.shape[0]
    if shuffle:
        rng = check_generator(random_state)
        order = rng.permutation(n_samples)
        Xs = [arrays[code][order] for code in codes]  # fancy indexing copies
        y = target[order]
    else:
        check_random_state_type(random_state)  # reject a bad type, draw nothing
        order = np.arange(n_samples)
        Xs = [arrays[code].copy() for code in codes]
        y = target.copy()
    feature_names = [[f"{code}_{j}" for j in range(arrays[code].shape[1])] for code in codes]

    if as_frame:
        index = pd.Index(order.copy(), name="sample")
        Xs = [
            pd.DataFrame(X, columns=names, index=index, copy=False)
            for X, names in zip(Xs, feature_names, strict=True)
        ]
        y = pd.Series(y, index=index, name="digit")

    if return_Xs_y:
        return Xs, y
    return Bunch(
        views=Xs,
        target=y,
        view_names=list(codes),
        view_descriptions=[VIEW_DESCRIPTIONS[code] for code in codes],
        feature_names=feature_names,
        target_names=np.arange(10),
        sample_index=order,
        DESCR=_load_descr(),
    )
