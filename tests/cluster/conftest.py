"""Shared fixtures of the clustering tests."""

import importlib.util
from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def bench_dask_views():
    """``views_in_memory(n)`` of ``benchmarks/bench_clustering_dask.py``: its data as arrays."""
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_clustering_dask.py"
    spec = importlib.util.spec_from_file_location("bench_clustering_dask", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.views_in_memory
