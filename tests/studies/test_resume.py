"""The results file: incremental, resumable, guarded against another study."""

import json
import time

import pytest

from mvlearn_ext.studies import ReplicationError, Study, load_results
from mvlearn_ext.studies._toy import location_estimators, logged_flaky


class CountingFlaky:
    """Counts calls per (setting, draw); raises once on one chosen call."""

    def __init__(self, fail_at=None, saved_first=None):
        self.calls = []
        self.fail_at = fail_at  # the setting "a" whose first call fails, or None
        self.saved_first = saved_first  # wait until this file holds a replication

    def __call__(self, setting, rng):
        x = float(rng.normal())
        self.calls.append((setting["a"], x))
        if self.fail_at is not None and setting["a"] == self.fail_at:
            self.fail_at = None
            deadline = time.monotonic() + 10
            while self.saved_first is not None and time.monotonic() < deadline:
                if len(self.saved_first.read_text().splitlines()) > 1:
                    break
                time.sleep(0.01)
            raise RuntimeError("interrupted")
        return [{"m": "p", "x": x}, {"m": "q", "x": 2 * x}]


SETTINGS = [{"a": 1}, {"a": 2}, {"a": 3}]


def _lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_file_is_written_incrementally(tmp_path):
    path = tmp_path / "r.jsonl"
    seen = []

    def rep(setting, rng):
        # When replication k runs, the k previous ones are already on disk.
        seen.append(len(path.read_text().splitlines()) - 1)
        return {"x": float(rng.normal())}

    frame = Study(rep, [{"a": 1}], n_replications=4, path=path).run(progress=False)
    assert seen == [0, 1, 2, 3]
    header, *entries = _lines(path)
    assert header["n_replications"] == 4 and header["settings"] == [{"a": 1}]
    assert [e["replication"] for e in entries] == [0, 1, 2, 3]
    assert [e["records"][0]["x"] for e in entries] == frame["x"].tolist()
    assert path.read_bytes().endswith(b"\n")


@pytest.mark.parametrize("backend", ["sequential", "threading"])
def test_interrupted_study_resumes_without_recomputing(tmp_path, backend):
    reference = Study(CountingFlaky(), SETTINGS, n_replications=4, root_seed=2).run(progress=False)
    path = tmp_path / "r.jsonl"
    # Fail on setting a=2's first call, once another replication is on disk
    # (sequential: replication 0 of a=1 comes first; threads: the other
    # thread's replications are written while this one waits).
    flaky = CountingFlaky(fail_at=2, saved_first=path)
    study = Study(flaky, SETTINGS, n_replications=4, root_seed=2, path=path)
    with pytest.raises(ReplicationError, match="interrupted"):
        study.run(backend=backend, n_jobs=2, progress=False)
    saved = {e["records"][0]["x"] for e in _lines(path)[1:]}
    assert 0 < len(saved) < 12
    flaky.calls.clear()

    frame = study.run(backend=backend, n_jobs=2, progress=False)
    assert frame.equals(reference)
    # Nothing finished was recomputed: the second run made exactly the missing calls.
    second = {x for _, x in flaky.calls}
    assert len(flaky.calls) == 12 - len(saved)
    assert not second & saved
    assert second | saved == set(reference.x[reference.m == "p"])
    assert len(_lines(path)) == 1 + 12

    # A third run computes nothing and loads everything.
    flaky.calls.clear()
    assert study.run(progress=False).equals(reference)
    assert flaky.calls == []
    assert load_results(path).equals(reference)


def test_interrupted_loky_study_resumes(tmp_path):
    log, flag = tmp_path / "calls.log", tmp_path / "fail.flag"
    flag.touch()
    common = {"sigma": 1.0, "log": str(log), "fail_flag": str(flag)}
    settings = [{**common, "n": 5}, {**common, "n": 7, "fail_now": True}, {**common, "n": 9}]
    path = tmp_path / "r.jsonl"
    study = Study(logged_flaky, settings, n_replications=3, root_seed=0, path=path)
    with pytest.raises(ReplicationError, match="injected failure"):
        study.run(backend="loky", n_jobs=2, progress=False)
    n_saved = len(_lines(path)) - 1
    n_first = len(log.read_text().splitlines())
    frame = study.run(backend="loky", n_jobs=2, progress=False)
    assert len(log.read_text().splitlines()) - n_first == 9 - n_saved
    reference = Study(location_estimators, settings, n_replications=3, root_seed=0).run(
        progress=False
    )
    assert frame.equals(reference)


