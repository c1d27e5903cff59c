"""Build ``data/handwritten.npz`` from the UCI "Multiple Features" CSV files.

This is a maintenance script: the package never imports it at run time. Run it
from the repository root after the source CSVs change::

    python -m mvlearn_ext.datasets._build_handwritten
    python -m mvlearn_ext.datasets._build_handwritten --source DIR --output FILE

The source folder holds ``mfeat-<view>.csv`` for the six views, each with one
header row and 2000 rows whose last column is the digit label. By default it is
``../shared/data/uci_mfeat`` beside the repository root.

Storage
-------
Every value is first parsed from its decimal text with :class:`float` (a
correctly rounded conversion to float64). A view is then stored in the
smallest dtype among ``uint8``, ``uint16``, ``float32`` and ``float64`` that
gives back *exactly* those float64 values, and the script checks that it does
before it writes anything. For the current CSVs the profile-correlation view
(``fac``) is integers up to 1353 (``uint16``), the pixel view (``pix``) is
integers 0-6 (``uint8``); the four other views carry five significant decimal
digits, which float32 does not reproduce, so they stay float64.

The archive is written member by member with a fixed time stamp, so that
rebuilding from the same CSVs gives the same bytes (``numpy.savez_compressed``
would stamp each member with the current time).
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
import zipfile
from pathlib import Path

import numpy as np

# Canonical view order: the order of the UCI documentation.
VIEW_CODES = ("fou", "fac", "kar", "pix", "zer", "mor")
N_FEATURES = {"fou": 76, "fac": 216, "kar": 64, "pix": 240, "zer": 47, "mor": 6}
N_SAMPLES = 2000
N_PER_CLASS = 200
FORMAT_VERSION = 1

_REPO_ROOT = Path(__file__).resolve().parents[2]
DEFAULT_SOURCE = _REPO_ROOT.parent / "shared" / "data" / "uci_mfeat"
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "data" / "handwritten.npz"

_CANDIDATE_DTYPES = (np.uint8, np.uint16, np.float32, np.float64)


def read_view_csv(path):
    """Parse one ``mfeat-<view>.csv`` file.

    Parameters
    ----------
    path : path-like
        The CSV file: one header row, then one row per sample whose last field
        is the integer label.

    Returns
    -------
    X : ndarray of float64, shape (n_samples, n_features)
        Each field converted with :class:`float`.
    y : ndarray of int64, shape (n_samples,)
        The labels.
    """
    path = Path(path)
    with path.open(newline="") as fh:
        rows = list(csv.reader(fh))
    if len(rows) < 2:
        raise ValueError(f"{path}: expected a header row and data rows, got {len(rows)} rows")
    header, body = rows[0], rows[1:]
    width = len(header)
    for i, row in enumerate(body, start=2):
        if len(row) != width:
            raise ValueError(f"{path}, line {i}: {len(row)} fields, the header has {width}")
    values = np.array([[float(field) for field in row] for row in body], dtype=np.float64)
    labels = values[:, -1]
    if not np.array_equal(labels, np.round(labels)):
        raise ValueError(f"{path}: the last column (label) is not integer")
    return values[:, :-1].copy(), labels.astype(np.int64)


def smallest_exact_dtype(X):
    """The smallest dtype in uint8, uint16, float32, float64 that stores ``X`` exactly.

    Parameters
    ----------
    X : ndarray of float64

    Returns
    -------
    dtype : numpy.dtype
        ``X.astype(dtype).astype(np.float64)`` equals ``X`` element for element.
    """
    for dtype in _CANDIDATE_DTYPES:
        if np.issubdtype(dtype, np.integer):
            info = np.iinfo(dtype)
            if not (np.all(X == np.round(X)) and X.min() >= info.min and X.max() <= info.max):
                continue
        stored = X.astype(dtype)
        if np.array_equal(stored.astype(np.float64), X):
            return np.dtype(dtype)
    raise AssertionError("float64 always reproduces float64")  # pragma: no cover


def load_sources(source):
    """Read and check the six CSV files in ``source``.

    Returns
    -------
    views : dict of str to ndarray of float64
        Keyed by view code, in :data:`VIEW_CODES` order.
    y : ndarray of int64 of shape (2000,)
    """
    source = Path(source)
    views, y = {}, None
    for code in VIEW_CODES:
        X, labels = read_view_csv(source / f"mfeat-{code}.csv")
        if X.shape != (N_SAMPLES, N_FEATURES[code]):
            raise ValueError(
                f"view {code!r}: expected shape {(N_SAMPLES, N_FEATURES[code])}, got {X.shape}"
            )
        if y is None:
            y = labels
        elif not np.array_equal(labels, y):
            raise ValueError(f"view {code!r}: its labels differ from those of view 'fou'")
        views[code] = X
    counts = np.bincount(y, minlength=10)
    if y.min() != 0 or y.max() != 9 or not np.all(counts == N_PER_CLASS):
        raise ValueError(f"expected labels 0-9 with {N_PER_CLASS} each, got counts {counts}")
    return views, y


def _write_npz(path, arrays):
    """``numpy.savez_compressed`` with a fixed time stamp on every member."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, array in arrays.items():
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            member = io.BytesIO()
            np.lib.format.write_array(
                member, np.require(array, requirements="C"), allow_pickle=False
            )
            zf.writestr(info, member.getvalue(), compresslevel=9)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(buffer.getvalue())


def build(source=DEFAULT_SOURCE, output=DEFAULT_OUTPUT):
    """Convert the CSVs to the compressed archive and verify it.

    Parameters
    ----------
    source : path-like
        Folder with ``mfeat-<view>.csv``.
    output : path-like
        The ``.npz`` file to write.

    Returns
    -------
    report : dict
        The stored dtype of each view, the file size in bytes and its SHA-256.
    """
    output = Path(output)
    views, y = load_sources(source)
    arrays = {
        "format_version": np.array(FORMAT_VERSION, dtype=np.int64),
        "view_codes": np.array(VIEW_CODES),
        "target": y.astype(np.uint8),
    }
    dtypes = {}
    for code, X in views.items():
        dtype = smallest_exact_dtype(X)
        dtypes[code] = dtype.name
        arrays[f"view_{code}"] = X.astype(dtype)

    _write_npz(output, arrays)

    # Read the file back and compare with the parsed text, value for value.
    with np.load(output, allow_pickle=False) as npz:
        if not np.array_equal(npz["target"].astype(np.int64), y):
            raise AssertionError("labels do not round-trip")
        for code, X in views.items():
            back = npz[f"view_{code}"].astype(np.float64)
            if not np.array_equal(back, X):
                raise AssertionError(f"view {code!r} does not round-trip exactly")
    data = output.read_bytes()
    return {
        "dtypes": dtypes,
        "size_bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m mvlearn_ext.datasets._build_handwritten",
        description="Build the embedded Handwritten (UCI Multiple Features) archive.",
    )
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE, help="folder of CSVs")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="the .npz to write")
    args = parser.parse_args(argv)
    if not args.source.is_dir():
        parser.error(f"--source {args.source} is not a folder")
    report = build(args.source, args.output)
    print(f"wrote {args.output} ({report['size_bytes']} bytes, sha256 {report['sha256']})")
    for code, dtype in report["dtypes"].items():
        print(f"  {code}: {dtype}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
