"""summarize (against plain NumPy), fit_loglog_slope (against scipy.stats.linregress)."""

import math
import sys

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from mvlearn_ext.studies import fit_loglog_slope, format_summary, summarize


@pytest.fixture
def frame():
    rng = np.random.default_rng(0)
    n = 60
    return pd.DataFrame(
        {
            "delta": rng.choice([0.1, 0.5, 1.0], size=n),
            "method": rng.choice(["a", "b"], size=n),
            "mse": rng.gamma(2.0, size=n),
        }
    )


def test_summarize_matches_numpy(frame):
    table = summarize(frame, by=["delta", "method"], value="mse")
    assert list(table.columns) == ["delta", "method", "mean", "se", "n", "std"]
    assert table.attrs["value"] == "mse"
    keys = sorted(set(zip(frame.delta, frame.method, strict=True)))
    assert list(zip(table.delta, table.method, strict=True)) == keys
    for (d, m), row in zip(keys, table.itertuples(), strict=True):
        v = frame.mse[(frame.delta == d) & (frame.method == m)].to_numpy()
        assert row.n == v.size
        assert row.mean == pytest.approx(v.mean(), rel=1e-12)
        assert row.std == pytest.approx(v.std(ddof=1), rel=1e-12)
        assert row.se == pytest.approx(v.std(ddof=1) / math.sqrt(v.size), rel=1e-12)


def test_summarize_single_key_list_input_and_no_key(frame):
    by_str = summarize(frame, by="method", value="mse")
    assert by_str.equals(summarize(frame.to_dict("records"), by=["method"], value="mse"))
    overall = summarize(frame, by=[], value="mse")
    assert len(overall) == 1 and overall["n"].item() == len(frame)
    assert overall["mean"].item() == pytest.approx(frame.mse.mean())


def test_summarize_missing_values_and_single_replication():
    frame = pd.DataFrame({"g": ["x", "x", "x", "y"], "v": [1.0, np.nan, 3.0, 5.0]})
    table = summarize(frame, by="g", value="v").set_index("g")
    assert table.loc["x", "n"] == 2 and table.loc["x", "mean"] == 2.0
    assert table.loc["y", "n"] == 1 and np.isnan(table.loc["y", "se"])


def test_summarize_errors(frame, monkeypatch):
    with pytest.raises(ValueError, match=r"column\(s\) \['nope'\] not in the frame"):
        summarize(frame, by="nope", value="mse")
    with pytest.raises(ValueError, match="not in the frame"):
        summarize(frame, by="method", value="nope")
    with pytest.raises(TypeError, match="not numeric"):
        summarize(frame, by="delta", value="method")
    with pytest.raises(TypeError, match="one column name"):
        summarize(frame, by="delta", value=["mse"])
    with pytest.raises(ValueError, match=r"\['n'\] clash with the summary columns"):
        summarize(frame.rename(columns={"delta": "n"}), by=["n"], value="mse")
    with pytest.raises(ValueError, match="also a grouping column"):
        summarize(frame, by="mse", value="mse")
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match="pandas"):
        summarize(frame, by="delta", value="mse")


def test_loglog_slope_exact_power_law():
    x = np.array([8.0, 16, 32, 64, 128])
    fit = fit_loglog_slope(x, 0.25 * x**-2.0)
    assert fit.slope == pytest.approx(-2.0, abs=1e-12)
    assert math.exp(fit.intercept) == pytest.approx(0.25, rel=1e-12)
    assert fit.slope_se == pytest.approx(0.0, abs=1e-12) and fit.n == 5


def test_loglog_slope_matches_linregress():
    rng = np.random.default_rng(1)
    x = 2.0 ** np.arange(6, 15)
    y = 3.0 * x**-1.5 * np.exp(rng.normal(0, 0.1, size=x.size))
    fit = fit_loglog_slope(x, y)
    ref = stats.linregress(np.log(x), np.log(y))
    assert fit.slope == pytest.approx(ref.slope, rel=1e-12)
    assert fit.intercept == pytest.approx(ref.intercept, rel=1e-12)
    assert fit.slope_se == pytest.approx(ref.stderr, rel=1e-10)
    assert fit.intercept_se == pytest.approx(ref.intercept_stderr, rel=1e-10)
    # Base of the logarithm does not matter for the slope.
    assert fit_loglog_slope(x, y).slope == pytest.approx(
        stats.linregress(np.log2(x), np.log2(y)).slope, rel=1e-12
    )


