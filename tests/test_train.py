"""`hetlab train`: labelling, training, the exported model and its three evaluators (C, Rust,
Python), on small synthetic sweeps that follow docs/dataset.md."""

import json
import random
import re
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import processes
from hetlab import model_export, train
from hetlab.api import HetlabError
from tree_oracle import predict, rust_predict

BIG_KHZ = [200000, 800000, 1400000, 2000000]
LITTLE_KHZ = [200000, 800000, 1400000]
SLOW_BELOW_KHZ = 1000000  # the idle cluster below this slows a large random chase
HARNESS = Path(__file__).parent / "c_harness"


# --- synthetic sweeps --------------------------------------------------------------------------


def _rows(active, pattern, size, big_khz, little_khz, run_times, counters, run_id0, periods=2):
    """Rows of one configuration: one run per run time, `periods` rows per run; `counters(rep,
    period)` returns the per-period counter dict."""
    idle = "big" if active == "little" else "little"
    config_id = f"{active}-{pattern}-{size}-{big_khz}-{little_khz}"
    rows = []
    for rep, t in enumerate(run_times):
        for k in range(periods):
            rows.append(
                {
                    "backend": "sim",
                    "platform": "exynos5422",
                    "platform_sha256": "ab" * 32,
                    "run_id": run_id0 + rep,
                    "config_id": config_id,
                    "active_cluster": active,
                    "idle_cluster": idle,
                    "big_khz": big_khz,
                    "little_khz": little_khz,
                    "pattern": pattern,
                    "size_elements": size,
                    "iterations": 100000,
                    "rep": rep,
                    "seed": 1000 + rep,
                    "run_time_s": float(t),
                    "period_index": k,
                    "t_end_s": (k + 1) * 0.05,
                    "period_s": 0.05,
                    "cci_cycles": 20_000_000,
                    **counters(rep, k),
                }
            )
    return rows


def _quiet_counters(rep, period):
    return {
        "si_rrq_hs_any_little": 1000,
        "si_rrq_stall_tt_full_little": 10,
        "si_rrq_hs_any_big": 1000,
        "si_rrq_stall_tt_full_big": 10,
        "cpu_cycles": 10_000_000,
        "inst_retired": 5_000_000,
        "bus_access": 10_000,
        "l2d_cache_refill": 1000,
    }


def _frame(rows):
    df = pd.DataFrame(rows)
    df["cci_congestion_little"] = df.si_rrq_stall_tt_full_little / df.si_rrq_hs_any_little.where(
        df.si_rrq_hs_any_little > 0
    )
    df["cci_congestion_big"] = df.si_rrq_stall_tt_full_big / df.si_rrq_hs_any_big.where(df.si_rrq_hs_any_big > 0)
    df["memory_access"] = df.bus_access / df.cpu_cycles
    return df.fillna({"cci_congestion_little": 0.0, "cci_congestion_big": 0.0})


