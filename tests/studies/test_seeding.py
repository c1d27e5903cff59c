"""The seeding scheme: SeedSequence children keyed by (setting content, replication)."""

import json

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mvlearn_ext.studies import Study, setting_key
from mvlearn_ext.studies._seeding import canonical_json, jsonable, replication_seed


def _draws(setting, rng):
    return {"u": float(rng.random()), "k": int(rng.integers(2**62))}


def test_seed_is_the_spawn_tree_child():
    # SeedSequence(root, spawn_key=(k, r)) is SeedSequence(root).spawn(k+1)[k].spawn(r+1)[r].
    for k, r in [(0, 0), (3, 2), (7, 0)]:
        via_spawn = np.random.SeedSequence(11).spawn(k + 1)[k].spawn(r + 1)[r]
        direct = replication_seed(11, k, r)
        assert direct.spawn_key == via_spawn.spawn_key == (k, r)
        np.testing.assert_array_equal(direct.generate_state(8), via_spawn.generate_state(8))


def test_generator_is_pcg64_of_the_documented_seed():
    study = Study(_draws, [{"a": 1}, {"a": 2}], n_replications=3, root_seed=5)
    frame = study.run(progress=False)
    for s, setting in enumerate(study.settings):
        key = setting_key(setting)
        assert study.setting_keys[s] == key
        for r in range(3):
            rng = np.random.Generator(
                np.random.PCG64(np.random.SeedSequence(5, spawn_key=(key, r)))
            )
            expected = _draws(setting, rng)
            row = frame[(frame.setting_id == s) & (frame.replication == r)].iloc[0]
            assert row["u"] == expected["u"] and row["k"] == expected["k"]
            # Study.rng reproduces the generator of one replication by hand.
            assert _draws(setting, study.rng(s, r)) == expected


def test_adding_and_reordering_settings_keeps_numbers():
    small = Study(_draws, [{"a": 1}, {"a": 2}], n_replications=4, root_seed=0).run(progress=False)
    big = Study(
        _draws, [{"a": 3}, {"a": 2}, {"b": "x"}, {"a": 1}], n_replications=6, root_seed=0
    ).run(progress=False)
    for a in (1, 2):
        old = small[small.a == a].set_index("replication")[["u", "k"]]
        new = big[big.a == a].set_index("replication")[["u", "k"]].loc[old.index]
        assert old.equals(new)


def test_settings_and_replications_get_distinct_streams():
    frame = Study(_draws, [{"a": i} for i in range(5)], n_replications=20, root_seed=0).run(
        progress=False
    )
    assert frame["k"].nunique() == len(frame) == 100


def test_root_seed_changes_numbers_and_sequence_seed_works():
    a = Study(_draws, [{"a": 1}], n_replications=3, root_seed=0).run(progress=False)
    b = Study(_draws, [{"a": 1}], n_replications=3, root_seed=1).run(progress=False)
    c = Study(_draws, [{"a": 1}], n_replications=3, root_seed=(1, 2)).run(progress=False)
    assert not np.isin(a["u"], b["u"]).any() and not np.isin(c["u"], b["u"]).any()


def test_key_is_content_based():
    assert setting_key({"a": 1, "b": [1, 2]}) == setting_key({"b": (1, 2), "a": 1})
    np_setting = jsonable({"a": np.int64(1), "s": np.float64(0.5)}, where="s")
    assert setting_key(np_setting) == setting_key({"a": 1, "s": 0.5})
    assert setting_key({"a": 1}) != setting_key({"a": 1.0})
    assert setting_key({"a": 1}) != setting_key({"a": 1, "label": "x"})
    assert canonical_json({"b": 1, "a": 2}) == '{"a":2,"b":1}'
    assert 0 <= setting_key({"a": 1}) < 2**64


@pytest.mark.parametrize("bad", [-1, 1.5, "0", None, True, [], [1, -2]])
def test_bad_root_seed(bad):
    with pytest.raises((TypeError, ValueError), match="root_seed"):
        Study(_draws, [{"a": 1}], n_replications=1, root_seed=bad)


values = st.one_of(
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=5),
    st.booleans(),
    st.none(),
    st.lists(st.integers(0, 9), max_size=3),
)


@given(st.dictionaries(st.text(min_size=1, max_size=4), values, max_size=4))
def test_key_ignores_key_order_and_survives_json(setting):
    clean = jsonable(setting, where="s")
    reordered = dict(reversed(list(clean.items())))
    assert setting_key(reordered) == setting_key(clean)
    assert setting_key(json.loads(json.dumps(clean))) == setting_key(clean)