def test_loglog_slope_two_points_and_errors():
    fit = fit_loglog_slope([1.0, 10.0], [1.0, 100.0])
    assert fit.slope == pytest.approx(2.0) and math.isnan(fit.slope_se)
    with pytest.raises(ValueError, match="positive"):
        fit_loglog_slope([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(ValueError, match="positive"):
        fit_loglog_slope([1.0, np.nan], [1.0, 2.0])
    with pytest.raises(ValueError, match="same length"):
        fit_loglog_slope([1.0, 2.0], [1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match="two distinct"):
        fit_loglog_slope([2.0, 2.0], [1.0, 3.0])


def test_loglog_slope_weighted_by_standard_errors():
    """With se, weighted least squares on log y with variances (se / y)^2."""
    rng = np.random.default_rng(2)
    x = 2.0 ** np.arange(6, 12)
    y = 3.0 * x**-1.5 * np.exp(rng.normal(0, 0.05, size=x.size))
    se = y * rng.uniform(0.01, 0.1, size=x.size)
    fit = fit_loglog_slope(x, y, se, level=0.9)
    # the reference: ordinary least squares on rows scaled by 1 / sigma_i, sigma_i = se_i / y_i
    A = np.column_stack([np.ones(x.size), np.log(x)]) / (se / y)[:, None]
    coef, *_ = np.linalg.lstsq(A, np.log(y) / (se / y), rcond=None)
    cov = np.linalg.inv(A.T @ A)
    assert (fit.intercept, fit.slope) == pytest.approx(tuple(coef), rel=1e-10)
    assert fit.slope_se == pytest.approx(math.sqrt(cov[1, 1]), rel=1e-10)
    assert fit.intercept_se == pytest.approx(math.sqrt(cov[0, 0]), rel=1e-10)
    z = stats.norm.ppf(0.95)
    assert fit.ci_low == pytest.approx(fit.slope - z * fit.slope_se, rel=1e-12)
    assert fit.ci_high == pytest.approx(fit.slope + z * fit.slope_se, rel=1e-12)
    # a zero standard error (a deterministic point) falls back to least squares
    se[0] = 0.0
    assert fit_loglog_slope(x, y, se) == fit_loglog_slope(x, y)
    with pytest.raises(ValueError, match="se must hold 6 finite values"):
        fit_loglog_slope(x, y, -se)
    with pytest.raises(ValueError, match="level"):
        fit_loglog_slope(x, y, level=1.0)


def test_format_summary(frame):
    table = summarize(frame, by=["delta", "method"], value="mse")
    wide = format_summary(table, index="delta", columns="method", digits=2)
    assert list(wide.columns) == ["a", "b"] and list(wide.index) == [0.1, 0.5, 1.0]
    row = table[(table.delta == 0.5) & (table.method == "b")].iloc[0]
    assert wide.loc[0.5, "b"] == f"{row['mean']:.2g} ± {row['se']:.2g}"
    md = format_summary(table, index=["delta", "method"], markdown=True)
    lines = md.splitlines()
    assert lines[0] == "| delta | method | mean ± se |" and len(lines) == 2 + len(table)
    with pytest.raises(ValueError, match="several rows"):
        format_summary(table, index="method", columns="method")
    with pytest.raises(ValueError, match="not in the table"):
        format_summary(table, index="nope")
    with pytest.raises(ValueError, match="digits"):
        format_summary(table, index="delta", columns="method", digits=0)


@pytest.mark.parametrize("factor", [1e-170, 1e154, 1e300])
def test_summarize_any_scale(factor):
    import warnings

    pd = pytest.importorskip("pandas")
    x = np.array([0.3, -1.2, 0.5, 2.0, 1.1, -0.4])
    ref = summarize(pd.DataFrame({"m": list("aabbbc"), "v": x}), by="m", value="v")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = summarize(pd.DataFrame({"m": list("aabbbc"), "v": x * factor}), by="m", value="v")
        flat = summarize(pd.DataFrame({"v": x * factor}), by=[], value="v")
    for col in ("mean", "se", "std"):
        np.testing.assert_allclose(got[col] / factor, ref[col], rtol=1e-12)
    assert flat["std"].iloc[0] / factor == pytest.approx(np.std(x, ddof=1), rel=1e-12)


def test_summarize_overflow_names_the_column():
    pd = pytest.importorskip("pandas")
    with pytest.raises(ValueError, match="column 'v'"):
        summarize(pd.DataFrame({"v": [-1.7e308, 1.7e308]}), by=[], value="v")