def synthetic_sweep(seed=7, reps=3, periods=4, slowdown=True):
    """2 active clusters x 2 patterns x 2 sizes x 12 frequency pairs. A large chase congests
    the CCI port when the idle cluster runs below 1 GHz, but only the random one (heavy bus
    traffic) is slowed, by 30%: the trees need both features, as in the paper's Figure 4.
    Run-time noise depends only on the rep, so every other configuration has exactly the
    reference's run times (p = 1) and the expected labels are certain; counters are noisy."""
    rng = np.random.default_rng(seed)
    rep_noise = rng.normal(0.0, 0.01, reps)
    rows, run_id = [], 0
    for active in ("little", "big"):
        for pattern in ("random", "sequential"):
            for size in (4096, 1048576):
                for big_khz in BIG_KHZ:
                    for little_khz in LITTLE_KHZ:
                        idle_khz = big_khz if active == "little" else little_khz
                        congested = size == 1048576 and idle_khz < SLOW_BELOW_KHZ
                        heavy = pattern == "random" and size == 1048576
                        slow = slowdown and congested and heavy
                        times = (1.3 if slow else 1.0) + rep_noise

                        def counters(rep, k, congested=congested, heavy=heavy, active=active):
                            reads = int(rng.integers(900_000, 1_100_000))
                            stall = int(
                                reads * rng.uniform(0.25, 0.35) if congested else reads * rng.uniform(0.005, 0.02)
                            )
                            cycles = int(rng.integers(90_000_000, 110_000_000))
                            bus = int(
                                cycles * rng.uniform(0.015, 0.025) if heavy else cycles * rng.uniform(0.0005, 0.002)
                            )
                            idle = "big" if active == "little" else "little"
                            return {
                                f"si_rrq_hs_any_{active}": reads,
                                f"si_rrq_stall_tt_full_{active}": stall,
                                f"si_rrq_hs_any_{idle}": int(rng.integers(0, 50)),
                                f"si_rrq_stall_tt_full_{idle}": int(rng.integers(0, 5)),
                                "cpu_cycles": cycles,
                                "inst_retired": cycles // 3,
                                "bus_access": bus,
                                "l2d_cache_refill": bus // 2,
                            }

                        rows += _rows(active, pattern, size, big_khz, little_khz, times, counters, run_id, periods)
                        run_id += reps
    return _frame(rows)


def write(df, tmp_path, name="sweep.parquet"):
    path = tmp_path / name
    df.to_parquet(path, index=False)
    return path


@pytest.fixture(scope="module")
def sweep_path(tmp_path_factory):
    return write(synthetic_sweep(), tmp_path_factory.mktemp("sweep"))


@pytest.fixture(scope="module")
def trained(sweep_path):
    df = train.load_sweep(sweep_path)
    result = train.train(df)
    return df, result, train.model_json(result, train.sweep_metadata(df))


# --- labelling -------------------------------------------------------------------------------


def _hand_sweep():
    """Two groups with hand-checkable run times (3 runs each)."""
    top = (2000000, 1400000)
    rows, run_id = [], 0
    cases = [
        ("random", top, [1.0, 1.1, 0.9]),  # reference of the random group
        ("random", (200000, 1400000), [2.0, 2.1, 1.9]),  # slower: t = 1 / (0.1 * sqrt(2/3)) = 12.25
        ("random", (800000, 1400000), [1.0, 1.05, 0.95]),  # same mean: t = 0, p = 1
        ("random", (1400000, 1400000), [0.5, 0.6, 0.4]),  # significantly faster
        ("sequential", top, [1.0, 1.0, 1.0]),  # reference without variance
        ("sequential", (200000, 1400000), [1.0, 1.0, 1.0]),  # identical samples: p = 1
        ("sequential", (800000, 1400000), [2.0, 2.0, 2.0]),  # constant but different: p = 0
    ]
    for pattern, (big_khz, little_khz), times in cases:
        rows += _rows("little", pattern, 4096, big_khz, little_khz, times, _quiet_counters, run_id)
        run_id += len(times)
    return _frame(rows)


def test_t_test_labels_by_hand_under_both_rules():
    df = _hand_sweep()
    sig = train.label_configurations(df).set_index("config_id")
    lit = train.label_configurations(df, "paper-literal").set_index("config_id")
    t = 1.0 / (0.1 * np.sqrt(2.0 / 3.0))
    p_slow = 2 * stats.t.sf(t, df=4)
    assert sig.loc["little-random-4096-200000-1400000", "p_value"] == pytest.approx(p_slow)
    assert p_slow < 0.001
    assert sig.loc["little-random-4096-800000-1400000", "p_value"] == pytest.approx(1.0)
    assert sig.loc["little-sequential-4096-200000-1400000", "p_value"] == 1.0
    assert sig.loc["little-sequential-4096-800000-1400000", "p_value"] == 0.0
    expected = {  # config: (significant, paper-literal)
        "little-random-4096-2000000-1400000": ("decrease", "decrease"),  # reference
        "little-random-4096-200000-1400000": ("increase", "decrease"),  # p < 0.05, slower
        "little-random-4096-800000-1400000": ("decrease", "increase"),  # p > 0.05
        "little-random-4096-1400000-1400000": ("decrease", "decrease"),  # p < 0.05 but faster
        "little-sequential-4096-2000000-1400000": ("decrease", "decrease"),
        "little-sequential-4096-200000-1400000": ("decrease", "increase"),
        "little-sequential-4096-800000-1400000": ("increase", "decrease"),
    }
    for cid, (significant, literal) in expected.items():
        assert sig.loc[cid, "label"] == f"{significant}_frequency", cid
        assert lit.loc[cid, "label"] == f"{literal}_frequency", cid
    assert (sig.reference_config_id.str.endswith("-2000000-1400000")).all()
    assert sig.loc["little-random-4096-200000-1400000", "n_runs"] == 3  # runs, not period rows


