"""plot_summary: one line per hue level, error bands or bars, log axes."""

import sys

import numpy as np
import pandas as pd
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from mvlearn_ext.studies import plot_summary, summarize  # noqa: E402


@pytest.fixture
def table():
    T = [8, 16, 32, 64]
    return pd.DataFrame(
        {
            "T": T * 2,
            "method": ["a"] * 4 + ["b"] * 4,
            "mean": [1.0, 0.5, 0.25, 0.125, 2.0, 1.0, 0.5, 0.25],
            "se": [0.1, 0.05, 0.2, 0.01] * 2,
        }
    )


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


def test_lines_and_bands(table):
    ax = plot_summary(table, x="T", hue="method", err="se", err_scale=2.0)
    lines = ax.get_lines()
    assert [ln.get_label() for ln in lines] == ["a", "b"]
    np.testing.assert_array_equal(lines[0].get_xdata(), [8, 16, 32, 64])
    np.testing.assert_array_equal(lines[1].get_ydata(), [2.0, 1.0, 0.5, 0.25])
    bands = ax.collections
    assert len(bands) == 2
    # The band of "a" spans mean +- 2 se.
    (path,) = bands[0].get_paths()
    at32 = path.vertices[path.vertices[:, 0] == 32, 1]
    np.testing.assert_allclose(sorted(set(at32)), [0.25 - 0.4, 0.25 + 0.4])
    assert path.vertices[:, 1].max() == pytest.approx(1.0 + 0.2)
    assert ax.get_legend().get_title().get_text() == "method"


def test_error_bars_log_axes_and_given_ax(table):
    fig, ax = plt.subplots()
    out = plot_summary(table, x="T", hue="method", style="bar", logx=True, logy=True, ax=ax)
    assert out is ax and ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert len(ax.containers) == 2  # one errorbar container per method
    # logy: the band's lower edge stays positive where mean - se <= 0.
    ax2 = plot_summary(table, x="T", hue="method", logy=True)
    for band in ax2.collections:
        assert (band.get_paths()[0].vertices[:, 1] > 0).all()


def test_no_hue_no_error_and_summarize_label():
    frame = pd.DataFrame({"d": [1, 1, 2, 2], "mse": [1.0, 2.0, 3.0, 5.0]})
    ax = plot_summary(summarize(frame, by="d", value="mse"), x="d", err=None, title="t")
    assert len(ax.get_lines()) == 1 and not ax.collections
    assert ax.get_ylabel() == "mean of mse" and ax.get_title() == "t"


def test_errors(table, monkeypatch):
    with pytest.raises(ValueError, match="repeats within the table"):
        plot_summary(table, x="T")
    with pytest.raises(ValueError, match="not in the table"):
        plot_summary(table, x="T", hue="nope")
    with pytest.raises(ValueError, match="style"):
        plot_summary(table, x="T", hue="method", style="dots")
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(ImportError, match="extra 'bench'"):
        plot_summary(table, x="T", hue="method")
