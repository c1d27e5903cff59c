"""The command line: help, info, demo, and the demo-section registry."""

import io
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

import mvlearn_ext
from mvlearn_ext import _cli
from mvlearn_ext.__main__ import main
from mvlearn_ext._demo import registry as demo_registry
from mvlearn_ext._demo import sections as demo_sections
from mvlearn_ext.utils._optional import OPTIONAL_DEPENDENCIES, import_optional

BASELINE_ROWS = (
    "k-means, concatenated views",
    "spectral clustering (10-NN graph), concatenated",
    "k-means, best single view",
)
SKIP_MOO = 'skipped: needs moocore, not installed: pip install "mvlearn_ext[moo]"'


def run(argv, **catalogue):
    out, err = io.StringIO(), io.StringIO()
    status = main(argv, stdout=out, stderr=err, **catalogue)
    return status, out.getvalue(), err.getvalue()


def test_help(capsys):
    assert main(["--help"]) == 0
    text = capsys.readouterr().out
    assert "info" in text and "demo" in text
    assert main(["demo", "--help"]) == 0
    text = capsys.readouterr().out
    for option in ("--views", "--seeds", "--quick", "--all", "--section", "--threads"):
        assert option in text, option
    # Every section is listed, one per line, with what it needs.
    for section in _cli.DEMO_SECTIONS:
        assert re.search(rf"^  {section.name}\s+\S", text, flags=re.M), section.name
    (line,) = [ln for ln in text.splitlines() if ln.startswith("  moo_toolbandit ")]
    assert "needs moocore, extra moo" in line
    assert "default: clustering" in text


def test_help_names_the_missing_extra(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "moocore", None)  # what a missing package looks like
    assert main(["demo", "--help"]) == 0
    (line,) = [ln for ln in capsys.readouterr().out.splitlines() if "moo_toolbandit " in ln]
    assert 'not installed: pip install "mvlearn_ext[moo]"' in line


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
    assert main(["demo", "--all", "--section", "clustering"]) == 2
    assert "not allowed with argument" in capsys.readouterr().err


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
        *OPTIONAL_DEPENDENCIES,
    ):
        assert re.search(rf"^{key}\s", out, flags=re.M), key
    assert np.__version__ in out


def test_info_lists_every_optional_dependency_with_its_extras(monkeypatch):
    monkeypatch.setitem(sys.modules, "moocore", None)
    status, out, _ = run(["info"])
    assert status == 0
    lines = {ln.split()[0]: ln for ln in out.splitlines() if ln.strip()}
    assert re.search(r"not installed\s+\[moo\], \[bench\], \[docs\], \[test\]", lines["moocore"])
    # numba is a dependency, not an optional one; pytest runs this test, so it is installed.
    assert "numba" not in OPTIONAL_DEPENDENCIES
    assert "not installed" not in lines["pytest"] and "[test]" in lines["pytest"]


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
    assert set(info["optional"]) == set(OPTIONAL_DEPENDENCIES)
    assert info["optional"]["moocore"]["extras"] == ["moo", "bench", "docs", "test"]
    assert info["optional"]["pytest"]["version"] == __import__("pytest").__version__


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