def test_synthetic_labels_follow_the_slow_region(trained):
    df, result, _ = trained
    labels = result.labels.set_index("config_id")
    assert len(labels) == 96
    for cid, row in labels.iterrows():
        slow = (
            row.pattern == "random"
            and row.size_elements == 1048576
            and (row.big_khz if row.active_cluster == "little" else row.little_khz) < SLOW_BELOW_KHZ
        )
        assert row.label == (train.INCREASE if slow else train.DECREASE), cid
    literal = train.label_configurations(df, "paper-literal").set_index("config_id")
    is_ref = literal.index == literal.reference_config_id
    flipped = np.where(labels.label == train.INCREASE, train.DECREASE, train.INCREASE)
    assert (literal.label[~is_ref] == flipped[~is_ref]).all()
    assert (literal.label[is_ref] == train.DECREASE).all()
    with pytest.raises(HetlabError, match="unknown label rule"):
        train.label_configurations(df, "p-hacked")


# --- training --------------------------------------------------------------------------------


def _leaf_of(tree, vec):
    """Leaf reached by one counter vector with exact integer arithmetic (test-side walker)."""
    nodes, shift, i = tree["nodes"], tree["fixed_point_shift"], 0
    while nodes[i]["feature"] is not None:
        num, den = vec[nodes[i]["feature"]]
        q = (int(num) << shift) // int(den) if den else 0
        i = nodes[i]["left"] if q <= int(np.floor(nodes[i]["threshold"] * 2.0**shift)) else nodes[i]["right"]
    return i


def test_trees_have_the_governor_shape_and_reproduce_the_training_partition(trained):
    df, result, model = trained
    assert [c for c, _ in model["trees"]] == ["big", "little"]
    labels = dict(zip(result.labels.config_id, result.labels.label == train.INCREASE))
    for cluster, tree in model["trees"]:
        assert tree["classes"] == ["decrease_frequency", "increase_frequency"]
        assert tree["features"] == ["cci_congestion", "memory_access"]
        assert tree["fixed_point_shift"] == 24
        nodes = tree["nodes"]
        assert set(nodes[0]) == {"feature", "threshold", "left", "right", "value", "entropy", "samples"}
        assert {n["feature"] for n in nodes} == {None, 0, 1}  # slow = congested and heavy traffic
        assert model_export._depth(nodes) <= 2
        for i, n in enumerate(nodes):
            assert sum(n["value"]) == n["samples"]
            if n["feature"] is not None:
                assert n["left"] > i and n["right"] > i and n["threshold"] >= 0
                assert n["samples"] == nodes[n["left"]]["samples"] + nodes[n["right"]]["samples"]
                # thresholds sit half-way between two points of the 2^-24 grid
                assert (n["threshold"] * 2**25) % 2 == 1
        # the exact evaluator sends every training row to the leaf sklearn counted it in
        rows, counts = train.feature_counts(df, cluster)
        vecs = [[(int(a), int(b)), (int(c), int(d))] for a, b, c, d in zip(*counts[0], *counts[1])]
        leaf_counts = {}
        for vec, cid in zip(vecs, rows.config_id):
            leaf_counts.setdefault(_leaf_of(tree, vec), [0, 0])[int(labels[cid])] += 1
        for leaf, value in leaf_counts.items():
            assert nodes[leaf]["value"] == value
        # the clean synthetic data is learned perfectly (the governor's evaluator and the oracle)
        assert predict(model, cluster, vecs) == [labels[c] for c in rows.config_id]
        assert rust_predict(json.dumps(model), cluster, vecs) == [labels[c] for c in rows.config_id]
        assert nodes[0]["samples"] == len(rows) == 48 * 3 * 4


