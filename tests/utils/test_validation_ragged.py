"""Ragged views get one error naming the view and the first row that differs."""

import numpy as np
import pytest

from mvlearn_ext.cluster import ConcatKMeans
from mvlearn_ext.utils import validate_views

GOOD = [[1.0], [2.0], [3.0]]


@pytest.mark.parametrize(
    ("view", "message"),
    [
        ([[1.0, 2.0], [3.0, 4.0], [5.0]], "row 0 has 2 values but row 2 has 1 value"),
        ([np.ones(2), np.ones(2), np.ones(3)], "row 0 has 2 values but row 2 has 3 values"),
        ([[1.0, 2.0], 3.0, [4.0, 5.0]], "row 0 has 2 values but row 1 is a single number"),
        # A 1-D object array of rows: NumPy's own message would be "setting an
        # array element with a sequence".
        (
            np.array([np.ones(2), np.ones(1), np.ones(2)], dtype=object),
            "row 0 has 2 values but row 1 has 1 value",
        ),
        ([[1.0, [2.0, 3.0]], [4.0, 5.0], [6.0, 7.0]], "an entry of its rows is a sequence"),
    ],
)
def test_ragged_view_names_the_view_and_the_row(view, message):
    with pytest.raises(ValueError, match=rf"view 1 of Xs is ragged: {message}") as info:
        validate_views([GOOD, view])
    assert "setting an array element" not in str(info.value)
    with pytest.raises(ValueError, match=r"view 1 of Xs is ragged"):
        ConcatKMeans(n_clusters=1).fit([GOOD, view])


def test_object_rows_of_equal_length_are_still_accepted():
    view = np.array([np.ones(2), np.zeros(2), np.ones(2)], dtype=object)
    (_, out) = validate_views([GOOD, view])
    assert out.dtype == np.float64 and out.shape == (3, 2)
