#!/usr/bin/env bash
# Runs each libFuzzer target of fuzz/ (platform .toml, workload specs and .toml, model.json and
# the tree evaluator) for SECONDS (default 60) from the seed corpus in fuzz/corpus/<target>.
# Needs the nightly toolchain; installs cargo-fuzz from crates.io when it is missing.
# A crash leaves its input in fuzz/artifacts/<target>/ and fails the script.
#   scripts/fuzz.sh            # 60 s per target
#   scripts/fuzz.sh 600        # a longer local run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz@0.13.2
fi
for target in platform_toml workload model_json rtapp_sim; do
    echo "fuzz target $target, $seconds s:"
    work="$(mktemp -d)"  # new inputs go here; the committed corpus only seeds the run
    # rtapp_sim simulates: up to 64 threads for 20 ms of EAS take seconds in the instrumented
    # build (a work-less forever loop is reported after a million steps, about one second)
    timeout=10
    [ "$target" = rtapp_sim ] && timeout=60
    cargo +nightly fuzz run --fuzz-dir fuzz "$target" "$work" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -max_len=16384 -timeout="$timeout" -rss_limit_mb=2560 -print_final_stats=1 2>&1 \
        | grep -E "^(stat::number_of_executed_units|==|SUMMARY|Done)|panicked|crash" || true
    status="${PIPESTATUS[0]}"
    rm -rf "$work"
    if [ "$status" != 0 ]; then
        echo "fuzz target $target failed (exit $status); the input is in fuzz/artifacts/$target/" >&2
        exit 1
    fi
done