def test_heldout_split_is_by_configuration(trained):
    df, result, model = trained
    for cluster, tree_result in result.trees.items():
        train_ids, test_ids = set(tree_result.train_config_ids), set(tree_result.test_config_ids)
        assert train_ids and test_ids and not (train_ids & test_ids)
        assert train_ids | test_ids == set(df.config_id[df.idle_cluster == cluster])
        h = model["metrics"][cluster]["heldout"]
        assert h["test_configs"] == len(test_ids) == 12  # 25% of 48 configurations
        assert np.sum(h["confusion_matrix"]["counts"]) == h["test_rows"] == 12 * 3 * 4
        assert h["confusion_matrix"]["labels"] == train.CLASSES
        assert 0.9 <= h["accuracy"] <= 1.0


def test_a_tree_that_only_saw_one_class_is_a_single_leaf_with_both_counts(tmp_path):
    df = synthetic_sweep(slowdown=False, periods=2)
    result = train.train(df)
    model = train.model_json(result, train.sweep_metadata(df))
    for cluster, tree in model["trees"]:
        assert tree["classes"] == train.CLASSES
        assert tree["nodes"] == [
            {
                "feature": None,
                "threshold": 0.0,
                "left": None,
                "right": None,
                "value": [48 * 3 * 2, 0],
                "entropy": 0.0,
                "samples": 48 * 3 * 2,
            }
        ]
        assert predict(model, cluster, [[(5, 1), (1, 1)]]) == [False]
        assert rust_predict(json.dumps(model), cluster, [[(5, 1), (1, 1)]]) == [False]
    header = model_export.c_header(model)
    assert "return 0;" in header and "hetlab_fixed_ratio(cci" not in header


def test_options_are_checked():
    df = _hand_sweep()
    with pytest.raises(HetlabError, match="fixed_point_shift"):
        train.train(df, fixed_point_shift=70)
    with pytest.raises(HetlabError, match="max-depth must be within 1..=64"):
        train.train(df, max_depth=0)


# --- the model files -------------------------------------------------------------------------


def test_model_files_round_trip_and_are_byte_identical(sweep_path, tmp_path):
    a = model_export.write_model(train.train_model(sweep_path), tmp_path / "a")
    b = model_export.write_model(train.train_model(sweep_path), tmp_path / "b")
    for name in ("model.json", "model.h", "model.dot", "model.txt"):
        assert a[name].read_bytes() == b[name].read_bytes(), name
    text = a["model.json"].read_text()
    assert text.endswith("}\n") and text == model_export.model_json_text(json.loads(text))
    model = model_export.read_model(a["model.json"])
    prov = model["provenance"]
    assert prov["sweep"]["platform"] == "exynos5422" and prov["sweep"]["platform_sha256"] == "ab" * 32
    assert prov["sweep"]["freqs_khz"] == {"big": BIG_KHZ, "little": LITTLE_KHZ}
    assert prov["sweep"]["reps_per_config"] == {"min": 3, "max": 3}
    assert prov["sweep"]["runs"] == 96 * 3 and prov["sweep"]["rows"] == 96 * 3 * 4
    assert prov["training"]["label_rule"] == "significant" and prov["training"]["max_depth"] == train.DEFAULT_MAX_DEPTH
    assert set(prov["libraries"]) == {"numpy", "pandas", "scipy", "scikit-learn", "pyarrow", "hetlab"}
    # the Rust governor's loader accepts it (extra top-level keys included)
    assert rust_predict(text, "big", [[(0, 0), (0, 0)]]) == [False]

    dot = a["model.dot"].read_text()
    assert dot.startswith("digraph Tree {") and 'headlabel="True"' in dot
    assert "\\nentropy = " in dot and "\\nsamples = " in dot and "\\nclass = " in dot
    fig = a["model.txt"].read_text()
    assert "cci_congestion <= " in fig and "True:" in fig and "False:" in fig and "value = [" in fig
    shown = model_export.render_text(model)
    assert "stall cycles per read request" in shown and "bus accesses per cycle" in shown
    assert "platform_sha256" in shown and "accuracy" in shown and "scikit-learn" in shown
    assert "stall cycles" not in model_export.render_text(model, units=False).split("provenance")[0]