def test_default_demo_is_clustering_only_and_imports_no_optional_dependency():
    """The real default section end to end (two small views, one seed), in a fresh process."""
    from mvlearn_ext._demo.cluster import METHODS

    # scikit-learn imports pandas itself when it is installed (sklearn.utils.fixes):
    # what counts is what the demo imports beyond its dependencies.
    code = (
        "import json, sys\n"
        "import numba, scipy.sparse, sklearn.cluster, sklearn.utils.fixes\n"
        "from mvlearn_ext.__main__ import main\n"
        "from mvlearn_ext.utils._optional import OPTIONAL_DEPENDENCIES\n"
        "before = set(sys.modules)\n"
        "status = main(['demo', '--views', 'mor', 'kar', '--seeds', '1', '--format', 'json'])\n"
        "assert status == 0, status\n"
        "loaded = sorted(set(OPTIONAL_DEPENDENCIES) & (set(sys.modules) - before))\n"
        "assert not loaded, f'the default demo imported {loaded}'\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    payload = json.loads(result.stdout)
    (section,) = payload["sections"]
    assert section["name"] == "clustering" and section["error"] is None
    assert [row["method"] for row in section["rows"]] == [name for name, _, _ in METHODS]
    for row in section["rows"]:
        assert 0.0 <= row["scores"]["ACC"][0] <= 1.0 and len(row["fit_times"]) == 1
    # The multi-view methods and the concatenation baselines side by side.
    methods = {row["method"] for row in section["rows"]}
    assert {"HAGMVC", "DRMC", "LMVSC", "SMVSC", "FPMVSCAG", "EOMSCCA"} <= methods
    assert {"concat k-means, z-scored", "concat spectral, balanced"} <= methods


def test_clustering_section_warms_up_before_timing(monkeypatch):
    """Each method is fitted once on a subsample before the timed seeds."""
    from mvlearn_ext._demo import cluster as _demo

    calls = []

    class Recorder:
        def __init__(self, n_clusters, seed):
            self.n_clusters, self.seed = n_clusters, seed

        def fit_predict(self, Xs):
            calls.append((self.seed, Xs[0].shape[0]))
            return np.arange(Xs[0].shape[0]) % self.n_clusters

    monkeypatch.setattr(
        _demo, "METHODS", [("recorder", lambda k, seed, n_threads: Recorder(k, seed), "")]
    )
    status, out, err = run(["demo", "--views", "mor", "zer", "--seeds", "2"])
    assert status == 0, err
    assert calls == [(0, 200), (0, 2000), (1, 2000)]
    (line,) = [ln for ln in out.splitlines() if ln.startswith("recorder")]
    assert "0.100 ± 0.000" in line  # i mod 10 on classes in blocks of 200: ACC 0.1
    assert "untimed warm-up fit" in out


def test_clustering_notes_compare_with_the_best_concatenation_baseline(monkeypatch):
    """Every non-baseline row says by how much it trails or leads the best ``concat`` row."""
    from mvlearn_ext._demo import cluster as _demo

    class Fixed:
        def __init__(self, n_clusters, perfect):
            self.n_clusters, self.perfect = n_clusters, perfect

        def fit_predict(self, Xs):
            n = Xs[0].shape[0]
            if self.perfect:  # Handwritten's classes come in blocks of n / 10
                return np.arange(n) // (n // self.n_clusters)
            return np.arange(n) % self.n_clusters  # ACC 0.1

    monkeypatch.setattr(
        _demo,
        "METHODS",
        [
            ("mv", lambda k, seed, n_threads: Fixed(k, False), "a multi-view method"),
            ("concat good", lambda k, seed, n_threads: Fixed(k, True), "baseline"),
            ("concat bad", lambda k, seed, n_threads: Fixed(k, False), "baseline"),
        ],
    )
    status, out, err = run(["demo", "--views", "mor", "zer", "--seeds", "1"])
    assert status == 0, err
    notes = [ln for ln in out.splitlines() if ln.lstrip().startswith("note:")]
    assert any("mv: a multi-view method; ACC -0.9000, behind the best concatenation" in n
               for n in notes), notes  # fmt: skip
    assert any(n.strip().startswith("note: concat good: baseline; the best concatenation")
               for n in notes), notes  # fmt: skip
    assert not any("concat bad" in n and "ACC -" in n for n in notes), notes


def test_every_column_of_every_section_is_explained():
    for section in _cli.DEMO_SECTIONS:
        explanations = section.explanations()
        assert [c for c, _ in explanations] == [*section.columns, _cli.FIT_TIME]
        for column, text in explanations:
            assert text != "(not explained)" and "\n" not in text, (section.name, column)


def test_legend_is_printed_under_the_table(custom_sections):
    status, out, _ = run(
        ["demo", "--seeds", "1", "--views", "mor", "--section", "constant"],
        sections=custom_sections,
    )
    assert status == 0
    lines = out.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("constant"))
    for k, column in enumerate(("ACC", "NMI", "ARI", "fit time (s)"), start=1):
        assert lines[start + k].startswith(f"  {column}  "), lines[start + k]


def test_demo_one_real_section_by_name():
    status, out, err = run(["demo", "--section", "federated", "--seeds", "2"])
    assert status == 0, err
    assert "[federated]" in out and "[clustering]" not in out
    assert "sections: federated (of " in out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("KME-MTA")]
    assert len(re.split(r"\s{2,}", line.strip())) == 4  # method, 2 columns, fit time
    assert "excess_r0" in out and "two groups 5 apart" in out  # the legend


def test_missing_dependency_skips_the_section_with_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "moocore", None)
    status, out, err = run(["demo", "--section", "moo_toolbandit", "--section", "federated"])
    assert status == 0, err
    lines = [ln for ln in out.splitlines() if "moo" in ln and not ln.startswith("sections:")]
    assert lines == [f"[moo_toolbandit] {SKIP_MOO}"]
    assert "[federated]" in out and err == ""


def test_undeclared_missing_dependency_is_skipped_not_failed(monkeypatch):
    def needs_moocore(ctx):
        import_optional("moocore", feature="a test section")
        raise AssertionError("not reached")

    monkeypatch.setitem(sys.modules, "moocore", None)
    sections = [_cli.DemoSection("undeclared", "x", needs_moocore)]
    catalogue = dict(sections=sections)
    status, out, err = run(["demo", "--section", "undeclared", "--format", "json"], **catalogue)
    assert status == 0, err
    (section,) = json.loads(out)["sections"]
    assert section["skipped"] == SKIP_MOO.removeprefix("skipped: ")
    assert section["error"] is None and section["rows"] == []