def test_truncated_last_line_is_dropped_and_repaired(tmp_path):
    path = tmp_path / "r.jsonl"
    counter = CountingFlaky()
    study = Study(counter, SETTINGS, n_replications=2, path=path)
    reference = study.run(progress=False)
    text = path.read_text()
    path.write_text(text[: len(text) - 10])  # a write cut short by a crash
    counter.calls.clear()
    assert study.run(progress=False).equals(reference)
    assert len(counter.calls) == 1
    assert [len(line) > 0 for line in path.read_text().split("\n")][-1] is False
    assert len(_lines(path)) == 1 + 6


def test_other_study_on_same_file_is_refused(tmp_path):
    path = tmp_path / "r.jsonl"
    Study(CountingFlaky(), SETTINGS, n_replications=2, root_seed=0, path=path).run(progress=False)
    for kwargs, what in [
        ({"settings": SETTINGS, "n_replications": 2, "root_seed": 1}, "root_seed 0 != 1"),
        ({"settings": SETTINGS, "n_replications": 3, "root_seed": 0}, "n_replications 2 != 3"),
        ({"settings": SETTINGS[:2], "n_replications": 2, "root_seed": 0}, "settings differ"),
    ]:
        with pytest.raises(ValueError, match=f"different study: {what}"):
            Study(CountingFlaky(), path=path, **kwargs).run(progress=False)
    with pytest.raises(ValueError, match="extend=True"):
        Study(CountingFlaky(), SETTINGS, n_replications=3, path=path).run(progress=False)
    with pytest.raises(ValueError, match="root_seed"):  # extend cannot change the seeds
        Study(CountingFlaky(), SETTINGS, n_replications=2, root_seed=1, path=path).run(
            progress=False, extend=True
        )
    # Reordering settings is the same study (seeds follow content, not position).
    counter = CountingFlaky()
    frame = Study(counter, SETTINGS[::-1], n_replications=2, path=path).run(progress=False)
    assert counter.calls == [] and frame.a.tolist() == [3, 3, 3, 3, 2, 2, 2, 2, 1, 1, 1, 1]


def test_extend_runs_only_new_pairs(tmp_path):
    path = tmp_path / "r.jsonl"
    Study(CountingFlaky(), SETTINGS[:2], n_replications=2, path=path).run(progress=False)
    counter = CountingFlaky()
    bigger = Study(counter, SETTINGS, n_replications=3, path=path)
    frame = bigger.run(progress=False, extend=True)
    assert len(counter.calls) == 3 * 3 - 2 * 2
    assert frame.equals(Study(CountingFlaky(), SETTINGS, n_replications=3).run(progress=False))
    assert _lines(path)[0]["settings"] == SETTINGS and _lines(path)[0]["n_replications"] == 3
    counter.calls.clear()
    assert bigger.run(progress=False).equals(frame) and counter.calls == []


def test_overwrite_starts_again(tmp_path):
    path = tmp_path / "r.jsonl"
    Study(CountingFlaky(), SETTINGS, n_replications=2, root_seed=0, path=path).run(progress=False)
    counter = CountingFlaky()
    Study(counter, SETTINGS, n_replications=1, root_seed=5, path=path).run(
        progress=False, overwrite=True
    )
    assert len(counter.calls) == 3 and len(_lines(path)) == 1 + 3


def test_bad_files(tmp_path):
    study = Study(CountingFlaky(), SETTINGS, n_replications=1, path=tmp_path / "r.jsonl")
    study.path.write_text('{"some": "other json"}\n')
    with pytest.raises(ValueError, match="not a studies results file"):
        study.run(progress=False)
    study.path.write_text("not json at all\n")
    with pytest.raises(ValueError, match="not a studies results file"):
        study.run(progress=False)
    study.path.write_text("")  # an empty file is a new study
    study.run(progress=False)
    lines = study.path.read_text().splitlines()
    lines.insert(2, "garbage")
    study.path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match="line 3, is not a replication record"):
        study.run(progress=False)
    with pytest.raises(ValueError, match="no results"):
        load_results(tmp_path / "missing.jsonl")
    with pytest.raises(ValueError, match="output"):
        load_results(study.path, output="json")
