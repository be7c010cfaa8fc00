"""`hetlab export-model`: the model as the kernel module (kmod/) reads it. The compiled-in
lctes2020-fig4 is what the command writes; an exported blob, walked by the module's own C core
(built here as core_replay), splits as hetlab's evaluator does; what the module cannot take is one
error line. (The sample-by-sample conformance of the C core, hetlabd and the simulator is
crates/hetlab-linux/tests/kmod_conformance.rs; the kernel build and boot, scripts/kmod-ci.sh.)"""

import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

import processes
from helpers import hetlab_cli
from hetlab import _core

KMOD = Path(__file__).parent.parent / "kmod"
SHIPPED = KMOD / "models" / "exynos5422-significant-depth3.json"


def test_the_compiled_in_model_is_what_export_model_writes(tmp_path):
    out = tmp_path / "fig4.h"
    r = hetlab_cli("export-model", "lctes2020-fig4", "--kernel-c", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert out.read_text() == (KMOD / "anti_snoop_fig4.h").read_text(), (
        "kmod/anti_snoop_fig4.h is stale: hetlab export-model lctes2020-fig4 --kernel-c --out kmod/anti_snoop_fig4.h"
    )


@pytest.fixture(scope="module")
def core_replay(tmp_path_factory):
    cc = shutil.which("cc") or shutil.which("gcc")
    assert cc, "a C compiler builds the module's core"
    exe = tmp_path_factory.mktemp("kmod") / "core_replay"
    sources = [KMOD / "test" / "core_replay.c", KMOD / "anti_snoop_core.c", KMOD / "anti_snoop_feed.c"]
    flags = ["-std=c99", "-O2", "-Wall", "-Wextra", "-Wshadow", "-Wconversion", "-Werror"]
    processes.run([cc, *flags, "-I", str(KMOD), *map(str, sources), "-o", str(exe)], check=True)
    return exe


@pytest.mark.parametrize("model", ["shipped", "lctes2020-fig4"])
def test_an_exported_blob_splits_in_c_as_hetlab_does(tmp_path, core_replay, model):
    source = str(SHIPPED) if model == "shipped" else model
    blob = tmp_path / "model.bin"
    r = hetlab_cli("export-model", source, "--kernel", "--out", str(blob))
    assert r.returncode == 0, r.stderr
    assert blob.read_bytes()[:4] == b"HLAS" and "put it under /lib/firmware" in r.stdout
    text = SHIPPED.read_text() if model == "shipped" else _core.builtin_model_json(model)
    rng = random.Random(7)
    for cluster, tree in json.loads(text)["trees"]:
        thresholds = [n["threshold"] for n in tree["nodes"] if n.get("feature") is not None]
        num, den = [[], []], [[], []]
        for _ in range(3000):
            for f in range(2):
                d = rng.choice([0, rng.randrange(1, 10**7), rng.getrandbits(64)])
                n = int(rng.choice(thresholds) * d) + rng.choice([-1, 0, 1])
                num[f].append(min(max(n, 0), 2**64 - 1))
                den[f].append(d)
        lines = "".join(f"{num[0][i]} {den[0][i]} {num[1][i]} {den[1][i]}\n" for i in range(len(den[0])))
        out = processes.run(
            [str(core_replay), str(blob), "--tree", cluster], input=lines, capture_output=True, text=True, check=True
        )
        got = np.array([line == "1" for line in out.stdout.split()])
        arrays = [np.array(a, dtype=np.uint64) for a in (num[0], num[1], den[0], den[1])]
        want = _core.tree_predict(text, cluster, arrays[:2], arrays[2:])
        assert (got == want).all(), f"{cluster}: {(got != want).sum()} of {len(got)} differ"


def test_what_the_module_cannot_take_is_one_error_line(tmp_path):
    model = json.loads(SHIPPED.read_text())
    tree = model["trees"][0][1]
    leaf = next(n for n in tree["nodes"] if n.get("feature") is None)
    # a full tree of depth 8 (511 nodes): valid for hetlab, more nodes than the module keeps (255)
    splits = [dict(leaf, feature=0, threshold=0.5, left=2 * i + 1, right=2 * i + 2) for i in range(255)]
    tree["nodes"] = splits + [dict(leaf) for _ in range(256)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(model))
    r = hetlab_cli("export-model", str(path), "--kernel", "--out", str(tmp_path / "x.bin"))
    assert r.returncode != 0 and not (tmp_path / "x.bin").exists()
    assert r.stderr.count("\n") == 1 and r.stderr.startswith("hetlab: error: ")
    assert "at most 255" in r.stderr, r.stderr
    r = hetlab_cli("export-model", str(SHIPPED), "--kernel", "--out", str(tmp_path / "no" / "such" / "x.bin"))
    assert r.returncode != 0 and r.stderr.startswith("hetlab: error: ") and r.stderr.count("\n") == 1, r.stderr