def test_sections_declare_known_dependencies(monkeypatch):
    for section in _cli.DEMO_SECTIONS:
        assert set(section.requires) <= set(OPTIONAL_DEPENDENCIES), section.name
    assert {"moocore"} <= {
        module for s in demo_sections._BUILTIN_SECTIONS for module in s.requires
    }
    # A section that names a package outside the table is a programming error.
    sections = [_cli.DemoSection("x", "x", lambda ctx: [], requires=("numpy",))]
    catalogue = dict(sections=sections)
    status, out, err = run(["demo", "--section", "x"], **catalogue)
    assert status == 1 and "'numpy', which is not an optional dependency" in err


def test_cli_module_does_not_import_the_compiled_core():
    """info must be able to report a broken core, so the CLI module imports it only on use."""
    code = (
        "import sys\n"
        "import mvlearn_ext._cli\n"
        "assert 'mvlearn_ext._lib' not in sys.modules, 'the CLI imported the compiled core'\n"
        "assert 'mvlearn_ext.utils' not in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_demo_quick_baselines_table():
    status, out, err = run(["demo", "--quick", "--section", "baselines"])
    assert status == 0, err
    assert "Handwritten" in out and "seeds 0, 1" in out
    rows = {}
    for line in out.splitlines():
        for method in BASELINE_ROWS:
            if line.startswith(method):
                rows[method] = re.split(r"\s{2,}", line.strip())
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
    assert section["skipped"] is None and "purity" in section["legend"]
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
        _cli.DemoSection(
            "lazy", "resolved by name", "mvlearn_ext._demo.sections:_baselines_section"
        ),
    ]
    return sections


def test_registry_sections_run_in_order_and_failures_are_isolated(custom_sections):
    status, out, err = run(
        ["demo", "--seeds", "1", "--views", "mor", "--section", "broken", "--section", "constant"],
        sections=custom_sections,
    )
    assert status == 1
    assert "section 'broken' failed: boom" in err
    assert out.index("[broken]") < out.index("[constant]")
    assert "failed: RuntimeError: boom" in out
    (line,) = [ln for ln in out.splitlines() if ln.startswith("constant")]
    assert line.split()[1] == "0.100"  # one cluster: ACC = 200 / 2000


def test_all_runs_every_section_in_order(custom_sections):
    status, out, _ = run(
        ["demo", "--seeds", "1", "--views", "mor", "--all"], sections=custom_sections
    )
    assert status == 1  # 'broken' fails; the others still run
    positions = [out.index(f"[{s.name}]") for s in custom_sections]
    assert positions == sorted(positions)


def test_registry_resolves_module_strings(custom_sections):
    status, out, _ = run(
        ["demo", "--seeds", "1", "--views", "mor", "--section", "lazy"], sections=custom_sections
    )
    assert status == 0
    assert "k-means, best single view (mor)" in out


def test_register_demo_section_checks():
    n = len(demo_registry.DEMO_SECTIONS)
    try:
        with pytest.raises(ValueError, match="already registered"):
            _cli.register_demo_section(_cli.DemoSection("baselines", "again", lambda ctx: []))
        with pytest.raises(TypeError, match="must be a DemoSection"):
            _cli.register_demo_section(lambda ctx: [])
        section = _cli.register_demo_section(_cli.DemoSection("extra", "x", lambda ctx: []))
        assert demo_registry.DEMO_SECTIONS[-1] is section
    finally:  # the registry is the package's: leave it as it was
        del demo_registry.DEMO_SECTIONS[n:]


def test_markdown_output(custom_sections):
    status, out, _ = run(
        [
            "demo",
            "--seeds",
            "2",
            "--views",
            "mor",
            "--section",
            "constant",
            "--format",
            "markdown",
        ],
        sections=custom_sections,
    )
    assert status == 0
    assert "| method | ACC | NMI | ARI | fit time (s) |" in out
    assert "| constant | 0.100 ± 0.000 |" in out
    assert "- ACC: clustering accuracy" in out


def test_threads_option_caps_the_thread_pools(monkeypatch):
    import numba

    seen = []

    def probe(ctx):
        from threadpoolctl import threadpool_info

        pools = [pool["num_threads"] for pool in threadpool_info()]
        seen.append((ctx.n_threads, pools, numba.get_num_threads()))
        return []

    catalogue = dict(
        sections=[_cli.DemoSection("probe", "probe", probe)], default_sections=("probe",)
    )
    before = numba.get_num_threads()
    cpus = len(os.sched_getaffinity(0))
    for option in ("1", "-1", "-2"):
        assert run(["demo", "--seeds", "1", "--threads", option], **catalogue)[0] == 0
    assert numba.get_num_threads() == before  # restored
    (one, pools, numba_one), (every, _, numba_every), (all_but_one, _, _) = seen
    assert one == 1 and all(n == 1 for n in pools) and numba_one == 1
    assert every == cpus and numba_every == min(cpus, numba.config.NUMBA_NUM_THREADS)
    assert all_but_one == max(1, cpus - 1)  # joblib's convention, as the library's n_threads
    for bad in ("0", "two"):
        status, _, err = run(["demo", "--threads", bad], **catalogue)
        assert status == 2 and "non-zero integer" in err


