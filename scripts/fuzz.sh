#!/usr/bin/env bash
# Runs each libFuzzer target of fuzz/ (platform .toml, workload specs and .toml, model.json and
# the tree evaluator, rt-app JSON simulated, alone and over the configuration matrix) for SECONDS
# (default 60) from the seed corpus in fuzz/corpus/<target>, as many targets at once as the
# machine has cores (each is one process).
# Needs the nightly toolchain; installs cargo-fuzz from crates.io when it is missing.
# A crash leaves its input in fuzz/artifacts/<target>/ and fails the script.
#   scripts/fuzz.sh            # 60 s per target
#   scripts/fuzz.sh 600        # a longer local run
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
targets=(platform_toml workload model_json rtapp_sim config_sim)
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install --locked cargo-fuzz@0.13.2
fi
# hetlab-core has no unsafe code, so AddressSanitizer would watch only its dependencies' unsafe
# code; without it the build takes less and each target tries more inputs in its time. Panics,
# hangs (-timeout) and memory (-rss_limit_mb) are still libFuzzer's findings.
sanitizer=(--sanitizer none)
cargo +nightly fuzz build "${sanitizer[@]}" --fuzz-dir fuzz # once for all targets, before any runs

logs="$(mktemp -d)"
pids=()
trap 'kill "${pids[@]}" 2>/dev/null || true; rm -rf "$logs"' EXIT

run_target() { # TARGET: one bounded run; its exit status is the run's
    local target="$1" work timeout=10
    work="$(mktemp -d -p "$logs")" # new inputs go here; the committed corpus only seeds the run
    # rtapp_sim and config_sim simulate: up to 64 threads for 20 ms of EAS take seconds in the
    # instrumented build (a work-less forever loop is reported after 10^4 events at one instant)
    case "$target" in rtapp_sim | config_sim) timeout=60 ;; esac
    cargo +nightly fuzz run "${sanitizer[@]}" --fuzz-dir fuzz "$target" "$work" "fuzz/corpus/$target" -- \
        -max_total_time="$seconds" -max_len=16384 -timeout="$timeout" -rss_limit_mb=2560 -print_final_stats=1
}

failed=()
report() { # TARGET STATUS: the run's summary lines, and its failure remembered
    echo "fuzz target $1, $seconds s:"
    # (without a sanitizer libFuzzer warns that it lacks the sanitizer's crash hooks: not a finding)
    grep -E "^(stat::number_of_executed_units|==|SUMMARY|Done)|panicked|crash" "$logs/$1.log" |
        grep -v "Failed to find function" || true
    [ "$2" = 0 ] || failed+=("$1 (exit $2)")
}

slots="$(nproc)"
queue=("${targets[@]}")
running=()
while [ "${#queue[@]}" -gt 0 ] || [ "${#running[@]}" -gt 0 ]; do
    while [ "${#queue[@]}" -gt 0 ] && [ "${#running[@]}" -lt "$slots" ]; do
        target="${queue[0]}"
        queue=("${queue[@]:1}")
        run_target "$target" >"$logs/$target.log" 2>&1 &
        pids+=("$!")
        running+=("$target:$!")
    done
    wait -n || true # one run ended: collect every run that has
    still=()
    for entry in "${running[@]}"; do
        pid="${entry##*:}"
        if kill -0 "$pid" 2>/dev/null; then
            still+=("$entry")
        else
            status=0
            wait "$pid" || status=$?
            report "${entry%%:*}" "$status"
        fi
    done
    running=("${still[@]+"${still[@]}"}")
done
if [ "${#failed[@]}" -gt 0 ]; then
    echo "fuzz targets failed: ${failed[*]}; each input is in fuzz/artifacts/<target>/" >&2
    exit 1
fi
