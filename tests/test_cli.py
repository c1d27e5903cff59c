"""The command line: help, info, demo, and the demo-section registry."""

import io
import json
import re
import subprocess
import sys

import numpy as np
import pytest

import mvlearn_ext
from mvlearn_ext import _cli
from mvlearn_ext.__main__ import main

BASELINE_ROWS = (
    "k-means, concatenated views",
    "spectral clustering (10-NN graph), concatenated",
    "k-means, best single view",
)


def run(argv):
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err)
    return status, out.getvalue(), err.getvalue()


def test_help(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "info" in text and "demo" in text
    assert main(["demo", "--help"]) == 0
    text = capsys.readouterr().out
    assert "--views" in text and "--seeds" in text and "--quick" in text


def test_no_command_prints_help():
    status, out, _ = run([])
    assert status == 0 and "usage:" in out


def test_version(capsys):
    assert main(["--version"]) == 0
    assert mvlearn_ext.__version__ in capsys.readouterr().out


def test_usage_error_returns_2(capsys):
    assert main(["no-such-command"]) == 2
    assert main(["demo", "--seeds", "0"]) == 2
    assert "expected a positive integer" in capsys.readouterr().err


def test_info_text():
    status, out, _ = run(["info"])
    assert status == 0
    for key in (
        "mvlearn_ext",
        "numpy",
        "scipy",
        "sklearn",
        "numba",
        "compiled_core",
        "cpus_available",
        "numba_threads",
        "numba_cache",
        "numba_parallel",
        "torch",
    ):
        assert re.search(rf"^{key}\s", out, flags=re.M), key
    assert np.__version__ in out


def test_info_json():
    status, out, _ = run(["info", "--json"])
    assert status == 0
    info = json.loads(out)
    assert info["mvlearn_ext"] == mvlearn_ext.__version__
    assert info["numpy"] == np.__version__
    assert isinstance(info["cpus_available"], int) and info["cpus_available"] >= 1
    assert isinstance(info["numba_cache"], bool) and isinstance(info["numba_parallel"], bool)
    assert isinstance(info["compiled_core"], (dict, str))
    if isinstance(info["compiled_core"], dict):
        assert "compiler" in info["compiled_core"]


def test_info_does_not_import_torch():
    code = (
        "import sys\n"
        "from mvlearn_ext.__main__ import main\n"
        "assert main(['info']) == 0\n"
        "assert 'torch' not in sys.modules, 'info imported torch'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)


def test_module_entry_point():
    result = subprocess.run(
        [sys.executable, "-m", "mvlearn_ext", "--help"], capture_output=True, text=True, check=True
    )
    assert "demo" in result.stdout


def parse_rows(out):
    """The table rows of the text output: method -> list of cells."""
    rows = {}
    for line in out.splitlines():
        for method in BASELINE_ROWS:
            if line.startswith(method):
                rows[method] = re.split(r"\s{2,}", line.strip())
    return rows


def test_demo_quick_table():
    status, out, err = run(["demo", "--quick"])
    assert status == 0, err
    assert "Handwritten" in out and "seeds 0, 1" in out
    rows = parse_rows(out)
    assert set(rows) == set(BASELINE_ROWS)
    for method, cells in rows.items():
        # method, ACC, NMI, ARI, purity, fit time
        assert len(cells) == 6, cells
        for cell in cells[1:5]:
            mean, std = (float(v) for v in cell.split(" ± "))
            assert 0.0 <= mean <= 1.0 and std >= 0.0, (method, cell)
    acc_spectral = float(rows[BASELINE_ROWS[1]][1].split(" ± ")[0])
    assert acc_spectral > 0.9  # a sanity floor for the strongest baseline
    assert err == ""  # progress only with --verbose


def test_demo_json_views_and_verbose():
    status, out, err = run(
        ["demo", "--views", "pixel", "3", "--seeds", "1", "--format", "json", "-v"]
    )
    assert status == 2 and "selected twice" in err  # 'pixel' and 3 are the same view

    status, out, err = run(
        ["demo", "--views", "pixel", "0", "--seeds", "1", "--format", "json", "--verbose"]
        + ["--section", "baselines"]
    )
    assert status == 0, err
    payload = json.loads(out)
    assert payload["views"] == ["pix", "fou"] and payload["seeds"] == [0]
    (section,) = payload["sections"]
    assert section["name"] == "baselines" and section["error"] is None
    assert len(section["rows"]) == 3
    for row in section["rows"]:
        for key in ("ACC", "NMI", "NMI_max", "ARI", "purity"):
            (value,) = row["scores"][key]
            assert -0.5 <= value <= 1.0
        assert 0.0 <= row["scores"]["ACC"][0] <= 1.0
        assert len(row["fit_times"]) == 1
    # One progress line per method, on stderr.
    methods = [line for line in err.splitlines() if "ACC" in line]
    assert len(methods) == 3 and all(line.startswith("[demo] ") for line in methods)


def test_demo_clustering_section():
    status, out, err = run(["demo", "--section", "clustering", "--seeds", "1", "--format", "json"])
    assert status == 0, err
    (section,) = json.loads(out)["sections"]
    assert section["name"] == "clustering" and section["error"] is None
    methods = [row["method"] for row in section["rows"]]
    assert methods == ["HAGMVC", "DRMC", "LMVSC", "SMVSC"]
    for row in section["rows"]:
        assert 0.0 <= row["scores"]["ACC"][0] <= 1.0


def test_demo_rejects_bad_views_and_sections():
    status, _, err = run(["demo", "--views", "pixle"])
    assert status == 2 and "unknown view name 'pixle'" in err and "--views" in err
    status, _, err = run(["demo", "--section", "nope"])
    assert status == 2 and "unknown --section 'nope'" in err and "baselines" in err


@pytest.fixture
def custom_sections(monkeypatch):
    def good(ctx):
        _, y, _ = ctx.handwritten()
        return [_cli.evaluate_over_seeds(ctx, "constant", lambda seed: np.zeros_like(y), y)]

    def bad(ctx):
        raise RuntimeError("boom")

    sections = [
        _cli.DemoSection("broken", "a failing section", bad),
        _cli.DemoSection("constant", "one cluster", good),
        _cli.DemoSection("lazy", "resolved by name", "mvlearn_ext._cli:_baselines_section"),
    ]
    monkeypatch.setattr(_cli, "DEMO_SECTIONS", sections)
    return sections


def test_registry_sections_run_in_order_and_failures_are_isolated(custom_sections):
    status, out, err = run(
        ["demo", "--seeds", "1", "--views", "mor", "--section", "broken", "--section", "constant"]
    )
    assert status == 1
    assert "section 'broken' failed: boom" in err
    assert out.index("[broken]") < out.index("[constant]")
    assert "failed: RuntimeError: boom" in out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("constant")]
    assert line.split()[1] == "0.100"  # one cluster: ACC = 200 / 2000


def test_registry_resolves_module_strings(custom_sections):
    status, out, _ = run(["demo", "--seeds", "1", "--views", "mor", "--section", "lazy"])
    assert status == 0
    assert "k-means, best single view (mor)" in out


def test_register_demo_section_checks(monkeypatch):
    monkeypatch.setattr(_cli, "DEMO_SECTIONS", list(_cli.DEMO_SECTIONS))
    with pytest.raises(ValueError, match="already registered"):
        _cli.register_demo_section(_cli.DemoSection("baselines", "again", lambda ctx: []))
    with pytest.raises(TypeError, match="must be a DemoSection"):
        _cli.register_demo_section(lambda ctx: [])
    section = _cli.register_demo_section(_cli.DemoSection("extra", "x", lambda ctx: []))
    assert _cli.DEMO_SECTIONS[-1] is section


def test_markdown_output(custom_sections):
    status, out, _ = run(
        ["demo", "--seeds", "2", "--views", "mor", "--section", "constant", "--format", "markdown"]
    )
    assert status == 0
    assert "| method | ACC | NMI | ARI | purity | fit time (s) |" in out
    assert "| constant | 0.100 ± 0.000 |" in out


def test_threads_option_caps_the_thread_pools(monkeypatch):
    seen = []

    def probe(ctx):
        from threadpoolctl import threadpool_info

        seen.append((ctx.n_threads, [pool["num_threads"] for pool in threadpool_info()]))
        return []

    monkeypatch.setattr(_cli, "DEMO_SECTIONS", [_cli.DemoSection("probe", "probe", probe)])
    assert run(["demo", "--seeds", "1", "--threads", "1"])[0] == 0
    assert run(["demo", "--seeds", "1", "--threads", "-1"])[0] == 0
    assert seen[0][0] == 1 and all(n == 1 for n in seen[0][1])
    assert seen[1][0] is None
    status, _, err = run(["demo", "--threads", "0"])
    assert status == 2 and "positive integer or -1" in err
