# hetlab developer entry points. Each target does its own set-up on a fresh machine
# (Rust, Python 3.11 and a C compiler are assumed; Python packages are pinned in constraints.txt).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip

.PHONY: run test lint bench setup clean

# The main job on the simulated Exynos 5422: (1) the snoop effect — ccbench random 4 MB on the
# LITTLE cluster under ondemand, then with the idle big cluster held at 200 MHz and at 2 GHz;
# (2) the seed paper's method — characterize, train, and run the anti-snoop governor with the
# trained model. Each run's JSON summary goes to results/; the last step says what they show.
CHASE := ccbench:size=1048576,pattern=random,iterations=10000000
SIM   := $(VENV)/bin/hetlab simulate --workload $(CHASE) --cluster little --json
run: setup
	mkdir -p results
	$(SIM) --governor ondemand > results/ondemand.json
	$(SIM) --freq little=1400000,big=200000 > results/big-200MHz.json
	$(SIM) --freq little=1400000,big=2000000 > results/big-2GHz.json
	$(VENV)/bin/hetlab characterize --platform exynos5422 --backend sim --out results/sweep.parquet
	$(VENV)/bin/hetlab train results/sweep.parquet --out results/model > results/train.txt
	$(SIM) --governor anti-snoop --model results/model/model.json \
		--trace results/anti-snoop.trace --series results/anti-snoop.csv > results/anti-snoop.json
	$(PY) scripts/run_findings.py results

# Cargo builds pyo3 for the interpreter maturin built the extension for. maturin sets these two, and
# pyo3's build script reruns whenever either differs, so every cargo command here sets them as
# maturin does. (maturin builds the extension in the `dist` profile, with link-time optimisation;
# lint and test use `release`, whose build the first of them makes on a fresh clone.)
# Both are expanded when a recipe runs, after `setup` has made the venv.
PYO3_SIGNATURE = $(shell $(PY) -c 'import sys; v = sys.version_info; print(f"{sys.implementation.name}-{v[0]}.{v[1]}-{64 if sys.maxsize > 2**32 else 32}bit")')
CARGO = PYO3_PYTHON=$(CURDIR)/$(VENV)/bin/python3 PYO3_ENVIRONMENT_SIGNATURE=$(PYO3_SIGNATURE) cargo

# Every test: formatters and linters, Rust unit tests, then the Python suite (CLI, API, traces
# through LISA) on one worker per CPU, each test file whole on one worker (its module fixtures
# computed once).
test: setup lint
	$(CARGO) test --workspace --release
	$(PY) -m pytest -q -n logical --dist loadfile

# rustfmt.toml and pyproject.toml [tool.ruff] hold the settings; nothing is rewritten here.
lint: setup
	cargo fmt --all --check
	$(CARGO) clippy --workspace --all-targets --release -- -D warnings
	$(VENV)/bin/ruff format --check python tests benches scripts
	$(VENV)/bin/ruff check python tests benches scripts

bench: setup
	cargo bench -p hetlab-core --bench engine_speed
	cargo bench -p hetlab-core --bench event_floor
	cargo bench -p hetlab-linux --bench governor_sample
	$(PY) benches/bench_simulate.py
	$(PY) benches/bench_process.py
	$(PY) benches/bench_training.py
	$(PY) benches/bench_reproduce.py

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt Cargo.toml Cargo.lock $(shell find crates python data -type f 2>/dev/null)
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q -c constraints.txt maturin numpy pandas tqdm pyarrow scipy scikit-learn matplotlib markdown pytest pytest-xdist hypothesis ruff distributed perfetto html5lib
	PATH="$(CURDIR)/$(VENV)/bin:$$PATH" $(PIP) install -q -c constraints.txt --no-build-isolation .
	touch $@

clean:
	rm -rf $(VENV) target
