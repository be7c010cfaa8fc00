"""An independent evaluator of trained trees, in exact Python integers, for the tests that check
the Rust evaluator (the governor's) and the exported C against a third implementation. hetlab
itself evaluates trees only in Rust (`hetlab._core.tree_predict`)."""

from collections.abc import Sequence

import numpy as np

from hetlab import _core
from hetlab.train import INCREASE, fixed_threshold


def tree_for(model: dict, cluster: str) -> dict:
    for name, tree in model.get("trees", []):
        if name == cluster:
            return tree
    raise KeyError(f"model {model.get('name', '?')} has no tree for cluster '{cluster}'")


def predict(model: dict, cluster: str, counts: Sequence[Sequence[Sequence[int]]]) -> list[bool]:
    """Evaluates the tree managing `cluster` on counter vectors, True = increase_frequency.

    `counts` holds one vector per sample; a vector holds one (numerator, denominator) pair per
    tree feature. Same semantics as hetlab_core::tree::DecisionTree::predict_counts."""
    tree = tree_for(model, cluster)
    nodes, shift = tree["nodes"], tree.get("fixed_point_shift")
    out = []
    for vec in counts:
        assert len(vec) == len(tree["features"])
        i = 0
        while nodes[i].get("feature") is not None:
            node = nodes[i]
            num, den = (int(v) for v in vec[node["feature"]])
            if shift is None:  # float model (e.g. the paper's Figure 4): ratio of the f64 counts
                left = (float(num) / float(den) if den else 0.0) <= node["threshold"]
            else:
                q = (num << shift) // den if den else 0
                left = q <= fixed_threshold(node["threshold"], shift)
            i = node["left"] if left else node["right"]
        out.append(tree["classes"][int(np.argmax(nodes[i]["value"]))] == INCREASE)
    return out


def rust_predict(model_json: str, cluster: str, counts: Sequence[Sequence[Sequence[int]]]) -> list[bool]:
    """`_core.tree_predict` on the same vectors as `predict` (it takes a numerator and a
    denominator array per feature)."""
    features = len(counts[0]) if counts else 2
    num = [np.array([int(v[f][0]) for v in counts], np.uint64) for f in range(features)]
    den = [np.array([int(v[f][1]) for v in counts], np.uint64) for f in range(features)]
    return _core.tree_predict(model_json, cluster, num, den).tolist()