def test_cimln_section_without_torch_runs_the_baseline_only(monkeypatch):
    from mvlearn_ext._demo import incomplete
    from mvlearn_ext.utils import _optional

    found = _optional.is_available
    monkeypatch.setattr(_optional, "is_available", lambda name: name != "torch" and found(name))
    status, out, err = run(["demo", "--section", "cimln", "--seeds", "1", "--format", "json"])
    assert status == 0, err
    (section,) = json.loads(out)["sections"]
    assert section["error"] is None and section["skipped"] is None
    (row,) = section["rows"]
    assert row["method"] == f"mean imputation + {incomplete.ANCHOR}"
    assert 0.5 < row["scores"]["ACC"][0] <= 1.0
    # The missing rows are said so on a line of their own, naming what to install.
    (line,) = section["not_run"]
    assert line.startswith("CIMLN") and "needs torch" in line and "torch==2.13.0" in line


def test_flag_errors_print_the_demo_usage():
    """A bad flag of ``demo`` is reported with the demo's usage, not the top level's."""
    for argv, message in [
        (["demo", "--foo"], "unrecognized arguments: --foo"),
        (["demo", "--seeds", "0"], "expected a positive integer"),
        (["demo", "--section", "nope"], "unknown --section 'nope'"),
        (["demo", "--views", "pixle"], "unknown view name 'pixle'"),
    ]:
        status, out, err = run(argv)
        assert status == 2, argv
        assert err.startswith("usage: python -m mvlearn_ext demo "), (argv, err)
        assert message in err, (argv, err)
        assert out == ""
    status, _, err = run(["info", "--foo"])
    assert status == 2 and err.startswith("usage: python -m mvlearn_ext info ")


@pytest.mark.parametrize(
    "argv", [["demo", "--thread", "2"], ["demo", "--qu"], ["demo", "--sec", "bandits"]]
)
def test_prefix_abbreviations_of_flags_are_refused(argv):
    status, _, err = run(argv)
    assert status == 2
    assert f"unrecognized arguments: {argv[1]}" in err


def test_each_section_prints_only_its_own_header(monkeypatch):
    """The Handwritten data are described under the sections that use them, and only there."""

    def other(ctx):
        return []

    def digits(ctx):
        _, y, _ = ctx.handwritten()
        return [_cli.evaluate_over_seeds(ctx, "constant", lambda seed: np.zeros_like(y), y)]

    sections = [
        _cli.DemoSection("other", "a section on its own data", other),
        _cli.DemoSection("digits", "a section on Handwritten", digits, handwritten=True),
    ]
    catalogue = dict(sections=sections)
    status, out, _ = run(
        ["demo", "--seeds", "1", "--views", "mor", "kar", "--section", "other"], **catalogue
    )
    assert status == 0
    assert "Handwritten" not in out and "views" not in out
    status, out, _ = run(["demo", "--seeds", "1", "--views", "mor", "kar", "--all"], **catalogue)
    assert status == 0
    other_block = out[out.index("[other]") : out.index("[digits]")]
    digits_block = out[out.index("[digits]") :]
    assert "Handwritten" not in other_block
    (data,) = [ln for ln in digits_block.splitlines() if ln.strip().startswith("data:")]
    # Every view code is explained where it is printed.
    assert "mor = morphological features (6)" in data
    assert "kar = Karhunen" in data and "(64)" in data


def test_a_method_without_its_optional_dependency_is_one_line(monkeypatch):
    def section(ctx):
        ctx.skip_method("the network", "torch")
        return []

    catalogue = dict(sections=[_cli.DemoSection("net", "a network", section)])
    status, out, _ = run(["demo", "--seeds", "1", "--section", "net"], **catalogue)
    assert status == 0
    (line,) = [ln for ln in out.splitlines() if "not run" in ln]
    assert line.strip().startswith("the network not run: needs torch; pip install torch==2.13.0")


def test_row_names_spell_out_their_variants():
    """No abbreviation such as "(z)" or "(bal)" in a row name of the clustering table."""
    from mvlearn_ext._demo.cluster import METHODS

    for name, _, note in METHODS:
        assert not re.search(r"\((?:z|bal)\)", name), name
        assert note, name
