#!/usr/bin/env bash
# The tests of signals, child processes, interrupted and resumed runs and the daemon's restore,
# run once more as a busy machine and a careless parent would run them: beside one CPU-bound
# loop per core, with SIGINT ignored by the suite's parent (a background job, nohup, some CI
# runners). Called by .ci/run after the whole suite; the whole suite can be run the same way
# (`trap '' INT`, a hog per core, then `make test`), in about three times its idle time.
#   scripts/test-under-load.sh [PYTEST ARGS]
set -euo pipefail
cd "$(dirname "$0")/.."
hogs=()
for _ in $(seq "$(nproc)"); do
	(while :; do :; done) &
	hogs+=("$!")
done
trap 'kill "${hogs[@]}" 2>/dev/null || true' EXIT
trap '' INT # ignored here, so ignored in pytest: tests/processes.py must restore it for children
.venv/bin/python -m pytest -q -p no:cacheprovider \
	tests/test_processes.py tests/test_hardening.py tests/test_executor.py tests/test_linux_api.py \
	tests/test_linux_cli.py tests/test_profile.py tests/test_characterize.py \
	-k "processes or signal or interrupt or sigint or sigterm or ctrl_c or restores or killed or resume" "$@"