def test_model_h_refuses_float_models():
    fig4 = {
        "name": "f",
        "trees": [
            [
                "big",
                {
                    "features": train.FEATURES,
                    "classes": train.CLASSES,
                    "nodes": [{"feature": None, "value": [1, 0], "entropy": 0.0, "samples": 1}],
                },
            ]
        ],
    }
    with pytest.raises(HetlabError, match="fixed_point_shift"):
        model_export.c_header(fig4)


def test_read_model_errors(tmp_path):
    with pytest.raises(HetlabError, match="cannot read model file"):
        model_export.read_model(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{")
    with pytest.raises(HetlabError, match="not JSON"):
        model_export.read_model(tmp_path / "bad.json")


# --- C, Rust and Python evaluators agree ---------------------------------------------------


def _node(feature, threshold, left, right, value):
    return {
        "feature": feature,
        "threshold": threshold,
        "left": left,
        "right": right,
        "value": value,
        "entropy": 0.5,
        "samples": sum(value),
    }


def _leaf(value):
    return {
        "feature": None,
        "threshold": 0.0,
        "left": None,
        "right": None,
        "value": value,
        "entropy": 0.5,
        "samples": sum(value),
    }


def _hand_tree(shift):
    """Figure 4a's thresholds (arbitrary decimals, not on the grid), one large threshold and a
    tie leaf (ties go to decrease)."""
    return {
        "features": train.FEATURES,
        "classes": train.CLASSES,
        "fixed_point_shift": shift,
        "nodes": [
            _node(0, 0.01074, 1, 4, [1365, 630]),
            _node(1, 4e-05, 2, 3, [1249, 181]),
            _leaf([174, 2]),
            _node(0, 3.75, 5, 6, [1075, 179]),
            _node(1, 0.00822, 7, 8, [116, 449]),
            _leaf([5, 5]),
            _leaf([1, 170]),
            _leaf([100, 83]),
            _leaf([16, 366]),
        ],
    }


def _thresholds(tree):
    return [
        (n["feature"], train.fixed_threshold(n["threshold"], tree["fixed_point_shift"]))
        for n in tree["nodes"]
        if n["feature"] is not None
    ]


def _pairs_near(q_thr, shift, rnd):
    """(num, den) pairs whose fixed-point ratio is q_thr - 1, q_thr (exactly at the quantised
    threshold) and q_thr + 1 or the nearest reachable values, for dens of every magnitude."""
    out = []
    dens = [1, 3, 1 << shift, (1 << shift) + 1, 10**6 + 3, 2**40 + 7, 2**62 - 1, 2**63 + 5, 2**64 - 1]
    dens += [rnd.getrandbits(rnd.randint(1, 64)) | 1 for _ in range(12)]
    for den in dens:
        for target in (q_thr - 1, q_thr, q_thr + 1, q_thr + 2):
            if target < 0:
                continue
            num = -((-target * den) >> shift)  # ceil(target * den / 2^S): the smallest num reaching target
            for n in (num - 1, num, num + 1):
                if 0 <= n < 2**64:
                    out.append((n, den))
    return out


def _vectors(tree, rnd, n_random=4000):
    shift = tree["fixed_point_shift"]
    special = [0, 1, 2, 2**32 - 1, 2**32, 2**40, 2**62, 2**63 - 1, 2**63, 2**63 + 1, 2**64 - 2, 2**64 - 1]
    pairs = {0: [(a, b) for a in special for b in special], 1: [(a, b) for a in special for b in special]}
    for feature, q_thr in _thresholds(tree):
        pairs[feature] += _pairs_near(q_thr, shift, rnd)

    def rand_pair():
        return rnd.getrandbits(rnd.randint(0, 64)), rnd.getrandbits(rnd.randint(0, 64))

    vecs = []
    for f in (0, 1):  # every edge pair of a feature, with random or edge partners
        for p in pairs[f]:
            other = rnd.choice(pairs[1 - f]) if rnd.random() < 0.5 else rand_pair()
            vecs.append([p, other] if f == 0 else [other, p])
    vecs += [[rand_pair(), rand_pair()] for _ in range(n_random)]
    # near-threshold pairs on both features at once
    vecs += [[rnd.choice(pairs[0]), rnd.choice(pairs[1])] for _ in range(2000)]
    return vecs


def _run_c(header_dir, function, vecs, tmp_path):
    exe = tmp_path / f"harness_{function}"
    processes.run(
        [
            _cc(),
            "-std=c99",
            "-Wall",
            "-Werror",
            "-O2",
            f"-I{header_dir}",
            f"-DHETLAB_TREE_FN={function}",
            str(HARNESS / "harness.c"),
            "-o",
            str(exe),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    stdin = "".join(f"{a} {b} {c} {d}\n" for (a, b), (c, d) in vecs)
    out = processes.run([str(exe)], input=stdin, check=True, capture_output=True, text=True).stdout.split()
    return [x == "1" for x in out]


def _cc():
    cc = shutil.which("cc")
    if cc is None:
        pytest.fail("no system C compiler `cc`: install gcc or clang")
    return cc


def _models(trained):
    _, _, model = trained
    hand = {"name": "hand", "trees": [["big", _hand_tree(24)], ["little", _hand_tree(32)], ["s0", _hand_tree(0)]]}
    return [model, hand]


def test_c_rust_and_python_evaluators_agree_on_every_vector(trained, tmp_path):
    rnd = random.Random(20200616)
    total = 0
    for k, model in enumerate(_models(trained)):
        out = tmp_path / f"m{k}"
        model_export.write_model(model, out)
        text = (out / "model.json").read_text()
        for cluster, tree in model["trees"]:
            vecs = _vectors(tree, rnd)
            py = predict(model, cluster, vecs)
            c = _run_c(out, f"hetlab_{cluster}_increase", vecs, tmp_path)
            rust = rust_predict(text, cluster, vecs)
            assert len(c) == len(py) == len(rust) == len(vecs)
            bad_c = [v for v, a, b in zip(vecs, py, c) if a != b]
            bad_rust = [v for v, a, b in zip(vecs, py, rust) if a != b]
            assert not bad_c, f"C differs on {len(bad_c)} vectors of {cluster}, e.g. {bad_c[:3]}"
            assert not bad_rust, f"Rust differs on {len(bad_rust)} vectors of {cluster}, e.g. {bad_rust[:3]}"
            assert 0 < sum(py) < len(py)  # both answers occur
            total += len(vecs)
    assert total >= 10_000


def test_threshold_edges_by_hand():
    """q exactly at the quantised threshold goes left, one more goes right; den = 0 reads as 0;
    the ratio of huge counts is exact."""
    model = {"name": "hand", "trees": [["big", _hand_tree(24)]]}
    den = 1 << 24
    q = train.fixed_threshold(0.01074, 24)
    assert q == 180187
    big_mem = (1, 1)  # memory_access = 1: right of node 4 -> increase
    text = json.dumps(model)
    for evaluate in (predict, lambda m, c, v: rust_predict(text, c, v)):
        assert evaluate(model, "big", [[(q, den), big_mem], [(q + 1, den), big_mem]]) == [False, True]
        assert evaluate(model, "big", [[(5, 0), big_mem], [(2**64 - 1, 2**64 - 1), big_mem]]) == [False, True]
    # 2^64 - 1 stall cycles over 2^63 reads: q = 2^25 - 1 (just under 2.0), exact, not saturated
    assert (((2**64 - 1) << 24) // 2**63) == 2**25 - 1


def test_header_builds_freestanding_without_helper_calls(tmp_path):
    model = {"name": "hand", "trees": [["big", _hand_tree(24)], ["little", _hand_tree(32)]]}
    model_export.write_model(model, tmp_path)
    header = (tmp_path / "model.h").read_text()
    code = re.sub(r"/\*.*?\*/|#include.*", "", header, flags=re.S)  # comments may say "floating point"
    assert "float" not in code and "double" not in code and "__int128" not in code
    assert "/" not in code and "%" not in code  # no division: shift-and-subtract only
    assert "#include <stdint.h>" in header and "#ifndef HETLAB_MODEL_H" in header
    for cluster in ("big", "little"):
        flags = [
            "-std=c99",
            "-pedantic",
            "-ffreestanding",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-O2",
            "-c",
            f"-I{tmp_path}",
            f"-DHETLAB_TREE_FN=hetlab_{cluster}_increase",
            str(HARNESS / "freestanding.c"),
        ]
        obj = tmp_path / f"{cluster}.o"
        # 32-bit where the compiler can: 64-bit division there would need a libgcc helper
        built = processes.run([_cc(), "-m32", *flags, "-o", str(obj)], capture_output=True, text=True)
        if built.returncode != 0:
            processes.run([_cc(), *flags, "-o", str(obj)], check=True, capture_output=True, text=True)
        nm = shutil.which("nm")
        if nm:
            undefined = processes.run([nm, "-u", str(obj)], check=True, capture_output=True, text=True).stdout
            assert undefined.strip() == "", undefined


# --- bad input ---------------------------------------------------------------------------------


def _one_line_error(path, match):
    with pytest.raises(HetlabError, match=match) as e:
        train.load_sweep(path)
    msg = str(e.value)
    assert "\n" not in msg and str(path) in msg
    return msg


def test_bad_sweeps_are_hetlab_errors(tmp_path):
    good = _hand_sweep()
    _one_line_error(tmp_path / "missing.parquet", "no such file")
    _one_line_error(write(good.iloc[:0], tmp_path, "empty.parquet"), "no rows")
    msg = _one_line_error(
        write(good.drop(columns=["run_time_s", "bus_access"]), tmp_path, "cols.parquet"),
        "missing columns run_time_s, bus_access",
    )
    assert "hetlab characterize" in msg
    _one_line_error(write(good.drop(columns=["si_rrq_hs_any_big"]), tmp_path, "port.parquet"), "si_rrq_hs_any_big")
    (tmp_path / "text.parquet").write_text("backend,platform\nsim,exynos5422\n")
    _one_line_error(tmp_path / "text.parquet", "not a readable Parquet file")
    (tmp_path / "zero.parquet").write_bytes(b"")
    _one_line_error(tmp_path / "zero.parquet", "not a readable Parquet file")
    no_ref = good[~good.config_id.str.startswith("little-sequential-4096-2000000")]
    _one_line_error(write(no_ref, tmp_path, "noref.parquet"), "no reference configuration .* little/sequential/4096")
    one_rep = good[good.rep == 0]
    _one_line_error(write(one_rep, tmp_path, "onerep.parquet"), "fewer than 2 runs.*--reps")
    negative = good.assign(bus_access=-good.bus_access)
    _one_line_error(write(negative, tmp_path, "neg.parquet"), "non-negative integer counts")
    two_platforms = good.assign(platform=np.where(good.rep == 0, "exynos5422", "juno"))
    _one_line_error(write(two_platforms, tmp_path, "mixed.parquet"), "mixes platform")
