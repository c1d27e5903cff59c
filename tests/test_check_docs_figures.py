"""The comparison rules of ``benchmarks/check_docs_figures.py`` (issue 17)."""

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def check():
    spec = importlib.util.spec_from_file_location(
        "check_docs_figures", ROOT / "benchmarks" / "check_docs_figures.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_labels_exact_float_level_and_different(check):
    out = check._compare(
        [
            ("same", 0.1 + 0.2, 0.1 + 0.2),
            ("ulp", 0.3, 0.1 + 0.2),  # one rounding unit apart
            ("moved", 0.891, 0.8925),
            ("missing", 0.5, None),
            ("both none", None, None),
            ("nan", float("nan"), float("nan")),
        ],
        [],
    )
    status = {c["key"]: c["status"] for c in out}
    assert status == {
        "same": "equal",
        "ulp": "float-level",
        "moved": "different",
        "missing": "different",
        "both none": "equal",
        "nan": "equal",
    }
    assert check._summary(out) == {"equal": 3, "float-level": 1, "different": 2}
    moved = next(c for c in out if c["key"] == "moved")
    assert moved["abs_diff"] == pytest.approx(0.0015)


def test_flatten_paths(check):
    flat = dict(check._flatten({"a": [{"m": 1.5}, {"m": 2}], "flag": True, "s": "x"}))
    assert flat == {"a|0|m": 1.5, "a|1|m": 2}


def test_inventory_reruns_name_existing_results(check):
    reruns = {k: v for k, v in check.INVENTORY.items() if "rerun" in v}
    assert {"clustering-handwritten", "mvc-suite", "multitask-study-default"} <= set(reruns)
    for item in check.INVENTORY.values():
        for field in ("doc", "results", "script", "deterministic", "cost"):
            assert item[field], field
    for name in ("clustering.json", "mvc_suite.json", "multitask_study_default.jsonl"):
        assert (ROOT / "benchmarks" / "results" / name).exists()


def test_compare_tree_skips_timings_and_matches_paths(check):
    recorded = {"m": {"acc": [0.5, 0.75], "fit_s": 1.0, "time": [3.0]}, "n": 2}
    rerun = {"m": {"acc": [0.5, 0.7], "fit_s": 9.0, "time": [4.0]}, "n": 2}
    out = check._compare_tree(recorded, rerun, side="recorded")
    status = {c["key"]: c["status"] for c in out}
    assert status == {"m|acc|0": "equal", "m|acc|1": "different", "n": "equal"}
    # side="recorded": a value the rerun lacks is a difference; side="rerun": a slice
    out = check._compare_tree({"a": [1, 2, 3]}, {"a": [1, 2]}, side="recorded")
    assert [c["status"] for c in out] == ["equal", "equal", "different"]
    out = check._compare_tree({"a": [1, 2, 3]}, {"a": [1, 2], "new": 5}, side="rerun")
    assert [c["status"] for c in out] == ["equal", "equal"]
    out = check._compare_tree({"fit_s_subset": 1.0, "rmse": 0.5}, {"fit_s_subset": 2, "rmse": 0.5})
    assert [c["key"] for c in out] == ["rmse"]
    out = check._compare_tree(
        {"x": {"s": 1.0, "e": 2.0}}, {"x": {"s": 5.0, "e": 2.0}}, skip=check.TIMING_KEYS | {"s"}
    )
    assert [c["key"] for c in out] == ["x|e"]


def test_compare_records_keys(check):
    out = check._compare_records({"a": 1.0, "b": None}, {"a": 1.0, "b": None}, ("a", "b"), "p", [])
    assert [(c["key"], c["status"]) for c in out] == [("p|a", "equal"), ("p|b", "equal")]
